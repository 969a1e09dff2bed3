import Foundation
import Logging
import NIOCore
import OffstageCore
import OffstageDaemon
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Every event the daemon logs, stamped with the monotonic clock at the
/// moment the engine records it (on its event loop).
///
/// The engine records a `callback` event just before it writes the callback
/// to the app, and the events a callback's acknowledgement causes (a state
/// change) while it handles the ack, so the gap between the two is the
/// engine's own deliver → ack time, without the control API around it.
final class EventStamps: Sendable {
    struct Stamp: Sendable {
        var seq: Int
        var kind: EventKind
        var app: String?
        var name: String
        var nanos: UInt64
    }

    private let stamps = Mutex<[Stamp]>([])

    func record(_ event: Event) {
        let nanos = monotonicNanos()
        stamps.withLock {
            $0.append(Stamp(seq: event.seq, kind: event.kind, app: event.app, name: event.name, nanos: nanos))
        }
    }

    /// The stamps so far, forgetting them.
    func take() -> [Stamp] {
        stamps.withLock {
            let taken = $0
            $0.removeAll(keepingCapacity: true)
            return taken
        }
    }
}

extension Array where Element == EventStamps.Stamp {
    /// The first stamp matching `kind`/`name` at or after `index`.
    func firstIndex(_ kind: EventKind, _ name: String, from index: Int = 0) -> Int? {
        guard index < count else { return nil }
        return self[index...].firstIndex { $0.kind == kind && $0.name == name }
    }
}

/// A private daemon in this process, in its own directory, with the event
/// stamps subscribed.
struct DaemonHarness {
    let daemon: RunningDaemon
    let stamps = EventStamps()
    let directory: String

    /// Starts a daemon whose apps are looked up next to this binary.
    static func start(
        in directory: String, clock: ClockMode, policy: LifecyclePolicy = .default, ephemeral: Bool,
        searchPath: String
    ) async throws -> DaemonHarness {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var logger = Logger(label: "offstage.bench")
        logger.logLevel = .error
        let configuration = DaemonConfiguration(
            dataDirectory: directory + "/data", controlSocket: directory + "/c.sock", appSocket: directory + "/a.sock",
            clock: clock, policy: policy, executableSearchPaths: [searchPath], ephemeral: ephemeral)
        let daemon = try await RunningDaemon.start(configuration)
        let harness = DaemonHarness(daemon: daemon, directory: directory)
        let stamps = harness.stamps
        _ = try await daemon.engine.submit { engine in engine.log.subscribe { stamps.record($0) } }.get()
        return harness
    }

    /// Runs a control command; a failure, or errors the command caused, throw.
    @discardableResult
    func control(_ request: JSONValue) async throws -> JSONValue {
        switch try await daemon.control(request) {
        case .ok(let result):
            if let errors = result["errors"] {
                throw BenchError("\(request.jsonText) caused errors: \(errors.jsonText)")
            }
            return result
        case .failure(let message):
            throw BenchError("\(request.jsonText) failed: \(message)")
        }
    }

    func install(_ path: String) async throws -> String {
        let result = try await control(["command": "install", "path": .string(path)])
        guard let id = result["bundleID"]?.stringValue else { throw BenchError("install \(path): no bundle id") }
        return id
    }

    /// The pid of an app's process, from `status`.
    func pid(of app: String) async throws -> Int32? {
        let status = try await control(["command": "status"])
        let entry = status["apps"]?.arrayValue?.first { $0["bundleID"]?.stringValue == app }
        return entry?["pid"]?.intValue.map { Int32($0) }
    }

    func stop() async {
        await daemon.stop()
    }
}

/// Blocks until BenchApp (`pid`) is stopped, as the ping-pong baseline
/// waits for its child in `waitpid`: the waiting thread sleeps instead of
/// polling `/proc`. An app that is never frozen (a policy gone wrong) ends
/// the benchmark after 30 s with a message, instead of hanging it: an
/// alarm, two system calls, outside the timed spans.
func waitStopped(_ pid: Int32) throws {
    _ = installStopWatchdog
    alarm(30)
    defer { alarm(0) }
    guard AppProcessHost.waitStopped(pid) else { throw BenchError("BenchApp ended instead of stopping") }
}

/// SIGALRM's handler for ``waitStopped(_:)``: says why, and exits 1.
private let installStopWatchdog: Void = {
    signal(SIGALRM) { _ in
        let message: StaticString = "bench: BenchApp was not frozen within 30 s (it should be suspended between wakes)\n"
        _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
        _exit(1)
    }
}()
