import Foundation
import OffstageCore

/// How fast a fixture is fed.
public enum LocationFeedSpeed: Sendable, Hashable, CustomStringConvertible {
    /// As fast as the receiver takes it (writes block when gpsd is behind,
    /// so nothing is lost).
    case maximum
    /// `N`× the recorded pace (1 = real time).
    case factor(Double)

    /// Parses `max`, `N` or `Nx`.
    public init?(parsing text: String) {
        let t = text.lowercased()
        if t == "max" || t == "maximum" {
            self = .maximum
            return
        }
        // Beyond these a fix's wait is too long or too short to be a duration.
        // Decimal: Double() takes 0x10 for 16.
        guard let n = DecimalText.decimal(t.hasSuffix("x") ? t.dropLast() : t[...]), n >= 0.001, n <= 1_000_000 else { return nil }
        self = .factor(n)
    }

    public var description: String {
        switch self {
        case .maximum: "max"
        case .factor(let n): n == n.rounded() ? "\(Int(n))×" : "\(n)×"
        }
    }
}

/// Where a feed is, for a progress display.
public struct LocationFeedProgress: Sendable, Hashable {
    /// Fixes written so far.
    public var sent: Int
    /// Fixes in the file, if counted first.
    public var total: Int?
    /// Fix time of the last fix written.
    public var fixTime: Double
    /// Wall time since the feed started.
    public var elapsed: Duration
}

/// The outcome of a feed.
public struct LocationFeedResult: Sendable, Hashable {
    /// What the reader found (fixes, skipped lines, issues).
    public var summary: LocationReadSummary
    /// Fixes written to the device.
    public var sent: Int
    /// Wall time the feed took.
    public var elapsed: Duration
}

/// Writes fixes into gpsd through a pseudo-terminal, as NMEA (a `GSA`
/// when the fix has an accuracy, `RMC` and `GGA` per fix; see
/// ``NMEAFixWriter``), keeping the recorded fix times.
public struct LocationFeeder: Sendable {
    /// The device gpsd reads.
    public let pty: LocationPTY

    public init(pty: LocationPTY) {
        self.pty = pty
    }

    /// The first time gpsd (3.22, Debian 12's) reports as it is given:
    /// it takes earlier ones for a GPS week rollover and moves them on by
    /// 1024 weeks (2000-01-01 reached watchers as 2019-08-17, 2016-12-31
    /// as 2036-08-16). Its own base is the leap second of 2017-01-01.
    public static let earliestTime: Double = 1_483_228_800

    /// Why gpsd would not report the fix at its time, if it would not:
    /// NMEA's two-digit year cannot date it (gpsd would take 1969 for
    /// 2069), or gpsd would move it on (before 2017).
    public static func problem(feeding fix: LocationFix) -> String? {
        if let problem = NMEAFixWriter.problem(writing: fix) { return "\(problem) (gpsd reads the feed as NMEA)" }
        guard fix.time < earliestTime else { return nil }
        return "gpsd takes a time before 2017-01-01 for a GPS week rollover and moves it on by 1024 weeks"
    }

    /// Sends one fix now; while gpsd does not take it, `check` may give up
    /// by throwing (see ``LocationPTY/write(_:whileWaiting:)``).
    /// - Throws: ``LocationSystemError`` for a fix gpsd would misdate
    ///   (``problem(feeding:)``), or a failed write.
    public func send(_ fix: LocationFix, whileWaiting check: () throws -> Void = {}) throws {
        if let problem = Self.problem(feeding: fix) {
            throw LocationSystemError("cannot feed the fix at \(LocationTimeFormat.iso8601(fix.time)) to gpsd", detail: problem)
        }
        try pty.write(NMEAFixWriter.sentences(for: fix), whileWaiting: check)
    }

    /// Feeds a whole fixture at a speed; `progress` is called at most every
    /// `progressInterval` and once at the end. `stillWanted` is called after
    /// each fix and while gpsd does not take the feed, and may end it by
    /// throwing (gpsd went away: nobody reads the terminal).
    public func feed(
        _ reader: LocationFixtureReader, speed: LocationFeedSpeed, total: Int? = nil,
        progressInterval: Duration = .milliseconds(250),
        stillWanted: () throws -> Void = {},
        progress: (LocationFeedProgress) -> Void = { _ in }
    ) throws -> LocationFeedResult {
        let clock = ContinuousClock()
        let start = clock.now
        var firstTime: Double?
        var sent = 0
        var lastReport = start
        var lastFixTime = 0.0
        let summary = try reader.read { fix in
            if case .factor(let n) = speed {
                let first = firstTime ?? fix.time
                firstTime = first
                let due = start + .seconds((fix.time - first) / n)
                let wait = due - clock.now
                if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18) }
            }
            try send(fix, whileWaiting: stillWanted)
            sent += 1
            lastFixTime = fix.time
            let now = clock.now
            if now - lastReport >= progressInterval {
                lastReport = now
                pty.drain()
                progress(LocationFeedProgress(sent: sent, total: total, fixTime: fix.time, elapsed: now - start))
            }
            try stillWanted()
        }
        let elapsed = clock.now - start
        progress(LocationFeedProgress(sent: sent, total: total, fixTime: lastFixTime, elapsed: elapsed))
        return LocationFeedResult(summary: summary, sent: sent, elapsed: elapsed)
    }
}

/// Fixes replayed from a fixture file, behind the same interface as
/// ``GPSDLocationSource`` (the file-replay backend, no gpsd needed).
public struct LocationFixtureSource: LocationSource {
    /// The fixture.
    public let reader: LocationFixtureReader
    /// Pace: `.factor(1)` replays in real time; `.maximum` as fast as read.
    public let speed: LocationFeedSpeed

    public init(reader: LocationFixtureReader, speed: LocationFeedSpeed = .maximum) {
        self.reader = reader
        self.speed = speed
    }

    public func events() -> AsyncStream<LocationSourceEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LocationSourceEvent.self)
        let stop = GPSDLocationSource.StopFlag()
        continuation.onTermination = { _ in stop.set() }
        let reader = reader, speed = speed
        let thread = Thread {
            struct Stopped: Error {}
            continuation.yield(.connected(reader.path))
            let clock = ContinuousClock()
            let start = clock.now
            var first: Double?
            do {
                _ = try reader.read { fix in
                    if stop.isSet { throw Stopped() }
                    if case .factor(let n) = speed {
                        first = first ?? fix.time
                        let due = start + .seconds((fix.time - first!) / n)
                        let wait = due - clock.now
                        if wait > .zero { GPSDLocationSource.pause(wait, stop: stop) }
                    }
                    continuation.yield(.fix(LocationFixWithDevice(fix: fix, device: reader.path)))
                }
                continuation.yield(.disconnected("end of \(reader.path)"))
            } catch is Stopped {
            } catch {
                continuation.yield(.disconnected("\(error)"))
            }
            continuation.finish()
        }
        thread.name = "offstage.fixture-replay"
        thread.start()
        return stream
    }
}
