import ArgumentParser
import OffstageDaemon

/// `offstage audio info`: what the decoder makes of files.
struct AudioInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Check audio files (format, rate, channels, duration) or list the formats libsndfile reads."
    )

    @Argument(help: "Audio files to check (with none, the formats are listed, as with --formats).")
    var files: [String] = []

    @Flag(help: "List the container formats this libsndfile build reads.")
    var formats = false

    func validate() throws {
        for file in files { try requireUTF8(file, "files") }
        // The files were ignored: nothing was checked, and the exit was 0.
        if formats, !files.isEmpty {
            throw ValidationError("--formats lists the formats and takes no files; check files without it")
        }
    }

    func run() async throws {
        silenceLibraryNotes()
        try await reportingErrors {
            if formats || files.isEmpty {
                for format in AudioFile.supportedFormats { print(format) }
                return
            }
            var failed = false
            for file in files {
                do {
                    print("\(file): \(try AudioFile(path: file).summary)")
                } catch {
                    printError("offstage: error: \(error)")
                    failed = true
                }
            }
            if failed { throw ExitCode.failure }
        }
    }
}
