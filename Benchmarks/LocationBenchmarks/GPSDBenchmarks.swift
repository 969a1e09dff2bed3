import Foundation
import OffstageCore
import OffstageDaemon
import Synchronization

/// Fixes per second from a fixture file through a real gpsd into our reader.
enum GPSDThroughputBenchmark {
    static func run(fixCount: Int) async throws {
        print("== Through real gpsd: fixture file → pty → gpsd → libgps reader, \(grouped(Double(fixCount))) fixes ==")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("drive.nmea").path
        var rng = BenchRandom(state: 7)
        let writer = try LocationFixtureFileWriter(path: path)
        for fix in RegionBenchmark.makeDrive(count: fixCount, rng: &rng) { try writer.write(fix) }
        try writer.finish()
        let clock = ContinuousClock()

        // Baseline 1: the fixture parsed alone (no gpsd).
        let parseStart = clock.now
        let parsed = try LocationFixtureReader(path: path).count()
        let parseRate = Double(parsed) / seconds(clock.now - parseStart)

        // Baseline 2: gpsd alone, nobody reading its reports.
        do {
            let pty = try LocationPTY()
            let gpsd = try PrivateGPSD(devices: [pty.devicePath])
            defer { gpsd.stop() }
            let start = clock.now
            _ = try LocationFeeder(pty: pty).feed(try LocationFixtureReader(path: path), speed: .maximum)
            let rate = Double(fixCount) / seconds(clock.now - start)
            print("  baseline, gpsd alone (fixture → pty → gpsd, no client): \(grouped(rate)) fixes/s")
        }
        print("  baseline, fixture parsed alone (no gpsd):               \(grouped(parseRate)) fixes/s")

        // The real thing.
        let pty = try LocationPTY()
        let gpsd = try PrivateGPSD(devices: [pty.devicePath])
        defer { gpsd.stop() }
        let received = Mutex(0)
        let connected = Mutex(false)
        let lastArrival = Mutex<ContinuousClock.Instant?>(nil)
        let stream = GPSDLocationSource(endpoint: gpsd.endpoint, device: pty.devicePath).events()
        let consumer = Task {
            for await event in stream {
                switch event {
                case .connected: connected.withLock { $0 = true }
                case .fix:
                    received.withLock { $0 += 1 }
                    lastArrival.withLock { $0 = clock.now }
                case .disconnected: break
                }
            }
        }
        defer { consumer.cancel() }
        guard await poll(timeout: .seconds(5), { connected.withLock { $0 } }) else { throw BenchmarkFailure("no watch") }
        let start = clock.now
        let result = try LocationFeeder(pty: pty).feed(try LocationFixtureReader(path: path), speed: .maximum)
        _ = await poll(timeout: .seconds(30)) { received.withLock { $0 } >= result.sent }
        let count = received.withLock { $0 }
        let end = lastArrival.withLock { $0 } ?? clock.now
        let rate = Double(count) / seconds(end - start)
        print("  fixture → gpsd → our reader:                            \(grouped(rate)) fixes/s, received \(grouped(Double(count))) of \(grouped(Double(result.sent))) sent \(count == result.sent ? "(equal)" : "(LOSS)")   (goal ≥ 10,000/s)")
        if count != result.sent { throw BenchmarkFailure("lost fixes through gpsd") }
    }
}

/// Fix-to-decision latency: written to the pty → read from gpsd → region
/// monitor (100,000 regions) and significant-change engine decided.
enum GPSDLatencyBenchmark {
    static func run(fixCount: Int, rate: Double) async throws {
        print("== Fix-to-decision latency via gpsd: \(fixCount) fixes at \(Int(rate))/s, 100,000 regions + significant-change for 5,000 subscribers ==")
        var rng = BenchRandom(state: 2024)
        var monitor = RegionBenchmark.makeMonitor(subscribers: 5_000, regionsEach: 20, rng: &rng)
        var significant = LocationSignificantChangeEngine()
        for s in 0..<5_000 { _ = significant.subscribe(LocationSubscriberID("com.example.app\(s)")) }
        let drive = RegionBenchmark.makeDrive(count: fixCount, rng: &rng)
        let base = drive[0].time

        let pty = try LocationPTY()
        let gpsd = try PrivateGPSD(devices: [pty.devicePath])
        defer { gpsd.stop() }
        let clock = ContinuousClock()
        let sentAt = Mutex([ContinuousClock.Instant?](repeating: nil, count: fixCount))
        let stream = GPSDLocationSource(endpoint: gpsd.endpoint, device: pty.devicePath).events()
        var iterator = stream.makeAsyncIterator()
        guard case .connected = await iterator.next() else { throw BenchmarkFailure("no watch") }

        let feeder = LocationFeeder(pty: pty)
        let feeding = Thread {
            let start = clock.now
            for (i, fix) in drive.enumerated() {
                let due = start + .seconds(Double(i) / rate)
                let wait = due - clock.now
                if wait > .zero { Thread.sleep(forTimeInterval: seconds(wait)) }
                sentAt.withLock { $0[i] = clock.now }
                try? feeder.send(fix)
            }
        }
        feeding.start()

        var toReceipt: [Double] = []
        var toDecision: [Double] = []
        var events: [LocationRegionEvent] = []
        while toDecision.count < fixCount {
            guard let event = await iterator.next() else { break }
            guard case .fix(let f) = event else { continue }
            let received = clock.now
            monitor.process(f.fix, into: &events)
            let updates = significant.process(f.fix)
            let decided = clock.now
            events.removeAll(keepingCapacity: true)
            _ = updates
            let index = Int((f.fix.time - base).rounded())
            guard index >= 0, index < fixCount, let sent = sentAt.withLock({ $0[index] }) else { continue }
            toReceipt.append(seconds(received - sent) * 1000)
            toDecision.append(seconds(decided - sent) * 1000)
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
        }
        print("  baseline, pty write → fix received from gpsd: p50 \(String(format: "%.3f", percentile(toReceipt, 0.5))) ms, p99 \(String(format: "%.3f", percentile(toReceipt, 0.99))) ms")
        print("  pty write → decision made:                    p50 \(String(format: "%.3f", percentile(toDecision, 0.5))) ms, p99 \(String(format: "%.3f", percentile(toDecision, 0.99))) ms   (\(toDecision.count) fixes)")
    }
}

/// Polls a condition until it holds or the timeout passes.
func poll(timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
