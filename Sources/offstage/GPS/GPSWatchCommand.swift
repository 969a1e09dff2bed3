import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// `offstage gps watch`: print the fixes a gpsd reports.
struct GPSWatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the fixes a gpsd reports (reconnecting if it restarts).",
        discussion: "A gpsd that cannot be reached at the start is an error, unless --wait says to wait for it to come up."
    )

    @Option(name: .customLong("gpsd"), help: "The gpsd as HOST:PORT, HOST or PORT.")
    var gpsd: String = "localhost:2947"

    @Option(parsing: .unconditional, help: "Exit after this many fixes.")
    var count: Int?

    @Flag(help: "Print gpsd-style TPV JSON lines instead of text.")
    var json = false

    @Flag(help: "Keep trying (backing off from 100 ms to 5 s) while gpsd cannot be reached at the start.")
    var wait = false

    func validate() throws {
        if let count, count <= 0 { throw ValidationError("--count must be positive") }
        _ = try parseGPSDEndpoint(gpsd)
    }

    func run() async throws {
        try await reportingErrors {
            let endpoint = try parseGPSDEndpoint(gpsd)
            var seen = 0
            var connected = false
            for await event in GPSDLocationSource(endpoint: endpoint).events() {
                switch event {
                case .connected(let what):
                    connected = true
                    printError("Watching gpsd at \(what).")
                case .disconnected(let why):
                    // Once it has answered, a lost gpsd is waited for (it may be restarting).
                    guard connected || wait else { throw CommandError("\(why) (--wait waits for it)") }
                    printError("\(why); retrying.")
                case .fix(let f):
                    print(json ? GPSDJSONFixWriter.line(for: f.fix, device: f.device ?? "gpsd").dropLast() : Substring(Self.text(f)))
                    fflush(nil)
                    seen += 1
                    if let count, seen >= count { return }
                }
            }
        }
    }

    static func text(_ f: LocationFixWithDevice) -> String {
        let x = f.fix
        var s = "\(LocationTimeFormat.iso8601(x.time))  \(NMEAFixWriter.decimal(x.latitude, 7))  \(NMEAFixWriter.decimal(x.longitude, 7))"
        if let a = x.altitude { s += "  alt \(NMEAFixWriter.decimal(a, 1)) m" }
        if let v = x.speed { s += "  \(NMEAFixWriter.decimal(v, 2)) m/s" }
        // Two decimals, and 359.995° and above as 0.00° (it showed 360.0°).
        if let c = x.course { s += "  \(GPXFixWriter.courseText(c))°" }
        if let d = f.device { s += "  \(d)" }
        return s
    }
}
