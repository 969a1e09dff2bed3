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
        /// Gives up after the timeout; cancelled when the condition holds.
        let timeout: Task<Void, Never>
    }
    private struct State {
        var recorded = Recorded()
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }
    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts consuming a source.
    convenience init(_ source: some LocationSource) { self.init(source.events()) }

    /// Starts consuming a source's stream.
    init(_ stream: AsyncStream<LocationSourceEvent>) {
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
        for waiter in satisfied {
            waiter.timeout.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    var recorded: Recorded { state.withLock { $0.recorded } }
    var fixes: [LocationFix] { recorded.fixes }
    var connectedCount: Int { recorded.connectedCount }
    var disconnectedCount: Int { recorded.disconnectedCount }

    /// Awaits the first event after which `condition` holds (at once if it
    /// already does), checked as each event arrives; false after `timeout`.
    func until(timeout: Duration = .seconds(15), _ condition: @escaping @Sendable (Recorded) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let waiting = state.withLock { locked in
                if condition(locked.recorded) { return false }
                let id = locked.nextWaiter
                locked.nextWaiter += 1
                let giveUp = Task { [self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    let expired = state.withLock { $0.waiters.removeValue(forKey: id) }
                    expired?.continuation.resume(returning: false)
                }
                locked.waiters[id] = Waiter(condition: condition, continuation: continuation, timeout: giveUp)
                return true
            }
            if !waiting { continuation.resume(returning: true) }
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
        gpsd = try PrivateGPSD(devices: [pty.devicePath])  // started once it reads the pty
    }

    /// A source for this rig's device, with quick reconnection.
    func source() -> GPSDLocationSource {
        GPSDLocationSource(
            endpoint: endpoint,
            reconnect: LocationReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)),
            device: pty.devicePath)
    }
}
