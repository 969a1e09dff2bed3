import CPulse
import OffstageCore

/// One output of the sound server.
struct PulseSink: Sendable, Hashable {
    var index: UInt32
    var name: String
    /// The module that created it (`UInt32.max` for hardware).
    var ownerModule: UInt32
    var route: AudioRoute
    /// Made by `module-null-sink` (it renders in blocks of its latency).
    var isNullSink: Bool
    /// Running with nothing playing (not suspended).
    var isIdle: Bool

    init(_ info: pa_sink_info) {
        index = info.index
        name = info.name.map { String(cString: $0) } ?? "sink \(info.index)"
        ownerModule = info.owner_module
        isNullSink = info.driver.map { String(cString: $0) } == "module-null-sink.c"
        isIdle = info.state == PA_SINK_IDLE
        let formFactor = pa_proplist_gets(info.proplist, PA_PROP_DEVICE_FORM_FACTOR).map { String(cString: $0) } ?? ""
        route = ["headphone", "headset"].contains(formFactor) || name.contains("headphone") ? .headphones : .speaker
    }
}

/// Collects a sink list from libpulse, then hands it over. Its owner
/// keeps it alive until then (libpulse holds it unretained).
final class PulseSinkListing {
    let mainloop: OpaquePointer
    var sinks: [UInt32: PulseSink] = [:]
    var done = false
    var completion: (([UInt32: PulseSink]) -> Void)?

    init(mainloop: OpaquePointer, completion: (([UInt32: PulseSink]) -> Void)?) {
        self.mainloop = mainloop
        self.completion = completion
    }
}

/// The server's default output, once known.
final class PulseServerInfoQuery {
    let mainloop: OpaquePointer
    var defaultSink: String?
    var done = false
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

/// The result of a load or unload request.
final class PulseOperationResult {
    let mainloop: OpaquePointer
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
    var index: UInt32 = UInt32.max
    var success = false
    var done = false
}

/// Whether one sink input is muted, once known (nil: it is gone). Its
/// owner keeps it alive until then (libpulse holds it unretained).
final class PulseSinkInputMuteQuery {
    var muted: Bool?
    var completion: ((Bool?) -> Void)?
}

/// Whether a call is on the server: a `phone` stream, uncorked and not
/// muted (what makes `module-role-cork` cork music), from the sink inputs.
final class PulseCallQuery {
    var active = false
    var completion: ((Bool) -> Void)?
}
