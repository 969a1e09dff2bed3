import Foundation
import OffstageCore
@testable import OffstageDaemon

/// A fresh temporary directory for one test (see ``temporaryDirectory()``).
func makeTemporaryDirectory() throws -> URL {
    URL(fileURLWithPath: try temporaryDirectory())
}

/// Writes `text` to `name` in `dir` and returns the path.
func write(_ text: String, to name: String, in dir: URL) throws -> String {
    let url = dir.appendingPathComponent(name)
    try text.write(to: url, atomically: true, encoding: .utf8)
    return url.path
}

/// Reads every fix of a file.
func readAll(_ path: String, options: LocationFixtureReadOptions = .init()) throws -> ([LocationFix], LocationReadSummary) {
    var fixes: [LocationFix] = []
    let summary = try LocationFixtureReader(path: path, options: options).read { fixes.append($0) }
    return (fixes, summary)
}

/// An NMEA sentence with its checksum.
func nmea(_ body: String) -> String { NMEAFixWriter.framed(body).trimmingCharacters(in: .newlines) }

/// A fix's `RMC` and `GGA` as the writer makes them, without the `GSA`
/// before them (the reader leaves it out): two lines per fix, for tests
/// that count lines.
func rmcAndGGA(_ fix: LocationFix) -> String {
    NMEAFixWriter.sentences(for: fix).split(separator: "\r\n").filter { !$0.hasPrefix("$GPGSA") }.map { $0 + "\r\n" }.joined()
}

/// The repository root (for samples/fixtures).
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A straight test track: `count` fixes 1 s apart, heading north-east.
func sampleTrack(count: Int, start: Double = 1_714_550_400) -> [LocationFix] {
    (0..<count).map { i in
        LocationFix(
            latitude: 48.85 + Double(i) * 0.0001, longitude: 2.35 + Double(i) * 0.00013, time: start + Double(i),
            altitude: 35 + Double(i % 7), speed: 12.5, course: 42.25, horizontalAccuracy: 5)
    }
}

/// A GPX 1.1 document with one track segment of `points` (`<trkpt …>` lines).
func gpxTrack(_ points: String...) -> String {
    "<gpx version=\"1.1\"><trk><trkseg>\n" + points.joined(separator: "\n") + "\n</trkseg></trk></gpx>\n"
}

/// A GPX document of `fixes` as the writer writes it, named `name`.
func gpxDocument(_ fixes: [LocationFix], name: String = "t") -> String {
    GPXFixWriter.header(name: name) + fixes.map(GPXFixWriter.point).joined() + GPXFixWriter.footer
}
