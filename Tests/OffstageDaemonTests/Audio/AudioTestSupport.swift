import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

/// Records a backend's events and lets a test await the next one that
/// matches (woken by the event itself, bounded by a timeout).
final class AudioEventRecorder: Sendable {
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
    init() {}

    /// Records a stream (with the time each event is read).
    init(_ events: AsyncStream<AudioEvent>) {
        let t = Task { [self] in
            for await event in events { record(event) }
        }
        task.withLock { $0 = t }
    }

    deinit { task.withLock { $0?.cancel() } }

    func record(_ event: AudioEvent, at now: ContinuousClock.Instant = .now) {
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
    var all: [AudioEvent] { state.withLock { $0.events.map(\.0) } }

    /// When `event` was first seen.
    func time(of event: AudioEvent) -> ContinuousClock.Instant? {
        state.withLock { $0.events.first { $0.0 == event }?.1 }
    }

    /// The first event after those already awaited that matches, waiting up
    /// to `timeout` for it; nil if none came.
    func next(timeout: Duration = .seconds(10), _ matches: @escaping @Sendable (AudioEvent) -> Bool) async -> AudioEvent? {
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
    func next(_ event: AudioEvent, timeout: Duration = .seconds(10)) async -> AudioEvent? {
        await next(timeout: timeout) { $0 == event }
    }
}

/// A private PulseAudio server and a backend connected to it.
struct PulseRig {
    let server: PrivatePulseAudio
    let backend: PulseAudioBackend
    let recorder: AudioEventRecorder

    init(headphones: Bool = false, options: (inout PulseAudioOptions) -> Void = { _ in }) throws {
        server = try PrivatePulseAudio(headphones: headphones)
        let recorder = AudioEventRecorder()
        var o = PulseAudioOptions(server: server.serverAddress)
        o.reconnectInterval = .milliseconds(250)
        // Stamped where they happen: a busy test pool would delay a reader.
        o.eventProbe = { event, time in recorder.record(event, at: time) }
        options(&o)
        backend = try PulseAudioBackend(options: o)
        self.recorder = recorder
    }

    /// The environment for a PulseAudio command-line client of this server.
    var clientEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = server.serverAddress
        environment["PULSE_COOKIE"] = server.directory.appendingPathComponent("cookie").path
        return environment
    }

    /// Starts `paplay` on this server (a separate client, as another app would be).
    func paplay(_ path: String, role: AudioRole) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/paplay")
        process.arguments = ["--property=media.role=\(role.rawValue)", path]
        process.environment = clientEnvironment
        try process.run()
        return process
    }
}
