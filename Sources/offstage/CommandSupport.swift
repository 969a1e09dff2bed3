import ArgumentParser
import Dispatch
import Foundation
import OffstageDaemon
import Synchronization

/// The control socket the daemon and the commands use unless `--socket`
/// names another: `$OFFSTAGE_SOCKET_PATH`, or else the default under
/// `$XDG_RUNTIME_DIR`.
let defaultControlSocket =
    ProcessInfo.processInfo.environment["OFFSTAGE_SOCKET_PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? DefaultPaths.controlSocket

/// The values of an `@Argument(parsing: .allUnrecognized)`, the form that
/// lets a negative number (`-33.8`, `-1`, `-5s`) be a value rather than an
/// option: `--` (which negative values once needed) is dropped, and a word
/// that looks like an option but does not start as a number is refused as
/// a mistyped option.
/// - Parameter negatives: what a negative value is here ("coordinates"),
///   for the hint after a misplaced `--`.
func operands(_ words: [String], negatives: String? = nil) throws -> [String] {
    let terminated = words.contains("--")
    let values = words.filter { $0 != "--" }
    let numeric = { (word: String) in word.dropFirst().first.map { $0.isNumber || $0 == "." } ?? false }
    if let option = values.first(where: { $0.hasPrefix("-") && !numeric($0) }) {
        throw ValidationError(
            terminated
                ? "\(option) after -- is not an option: options go before it" + (negatives.map { ", and negative \($0) need no --" } ?? "")
                : "unknown option '\(option)'")
    }
    return values
}

/// Refuses a file name from the command line that is not valid UTF-8 (a
/// Latin-1 `é`, as old loggers and FAT media write names). Swift decodes
/// the arguments with repair, each bad byte becoming U+FFFD: such an input
/// "did not exist", and an output was written under another name while the
/// command reported success.
/// - Parameter what: the argument as the help names it (`input`, `--control`).
func requireUTF8(_ value: String, _ what: String) throws {
    guard value.unicodeScalars.contains("\u{FFFD}") else { return }
    for index in 1..<Int(CommandLine.argc) {
        // The word given (`--control=NAME` holds it after the `=`), whose bytes are not UTF-8.
        guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
        let repaired = String(decoding: UnsafeRawBufferPointer(start: raw, count: strlen(raw)), as: UTF8.self)
        guard repaired == value || repaired.hasSuffix("=" + value) else { continue }
        throw ValidationError(
            "argument \(index) (\(what)) is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file)")
    }
}

/// Refuses an empty bundle id argument: a usage error (exit 64) rather than
/// the daemon's "no app with bundle id  is installed" (exit 1). Any other
/// id goes to the daemon: an app installed by an older release may have
/// one today's install rule refuses, and must still be launched and removed.
func requireBundleID(_ id: String) throws {
    if id.isEmpty { throw ValidationError("the bundle id is empty") }
}

/// A one-line CLI error (printed as `offstage: error: ...`, exit 1).
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command body, turning any error into one line on stderr and a
/// non-zero exit.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as LocationFixtureError {
        // The points skipped before a read stopped are warned of first, as they would have been.
        reportIssues(error.readBefore)
        printError("offstage: error: \(error)")
        throw ExitCode.failure
    } catch {
        printError("offstage: error: \(error)")
        throw ExitCode.failure
    }
}

/// Sends what C libraries print on C's `stderr` stream to /dev/null for
/// the rest of the command. libmpg123, libsndfile's MP3 decoder, prints
/// notes and warnings there ("Note: Trying to resync...", bit-reservoir
/// errors after a seek) on top of the error the command reports, and
/// libsndfile gives no way to turn them off. The command's own messages
/// (``printError(_:)``, the usage errors) write to file descriptor 2, not
/// through that stream.
func silenceLibraryNotes() {
    // The variable is found by name: Swift refuses a shared mutable C global written directly.
    guard let null = fopen("/dev/null", "w"), let stream = dlsym(nil, "stderr") else { return }
    stream.assumingMemoryBound(to: UnsafeMutablePointer<FILE>?.self).pointee = null
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Removes a file the command is writing if SIGINT, SIGTERM or SIGHUP ends
/// the process first (then the process dies of the signal, as it would
/// have): a conversion stopped with Ctrl-C leaves no half-written file.
enum RemoveOnInterrupt {
    /// Runs `body`; until it returns, the signals remove `path`.
    static func guarding<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
        let token = TerminationSignals.onTermination { _ in unlink(path) }
        defer { TerminationSignals.remove(token) }
        return try body()
    }
}
