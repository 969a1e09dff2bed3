import ArgumentParser
import Foundation
import OffstageDaemon
import OffstageProtocol

struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install an app from a directory with an Info.plist (or from a plist file).",
        discussion: """
            Installing a bundle id that is already installed replaces it (its container and settings \
            are kept); this is refused while the app runs.
            """)

    @Argument(help: ArgumentHelp("App directory or Info.plist.", valueName: "app-dir|plist"))
    var path: String

    @Option(help: ArgumentHelp("The executable, instead of the plist's CFBundleExecutable.", valueName: "path"))
    var executable: String?

    @OptionGroup var client: ClientOptions

    func validate() throws {
        // An empty path was the working directory ("…/Info.plist: no Info.plist here").
        if path.isEmpty { throw ValidationError("the app directory or plist is an empty path") }
        if executable?.isEmpty == true { throw ValidationError("--executable needs a path, not an empty one") }
        try requireUTF8(path, "app-dir|plist")
        if let executable { try requireUTF8(executable, "--executable") }
    }

    func run() throws {
        var request: JSONValue = ["command": "install", "path": .string(absolute(path))]
        if let executable, case .object(var members) = request {
            members["executable"] = .string(absolute(executable))
            request = .object(members)
        }
        let result = try client.send(request)
        let verb = result["replaced"]?.boolValue == true ? "reinstalled" : "installed"
        print("\(verb) \(result["bundleID"]?.stringValue ?? "?") (\(result["executable"]?.stringValue ?? "?"))")
    }
}

func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "uninstall", abstract: "Remove a not-running app.")
    @Argument(help: "The app's bundle id.") var bundleID: String
    @OptionGroup var client: ClientOptions

    func validate() throws { try requireBundleID(bundleID) }

    func run() throws {
        _ = try client.send(["command": "uninstall", "app": .string(bundleID)])
        print("uninstalled \(bundleID)")
    }
}

struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "List the installed apps.",
        discussion: "One line per app, its fields separated by tabs: bundle id, state, UIBackgroundModes (comma-separated, - for none), executable.")
    @Flag(help: "One JSON array.") var json = false
    @OptionGroup var client: ClientOptions

    func run() throws {
        let apps = try client.send(["command": "apps"])
        if json { return printJSON(apps) }
        if apps.arrayValue?.isEmpty ?? true { printError("No app is installed (offstage install DIR installs one).") }
        for app in apps.arrayValue ?? [] {
            let modes = (app["backgroundModes"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ",")
            print(
                [app["bundleID"]?.stringValue ?? "?", app["state"]?.stringValue ?? "?", modes.isEmpty ? "-" : modes,
                    app["executable"]?.stringValue ?? "?"]
                    .joined(separator: "\t"))
        }
    }
}

/// A command that sends one request and prints the resulting state.
protocol SimpleCommand: ParsableCommand {
    var client: ClientOptions { get }
    var request: JSONValue { get }
}

extension SimpleCommand {
    func run() throws {
        printStatus(after: try send())
    }

    /// Sends the request, asking for the state it leaves in its reply. A
    /// daemon older than `withStatus` (still running after an upgrade)
    /// replies without it: the state is then asked for after the reply.
    func send() throws -> JSONValue {
        guard case .object(var object) = request else { return try client.send(request) }
        object["withStatus"] = true
        let result = try client.send(.object(object))
        guard result["status"] == nil else { return result }
        var members = result.objectValue ?? [:]
        members["status"] = try client.send(["command": "status"])
        return .object(members)
    }

    /// Prints the foreground app and every running app's state, and those
    /// the command stopped (killed, crashed or exited meanwhile) as
    /// `notRunning`: the state the command left, as its reply says (a
    /// `status` asked for afterwards could show a later command's doing).
    func printStatus(after result: JSONValue) {
        let status = result["status"] ?? .null
        let stopped = Set((result["stopped"]?.arrayValue ?? []).compactMap(\.stringValue))
        let apps = (status["apps"]?.arrayValue ?? []).compactMap { app -> String? in
            let id = app["bundleID"]?.stringValue ?? "?"
            let state = app["state"]?.stringValue ?? "?"
            // Named in front while its spawn waits (behind an app that has not answered).
            if state == "notRunning", app["launching"]?.boolValue == true { return "\(id)=launching" }
            return state != "notRunning" || stopped.contains(id) ? "\(id)=\(state)" : nil
        }
        print(foregroundLine(status) + (apps.isEmpty ? "" : "; " + apps.joined(separator: " ")))
    }
}

struct LaunchCommand: SimpleCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch", abstract: "Tap the app's icon: launch it, or bring it to the foreground.")
    @Argument(help: "The app's bundle id.") var bundleID: String
    @OptionGroup var client: ClientOptions
    func validate() throws { try requireBundleID(bundleID) }
    var request: JSONValue { ["command": "launch", "app": .string(bundleID)] }
}

struct HomeCommand: SimpleCommand {
    static let configuration = CommandConfiguration(commandName: "home", abstract: "Press the home button.")
    @OptionGroup var client: ClientOptions
    var request: JSONValue { ["command": "home"] }
}

struct LockCommand: SimpleCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock the device.")
    @OptionGroup var client: ClientOptions
    var request: JSONValue { ["command": "lock"] }
}

struct UnlockCommand: SimpleCommand {
    static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unlock the device.")
    @OptionGroup var client: ClientOptions
    var request: JSONValue { ["command": "unlock"] }
}

/// `foreground: NAME`, and what covers it (`locked`, `switcher shown`,
/// `alert shown`), from a status.
func foregroundLine(_ status: JSONValue) -> String {
    var overlays: [String] = []
    if status["locked"]?.boolValue == true { overlays.append("locked") }
    if status["switcher"]?.boolValue == true { overlays.append("switcher shown") }
    if status["alert"]?.boolValue == true { overlays.append("alert shown") }
    return "foreground: \(foregroundName(status))" + (overlays.isEmpty ? "" : " (\(overlays.joined(separator: ", ")))")
}

/// Who is in the foreground, from a status: one of our apps, another app
/// (Messages, after an alert's reply), or the home screen.
func foregroundName(_ status: JSONValue) -> String {
    if let app = status["foreground"]?.stringValue { return app }
    if let other = status["otherApp"]?.stringValue { return "\(other) (not an Offstage app)" }
    return "home screen"
}
