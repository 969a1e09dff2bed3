import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

/// What a source reported so far.
struct Recorded {
    var events: [LocationSourceEvent] = []
    var fixes: [LocationFix] {
        events.compactMap { if case .fix(let f) = $0 { f.fix } else { nil } }
    }
    var connectedCount: Int { events.filter { if case .connected = $0 { true } else { false } }.count }
    var disconnectedCount: Int { events.filter { if case .disconnected = $0 { true } else { false } }.count }
}

/// Everything a source reported, for tests to read and to await.
final class SourceRecorder: Sendable {
    private struct Waiter {
        let condition: @Sendable (Recorded) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var recorded = Recorded()
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }
    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts consuming a source.
    init(_ source: some LocationSource) {
        let stream = source.events()
        let t = Task { [self] in
            for await event in stream { append(event) }
        }
        task.withLock { $0 = t }
    }

    /// Stops consuming (which stops the source's thread).
    func cancel() { task.withLock { $0?.cancel() } }

    /// Records an event and resumes the waits it satisfies.
    private func append(_ event: LocationSourceEvent) {
        let satisfied = state.withLock { state in
            state.recorded.events.append(event)
            let ready = state.waiters.filter { $0.value.condition(state.recorded) }
            for id in ready.keys { state.waiters[id] = nil }
            return Array(ready.values)
        }
        for waiter in satisfied { waiter.continuation.resume(returning: true) }
    }

    var recorded: Recorded { state.withLock { $0.recorded } }
    var fixes: [LocationFix] { recorded.fixes }
    var connectedCount: Int { recorded.connectedCount }
    var disconnectedCount: Int { recorded.disconnectedCount }

    /// Awaits the first event after which `condition` holds (at once if it
    /// already does), checked as each event arrives; false after `timeout`.
    func until(timeout: Duration = .seconds(15), _ condition: @escaping @Sendable (Recorded) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let id: Int? = state.withLock { state in
                if condition(state.recorded) { return nil }
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                return id
            }
            guard let id else { return continuation.resume(returning: true) }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                let expired = state.withLock { $0.waiters.removeValue(forKey: id) }
                expired?.continuation.resume(returning: false)
            }
        }
    }
}

/// A pty and a private gpsd reading it, ready to be fed.
struct GPSDRig {
    let pty: LocationPTY
    let gpsd: PrivateGPSD
    var endpoint: GPSDEndpoint { gpsd.endpoint }

    init() throws {
        pty = try LocationPTY()
        gpsd = try PrivateGPSD(devices: [pty.devicePath])
        guard GPSDControl.waitForDevice(pty.devicePath, port: gpsd.port) else {
            throw LocationSystemError("gpsd did not activate \(pty.devicePath)")
        }
    }

    /// A source for this rig's device, with quick reconnection.
    func source() -> GPSDLocationSource {
        GPSDLocationSource(
            endpoint: endpoint,
            reconnect: LocationReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
            device: pty.devicePath)
    }
}
