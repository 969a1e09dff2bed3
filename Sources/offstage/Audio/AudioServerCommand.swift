import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// `offstage audio server`: a private headless PulseAudio in the foreground.
struct AudioServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run a private headless PulseAudio (a speaker null sink, headphones with --headphones, role-cork policy) until ^C.",
        discussion: """
            Prints the PULSE_SERVER value that points clients at it. SIGINT, SIGTERM or SIGHUP stops the server \
            and removes its files; if the server dies on its own, the command says so and exits 1. To unplug the \
            headphones, unload their sink's module: with PULSE_SERVER set as printed, find its index in \
            `pactl list short modules` (the module-null-sink line with sink_name=offstage_headphones), then run \
            `pactl unload-module INDEX`.
            """
    )

    @Option(help: "The directory for its socket and log (default: a new temporary one, removed at the end; a directory named here is kept, with the log, and made if missing when its parent exists).")
    var directory: String?

    @Flag(help: "Start with the headphones plugged in.")
    var headphones = false

    func validate() throws {
        if let directory { try requireUTF8(directory, "--directory") }
        // An empty one ran the server in the current directory.
        if directory?.isEmpty == true { throw ValidationError("--directory needs a directory; leave it out for a temporary one") }
    }

    func run() async throws {
        try await reportingErrors {
            let directory = directory.map { URL(fileURLWithPath: $0) }
            let headphones = headphones
            let server = try TerminationSignals.holding {
                let server = try PrivatePulseAudio(directory: directory, headphones: headphones)
                TerminationSignals.onTermination { _ in server.stopAndRemoveFiles() }
                return server
            }
            print("PULSE_SERVER=\(server.serverAddress)")
            printError("PulseAudio is running (log: \(server.logPath)); ^C stops it.")
            fflush(nil)
            let ending = await withCheckedContinuation { (continuation: CheckedContinuation<ExitStatus?, Never>) in
                Thread { continuation.resume(returning: server.waitUntilExited()) }.start()
            }
            // Stopped by a signal: the cleanup ends the process. The signal
            // may have reached PulseAudio first (sent to the process group),
            // which then exited before this process ran its handler: that
            // was reported as an exit "on its own".
            if await TerminationSignals.terminationArrives(within: .milliseconds(500)) { await neverReturning() }
            // Its last error, before a temporary directory goes with the log;
            // a server killed by a signal logged nothing about it, and an
            // earlier error (a client's failed command) would mislead.
            var lastError: String?
            if case .exited = ending { lastError = server.lastLoggedError }
            server.stopAndRemoveFiles()
            throw CommandError(
                "PulseAudio exited on its own (\(ending.map(String.init(describing:)) ?? "gone")" + (lastError.map { "; its last error: \($0)" } ?? "") + ")")
        }
    }
}
