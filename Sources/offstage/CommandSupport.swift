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
