import CGPS
import Foundation
import OffstageCore
import Synchronization

/// Fixes from a gpsd, through libgps.
///
/// Each call to ``events()`` starts a reader thread (libgps blocks) that
/// connects to the endpoint, asks for a JSON watch and turns each `TPV`
/// report with a 2D or 3D fix into a ``LocationSourceEvent/fix(_:)`` stamped
/// with the fix time from gpsd. gpsd may report an epoch once per sentence
/// (after `RMC`, then after `GGA`), the first report holding the values
/// of the epoch before for what its sentence lacks: a fix is held (see
/// ``EpochHold``) until its device reports another time or
/// ``epochWindow`` after its first report, and the last report of its
/// time stands. When gpsd goes away the source reports
/// ``LocationSourceEvent/disconnected(_:)`` and reconnects with backoff.
/// ``LocationSourceEvent/connected(_:)`` comes once gpsd has confirmed the
/// watch, so fixes sent after it are not missed.
public struct GPSDLocationSource: LocationSource {
    /// The gpsd to read.
    public let endpoint: GPSDEndpoint
    /// Backoff between connection attempts.
    public let reconnect: LocationReconnectPolicy
    /// Only fixes from this device path, if set.
    public let device: String?

    public init(endpoint: GPSDEndpoint = .default, reconnect: LocationReconnectPolicy = .init(), device: String? = nil) {
        self.endpoint = endpoint
        self.reconnect = reconnect
        self.device = device
    }

    public func events() -> AsyncStream<LocationSourceEvent> { events(seenFirstBy: nil) }

    /// The same stream, `observer` seeing each event first on the reader's
    /// thread: for an action that must not wait for a busy task pool.
    public func events(seenFirstBy observer: (@Sendable (LocationSourceEvent) -> Void)?) -> AsyncStream<LocationSourceEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LocationSourceEvent.self)
        let stop = StopFlag()
        continuation.onTermination = { _ in stop.set() }
        let source = self
        let thread = Thread {
            source.run(stop: stop) { event in
                observer?(event)
                continuation.yield(event)
            }
            continuation.finish()
        }
        thread.name = "offstage.gpsd-reader"
        thread.start()
        return stream
    }

    /// A flag the consumer sets to stop the reader thread.
    final class StopFlag: Sendable {
        private let flag = Mutex(false)
        func set() { flag.withLock { $0 = true } }
        var isSet: Bool { flag.withLock { $0 } }
    }

    /// How long after its first report an epoch counts as complete (gpsd's
    /// reports of one epoch come together).
    static let epochWindow: Duration = .milliseconds(50)

    /// How long a connected gpsd may take to confirm the watch; past it the
    /// program on the port is taken for something else.
    /// See ``GPSDControl/busyLimit``.
    static let watchAnswerLimit = GPSDControl.busyLimit

    /// The reader loop (runs on its own thread until `stop` is set).
    func run(stop: StopFlag, yield: (LocationSourceEvent) -> Void) {
        var delay = reconnect.initialDelay
        var hold = EpochHold(period: Self.epochWindow)
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        defer { data.deallocate() }
        let messageCapacity = 16_384
        let message = UnsafeMutablePointer<CChar>.allocate(capacity: messageCapacity)
        defer { message.deallocate() }
        while !stop.isSet {
            memset(data, 0, MemoryLayout<gps_data_t>.size)
            guard gps_open(endpoint.host, String(endpoint.port), data) == 0 else {
                yield(.disconnected("cannot connect to gpsd at \(endpoint): \(String(cString: gps_errstr(errno)))"))
                Self.pause(delay, stop: stop)
                delay = reconnect.next(after: delay)
                continue
            }
            _ = gps_stream(data, UInt32(WATCH_ENABLE | WATCH_JSON), nil)
            var reason = "stopped"
            let opened = ContinuousClock.now
            var watching = false
            while !stop.isSet {
                // A program that is not gpsd took the port: it never answers the watch.
                if !watching, ContinuousClock.now - opened > Self.watchAnswerLimit {
                    reason = "\(endpoint) did not answer the watch as gpsd does within \(Self.watchAnswerLimit) (is it gpsd?)"
                    break
                }
                // Due whatever else gpsd sends meanwhile (other devices, SKY),
                // but only once what gpsd has sent is read: the rest of an
                // epoch may be waiting in the socket after a slow turn.
                var untilDue = hold.timeUntilDue(at: .now)
                if let left = untilDue, left <= .zero, !gps_waiting(data, 0) {
                    for fix in hold.due(at: .now) { yield(.fix(fix)) }
                    untilDue = hold.timeUntilDue(at: .now)
                }
                let wait = untilDue.map { Int32(max(0, $0 / .microseconds(1)).rounded(.up)) } ?? 100_000
                errno = 0
                guard gps_waiting(data, wait) else {
                    if errno != 0 && errno != EINTR && errno != EAGAIN {
                        reason = "connection error: \(String(cString: strerror(errno)))"
                        break
                    }
                    continue
                }
                message[0] = 0
                let n = gps_read(data, message, Int32(messageCapacity))
                if n < 0 {
                    reason = "gpsd at \(endpoint) closed the connection"
                    break
                }
                if n == 0 { continue }
                if strstr(message, "\"class\":\"WATCH\"") != nil {
                    watching = true
                    delay = reconnect.initialDelay
                    yield(.connected("\(endpoint)"))
                    continue
                }
                guard strstr(message, "\"class\":\"TPV\"") != nil,
                    data.pointee.set & (TIME_SET | LATLON_SET) == (TIME_SET | LATLON_SET),
                    data.pointee.fix.mode >= 2
                else { continue }
                let fix = Self.fix(from: data.pointee.fix)
                let path = Self.devicePath(data)
                if let device, path != device { continue }
                if let complete = hold.take(LocationFixWithDevice(fix: fix, device: path), at: .now) { yield(.fix(complete)) }
            }
            for fix in hold.all() { yield(.fix(fix)) }
            gps_close(data)
            if stop.isSet { return }
            yield(.disconnected(reason))
            Self.pause(delay, stop: stop)
            delay = reconnect.next(after: delay)
        }
    }

    static func fix(from f: gps_fix_t) -> LocationFix {
        func value(_ x: Double) -> Double? { x.isFinite ? x : nil }
        let time = Double(f.time.tv_sec) + Double(f.time.tv_nsec) / 1e9
        return LocationFix(
            latitude: f.latitude, longitude: f.longitude, time: (time * 1e6).rounded() / 1e6,
            altitude: f.mode >= 3 ? value(f.altMSL) : nil, speed: value(f.speed), course: value(f.track),
            horizontalAccuracy: value(f.eph) ?? {
                guard let x = value(f.epx), let y = value(f.epy) else { return nil }
                return max(x, y)
            }())
    }

    static func devicePath(_ data: UnsafeMutablePointer<gps_data_t>) -> String? {
        withUnsafeBytes(of: &data.pointee.dev.path) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Sleeps up to `delay`, waking early when stopped.
    static func pause(_ delay: Duration, stop: StopFlag) {
        let deadline = ContinuousClock.now + delay
        while !stop.isSet, ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            Thread.sleep(forTimeInterval: min(0.02, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18))
        }
    }
}

/// gpsd's reports held per device until their epoch is over: gpsd may
/// report an epoch once per sentence, the first report holding the epoch
/// before's values for what its sentence lacks. An epoch is over when a
/// report of another time comes from its device, or ``period`` after its
/// first report; its last report stands. A report of an epoch already
/// delivered changes nothing. Devices are held apart: one device's report
/// neither ends nor drops another's epoch.
struct EpochHold {
    let period: Duration
    private var held: [String?: (fix: LocationFixWithDevice, since: ContinuousClock.Instant)] = [:]
    private var delivered: [String?: Double] = [:]

    init(period: Duration) { self.period = period }

    /// Takes a report; returns the fix it shows complete (its device's epoch before), if any.
    mutating func take(_ report: LocationFixWithDevice, at now: ContinuousClock.Instant) -> LocationFixWithDevice? {
        let device = report.device
        var complete: LocationFixWithDevice?
        if let (previous, since) = held[device] {
            if previous.fix.time == report.fix.time {
                held[device] = (report, since)
                return nil
            }
            held[device] = nil
            delivered[device] = previous.fix.time
            complete = previous
        }
        if delivered[device] != report.fix.time { held[device] = (report, now) }
        return complete
    }

    /// The epochs whose period has run out by `now`, oldest first (then by device).
    mutating func due(at now: ContinuousClock.Instant) -> [LocationFixWithDevice] {
        let period = self.period
        return release { now - $0 >= period }
    }

    /// How long until the next epoch is due; nil when none is held.
    func timeUntilDue(at now: ContinuousClock.Instant) -> Duration? {
        held.values.lazy.map { $0.since + period - now }.min()
    }

    /// Every epoch held (the connection ends), oldest first (then by device).
    mutating func all() -> [LocationFixWithDevice] {
        release { _ in true }
    }

    /// The epochs held since a time `isDue` accepts, oldest first (then by
    /// device), marked delivered.
    private mutating func release(where isDue: (ContinuousClock.Instant) -> Bool) -> [LocationFixWithDevice] {
        let ready = held.filter { isDue($0.value.since) }
            .sorted { ($0.value.since, $0.key ?? "") < ($1.value.since, $1.key ?? "") }
        for (device, entry) in ready {
            held[device] = nil
            delivered[device] = entry.fix.fix.time
        }
        return ready.map(\.value.fix)
    }
}
