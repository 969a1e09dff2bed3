import ArgumentParser
import Foundation
import OffstageDaemon

/// `offstage audio server`: a private headless PulseAudio in the foreground.
struct AudioServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run a private headless PulseAudio (speaker and headphones null sinks, role-cork policy) until ^C.",
        discussion: "Prints the PULSE_SERVER value that points clients at it."
    )

    @Option(help: "The directory for its socket and log (default: a new temporary one, removed at the end; a directory named here is kept, with the log).")
    var directory: String?

    @Flag(help: "Start with the headphones plugged in.")
    var headphones = false

    func run() async throws {
        try await reportingErrors {
            let server = try PrivatePulseAudio(directory: directory.map { URL(fileURLWithPath: $0) }, headphones: headphones)
            print("PULSE_SERVER=\(server.serverAddress)")
            printError("PulseAudio is running (log: \(server.logPath)); ^C stops it.")
            fflush(nil)
            await waitForTermination()
            server.stop()
        }
    }
}
