import OffstageCore
@testable import OffstageDaemon
import Testing

@Suite struct LocationAdapterValueTests {
    /// gpsd reads the feed as NMEA, whose two-digit year took 1969 for 2069:
    /// such a fix is refused.
    @Test func aFixNMEACannotDateIsNotFed() throws {
        let pty = try LocationPTY()
        let error = #expect(throws: LocationSystemError.self) {
            try LocationFeeder(pty: pty).send(LocationFix(latitude: 1, longitude: 1, time: -1))
        }
        #expect(error?.description == "cannot feed the fix at 1969-12-31T23:59:59.000Z to gpsd: NMEA's two-digit year holds 1980 to 2079, not 1969 (gpsd reads the feed as NMEA)")
    }

    @Test(arguments: [
        ("localhost:2947", "localhost", 2947), ("127.0.0.1:29470", "127.0.0.1", 29470),
        ("gps.example", "gps.example", 2947), (":3000", "localhost", 3000), ("[::1]:2948", "::1", 2948),
        // A bare number is a port (it was host "2948", an IPv4 address, on port 2947).
        ("2948", "localhost", 2948),
    ])
    func endpointsParse(text: String, host: String, port: Int) {
        #expect(GPSDEndpoint(parsing: text) == GPSDEndpoint(host: host, port: port))
    }

    // An empty value was localhost:2947.
    @Test(arguments: ["", "host:", "host:port", "host:0", "host:70000", "[::1]x", "0", "70000", "99999999999999999999999"])
    func badEndpointsDoNotParse(text: String) {
        #expect(GPSDEndpoint(parsing: text) == nil)
    }

    @Test func backoffDoublesToTheMaximum() {
        let policy = LocationReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        var delays: [Duration] = [policy.initialDelay]
        for _ in 0..<5 { delays.append(policy.next(after: delays.last!)) }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
    }

    @Test func feedSpeedsParse() {
        #expect(LocationFeedSpeed(parsing: "max") == .maximum)
        #expect(LocationFeedSpeed(parsing: "60") == .factor(60))
        #expect(LocationFeedSpeed(parsing: "10x") == .factor(10))
        #expect(LocationFeedSpeed(parsing: "0.5") == .factor(0.5))
        #expect(LocationFeedSpeed(parsing: "0") == nil)
        #expect(LocationFeedSpeed(parsing: "-2") == nil)
        #expect(LocationFeedSpeed(parsing: "fast") == nil)
        // Decimal only: Double() reads 0x10 as 16.
        #expect(LocationFeedSpeed(parsing: "0x10") == nil)
    }

    @Test func iso8601RoundTripsAndReadsAZonelessTimeAsUTC() {
        for t in [0.0, 951_782_400.5, 1_714_980_600.125, 4_102_444_799.999] {
            #expect(LocationTimeFormat.parseISO8601(LocationTimeFormat.iso8601(t)) == t)
        }
        #expect(LocationTimeFormat.iso8601(951_782_400) == "2000-02-29T00:00:00.000Z")
        #expect(LocationTimeFormat.parseISO8601("2024-05-06T09:30:00+02:00") == 1_714_980_600)
        // GPX's times are UTC, with or without the Z.
        #expect(LocationTimeFormat.parseISO8601("2024-05-06T07:30:00") == 1_714_980_600)
        #expect(LocationTimeFormat.parseISO8601("2024-13-06T07:30:00Z") == nil)
        #expect(LocationTimeFormat.parseISO8601("2024-05-06T07:30:00.Z") == nil)
    }

    @Test func iso8601RefusesDaysThatDoNotExist() {
        for text in ["2024-02-30", "2023-02-29", "2100-02-29", "2024-04-31", "2024-06-31", "2024-09-31", "2024-11-31"] {
            #expect(LocationTimeFormat.parseISO8601(text + "T12:00:00Z") == nil, "\(text)")
        }
        for text in ["2024-02-29", "2000-02-29", "2023-02-28", "2024-01-31", "2024-04-30", "2024-12-31"] {
            #expect(LocationTimeFormat.parseISO8601(text + "T12:00:00Z") != nil, "\(text)")
        }
        #expect(LocationTimeFormat.nonexistentDay("2024-02-30T12:00:00Z") == "2024-02-30 does not exist (February 2024 has 29 days)")
        #expect(LocationTimeFormat.nonexistentDay("2024-02-29T12:00:00Z") == nil)
        #expect(LocationTimeFormat.nonexistentDay("yesterday") == nil)
    }
}

/// The live gpsd source's holding of an epoch, without gpsd.
@Suite struct EpochHoldTests {
    let start = ContinuousClock.now
    func report(_ device: String, _ time: Double, altitude: Double? = nil) -> LocationFixWithDevice {
        LocationFixWithDevice(fix: LocationFix(latitude: 1, longitude: 2, time: time, altitude: altitude), device: device)
    }

    /// Two devices' reports of one time: each device's last report stands.
    /// They were held as one: the other device's report ended the epoch,
    /// delivering its first (stale) report, and the complete ones, of a
    /// time already delivered, were dropped.
    @Test func devicesAreHeldApart() {
        var hold = EpochHold(period: .milliseconds(50))
        #expect(hold.take(report("/dev/a", 10), at: start) == nil)
        #expect(hold.take(report("/dev/b", 10), at: start) == nil)
        #expect(hold.take(report("/dev/a", 10, altitude: 5), at: start) == nil)
        #expect(hold.take(report("/dev/b", 10, altitude: 7), at: start) == nil)
        let due = hold.due(at: start + .milliseconds(50))
        #expect(due.map(\.device) == ["/dev/a", "/dev/b"] && due.map(\.fix.altitude) == [5, 7])
        // A late report of a delivered epoch changes nothing.
        #expect(hold.take(report("/dev/a", 10, altitude: 6), at: start + .milliseconds(60)) == nil)
        #expect(hold.all().isEmpty)
    }

    /// The period counts from an epoch's first report: a later report of
    /// the same epoch does not start it again. (The source's wait on other
    /// devices' traffic is not reached here.)
    @Test func anEpochIsDueAPeriodAfterItsFirstReport() {
        var hold = EpochHold(period: .milliseconds(50))
        _ = hold.take(report("/dev/a", 10), at: start)
        _ = hold.take(report("/dev/a", 10, altitude: 5), at: start + .milliseconds(40))
        #expect(hold.timeUntilDue(at: start + .milliseconds(40)) == .milliseconds(10))
        #expect(hold.due(at: start + .milliseconds(49)).isEmpty)
        #expect(hold.due(at: start + .milliseconds(50)).map(\.fix.altitude) == [5])
        // Another time from the device completes the epoch at once.
        _ = hold.take(report("/dev/a", 11), at: start + .milliseconds(60))
        #expect(hold.take(report("/dev/a", 12), at: start + .milliseconds(61))?.fix.time == 11)
        #expect(hold.all().map(\.fix.time) == [12])
    }
}
