import CPulse
import Foundation
import OffstageCore
import Synchronization

/// How to reach and use the sound server.
public struct PulseAudioOptions: Sendable {
    /// The server address (`unix:/path` or `tcp:host`); nil for libpulse's
    /// default: `PULSE_SERVER`, else the user's running server.
    public var server: String?
    /// The client name the server shows.
    public var clientName = "Offstage"
    /// The sink latency each stream asks for: small, so positions, pauses
    /// and the end of a file are exact (the null sink otherwise plays in
    /// 2 s blocks).
    public var latency: Duration = .milliseconds(50)
    /// How much audio each stream keeps queued on the server beyond the
    /// latency. The server asks for more when half of it has played, so a
    /// player wakes the engine about twice per buffering; the queue does
    /// not delay anything (a pause corks at once, a seek flushes it).
    public var buffering: Duration = .seconds(2)
    /// How long to wait between reconnection attempts.
    public var reconnectInterval: Duration = .seconds(1)
    /// Called on libpulse's thread the moment a cork (`true`) or uncork
    /// request reaches a player, before its event is reported (for
    /// measuring delivery).
    public var serverRequestProbe: (@Sendable (AudioPlayerID, Bool, ContinuousClock.Instant) -> Void)?
    /// Called on the thread that reports each event, as it is put on
    /// ``AudioBackend/events`` (for tests and benchmarks that time events
    /// where they happen rather than where a task reads them).
    public var eventProbe: (@Sendable (AudioEvent, ContinuousClock.Instant) -> Void)?

    public init(server: String? = nil) { self.server = server }
}

/// The playback engine on a real PulseAudio server, over libpulse's
/// threaded main loop.
///
/// Each player is one stream carrying `media.role` and the app's name,
/// fed by a decoder thread (``AudioFeeder``), so libpulse's thread only
/// copies bytes. The server's cork and uncork requests (from
/// `module-role-cork`) become interruptions, stream moves become route
/// changes, the drained stream becomes the end. When the server dies the
/// backend reports ``AudioEvent/disconnected(_:)``, forgets its players,
/// reconnects about once a second and then reports
/// ``AudioEvent/mediaServicesReset``.
///
/// ```swift
/// let audio = try PulseAudioBackend(options: PulseAudioOptions(server: "unix:/tmp/pulse/native"))
/// let id = try audio.makePlayer(AudioPlayerRequest(path: "clip.ogg", appName: "Radio"))
/// try audio.play(id)
/// for await event in audio.events { print(event) }
/// ```
public final class PulseAudioBackend: AudioBackend {
    public let events: AsyncStream<AudioEvent>
    private let continuation: AsyncStream<AudioEvent>.Continuation
    private let lock: PulseLock

    /// Connects to the server.
    /// - Throws: ``AudioError`` `serverUnavailable` when the first
    ///   connection fails (later losses are retried).
    public init(options: PulseAudioOptions = PulseAudioOptions()) throws(AudioError) {
        (events, continuation) = AsyncStream.makeStream(of: AudioEvent.self, bufferingPolicy: .unbounded)
        guard let mainloop = pa_threaded_mainloop_new() else {
            throw AudioError(.serverUnavailable, "cannot create a PulseAudio main loop")
        }
        let connection = PulseConnection(mainloop: mainloop, options: options, continuation: continuation)
        lock = PulseLock(mainloop: mainloop, connection: connection)
        connection.lock = lock
        pa_threaded_mainloop_set_name(mainloop, "offstage-pulse")
        // On a failure below, deinit stops and frees the loop.
        guard pa_threaded_mainloop_start(mainloop) == 0 else {
            throw AudioError(.serverUnavailable, "cannot start the PulseAudio main loop")
        }
        let failure = lock.withLock { connection -> String? in
            connection.connect()
            while !connection.connected, connection.firstFailure == nil { lock.wait() }
            return connection.firstFailure
        }
        if let failure {
            throw AudioError(
                .serverUnavailable,
                "cannot reach \(connection.serverName): \(failure) (is a PulseAudio server running? `offstage audio server` starts one)")
        }
    }

    deinit { shutDown() }

    private func shutDown() {
        let feeders = lock.withLock { $0.close() }
        // A decoder thread may be about to take the loop's lock: let every
        // one finish before the loop is freed.
        for feeder in feeders { feeder.waitUntilStopped() }
        pa_threaded_mainloop_stop(lock.mainloop)
        pa_threaded_mainloop_free(lock.mainloop)
        continuation.finish()
    }

    /// Runs `body` while this backend's loop thread is held off (its lock
    /// held): whatever the server sends meanwhile waits in the socket. For
    /// tests that need the server to act before this client can answer.
    func withLoopHeld<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try lock.withLock { _ throws(E) in try body() }
    }

    // MARK: AudioBackend

    public func makePlayer(_ request: AudioPlayerRequest) throws(AudioError) -> AudioPlayerID {
        // Opened (and checked to its end) before taking the loop's lock,
        // then handed over to the player's decoder.
        let opened = Mutex<AudioFile?>(try AudioFile.forPlayback(path: request.path))
        return try lock.withLock { connection throws(AudioError) in
            guard connection.connected else { throw AudioError(.serverUnavailable, "not connected to \(connection.serverName)") }
            let id = connection.newPlayerID()
            let file = opened.withLock { $0.take()! }
            connection.players[id] = try PulsePlayer(id: id, request: request, file: file, connection: connection)
            return id
        }
    }

    public func play(_ id: AudioPlayerID) throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).play() }
    }

    public func pause(_ id: AudioPlayerID) throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).pause() }
    }

    public func stop(_ id: AudioPlayerID) throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in
            let player = try connection.player(id)
            player.stop()
            connection.retire(player)
            connection.players[id] = nil
        }
    }

    public func seek(_ id: AudioPlayerID, to position: Duration) throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).seek(to: position) }
    }

    public func setVolume(_ id: AudioPlayerID, _ volume: Double) throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).setVolume(volume) }
    }

    public func position(_ id: AudioPlayerID) throws(AudioError) -> Duration {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).position }
    }

    public func state(_ id: AudioPlayerID) throws(AudioError) -> AudioPlayerMachine.State {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).machine.state }
    }

    /// Whether a player has written its whole file and asked the server to
    /// drain it (tests wait for it before racing the end).
    func isDraining(_ id: AudioPlayerID) throws(AudioError) -> Bool {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).isDraining }
    }

    /// The duration of a player's file.
    public func duration(_ id: AudioPlayerID) throws(AudioError) -> Duration {
        try lock.withLock { connection throws(AudioError) in try connection.player(id).duration }
    }

    public func route() throws(AudioError) -> AudioRoute {
        try lock.withLock { connection throws(AudioError) in
            let context = try Self.context(connection)
            let query = PulseServerInfoQuery(mainloop: connection.mainloop)
            let retained = Unmanaged.passRetained(query)
            defer { retained.release() }
            guard let op = pa_context_get_server_info(context, PulseCallbacks.serverInfo, retained.toOpaque()) else {
                throw AudioError(.serverUnavailable, "cannot query \(connection.serverName)")
            }
            try wait(for: op, on: connection) { query.done }
            let sinks = try listSinks(connection)
            guard !sinks.isEmpty else { throw AudioError(.streamFailed, Self.noSinkMessage(connection.serverName)) }
            return sinks.values.first { $0.name == query.defaultSink }?.route ?? .speaker
        }
    }

    public func unplugHeadphones() throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in
            let headphones = try listSinks(connection).values.filter { $0.route == .headphones }
            guard !headphones.isEmpty else { throw AudioError(.invalidArgument, "no headphones are plugged in") }
            for sink in headphones {
                guard sink.ownerModule != UInt32.max else {
                    throw AudioError(.invalidArgument, "the headphones (\(sink.name)) are a real device: unplug them by hand")
                }
                let result = PulseOperationResult(mainloop: connection.mainloop)
                let retained = Unmanaged.passRetained(result)
                defer { retained.release() }
                guard let op = pa_context_unload_module(try Self.context(connection), sink.ownerModule, PulseCallbacks.successResult, retained.toOpaque()) else {
                    throw AudioError(.serverUnavailable, "cannot reach \(connection.serverName)")
                }
                try wait(for: op, on: connection) { result.done }
                guard result.success else { throw AudioError(.streamFailed, "the server would not remove \(sink.name)") }
            }
        }
    }

    public func plugHeadphones() throws(AudioError) {
        try lock.withLock { connection throws(AudioError) in
            if let existing = try listSinks(connection).values.first(where: { $0.route == .headphones }) {
                throw AudioError(.invalidArgument, "headphones are already plugged in (\(existing.name))")
            }
            let result = PulseOperationResult(mainloop: connection.mainloop)
            let retained = Unmanaged.passRetained(result)
            defer { retained.release() }
            guard let op = pa_context_load_module(
                try Self.context(connection), "module-null-sink", PrivatePulseAudio.headphonesModuleArguments,
                PulseCallbacks.indexResult, retained.toOpaque())
            else { throw AudioError(.serverUnavailable, "cannot reach \(connection.serverName)") }
            try wait(for: op, on: connection) { result.done }
            guard result.success else { throw AudioError(.streamFailed, "the server would not add a headphones output") }
        }
    }

    // MARK: Helpers (with the lock held)

    private static func context(_ connection: PulseConnection) throws(AudioError) -> OpaquePointer {
        guard connection.connected, let context = connection.context else {
            throw AudioError(.serverUnavailable, "not connected to \(connection.serverName)")
        }
        return context
    }

    /// Waits (the lock released meanwhile) until `done`, or the operation
    /// is cancelled because the connection failed.
    /// - Throws: ``AudioError`` `serverUnavailable` if it never completed.
    private func wait(for op: OpaquePointer, on connection: PulseConnection, until done: () -> Bool) throws(AudioError) {
        while !done(), connection.connected, pa_operation_get_state(op) == PA_OPERATION_RUNNING { lock.wait() }
        pa_operation_unref(op)
        guard done() else { throw AudioError(.serverUnavailable, "lost \(connection.serverName) while waiting for it") }
    }

    /// Why nothing can play: the server has no output at all.
    static func noSinkMessage(_ serverName: String) -> String {
        "\(serverName) has no output to play on (no sink; `pactl load-module module-null-sink` adds one)"
    }

    private func listSinks(_ connection: PulseConnection) throws(AudioError) -> [UInt32: PulseSink] {
        let context = try Self.context(connection)
        let listing = PulseSinkListing(mainloop: connection.mainloop, completion: nil)
        try withExtendedLifetime(listing) { () throws(AudioError) in
            guard let op = pa_context_get_sink_info_list(context, PulseCallbacks.sinkList, Unmanaged.passUnretained(listing).toOpaque()) else {
                throw AudioError(.serverUnavailable, "cannot list the outputs of \(connection.serverName)")
            }
            try wait(for: op, on: connection) { listing.done }
        }
        return listing.sinks
    }
}
