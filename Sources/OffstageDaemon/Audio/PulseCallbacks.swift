import CPulse
import Foundation
import OffstageCore

/// libpulse's C callbacks. Each is a non-capturing closure that finds its
/// Swift object through `userdata` and runs on the loop thread with the
/// loop's lock held.
enum PulseCallbacks {
    static func connection(_ userdata: UnsafeMutableRawPointer?) -> PulseConnection {
        Unmanaged<PulseConnection>.fromOpaque(userdata!).takeUnretainedValue()
    }

    static func player(_ userdata: UnsafeMutableRawPointer?) -> PulsePlayer {
        Unmanaged<PulsePlayer>.fromOpaque(userdata!).takeUnretainedValue()
    }

    static let contextState: pa_context_notify_cb_t = { context, userdata in
        connection(userdata).contextStateChanged(context!)
    }

    static let reconnectTimer: pa_time_event_cb_t = { api, event, _, userdata in
        api!.pointee.time_free(event)
        connection(userdata).reconnectTimerFired()
    }

    static let anchorState: pa_stream_notify_cb_t = { stream, userdata in
        connection(userdata).anchorStateChanged(stream!)
    }

    static let sinkRestarted: pa_context_success_cb_t = { _, _, userdata in
        connection(userdata).becomeConnected()
    }

    static let streamState: pa_stream_notify_cb_t = { _, userdata in
        player(userdata).stateChanged()
    }

    /// A stream closed while it was still being created (see
    /// ``PulsePlayer/close()``): disconnected once ready, released once
    /// gone. It holds its own reference until then.
    static let closingStreamState: pa_stream_notify_cb_t = { stream, _ in
        guard let stream else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            pa_stream_disconnect(stream)
        case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_unref(stream)
        default:
            break
        }
    }

    static let streamWrite: pa_stream_request_cb_t = { _, _, userdata in
        player(userdata).fill()
    }

    static let streamEvent: pa_stream_event_cb_t = { _, name, _, userdata in
        guard let name else { return }
        let received = ContinuousClock.now
        let event = String(cString: name)
        if event == PA_STREAM_EVENT_REQUEST_CORK {
            player(userdata).serverRequested(cork: true, at: received)
        } else if event == PA_STREAM_EVENT_REQUEST_UNCORK {
            player(userdata).serverRequested(cork: false, at: received)
        }
    }

    static let streamMoved: pa_stream_notify_cb_t = { _, userdata in
        player(userdata).moved()
    }

    static let streamStarted: pa_stream_notify_cb_t = { _, userdata in
        player(userdata).started()
    }

    static let streamDrained: pa_stream_success_cb_t = { _, success, userdata in
        player(userdata).drained(success: success != 0)
    }

    /// Collects sinks into a ``PulseSinkListing`` (kept alive by its owner).
    static let sinkList: pa_sink_info_cb_t = { _, info, eol, userdata in
        let listing = Unmanaged<PulseSinkListing>.fromOpaque(userdata!).takeUnretainedValue()
        if let info, eol == 0 {
            let sink = PulseSink(info.pointee)
            listing.sinks[sink.index] = sink
            return
        }
        listing.done = true
        pa_threaded_mainloop_signal(listing.mainloop, 0)
        listing.completion?(listing.sinks)
    }

    /// Records a sink input's mute flag; at the end of the list (or on an
    /// error: the input is gone) hands it to the query's completion.
    static let sinkInputMute: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        let query = Unmanaged<PulseSinkInputMuteQuery>.fromOpaque(userdata!).takeUnretainedValue()
        if let info, eol == 0 {
            query.muted = info.pointee.mute != 0
            return
        }
        query.completion?(query.muted)
    }

    /// Looks for a call among the sink inputs; at the end of the list
    /// hands the answer to the query's completion.
    static let sinkInputCall: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        let query = Unmanaged<PulseCallQuery>.fromOpaque(userdata!).takeUnretainedValue()
        if let info, eol == 0 {
            let role = pa_proplist_gets(info.pointee.proplist, PA_PROP_MEDIA_ROLE).map { String(cString: $0) }
            if role == AudioRole.phone.rawValue, info.pointee.corked == 0, info.pointee.mute == 0 { query.active = true }
            return
        }
        query.completion?(query.active)
    }

    static let serverInfo: pa_server_info_cb_t = { _, info, userdata in
        let query = Unmanaged<PulseServerInfoQuery>.fromOpaque(userdata!).takeUnretainedValue()
        query.defaultSink = info?.pointee.default_sink_name.map { String(cString: $0) }
        query.done = true
        pa_threaded_mainloop_signal(query.mainloop, 0)
    }

    static let indexResult: pa_context_index_cb_t = { _, index, userdata in
        let result = Unmanaged<PulseOperationResult>.fromOpaque(userdata!).takeUnretainedValue()
        result.index = index
        result.success = index != UInt32.max
        result.done = true
        pa_threaded_mainloop_signal(result.mainloop, 0)
    }

    static let successResult: pa_context_success_cb_t = { _, success, userdata in
        let result = Unmanaged<PulseOperationResult>.fromOpaque(userdata!).takeUnretainedValue()
        result.success = success != 0
        result.done = true
        pa_threaded_mainloop_signal(result.mainloop, 0)
    }
}

/// libpulse's text for a context's last error.
func pulseErrorText(_ context: OpaquePointer) -> String {
    let code = pa_context_errno(context)
    return pa_strerror(code).map { String(cString: $0) } ?? "PulseAudio error \(code)"
}
