import OffstageCore
import Synchronization

/// The playback engine in virtual time: the same files, errors and rules
/// as ``PulseAudioBackend``, with no server. Positions follow the time
/// given to ``advance(to:)``; the end of a file arrives at exactly the
/// virtual time its last frame plays; interruptions, route changes and
/// server resets are injected.
///
/// ```swift
/// let audio = VirtualAudioBackend()
/// let id = try audio.makePlayer(AudioPlayerRequest(path: "clip.ogg", appName: "Radio"))
/// try audio.play(id)
/// audio.advance(by: .seconds(5))      // .player(id, .ended) arrives on `events`
/// ```
public final class VirtualAudioBackend: AudioBackend {
    public let events: AsyncStream<AudioEvent>
    private let continuation: AsyncStream<AudioEvent>.Continuation
    private let server: Mutex<VirtualAudioServer>

    /// - Parameters:
    ///   - start: the virtual time now.
    ///   - headphones: start with the headphones plugged in.
    public init(start: ClockTime = .zero, headphones: Bool = false) {
        (events, continuation) = AsyncStream.makeStream(of: AudioEvent.self, bufferingPolicy: .unbounded)
        server = Mutex(VirtualAudioServer(now: start, headphonesPlugged: headphones))
        continuation.yield(.connected("the virtual sound server"))
    }

    deinit { continuation.finish() }

    /// The virtual time now.
    public var now: ClockTime { server.withLock { $0.now } }

    /// When the next file ends, if one is playing (for a scheduler).
    public var nextDeadline: ClockTime? { server.withLock { $0.nextDeadline } }

    /// Moves virtual time forward, reporting each end in order.
    public func advance(to time: ClockTime) { apply { $0.advance(to: time) } }

    /// Moves virtual time forward by `duration`.
    public func advance(by duration: Duration) { apply { $0.advance(to: $0.now + duration) } }

    /// Every event reported by this input, with its virtual time.
    @discardableResult
    private func apply(_ body: (inout VirtualAudioServer) -> [TimedAudioEvent]) -> [TimedAudioEvent] {
        // Yield under the lock so events from concurrent inputs keep their order.
        server.withLock { server in
            let events = body(&server)
            for timed in events { continuation.yield(timed.event) }
            return events
        }
    }

    private func applying(_ body: (inout VirtualAudioServer) throws(AudioError) -> [TimedAudioEvent]) throws(AudioError) {
        try server.withLock { server throws(AudioError) in
            let events = try body(&server)
            for timed in events { continuation.yield(timed.event) }
        }
    }

    // MARK: AudioBackend

    public func makePlayer(_ request: AudioPlayerRequest) throws(AudioError) -> AudioPlayerID {
        let duration = try AudioFile.forPlayback(path: request.path).duration
        return server.withLock { server in
            let (id, events) = server.makePlayer(duration: duration, role: request.role, looping: request.looping, at: server.now)
            for timed in events { continuation.yield(timed.event) }
            return id
        }
    }

    public func play(_ id: AudioPlayerID) throws(AudioError) {
        try applying { server throws(AudioError) in try server.play(id, at: server.now) }
    }

    public func pause(_ id: AudioPlayerID) throws(AudioError) {
        try applying { server throws(AudioError) in try server.pause(id, at: server.now) }
    }

    public func stop(_ id: AudioPlayerID) throws(AudioError) {
        try applying { server throws(AudioError) in try server.stop(id, at: server.now) }
    }

    public func seek(_ id: AudioPlayerID, to position: Duration) throws(AudioError) {
        try applying { server throws(AudioError) in try server.seek(id, to: position, at: server.now) }
    }

    public func setVolume(_ id: AudioPlayerID, _ volume: Double) throws(AudioError) {
        try applying { server throws(AudioError) in try server.setVolume(id, volume, at: server.now) }
    }

    public func position(_ id: AudioPlayerID) throws(AudioError) -> Duration {
        try server.withLock { server throws(AudioError) in try server.position(id) }
    }

    public func state(_ id: AudioPlayerID) throws(AudioError) -> AudioPlayerMachine.State {
        try server.withLock { server throws(AudioError) in try server.state(id) }
    }

    public func route() throws(AudioError) -> AudioRoute { server.withLock { $0.route } }

    public func unplugHeadphones() throws(AudioError) {
        try applying { server throws(AudioError) in
            guard server.headphonesPlugged else { throw AudioError(.invalidArgument, "no headphones are plugged in") }
            return server.unplugHeadphones(at: server.now)
        }
    }

    public func plugHeadphones() throws(AudioError) {
        try applying { server throws(AudioError) in
            guard !server.headphonesPlugged else { throw AudioError(.invalidArgument, "headphones are already plugged in") }
            return server.plugHeadphones(at: server.now)
        }
    }

    // MARK: Injection

    /// A call starts: every `music` player is interrupted.
    public func beginInterruption() { apply { $0.beginInterruption(at: $0.now) } }

    /// The call ends; `shouldResume: false` for another app's non-mixable audio.
    public func endInterruption(shouldResume: Bool) { apply { $0.endInterruption(shouldResume: shouldResume, at: $0.now) } }

    /// The server dies and comes back: players are gone, media services reset.
    public func resetMediaServices() { apply { $0.resetMediaServices(at: $0.now) } }
}
