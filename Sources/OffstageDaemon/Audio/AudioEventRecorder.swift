import Synchronization
import OffstageCore

/// Records a backend's events, each with the time it happened, and lets a
/// caller await the next one that matches (woken by the event itself,
/// bounded by a timeout).
///
/// Feed it from ``PulseAudioOptions/eventProbe`` to stamp events where they
/// happen, or from a backend's `events` stream.
public final class AudioEventRecorder: Sendable {
    private struct Waiter {
        var id: Int
        var matches: @Sendable (AudioEvent) -> Bool
        var continuation: CheckedContinuation<AudioEvent?, Never>
    }
    private struct State {
        var events: [(AudioEvent, ContinuousClock.Instant)] = []
        /// Events before this index were already handed to a waiter.
        var consumed = 0
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }
    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Records what a backend's probe reports (with the time it happened).
    public init() {}

    /// Records a stream (with the time each event is read).
    public init(_ events: AsyncStream<AudioEvent>) {
        let t = Task { [self] in
            for await event in events { record(event) }
        }
        task.withLock { $0 = t }
    }

    deinit { task.withLock { $0?.cancel() } }

    public func record(_ event: AudioEvent, at now: ContinuousClock.Instant = .now) {
        let woken = state.withLock { s -> [(CheckedContinuation<AudioEvent?, Never>, AudioEvent)] in
            s.events.append((event, now))
            guard let index = s.waiters.firstIndex(where: { $0.matches(event) }) else { return [] }
            let waiter = s.waiters.remove(at: index)
            s.consumed = s.events.count
            return [(waiter.continuation, event)]
        }
        for (continuation, event) in woken { continuation.resume(returning: event) }
    }

    /// Everything seen so far.
    public var all: [AudioEvent] { state.withLock { $0.events.map(\.0) } }

    /// When `event` was seen, each time.
    public func times(of event: AudioEvent) -> [ContinuousClock.Instant] {
        state.withLock { $0.events.filter { $0.0 == event }.map(\.1) }
    }

    /// When `event` was first seen.
    public func time(of event: AudioEvent) -> ContinuousClock.Instant? {
        state.withLock { $0.events.first { $0.0 == event }?.1 }
    }

    /// The first event after those already awaited that matches, waiting up
    /// to `timeout` for it; nil if none came.
    public func next(timeout: Duration = .seconds(10), _ matches: @escaping @Sendable (AudioEvent) -> Bool) async -> AudioEvent? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> AudioEvent? in
                if let index = s.events[s.consumed...].firstIndex(where: { matches($0.0) }) {
                    s.consumed = index + 1
                    return s.events[index].0
                }
                let id = s.nextWaiter
                s.nextWaiter += 1
                s.waiters.append(Waiter(id: id, matches: matches, continuation: continuation))
                Task { [self] in
                    try? await Task.sleep(for: timeout)
                    let expired = state.withLock { s -> CheckedContinuation<AudioEvent?, Never>? in
                        guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                        return s.waiters.remove(at: index).continuation
                    }
                    expired?.resume(returning: nil)
                }
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Awaits an exact event.
    public func next(_ event: AudioEvent, timeout: Duration = .seconds(10)) async -> AudioEvent? {
        await next(timeout: timeout) { $0 == event }
    }
}
