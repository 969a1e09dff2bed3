import CPulse
import Foundation
import OffstageCore

/// The connection to the sound server and its players. Touched only with
/// the loop's lock held (see ``PulseLock``).
final class PulseConnection {
    let mainloop: OpaquePointer
    let options: PulseAudioOptions
    let continuation: AsyncStream<AudioEvent>.Continuation
    /// Set once the backend exists, for the decoder threads to come back
    /// through (weak: the lock owns this connection).
    weak var lock: PulseLock?

    private(set) var context: OpaquePointer?
    private(set) var connected = false
    private var everConnected = false
    private var lossReported = false
    /// Why the first connection failed (the backend's init throws it).
    private(set) var firstFailure: String?
    private var reconnectPending = false
    private var closing = false

    var players: [AudioPlayerID: PulsePlayer] = [:]
    /// The route of every sink this server's listings have shown (the
    /// first is made once the latency anchor is ready). A server never
    /// reuses a sink's index, so what was learnt of one stays true, even
    /// once the sink is gone; a restarted server numbers its sinks afresh,
    /// so a lost connection forgets them.
    private(set) var sinkRoutes: [UInt32: AudioRoute] = [:]
    private var nextPlayer = 1
    /// A corked, empty stream holding the server at our latency.
    private var latencyAnchor: OpaquePointer?
    /// Queries under way, held here because libpulse holds them unretained
    /// (released when they complete or the connection fails, which cancels them).
    private var pending: [ObjectIdentifier: AnyObject] = [:]
    /// Decoders of closed players whose threads may still be finishing,
    /// held weakly: a running decoder's thread holds its own, and one that
    /// has exited goes at once, with its file and ring.
    private var retired: [WeakFeeder] = []

    private struct WeakFeeder {
        weak var feeder: AudioFeeder?
    }

    init(mainloop: OpaquePointer, options: PulseAudioOptions, continuation: AsyncStream<AudioEvent>.Continuation) {
        self.mainloop = mainloop
        self.options = options
        self.continuation = continuation
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// What to call the server in messages.
    var serverName: String {
        // An empty PULSE_SERVER names nothing (libpulse refuses it as an invalid server).
        let environment = ProcessInfo.processInfo.environment["PULSE_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
        return options.server ?? environment ?? "the default PulseAudio server"
    }

    // MARK: Connection

    /// Starts connecting; the state callback reports how it went.
    func connect() {
        let api = pa_threaded_mainloop_get_api(mainloop)
        guard let context = pa_context_new(api, options.clientName) else {
            fail(reason: "cannot create a PulseAudio context")
            return
        }
        self.context = context
        pa_context_set_state_callback(context, PulseCallbacks.contextState, userdata)
        if pa_context_connect(context, options.server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            // The state callback may have handled (and released) it already.
            guard self.context == context else { return }
            let reason = pulseErrorText(context)
            drop(context)
            fail(reason: reason)
        }
    }

    func contextStateChanged(_ context: OpaquePointer) {
        guard context == self.context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            // Connected once the anchor holds the server at our latency.
            openLatencyAnchor(context)
            if latencyAnchor == nil { listSinksThenConnect() }
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            let reason = pulseErrorText(context)
            drop(context)
            fail(reason: reason)
        default:
            break
        }
    }

    /// Without an anchor: connected once the outputs are known (the first
    /// listing, which a route change's newness is judged against), as the
    /// anchor's path is (``restartIdleNullSink(_:)``).
    private func listSinksThenConnect() {
        listSinks { [unowned self] _ in becomeConnected() }
    }

    /// Reports the connection (or the reconnection) and lets players be made.
    func becomeConnected() {
        guard !connected, context != nil else { return }
        connected = true
        lossReported = false
        emit(everConnected ? .mediaServicesReset : .connected(serverName))
        everConnected = true
        pa_threaded_mainloop_signal(mainloop, 0)
    }

    private func drop(_ context: OpaquePointer) {
        if let latencyAnchor {
            pa_stream_set_state_callback(latencyAnchor, nil, nil)
            pa_stream_disconnect(latencyAnchor)
            pa_stream_unref(latencyAnchor)
            self.latencyAnchor = nil
        }
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        if self.context == context { self.context = nil }
    }

    /// The connection failed or was lost: forget every player and retry.
    private func fail(reason: String) {
        connected = false
        for player in players.values { retire(player) }
        players.removeAll()
        pending.removeAll()
        sinkRoutes.removeAll()
        // Wakes callers waiting for an operation the failure cancelled.
        pa_threaded_mainloop_signal(mainloop, 0)
        guard everConnected else {
            firstFailure = reason
            pa_threaded_mainloop_signal(mainloop, 0)
            return
        }
        if !lossReported {
            lossReported = true
            emit(.disconnected("lost \(serverName): \(reason)"))
        }
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        guard !closing, !reconnectPending else { return }
        reconnectPending = true
        let api = pa_threaded_mainloop_get_api(mainloop)!
        var when = timeval()
        pa_gettimeofday(&when)
        pa_timeval_add(&when, pa_usec_t(options.reconnectInterval.nanoseconds / 1000))
        _ = api.pointee.time_new(api, &when, PulseCallbacks.reconnectTimer, userdata)
    }

    func reconnectTimerFired() {
        reconnectPending = false
        guard !closing, context == nil else { return }
        connect()
    }

    /// Disconnects for good.
    /// - Returns: the players' decoders, to wait for once the lock is released.
    func close() -> [AudioFeeder] {
        closing = true
        for player in players.values { retire(player) }
        players.removeAll()
        pending.removeAll()
        if let context { drop(context) }
        connected = false
        return retired.compactMap(\.feeder)
    }

    /// Opens the latency anchor: a stream that stays corked and is never
    /// written to, asking for the engine's latency. A null sink with no
    /// low-latency client renders in 2 s blocks and takes a new stream's
    /// latency only at its next block, so a player created then would
    /// start (and end) up to 2 s late; the anchor keeps the sink at our
    /// latency for as long as we are connected. A corked stream costs no
    /// data and no wakeups here.
    private func openLatencyAnchor(_ context: OpaquePointer) {
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: 48000, channels: 2)
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, "production")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, options.clientName)
        guard let stream = pa_stream_new_with_proplist(context, "latency anchor", &spec, nil, properties) else { return }
        var attributes = pa_buffer_attr.playback(latency: options.latency, queued: options.latency, spec: spec)
        pa_stream_set_state_callback(stream, PulseCallbacks.anchorState, userdata)
        guard pa_stream_connect_playback(stream, nil, &attributes, PA_STREAM_START_CORKED, nil, nil) == 0 else {
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_unref(stream)
            return
        }
        latencyAnchor = stream
    }

    func anchorStateChanged(_ stream: OpaquePointer) {
        guard stream == latencyAnchor else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            restartIdleNullSink(pa_stream_get_device_index(stream))
        case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
            listSinksThenConnect()
        default:
            break
        }
    }

    /// Creating the anchor wakes a suspended sink before the server has
    /// its latency, and a null sink then renders a 2 s block and keeps
    /// that timer: a player started before `module-suspend-on-idle`
    /// suspends it again would start up to 2 s late. So an idle null
    /// sink (nothing playing, nothing to hear) is suspended and resumed
    /// once, which starts it afresh at the anchor's latency; other sinks
    /// are left alone.
    private func restartIdleNullSink(_ index: UInt32) {
        listSinks { [unowned self] sinks in
            guard let context, let sink = sinks[index], sink.isNullSink, sink.isIdle else {
                becomeConnected()
                return
            }
            if let op = pa_context_suspend_sink_by_index(context, index, 1, nil, nil) { pa_operation_unref(op) }
            if let op = pa_context_suspend_sink_by_index(context, index, 0, PulseCallbacks.sinkRestarted, userdata) {
                pa_operation_unref(op)
            } else {
                becomeConnected()
            }
        }
    }

    // MARK: Players

    func newPlayerID() -> AudioPlayerID {
        defer { nextPlayer += 1 }
        return AudioPlayerID(nextPlayer)
    }

    func player(_ id: AudioPlayerID) throws(AudioError) -> PulsePlayer {
        guard let player = players[id] else { throw .noSuchPlayer(id) }
        return player
    }

    /// Closes a player (the caller forgets it); ``close()`` can still wait
    /// for its decoder while the decoder's thread runs.
    func retire(_ player: PulsePlayer) {
        player.close()
        retired.removeAll { $0.feeder == nil }
        retired.append(WeakFeeder(feeder: player.feeder))
    }

    func emit(_ event: AudioEvent) {
        options.eventProbe?(event, ContinuousClock.now)
        continuation.yield(event)
    }

    // MARK: Sinks

    /// Lists the outputs, then calls `then` with the list.
    func listSinks(then: @escaping ([UInt32: PulseSink]) -> Void) {
        let listing = PulseSinkListing(mainloop: mainloop, completion: nil)
        let key = ObjectIdentifier(listing)
        listing.completion = { [unowned self] sinks in
            self.pending[key] = nil
            for (index, sink) in sinks { self.sinkRoutes[index] = sink.route }
            then(sinks)
        }
        ask(listing) { pa_context_get_sink_info_list($0, PulseCallbacks.sinkList, $1) }
    }

    /// Asks whether sink input `index` is muted, then calls `then` with
    /// the answer (nil: the input is gone). The server answers after
    /// everything sent before the question.
    func sinkInputMuted(_ index: UInt32, then: @escaping (Bool?) -> Void) {
        let query = PulseSinkInputMuteQuery()
        let key = ObjectIdentifier(query)
        query.completion = { [unowned self] muted in
            self.pending[key] = nil
            then(muted)
        }
        ask(query) { pa_context_get_sink_input_info($0, index, PulseCallbacks.sinkInputMute, $1) }
    }

    /// Asks whether a call (an uncorked, unmuted `phone` stream) is on
    /// the server, then calls `then` with the answer.
    func callActive(then: @escaping (Bool) -> Void) {
        let query = PulseCallQuery()
        let key = ObjectIdentifier(query)
        query.completion = { [unowned self] active in
            self.pending[key] = nil
            then(active)
        }
        ask(query) { pa_context_get_sink_input_info_list($0, PulseCallbacks.sinkInputCall, $1) }
    }

    /// Sends an introspection request for `query` (its completion removes
    /// it from ``pending``), keeping the query alive until it answers.
    private func ask(_ query: AnyObject, _ send: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?) {
        guard let context else { return }
        let key = ObjectIdentifier(query)
        pending[key] = query
        if let op = send(context, Unmanaged.passUnretained(query).toOpaque()) {
            pa_operation_unref(op)
        } else {
            pending[key] = nil
        }
    }
}
