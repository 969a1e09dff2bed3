import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization
import Testing

/// Against a real gpsd (started by each test on a free loopback port).
@Suite(.timeLimit(.minutes(2))) struct GPSDIntegrationTests {
    @Test func commuteFedThroughGPSDComesOutFixForFix() async throws {
        let rig = try GPSDRig()
        defer { rig.gpsd.stop() }
        let recorder = SourceRecorder(rig.source())
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.connectedCount == 1 })

        let path = repositoryRoot.appendingPathComponent("samples/fixtures/commute.gpx").path
        var expected: [LocationFix] = []
        _ = try LocationFixtureReader(path: path).read { expected.append($0) }
        let result = try LocationFeeder(pty: rig.pty).feed(try LocationFixtureReader(path: path), speed: .maximum)
        #expect(result.sent == expected.count && expected.count > 9_000)

        let expectedCount = expected.count
        #expect(await recorder.until { $0.fixes.count >= expectedCount })
        let received = recorder.fixes
        #expect(received.count == expected.count)
        var mismatches = 0
        for (a, b) in zip(expected, received) {
            if abs(a.latitude - b.latitude) > 1e-7 || abs(a.longitude - b.longitude) > 1e-7 || abs(a.time - b.time) > 0.0005
                || abs((a.altitude ?? -1) - (b.altitude ?? -2)) > 0.01
            {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
        #expect(recorder.disconnectedCount == 0)
    }

    /// Fixes a day apart at the same time of day, with every value: gpsd
    /// took each dateless GGA (written first) for the fix of the day before,
    /// and the source kept an epoch's first report, which holds the epoch
    /// before's values for what its sentence lacks.
    @Test func fixesADayApartComeOutWhole() async throws {
        let rig = try GPSDRig()
        defer { rig.gpsd.stop() }
        let recorder = SourceRecorder(rig.source())
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.connectedCount == 1 })
        let noon = Double(LocationTimeFormat.daysFromCivil(year: 2024, month: 5, day: 1) * 86_400 + 12 * 3600)
        let track = (0..<3).map { day in
            let n = Double(day)
            return LocationFix(
                latitude: 10 + n, longitude: 20 + n, time: noon + n * 86_400, altitude: 1 + n, speed: 2 + n, course: 30 + n)
        }
        let dir = try makeTemporaryDirectory()
        let path = try write(gpxDocument(track, name: "daily"), to: "daily.gpx", in: dir)
        #expect(try LocationFeeder(pty: rig.pty).feed(try LocationFixtureReader(path: path), speed: .maximum).sent == 3)
        #expect(await recorder.until { $0.fixes.count >= 3 })
        let received = recorder.fixes
        #expect(received.map(\.time) == track.map(\.time))
        #expect(received.map(\.latitude) == [10, 11, 12] && received.map(\.longitude) == [20, 21, 22])
        #expect(received.map(\.altitude) == [1, 2, 3])
        #expect(zip(received, track).allSatisfy { abs(($0.speed ?? 0) - ($1.speed ?? 0)) < 0.01 && abs(($0.course ?? 0) - ($1.course ?? 0)) < 0.01 })
    }

    /// Each fix's accuracy comes with it. With the HDOP in `GGA` only, gpsd
    /// worked out each epoch's `eph` before reading it: every fix came with
    /// the accuracy of the one before (19, 19, 38, 57 m for HDOPs 1 to 4).
    @Test func eachFixsAccuracyComesWithIt() async throws {
        let rig = try GPSDRig()
        defer { rig.gpsd.stop() }
        let recorder = SourceRecorder(rig.source())
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.connectedCount == 1 })
        let start = Double(LocationTimeFormat.daysFromCivil(year: 2024, month: 5, day: 6) * 86_400 + 7 * 3600)
        // Accuracies of 5 to 20 m: HDOPs 1 to 4, at NMEAFixWriter.metresPerHDOP.
        let track = (0..<4).map { i in
            let n = Double(i)
            return LocationFix(
                latitude: 48 + n / 100, longitude: 11, time: start + n, altitude: 500 + n, horizontalAccuracy: 5 * (n + 1))
        }
        for i in 0..<4 { try LocationFeeder(pty: rig.pty).send(track[i]) }
        #expect(await recorder.until { $0.fixes.count >= 4 })
        // gpsd reports eph as HDOP × 19 m.
        #expect(recorder.fixes.map(\.horizontalAccuracy) == [19, 38, 57, 76])
        #expect(recorder.fixes.map(\.altitude) == [500, 501, 502, 503])
    }

    @Test func readerSurvivesGPSDKilledAndRestartedMidStream() async throws {
        let rig = try GPSDRig()
        defer { rig.gpsd.stop() }
        let recorder = SourceRecorder(rig.source())
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.connectedCount == 1 })

        // Feed 1 fix every 2 ms on a thread until told to stop.
        let stop = Mutex(false)
        let feeder = LocationFeeder(pty: rig.pty)
        let feeding = Thread {
            for fix in sampleTrack(count: 100_000) {
                if stop.withLock({ $0 }) { return }
                try? feeder.send(fix)
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
        feeding.start()
        defer { stop.withLock { $0 = true } }

        #expect(await recorder.until { $0.fixes.count >= 100 })
        rig.gpsd.kill()
        #expect(await recorder.until { $0.disconnectedCount >= 1 })
        let beforeRestart = recorder.fixes.count
        try rig.gpsd.restart()
        #expect(await recorder.until { $0.connectedCount >= 2 })
        #expect(await recorder.until { $0.fixes.count >= beforeRestart + 100 })
        stop.withLock { $0 = true }

        let times = recorder.fixes.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "fix times increase, no duplicates")
    }

    @Test func sourceConnectsWhenGPSDStartsLater() async throws {
        let pty = try LocationPTY()
        let port = try freePort()
        let source = GPSDLocationSource(
            endpoint: GPSDEndpoint(host: "127.0.0.1", port: port),
            reconnect: LocationReconnectPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50)),
            device: pty.devicePath)
        let recorder = SourceRecorder(source)
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.disconnectedCount >= 2 })
        #expect(recorder.connectedCount == 0)
        let gpsd = try PrivateGPSD(devices: [pty.devicePath], port: port)
        defer { gpsd.stop() }
        #expect(await recorder.until { $0.connectedCount == 1 })
        #expect(GPSDControl.waitForDevice(pty.devicePath, port: port))
        let fix = LocationFix(latitude: -33.8568, longitude: 151.2153, time: 1_714_550_400.25, altitude: 12, speed: 0, course: 0)
        try LocationFeeder(pty: pty).send(fix)
        #expect(await recorder.until { $0.fixes.count == 1 })
        let got = try #require(recorder.fixes.first)
        #expect(abs(got.latitude - fix.latitude) < 1e-7 && abs(got.longitude - fix.longitude) < 1e-7)
        #expect(got.time == fix.time && got.altitude == 12)
    }

    @Test func anotherProgramListeningOnThePortIsNotTakenForGPSD() throws {
        let other = try loopbackSocket()
        defer { close(other.fd) }
        #expect(listen(other.fd, 4) == 0)
        // It accepts connections but never greets like gpsd. gpsd cannot bind
        // 127.0.0.1 (it would go on with ::1 only): the start fails at once,
        // with gpsd's own words, instead of reporting success.
        let started = ContinuousClock.now
        let error = #expect(throws: LocationSystemError.self) {
            try PrivateGPSD(devices: [], port: other.port, timeout: .seconds(20))
        }
        #expect(error?.description.contains("can't bind to IPv4 port \(other.port)") == true, "\(String(describing: error))")
        #expect(ContinuousClock.now - started < .seconds(10), "it waited for the timeout")
    }

    /// A watch of a port where another program listens (it never answers
    /// the watch) ends in one line: `gps watch` waited there for good,
    /// printing nothing.
    @Test func aWatchOfAProgramThatIsNotGPSDEndsInOneLine() throws {
        let other = try loopbackSocket()
        defer { close(other.fd) }
        #expect(listen(other.fd, 4) == 0)
        let run = try runOffstage(["gps", "watch", "--gpsd", "127.0.0.1:\(other.port)", "--count", "1"], within: .seconds(30))
        #expect(run.status == 1)
        #expect(run.stderr == "offstage: error: 127.0.0.1:\(other.port) did not answer the watch as gpsd does within 15.0 seconds (is it gpsd?) (--wait waits for it)\n")
    }

    /// A preferred port another gpsd holds (two commands started at once)
    /// gives way to a free one. The retry used to fail too: the first
    /// attempt's gpsd exits on its own, leaving its control socket (the
    /// next gpsd cannot make its own) and its words in the shared log.
    /// Nor is the start fooled by the other gpsd answering on that port: ours
    /// is the one that reads our device.
    @Test func aPreferredPortAnotherGPSDHoldsGivesWayToAFreeOne() throws {
        let firstDevice = try LocationPTY()
        let first = try PrivateGPSD(devices: [firstDevice.devicePath])
        defer { first.stop() }
        let secondDevice = try LocationPTY()
        let second = try PrivateGPSD(devices: [secondDevice.devicePath], preferring: first.port)
        defer { second.stop() }
        #expect(second.port != first.port)
        #expect(second.isRunning)
        #expect(GPSDControl.waitForDevice(secondDevice.devicePath, port: second.port))
        // A free preferred port is the one taken.
        let freed = first.port
        first.stop()
        let thirdDevice = try LocationPTY()
        let third = try PrivateGPSD(devices: [thirdDevice.devicePath], preferring: freed)
        defer { third.stop() }
        #expect(third.port == freed)
    }

    @Test func deviceAddedThroughTheControlSocket() async throws {
        let gpsd = try PrivateGPSD(devices: [])
        defer { gpsd.stop() }
        let pty = try LocationPTY()
        try GPSDControl.addDevice(pty.devicePath, controlSocket: gpsd.controlSocket)
        #expect(GPSDControl.waitForDevice(pty.devicePath, port: gpsd.port))
        let recorder = SourceRecorder(GPSDLocationSource(endpoint: gpsd.endpoint, device: pty.devicePath))
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.connectedCount == 1 })
        for fix in sampleTrack(count: 10) { try LocationFeeder(pty: pty).send(fix) }
        #expect(await recorder.until { $0.fixes.count == 10 })
        try GPSDControl.removeDevice(pty.devicePath, controlSocket: gpsd.controlSocket)
    }
}

@Suite struct LocationFixtureSourceTests {
    @Test func replaysAFixtureAsSourceEvents() async throws {
        let path = repositoryRoot.appendingPathComponent("samples/fixtures/jitter-boundary.gpx").path
        let recorder = SourceRecorder(LocationFixtureSource(reader: try LocationFixtureReader(path: path)))
        defer { recorder.cancel() }
        #expect(await recorder.until { $0.disconnectedCount == 1 })
        #expect(recorder.connectedCount == 1)
        #expect(recorder.fixes.count == 1_495)
    }
}

/// A TCP socket bound to 127.0.0.1 on a free port, and that port; the
/// caller closes it.
func loopbackSocket() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// A free loopback port (bound and released at once).
func freePort() throws -> Int {
    let bound = try loopbackSocket()
    close(bound.fd)
    return bound.port
}
