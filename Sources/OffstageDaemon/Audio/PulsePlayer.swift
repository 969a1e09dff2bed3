import CPulse
import Foundation
import OffstageCore

/// One player: a PulseAudio playback stream fed by an ``AudioFeeder``, and
/// the ``AudioPlayerMachine`` that decides what the server's requests mean.
/// Touched only with the loop's lock held.
final class PulsePlayer {
    let id: AudioPlayerID
    let request: AudioPlayerRequest
    unowned let connection: PulseConnection
    private(set) var machine: AudioPlayerMachine
    let feeder: AudioFeeder
    private var stream: OpaquePointer?
    private var sampleSpec: pa_sample_spec
    private let bytesPerFrame: Int
    private let frameCount: Int
    let duration: Duration
    private var ready = false
    /// Audio has been written since the stream became ready or was flushed.
    private var primed = false
    /// An uncork waiting for the first audio (see ``cork(_:)``).
    private var uncorkWhenPrimed = false
    /// The decoder has nothing more to give (the end, or an error).
    private var feederFinished = false
    /// A drain asked of the server once the whole file (or all of it up
    /// to a decoding error) is written.
    private struct Drain {
        var operation: OpaquePointer
        /// A decoding error met after audio was written: reported once the
        /// server has played what it holds, not when the decoder, seconds
        /// ahead, met it.
        var failure: String?
        /// The stream was corked (a call, a pause, an unplugged output)
        /// while the server played the last of the file: the drain's answer
        /// may be on its way (see ``drained(success:)``).
        var corked = false
    }
    private var drain: Drain?
    /// The whole file is written and the server asked to drain it.
    var isDraining: Bool { drain != nil }
    /// The sink the stream plays on.
    private var sinkIndex = UInt32.max
    /// The position when the stream last corked, uncorked or was
    /// repositioned, and the stream's time then; nil while corked, when
    /// the position stands still. libpulse's interpolated time can lag a
    /// corked stream by up to its last timing update, so it is only read
    /// while the stream plays.
    private var positionBase: Duration = .zero
    private var timeBase: Int64?
    private var volume: Double = 1
    /// Uncorks so far (see ``askForRolePolicy()``).
    private var uncorks = 0

    /// Creates the stream (corked) and starts decoding.
    /// - Throws: ``AudioError`` `streamFailed` if the server refuses the stream.
    init(id: AudioPlayerID, request: AudioPlayerRequest, file: sending AudioFile, connection: PulseConnection) throws(AudioError) {
        self.id = id
        self.request = request
        self.connection = connection
        machine = AudioPlayerMachine(role: request.role)
        bytesPerFrame = file.bytesPerFrame
        frameCount = file.frames
        duration = file.duration
        sampleSpec = pa_sample_spec(
            format: file.sampleKind == .int16 ? PA_SAMPLE_S16LE : PA_SAMPLE_FLOAT32LE,
            rate: UInt32(file.sampleRate), channels: UInt8(file.channels))
        weak let lock = connection.lock
        // The ring holds the server's whole queue (as the buffer attributes
        // ask for it, cut to the server's limit) and half a second more, so
        // the first request is met at once and later ones never find it empty.
        let latency = connection.options.latency
        let queue = max(connection.options.buffering, latency)
        var attributes = pa_buffer_attr.playback(latency: latency, queued: queue, spec: sampleSpec)
        let bytesPerSecond = Int64(file.sampleRate * file.bytesPerFrame)
        let buffered = Duration.nanoseconds(Int64(attributes.tlength) * 1_000_000_000 / bytesPerSecond) + .milliseconds(500)
        feeder = AudioFeeder(file: file, looping: request.looping, buffered: buffered) {
            lock?.withLock { connection in connection.players[id]?.fill() }
        }
        guard let context = connection.context else {
            feeder.stop()
            throw AudioError(.serverUnavailable, "not connected to \(connection.serverName)")
        }
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, request.role.rawValue)
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, request.appName)
        // The stream's name is media.name (libpulse sets it from the name, over the list's).
        let fileName = (request.path as NSString).lastPathComponent
        // The file's own map, else libpulse's default: that knows up to 6
        // channels and refused a stream of 7 or more ("Invalid argument");
        // extended, the channels past those it names are auxiliary ones, as
        // paplay has them.
        var channelMap = pa_channel_map()
        if let positions = file.channelPositions {
            channelMap.channels = UInt8(positions.count)
            withUnsafeMutableBytes(of: &channelMap.map) { bytes in
                let slots = bytes.bindMemory(to: pa_channel_position_t.self)
                // Bounded by the map's 32 slots too (forPlayback refuses more channels).
                for (slot, position) in zip(slots.indices, positions) { slots[slot] = position }
            }
        } else {
            pa_channel_map_init_extend(&channelMap, UInt32(file.channels), PA_CHANNEL_MAP_DEFAULT)
        }
        guard let stream = pa_stream_new_with_proplist(context, fileName, &sampleSpec, &channelMap, properties) else {
            feeder.stop()
            throw AudioError(.streamFailed, "\(request.path): the server refused a stream (\(pulseErrorText(context)))")
        }
        self.stream = stream
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(stream, PulseCallbacks.streamState, me)
        pa_stream_set_write_callback(stream, PulseCallbacks.streamWrite, me)
        pa_stream_set_event_callback(stream, PulseCallbacks.streamEvent, me)
        pa_stream_set_moved_callback(stream, PulseCallbacks.streamMoved, me)
        pa_stream_set_started_callback(stream, PulseCallbacks.streamStarted, me)
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_START_CORKED.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue)
        if pa_stream_connect_playback(stream, nil, &attributes, flags, nil, nil) < 0 {
            let reason = pulseErrorText(context)
            close()
            throw AudioError(.streamFailed, "\(request.path): cannot connect a stream (\(reason))")
        }
    }

    /// Stops decoding and drops the stream. A stream still being created
    /// cannot be disconnected yet (libpulse refuses, and the server would
    /// go on to make a corked sink input nobody owns): it is disconnected
    /// as soon as it is ready.
    func close() {
        feeder.stop()
        cancelDrain()
        guard let stream else { return }
        self.stream = nil
        let creating = pa_stream_get_state(stream) == PA_STREAM_CREATING
        pa_stream_set_state_callback(stream, creating ? PulseCallbacks.closingStreamState : nil, nil)
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_event_callback(stream, nil, nil)
        pa_stream_set_moved_callback(stream, nil, nil)
        pa_stream_set_started_callback(stream, nil, nil)
        if creating { return }
        pa_stream_disconnect(stream)
        pa_stream_unref(stream)
    }

    // MARK: Requests

    func play() throws(AudioError) {
        do { perform(try machine.play()) } catch { throw .refused(id, error) }
    }

    func pause() throws(AudioError) {
        do { perform(try machine.pause()) } catch { throw .refused(id, error) }
    }

    /// Stops for good; the caller retires the player (``PulseConnection/retire(_:)``).
    func stop() { perform(machine.stop()) }

    func seek(to position: Duration) throws(AudioError) {
        guard position >= .zero else { throw AudioError(.invalidArgument, "\(id): cannot seek to a negative position") }
        do { try machine.seek() } catch { throw .refused(id, error) }
        reposition(to: min(position, duration))
    }

    func setVolume(_ value: Double) throws(AudioError) {
        guard (0...1).contains(value) else { throw AudioError(.invalidArgument, "volume \(value) is not within 0…1") }
        volume = value
        applyVolume()
    }

    /// The play position from the server's timing (interpolated), which
    /// this refreshes for the next reading.
    var position: Duration {
        defer { refreshTiming() }
        return unclampedPosition.position(inFileOf: duration, looping: request.looping)
    }

    private var unclampedPosition: Duration {
        guard let stream, ready, let timeBase, let now = streamTime(stream) else { return positionBase }
        return positionBase + .microseconds(max(0, now - timeBase))
    }

    /// The stream's time in µs (interpolated), if the server has told it;
    /// nil before the first timing update or for a value out of range.
    private func streamTime(_ stream: OpaquePointer) -> Int64? {
        var now: pa_usec_t = 0
        guard pa_stream_get_time(stream, &now) == 0, now < 1 << 62 else { return nil }
        return Int64(now)
    }

    /// Asks the server for fresh timing. Streams do not have
    /// `AUTO_TIMING_UPDATE`: with it libpulse asks after every write and
    /// then at 10, 20, 40 … ms up to every 1.5 s, each a round trip that
    /// wakes the loop, several per refill. Timing is asked for when the
    /// stream becomes ready, starts, corks, uncorks or flushes, and when
    /// the position is read, and interpolated in between.
    private func refreshTiming() {
        guard let stream, ready, let op = pa_stream_update_timing_info(stream, nil, nil) else { return }
        pa_operation_unref(op)
    }

    // MARK: Server callbacks

    func stateChanged() {
        guard let stream else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            ready = true
            sinkIndex = pa_stream_get_device_index(stream)
            applyVolume()
            refreshTiming()
            findLostCorkRequest()
            fill()
            // A play request that came while the stream was connecting.
            if machine.state == .playing { cork(false) }
        case PA_STREAM_FAILED:
            guard connection.connected, let context = connection.context else { return }
            // A stream that never became ready for want of any sink: the file is not to blame.
            if !ready, pa_context_errno(context) == Int32(PA_ERR_NOENTITY.rawValue) {
                perform(machine.failed("cannot play \(request.path): " + PulseAudioBackend.noSinkMessage(connection.serverName), streamGone: true))
                return
            }
            perform(machine.failed("\(request.path): the server dropped the stream (\(pulseErrorText(context)))", streamGone: true))
        default:
            break
        }
    }

    /// Writes what the server can take from what is decoded; drains at the end.
    func fill() {
        guard let stream, ready, !machine.isFinished else { return }
        var writable = pa_stream_writable_size(stream)
        while writable >= bytesPerFrame {
            var data: UnsafeMutableRawPointer?
            var size = writable
            guard pa_stream_begin_write(stream, &data, &size) == 0, let data else { return }
            let take = feeder.take(into: data, maximum: size)
            guard take.bytes > 0 else {
                pa_stream_cancel_write(stream)
                feederFinished = take.finished || take.error != nil
                // Not at an error before any audio: the stream is corked for the failure at once.
                if take.finished, uncorkWhenPrimed {
                    // Nothing more to write (a seek to the end): uncork so the drain can finish.
                    uncorkWhenPrimed = false
                    setCorked(false)
                }
                if let error = take.error, !primed {
                    perform([.cork] + machine.failed(error.message))
                } else if feederFinished, drain == nil {
                    // At the end, or at a decoding error after audio was
                    // written: what came before the damage plays (the server
                    // holds up to two seconds of it, which a cork dropped),
                    // and the failure comes when it has.
                    if let operation = pa_stream_drain(stream, PulseCallbacks.streamDrained, Unmanaged.passUnretained(self).toOpaque()) {
                        drain = Drain(operation: operation, failure: take.error?.message)
                    }
                }
                return
            }
            pa_stream_write(stream, data, take.bytes, nil, 0, PA_SEEK_RELATIVE)
            writable -= take.bytes
            primed = true
            if uncorkWhenPrimed {
                uncorkWhenPrimed = false
                // It fills again itself: this loop's `writable` is stale then.
                return cork(false)
            }
        }
    }

    func serverRequested(cork: Bool, at time: ContinuousClock.Instant) {
        connection.options.serverRequestProbe?(id, cork, time)
        if cork { takeCorkRequest() } else { perform(machine.uncorkRequested()) }
    }

    /// The server asked this stream to cork: an interruption begins, and
    /// is confirmed by corking the stream.
    private func takeCorkRequest() {
        perform(machine.corkRequested())
        if machine.state == .interrupted { confirmInterruption() }
    }

    /// Recovers the cork request of a stream created during a call.
    ///
    /// `module-role-cork` asks a new stream to cork (and mutes it) while
    /// the server creates it, before libpulse knows the stream: libpulse
    /// drops the request, and the music would start muted, with no
    /// interruption. So once the stream is ready, a non-`phone` stream
    /// that the server has muted while a call is on counts as asked to
    /// cork. (A stream muted for another reason, with no call, does not.)
    private func findLostCorkRequest() {
        guard let stream, request.role != .phone else { return }
        let id = id
        connection.sinkInputMuted(pa_stream_get_index(stream)) { [unowned connection] muted in
            guard muted == true else { return }
            connection.callActive { active in
                guard active, let player = connection.players[id] else { return }
                player.takeCorkRequest()
            }
        }
    }

    /// Ends an interruption whose call was over before our cork reached
    /// the server, which then never asks us to uncork.
    ///
    /// `module-role-cork` mutes a stream when it asks it to cork and, when
    /// the last call ends, unmutes it and asks it to uncork only if it
    /// finds it corked. Asked after our cork (the server answers in
    /// order), the mute flag tells: still muted, the call goes on and the
    /// uncork request will come; unmuted, and no uncork request came
    /// first, the call ended before the cork and the interruption ends here.
    private func confirmInterruption() {
        guard let stream, ready else { return }
        let id = id
        connection.sinkInputMuted(pa_stream_get_index(stream)) { [unowned connection] muted in
            guard muted == false, let player = connection.players[id], player.machine.isInterrupted else { return }
            player.perform(player.machine.uncorkRequested())
        }
    }

    /// Has the server apply its role policy to this stream again.
    ///
    /// `module-role-cork` asks streams to cork when a call starts, but
    /// skips streams that are corked at that moment (paused, or not yet
    /// uncorked after the previous call) and never looks at them again.
    /// Uncorked during a call, such a stream would play over it. A
    /// property update makes the module look at it again now, after the
    /// uncork (the server handles both in order), and send the cork request.
    /// The server ignores an update that changes nothing, so the property
    /// is a count of uncorks.
    private func askForRolePolicy() {
        guard let stream, request.role != .phone else { return }
        uncorks += 1
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, "offstage.uncorks", String(uncorks))
        if let op = pa_stream_proplist_update(stream, PA_UPDATE_REPLACE, properties, nil, nil) {
            pa_operation_unref(op)
        }
    }

    /// The server moved the stream. Whether the new sink appeared is
    /// decided now, against the sinks the connection's listings have shown
    /// (the first made on connecting): a listing under way may answer
    /// before this move's own and show the new sink already. The server
    /// sends the move before any answer that shows a sink the move was
    /// for, so a listing answered before now cannot have shown it. The
    /// routes come from this move's listing, or what earlier ones showed of
    /// sinks gone since.
    func moved() {
        guard let stream else { return }
        let from = sinkIndex
        let to = pa_stream_get_device_index(stream)
        sinkIndex = to
        // A sink above every index listed so far appeared since.
        let appeared = to > (connection.sinkRoutes.keys.max() ?? 0)
        let id = id
        connection.listSinks { [unowned connection] sinks in
            guard let player = connection.players[id] else { return }
            player.perform(
                player.machine.moved(
                    from: connection.sinkRoutes[from] ?? .speaker, to: connection.sinkRoutes[to] ?? .speaker,
                    oldDeviceGone: sinks[from] == nil, newDeviceAppeared: appeared))
        }
    }

    func started() {
        refreshTiming()
        perform(machine.started())
    }

    func drained(success: Bool) {
        guard let finished = drain else { return }
        pa_operation_unref(finished.operation)
        drain = nil
        guard success else { return }
        if let message = finished.failure {
            perform([.cork] + machine.failed(message))
        } else if finished.corked {
            // A call began (or the app paused) as the file ended, and the
            // server had played it all before our cork reached it: the
            // drain's answer came after the cork. Taken for nothing, it held
            // the end back until the app played again (after the call: then
            // `ended` came without `started`). A cork that reaches the server
            // in time puts back what the sink had not yet played, and that
            // drain ends on the next play.
            let actions = machine.drainedAfterLeavingPlaying()
            if !actions.isEmpty { positionBase = duration }
            perform(actions)
        } else {
            perform(machine.drained())
        }
    }

    // MARK: Actions

    func perform(_ actions: [AudioPlayerMachine.Action]) {
        for action in actions {
            switch action {
            case .cork: cork(true)
            case .uncork: cork(false)
            case .rewind: reposition(to: .zero)
            case .emit(let event): connection.emit(.player(id, event))
            }
        }
    }

    /// Corks or uncorks; before the stream is ready, ``stateChanged()``
    /// uncorks it if the player is playing by then.
    ///
    /// An uncork waits until audio has been written: a stream that runs
    /// empty counts as silent for the server's policy, so a `phone` stream
    /// uncorked before its first audio made role-cork interrupt the music,
    /// end the interruption at the underrun, and interrupt it again.
    private func cork(_ corked: Bool) {
        guard stream != nil, ready else { return }
        if corked {
            uncorkWhenPrimed = false
            drain?.corked = true
        } else if !primed && !feederFinished {
            uncorkWhenPrimed = true
            fill()
            return
        }
        setCorked(corked)
        // A drain acknowledged while corked (a seek to the end) is over:
        // writing again starts a new one, which ends when it has played.
        if !corked { fill() }
    }

    /// Corks or uncorks the stream, moving the position's base.
    private func setCorked(_ corked: Bool) {
        guard let stream else { return }
        if corked {
            // At the end (the drain is done) everything has played, whatever
            // the interpolated time still says: the position is the duration.
            positionBase = machine.state == .ended ? duration : unclampedPosition
            timeBase = nil
        } else if timeBase == nil {
            timeBase = streamTime(stream) ?? 0
        }
        if let op = pa_stream_cork(stream, corked ? 1 : 0, nil, nil) { pa_operation_unref(op) }
        if !corked { askForRolePolicy() }
        refreshTiming()
    }

    /// Cancels a drain asked for (a seek, the player closed).
    private func cancelDrain() {
        guard let drain else { return }
        pa_operation_cancel(drain.operation)
        pa_operation_unref(drain.operation)
        self.drain = nil
    }

    private func reposition(to position: Duration) {
        cancelDrain()
        positionBase = position
        if let stream, ready, timeBase != nil { timeBase = streamTime(stream) ?? 0 }
        if let stream, let op = pa_stream_flush(stream, nil, nil) { pa_operation_unref(op) }
        refreshTiming()
        primed = false
        feederFinished = false
        feeder.seek(toFrame: Int(position.nanoseconds * Int64(sampleSpec.rate) / 1_000_000_000))
        fill()
    }

    private func applyVolume() {
        guard let stream, ready, let context = connection.context else { return }
        var volumes = pa_cvolume()
        pa_cvolume_set(&volumes, UInt32(sampleSpec.channels), pa_sw_volume_from_linear(volume))
        if let op = pa_context_set_sink_input_volume(context, pa_stream_get_index(stream), &volumes, nil, nil) {
            pa_operation_unref(op)
        }
    }
}

extension pa_buffer_attr {
    /// The longest target length the server keeps (its memblockq's limit).
    static let maximumTargetLength: UInt32 = 4 * 1024 * 1024

    /// Buffer attributes for a playback stream in the server's
    /// "traditional" mode (no `ADJUST_LATENCY`), where the sink latency a
    /// stream asks for is tlength − 2 × minreq: the latency plus the queue
    /// in halves gives the sink our small latency and the stream a deep
    /// queue that the server asks to refill each time half of it has
    /// played. A prebuf of the latency starts playback as soon as the
    /// first audio is in.
    ///
    /// Each length is whole frames, rounded up, so that the server (which
    /// turns them back into time rounding down) finds at least the
    /// latency. `pa_usec_to_bytes` rounds down: at a rate where 50 ms is
    /// no whole number of frames (22,050 and 11,025 Hz) the stream asked
    /// for 49.977 ms, below the latency anchor's 50 ms, and the sink took
    /// that, which moved its blocks off the 50 ms grid: a 1 s file then
    /// ended a block (50 ms) later than at 44.1 or 48 kHz.
    static func playback(latency: Duration, queued: Duration, spec: pa_sample_spec) -> pa_buffer_attr {
        var spec = spec
        let frameSize = UInt32(pa_frame_size(&spec))
        func bytes(_ duration: Duration) -> UInt32 {
            let frames = (duration.nanoseconds * Int64(spec.rate) + 999_999_999) / 1_000_000_000
            return UInt32(frames) * frameSize
        }
        // The server cuts tlength to 4 MiB (MAX_MEMBLOCKQ_LENGTH) and keeps
        // minreq: past that (a 96 kHz 5.1 float file's 2 s queue), tlength
        // less two minreqs left the sink 0.5 ms of latency, for every stream
        // on it. The queue is shortened instead.
        let room = (maximumTargetLength - min(bytes(latency), maximumTargetLength)) / 2
        let half = min(bytes(queued / 2), room / frameSize * frameSize)
        return pa_buffer_attr(
            maxlength: UInt32.max, tlength: bytes(latency) + 2 * half, prebuf: bytes(latency), minreq: half,
            fragsize: UInt32.max)
    }
}
