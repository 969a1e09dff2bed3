import ArgumentParser
import OffstageDaemon

/// `offstage gps convert IN OUT`.
struct GPSConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a fixture between GPX, NMEA and gpsd JSON.",
        discussion: "Formats come from the file names (.gpx, .nmea, .json) unless --format/--to say otherwise. Bad lines are skipped, counted and listed unless --strict. A file output is replaced only when the conversion succeeds, and an interrupted conversion (Ctrl-C) leaves no partial file (a link, a pipe or /dev/stdout is written to directly); an input with no fix, or an output that is the input, is an error."
    )

    @Argument(help: ArgumentHelp("Input fixture (- for standard input, with --format).", valueName: "input"))
    var inputArgument: String

    @Argument(help: ArgumentHelp("Output file (.gpx, .nmea or .json; - for standard output, with --to).", valueName: "output"))
    var outputArgument: String

    /// `-` names the standard streams, as most tools have it (it made a file named `-`).
    var input: String { inputArgument == "-" ? "/dev/stdin" : inputArgument }
    var output: String { outputArgument == "-" ? "/dev/stdout" : outputArgument }

    @Option(help: "Output format: gpx, nmea or json.")
    var to: String?

    @OptionGroup var fixture: GPSFixtureOptions

    func validate() throws {
        try requireUTF8(inputArgument, "input")
        try requireUTF8(outputArgument, "output")
        _ = try to.map { try parseFormat($0, option: "--to") }
        if inputArgument == "-", fixture.format == nil { throw ValidationError("- (standard input) needs --format gpx, nmea or json") }
        if outputArgument == "-", to == nil { throw ValidationError("- (standard output) needs --to gpx, nmea or json") }
        // A usage error like the others about formats (it was exit 1).
        if to == nil, outputArgument != "-", LocationFixtureFormat(pathExtension: outputArgument) == nil {
            throw ValidationError("\(outputArgument): the output format cannot be told from the name (.gpx, .nmea or .json); give --to gpx, nmea or json")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let inputFormat = try fixture.inputFormat()
            let outputFormat = try to.map { try parseFormat($0, option: "--to") }
            let options = try fixture.readOptions()
            // Interrupted, the conversion leaves neither its partial file nor a changed output.
            let summary = try RemoveOnInterrupt.guarding(partialPath(for: output)) {
                try LocationFixtureConverter.convert(
                    input: input, output: output, inputFormat: inputFormat, outputFormat: outputFormat, options: options)
            }
            reportIssues(summary)
            let notes = [
                summary.skipped > 0 ? "\(summary.skipped) bad \(summary.skipped == 1 ? "line" : "lines") skipped" : nil,
                summary.ignoredText,
            ].compactMap { $0 }
            printError("Converted \(summary.fixes) \(summary.fixes == 1 ? "fix" : "fixes") from \(input) to \(output)"
                + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))") + ".")
        }
    }
}
