import ArgumentParser
import Foundation
import OffstageProtocol

@main
struct Offstage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offstage",
        abstract: "iOS-style multitasking for Linux: real app processes under the iOS application lifecycle.",
        discussion: """
            Start a daemon with `offstage daemon`, install an app directory (Info.plist + executable) \
            with `offstage install DIR`, then drive it: `offstage launch ID`, `offstage home`, … \
            `offstage events` shows the timeline of app callbacks. `offstage run SCENARIO.yaml` plays \
            a scenario in virtual time with a private daemon.
            """,
        version: "offstage \(offstageVersion) (app protocol \(offstageProtocolVersion))",
        subcommands: [
            DaemonCommand.self, InstallCommand.self, UninstallCommand.self, AppsCommand.self, LaunchCommand.self,
            HomeCommand.self, LockCommand.self, UnlockCommand.self, SwitcherCommand.self, AlertCommand.self,
            MemoryCommand.self, DeviceCommand.self, StatusCommand.self, EventsCommand.self, ClockCommand.self,
            RunCommand.self, GPSCommand.self, AudioCommand.self,
        ]
    )

    /// ArgumentParser's `main()`, but a usage error is one line on stderr,
    /// `offstage: error: …`, like every other error (exit 64 as before),
    /// with the help to read; and an unknown command is named as such
    /// (`offstage remote --help` printed the top-level help).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The first word after the commands named must be a command when it
        // is the first word at all, when `help` names commands (`offstage
        // help gps feed`), or when the last command named is a group of
        // commands (`offstage gps fedd`); elsewhere it is an argument.
        let helping = arguments.first == "help"
        let named = helping ? Array(arguments.dropFirst()) : arguments
        let (path, command) = commandPath(named)
        if let word = named.dropFirst(path.count).first, !word.hasPrefix("-"), word != "help",
            path.isEmpty || helping || isGroup(command)
        {
            let parent = (["offstage"] + path).joined(separator: " ")
            oneLineUsageError("unknown command '\(word)'" + (path.isEmpty ? "" : " in \(parent)"), help: parent + " --help")
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            // --help and the like, and the exit codes commands throw after printing their own error.
            guard code.rawValue == 64, !(error is ExitCode) else { exit(withError: error) }
            let message = unknownOption(in: arguments, missing: error) ?? self.message(for: error).split(separator: "\n").joined(separator: "; ")
            oneLineUsageError(message, help: (["offstage"] + commandPath(arguments).path + ["--help"]).joined(separator: " "))
        }
    }

    /// ArgumentParser reports a missing argument before an unknown option
    /// (`launch --bogus` was "Missing expected argument '<bundle-id>'"): the
    /// unknown option's error, found by parsing again with an argument
    /// given, when `error` is a missing argument and there is one.
    private static func unknownOption(in arguments: [String], missing error: any Error) -> String? {
        guard message(for: error).hasPrefix("Missing expected argument"), !arguments.contains("--"),
            arguments.contains(where: { $0.hasPrefix("-") && $0.count > 1 })
        else { return nil }
        do {
            _ = try parseAsRoot(arguments + ["--", "x", "x", "x"])
        } catch {
            let retried = message(for: error)
            if retried.hasPrefix("Unknown option") { return retried }
        }
        return nil
    }

    /// The subcommand names at the start of `arguments` (`gps feed` in `gps
    /// feed x.nmea --speed 2`) and the command they name.
    private static func commandPath(_ arguments: [String]) -> (path: [String], command: ParsableCommand.Type) {
        var path: [String] = []
        var current: ParsableCommand.Type = Offstage.self
        for word in arguments {
            guard let next = current.configuration.subcommands.first(where: { $0._commandName == word }) else { break }
            path.append(word)
            current = next
        }
        return (path, current)
    }

    /// Whether `command` only groups commands (`gps`, `audio`): it has
    /// subcommands and none runs by default.
    private static func isGroup(_ command: ParsableCommand.Type) -> Bool {
        !command.configuration.subcommands.isEmpty && command.configuration.defaultSubcommand == nil
    }

    private static func oneLineUsageError(_ message: String, help: String) -> Never {
        FileHandle.standardError.write(Data("offstage: error: \(message) (see \(help))\n".utf8))
        Foundation.exit(64)
    }
}
