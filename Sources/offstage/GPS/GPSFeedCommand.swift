import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// `offstage gps feed FILE`: replay a fixture into gpsd.
struct GPSFeedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "Replay a fixture (GPX, NMEA, gpsd JSON) into gpsd, keeping its timestamps.",
        discussion: """
            The fixture goes to gpsd as NMEA through a pseudo-terminal. With --gpsd HOST:PORT the device is added \
            to that gpsd through its control socket (--control); otherwise a private gpsd is started for the \
            duration (on port 2947 if free). --speed N replays at N× the recorded pace; --speed max as fast as gpsd \
            takes it, without loss.
            """
    )

    @Argument(help: "The fixture file.")
    var file: String

    @Option(parsing: .unconditional, help: "N (×recorded pace: 2 or 2x) or max.")
    var speed: String = "1"

    @OptionGroup var fixture: GPSFixtureOptions
    @OptionGroup var target: GPSDTargetOptions

    @Flag(help: "No progress display.")
    var quiet = false

    func validate() throws {
        try requireUTF8(file, "file")
        guard LocationFeedSpeed(parsing: speed) != nil else { throw ValidationError("--speed \(speed): expected a number from 0.001 to 1000000, or max") }
    }

    func run() async throws {
        try await reportingErrors {
            let pace = LocationFeedSpeed(parsing: speed)!
            // The fixes are counted first (for the progress), then fed: a
            // second read a pipe cannot give. Checked before the reader,
            // which would first ask a pipe without an extension for --format.
            let kind = FileKind(atPath: file)
            guard file != "-", kind != .other, kind != .socket else {
                throw CommandError("\(file): not a regular file (a pipe, a socket or a device): gps feed reads its fixture twice; save it to a file first")
            }
            let reader = try LocationFixtureReader(path: file, format: try fixture.inputFormat(), options: try fixture.readOptions())
            // The counting pass also finds a fix gpsd would misdate (NMEA's
            // two-digit year, its week rollover), before gpsd starts and
            // hours of feeding.
            let counted = try reader.read { fix in
                if let problem = LocationFeeder.problem(feeding: fix) {
                    throw CommandError("\(file): the fix at \(LocationTimeFormat.iso8601(fix.time)) cannot be fed: \(problem)")
                }
            }
            // The bad lines now, before the feed (hours at 1×), not after it.
            reportIssues(counted)
            let total = counted.fixes
            guard total > 0 else { throw CommandError("\(file) has no fixes\(counted.whyNoFixes)") }
            let gpsd = try GPSDFeedTarget(target)
            defer { gpsd.close() }
            let counter = try await gpsd.watch()
            defer { counter.cancel() }
            let display = ProgressDisplay(enabled: !quiet)
            let result = try LocationFeeder(pty: gpsd.pty).feed(
                reader, speed: pace, total: total, progressInterval: display.isTerminal ? .milliseconds(250) : .seconds(5),
                stillWanted: {
                    guard counter.lostGPSD else { return }
                    display.finish()
                    throw CommandError("gpsd at \(gpsd.endpoint) went away after reporting \(counter.count) of \(total) fixes; the rest would be lost")
                }
            ) { display.show($0) }
            display.finish()
            _ = await counter.wait(timeout: .seconds(10)) { $0.count >= result.sent }
            let seconds = Double(result.elapsed.components.seconds) + Double(result.elapsed.components.attoseconds) / 1e18
            let rate = seconds > 0 ? Int(Double(result.sent) / seconds) : result.sent
            printError(
                "Fed \(result.sent) \(result.sent == 1 ? "fix" : "fixes") at \(pace) in \(NMEAFixWriter.decimal(seconds, 2)) s "
                    + "(\(rate) \(rate == 1 ? "fix" : "fixes")/s\(counted.ignoredText.map { "; \($0)" } ?? "")); "
                    + "gpsd reported \(counter.count) of them.")
            if target.hold > 0 {
                printError("Holding \(gpsd.pty.devicePath) on gpsd \(gpsd.endpoint) for \(target.hold) s.")
                try await Task.sleep(for: .seconds(target.hold))
            }
            if counter.count < result.sent { throw CommandError("gpsd reported only \(counter.count) of \(result.sent) fixes") }
        }
    }
}

/// A one-line progress display on stderr (redrawn in place on a terminal).
final class ProgressDisplay {
    let enabled: Bool
    let isTerminal = isatty(2) != 0
    private var drew = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ p: LocationFeedProgress) {
        guard enabled else { return }
        let total = p.total ?? p.sent
        let fraction = total > 0 ? Double(p.sent) / Double(total) : 1
        let width = 24
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
        let line = "[\(bar)] \(Int(fraction * 100))%  \(p.sent)/\(total) fixes  at \(LocationTimeFormat.iso8601(p.fixTime))"
        if isTerminal {
            FileHandle.standardError.write(Data(("\r" + line).utf8))
            drew = true
        } else {
            printError(line)
        }
    }

    func finish() {
        if drew { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
