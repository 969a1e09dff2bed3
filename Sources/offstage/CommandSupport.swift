import ArgumentParser
import Dispatch
import Foundation
import Synchronization

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

/// Waits until SIGINT or SIGTERM arrives (the signals are then handled
/// here instead of ending the process).
func waitForTermination() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let once = OnceFlag()
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler { if once.claim() { continuation.resume() } }
            source.resume()
            sources.append(source)
        }
        signalSources = sources
    }
}

/// Keeps the signal sources alive for the life of the process.
nonisolated(unsafe) private var signalSources: [DispatchSourceSignal] = []

/// True for the first caller only.
private final class OnceFlag: Sendable {
    private let taken = Mutex(false)
    func claim() -> Bool { taken.withLock { t in defer { t = true }; return !t } }
}

/// Removes a file the command is writing if SIGINT, SIGTERM or SIGHUP ends
/// the process first (then the process dies of the signal, as it would
/// have): a conversion stopped with Ctrl-C leaves no half-written file. A
/// signal the process ignores (`nohup`, a background job's SIGINT) stays
/// ignored, and each signal's handling is restored afterwards.
enum RemoveOnInterrupt {
    /// The path, as a C string the handler can use (`unlink` is
    /// async-signal-safe, a Swift string is not). Never freed: a handler
    /// running on another thread may still read it.
    nonisolated(unsafe) fileprivate static var path: UnsafeMutablePointer<CChar>?
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// Runs `body`; until it returns, the signals remove `path`.
    static func guarding<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
        self.path = strdup(path)
        var previous: [(Int32, sigaction)] = []
        for number in signals {
            var old = sigaction()
            sigaction(number, nil, &old)
            let ignored = unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
            if ignored { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = removeAndDie
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
            previous.append((number, old))
        }
        defer {
            for (number, old) in previous {
                var old = old
                sigaction(number, &old, nil)
            }
        }
        return try body()
    }
}

private func removeAndDie(_ number: Int32) {
    if let path = RemoveOnInterrupt.path { unlink(path) }
    signal(number, SIG_DFL)
    raise(number)
}
