import ArgumentParser
import OffstageCore
import OffstageDaemon
import OffstageProtocol

struct SwitcherCommand: SimpleCommand {
    static let configuration = CommandConfiguration(
        commandName: "switcher", abstract: "The double-tap app switcher: show, hide, or kill an app in it.",
        discussion: "`kill` shows the switcher first if it is hidden, and leaves it shown.")
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case show, hide, kill
    }
    @Argument(help: "show, hide or kill.") var action: Action
    @Argument(help: "The app to kill.") var bundleID: String?
    @OptionGroup var client: ClientOptions

    func validate() throws {
        if action == .kill, bundleID == nil { throw ValidationError("switcher kill needs a bundle id") }
        if action != .kill, bundleID != nil { throw ValidationError("only switcher kill takes a bundle id") }
        if let bundleID { try requireBundleID(bundleID) }
    }

    var request: JSONValue {
        var object: [String: JSONValue] = ["command": "switcher", "action": .string(action.rawValue)]
        if let bundleID { object["app"] = .string(bundleID) }
        return .object(object)
    }
}

struct AlertCommand: SimpleCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert", abstract: "A system alert (an SMS): show it, dismiss it, or reply (opens Messages).")
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case show, dismiss, reply
    }
    @Argument(help: "show, dismiss or reply.") var action: Action
    @OptionGroup var client: ClientOptions
    var request: JSONValue { ["command": "alert", "action": .string(action.rawValue)] }
}

struct MemoryCommand: SimpleCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Memory events: a warning to running apps, or pressure that kills suspended apps.",
        discussion: """
            `pressure` kills suspended apps, largest resident memory first, until --free bytes are \
            freed (default: every suspended app). Sizes take K, M and G suffixes.
            """)
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case warning, pressure
    }
    @Argument(help: "warning or pressure.") var action: Action
    @Option(parsing: .unconditional, help: "Pressure: bytes to free (e.g. 200M).") var free: String?
    @OptionGroup var client: ClientOptions

    func validate() throws {
        if let free, parseByteSize(free) == nil { throw ValidationError("--free must be a size such as 500K, 200M or 1G") }
        if free != nil, action != .pressure { throw ValidationError("--free applies to memory pressure only") }
    }

    var request: JSONValue {
        var object: [String: JSONValue] = ["command": "memory", "action": .string(action.rawValue)]
        if let free, let bytes = parseByteSize(free) { object["bytes"] = JSONValue(bytes) }
        return .object(object)
    }

    func run() throws {
        let result = try send()
        // Queued behind an app that has not answered, it has done nothing yet (the warning says so).
        if let pressure = result["memoryPressure"], pressure != .null { print(Self.outcome(of: pressure)) }
        printStatus(after: result)
    }

    /// What a memory pressure did (its `memoryPressure` event's detail): "killed A, B (… MiB freed)".
    static func outcome(of pressure: JSONValue) -> String {
        let killed = (pressure["killed"]?.arrayValue ?? []).compactMap(\.stringValue)
        let freed = Double(pressure["freed"]?.intValue ?? 0) / (1024 * 1024)
        // Only a target of nothing kills no suspended app.
        let why = (pressure["target"]?.intValue).map { $0 <= 0 } == true ? "nothing to free" : "none suspended"
        return killed.isEmpty ? "killed no app (\(why))" : "killed \(killed.joined(separator: ", ")) (\(String(format: "%.1f", freed)) MiB freed)"
    }
}

struct DeviceCommand: SimpleCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Device changes: battery LEVEL (0-1), orientation O, locale L, time-jump, defaults.",
        discussion: """
            Running apps get the notification now; suspended apps get the latest of each kind when they resume. \
            defaults is the user changing preferences in Settings (NSUserDefaultsDidChangeNotification).
            """)
    enum What: String, ExpressibleByArgument, CaseIterable {
        case battery, orientation, locale
        case timeJump = "time-jump"
        case defaults

        /// A change that carries no value.
        var isBare: Bool { self == .timeJump || self == .defaults }
    }
    @Argument(help: "battery, orientation, locale, time-jump or defaults.") var what: What
    // Every word that is not a known option, so that a negative level
    // (`battery -1`) is a value the daemon's rule refuses, not an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The new value.", valueName: "value")) var values: [String] = []
    @OptionGroup var client: ClientOptions

    var value: String? { values.first { $0 != "--" } }

    func validate() throws {
        let values = try operands(values)
        if values.count > 1 { throw ValidationError("device \(what.rawValue) takes one value (got \(values.joined(separator: " ")))") }
        if !what.isBare, value == nil { throw ValidationError("device \(what.rawValue) needs a value") }
        if what.isBare, let value { throw ValidationError("device \(what.rawValue) takes no value (got \(value))") }
        if let problem = deviceChangeProblem(request) { throw ValidationError(problem) }
    }

    var request: JSONValue { Engine.deviceRequest(what: what.rawValue, value: value) }
}
