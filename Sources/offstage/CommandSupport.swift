import ArgumentParser
import Dispatch
import Foundation
import OffstageDaemon
import Synchronization

/// The control socket the daemon and the commands use unless `--socket`
/// names another: `$OFFSTAGE_SOCKET_PATH`, or else the default under
/// `$XDG_RUNTIME_DIR`.
let defaultControlSocket = ProcessInfo.processInfo.environment["OFFSTAGE_SOCKET_PATH"] ?? DefaultPaths.controlSocket

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
    } catch {
        printError("offstage: error: \(error)")
        throw ExitCode.failure
    }
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
