import ArgumentParser
import OffstageDaemon

/// `offstage gps convert IN OUT`.
struct GPSConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a fixture between GPX, NMEA and gpsd JSON.",
        discussion: "Formats come from the file names (.gpx, .nmea, .json) unless --format/--to say otherwise. Bad lines are skipped, counted and listed unless --strict. A file output is replaced only when the conversion succeeds (a link, a pipe or /dev/stdout is written to directly); an input with no fix, or an output that is the input, is an error."
    )

    @Argument(help: "Input fixture.")
    var input: String

    @Argument(help: "Output file (.gpx, .nmea or .json).")
    var output: String

    @Option(help: "Output format: gpx, nmea or json.")
    var to: String?

    @OptionGroup var fixture: GPSFixtureOptions

    func run() async throws {
        try await reportingErrors {
            let summary = try LocationFixtureConverter.convert(
                input: input, output: output, inputFormat: try fixture.inputFormat(),
                outputFormat: try to.map { try parseFormat($0, option: "--to") }, options: try fixture.readOptions())
            reportIssues(summary)
            printError("Converted \(summary.fixes) fixes from \(input) to \(output)"
                + (summary.skipped > 0 ? " (\(summary.skipped) bad \(summary.skipped == 1 ? "line" : "lines") skipped)" : "") + ".")
        }
    }
}
