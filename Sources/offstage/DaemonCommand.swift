import ArgumentParser
import Foundation
import Logging
import OffstageCore
import OffstageDaemon
import ServiceLifecycle
import UnixSignals

struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon", abstract: "Run the Offstage daemon until SIGTERM, SIGINT or SIGHUP (the last two unless ignored at its start, as nohup does SIGHUP).")

    @Option(help: "The clock: real (wall clock) or virtual (moves only with `offstage clock advance`).")
    var clock: String = "real"

    @Option(help: "The iOS profile setting the policy defaults: ios6 (600 s tasks), ios7 (180 s), ios13 (30 s).")
    var profile: String = "ios7"

    @Option(help: ArgumentHelp("Data directory: store, event log, app containers and logs.", valueName: "dir"))
    var data: String = DefaultPaths.dataDirectory

    @Option(help: ArgumentHelp("The control socket; the app socket goes beside it (apps.sock beside control.sock, NAME.apps.sock beside NAME.sock).", valueName: "path"))
    var socket: String = defaultControlSocket

    @Option(parsing: .unconditional, help: ArgumentHelp("Virtual clock: real time to wait for a hung app before its watchdog may fire, such as 500ms (default 2s).", valueName: "duration"))
    var hangGrace: String?

    /// `--hang-grace`, checked by ``validate()``: from 10 ms to an hour.
    var hangGraceDuration: Duration? {
        guard let hangGrace else { return .seconds(2) }
        return parseDuration(hangGrace).flatMap { $0 >= Scenario.shortestHangGrace && $0 <= Scenario.longestHangGrace ? $0 : nil }
    }

    func validate() throws {
        // Made absolute, an empty path would be the current directory.
        if data.isEmpty { throw ValidationError("--data needs a directory, not an empty path") }
        try requireUTF8(data, "--data")
        try refuseEmptySocketPath(socket)
        try requireUTF8(socket, "--socket")
        guard ClockMode(rawValue: clock) != nil else { throw ValidationError("--clock must be real or virtual") }
        guard hangGraceDuration != nil else {
            throw ValidationError("--hang-grace must be a duration from 10ms to an hour, such as 500ms or 2s (not \(hangGrace ?? ""))")
        }
        if hangGrace != nil, clock != "virtual" {
            throw ValidationError("--hang-grace applies to the virtual clock only (add --clock virtual)")
        }
        guard LifecyclePolicy.profile(named: profile) != nil else {
            throw ValidationError("--profile must be one of \(LifecyclePolicy.profiles.keys.sorted().joined(separator: ", "))")
        }
    }

    /// SIGTERM, and SIGINT and SIGHUP (a closed terminal: it killed the
    /// daemon with no daemonStopped and left its sockets behind) unless
    /// ignored at the start, as `nohup offstage daemon &` leaves SIGHUP and
    /// a script's `offstage daemon &` SIGINT: a Dispatch signal source
    /// would catch them anyway.
    static func shutdownSignals() -> [UnixSignal] {
        [UnixSignal.sigterm] + [(SIGINT, UnixSignal.sigint), (SIGHUP, .sighup)].filter { !isIgnored($0.0) }.map(\.1)
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "offstage.daemon")
        // Absolute: apps get the app socket's path and resolve it from their own directory.
        let socket = URL(fileURLWithPath: socket).standardizedFileURL.path
        let data = URL(fileURLWithPath: data).standardizedFileURL.path
        let configuration = DaemonConfiguration(
            dataDirectory: data, controlSocket: socket, appSocket: DefaultPaths.appSocket(forControlSocket: socket),
            clock: ClockMode(rawValue: clock)!, policy: LifecyclePolicy.profile(named: profile)!,
            hangGrace: .nanoseconds(hangGraceDuration!.nanoseconds), executableSearchPaths: [executableDirectory()])
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: DaemonService(configuration: configuration, logger: logger))],
                gracefulShutdownSignals: Self.shutdownSignals(), logger: logger))
        do {
            try await group.run()
        } catch let error as DaemonError {
            fail(error.message)
        }
    }
}

/// The directory of the running `offstage` binary: SwiftPM builds the sample
/// apps next to it, so app directories can name their executable by name.
func executableDirectory() -> String {
    let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return parentPath(of: path)
}
