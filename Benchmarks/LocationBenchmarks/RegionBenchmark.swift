import Foundation
import OffstageCore

/// 5,000 subscribers × 20 regions over a 50 km × 50 km metropolitan area;
/// one device driving through it at 1 Hz.
enum RegionBenchmark {
    static let centre = LocationCoordinate(latitude: 48.8566, longitude: 2.3522)

    static func point(north: Double, east: Double) -> LocationCoordinate {
        let phi = centre.latitude * .pi / 180
        return LocationCoordinate(
            latitude: centre.latitude + north / LocationGeodesy.meridionalRadius(latitude: phi) * 180 / .pi,
            longitude: centre.longitude + east / (LocationGeodesy.primeVerticalRadius(latitude: phi) * cos(phi)) * 180 / .pi)
    }

    /// Regions registered once the device has a fix (as when apps start
    /// monitoring on a phone that knows where it is).
    static func makeMonitor(subscribers: Int, regionsEach: Int, halfSpan: Double = 25_000, rng: inout BenchRandom) -> LocationRegionMonitor {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(LocationFix(latitude: centre.latitude, longitude: centre.longitude, time: 1_714_979_000))
        for s in 0..<subscribers {
            let subscriber = LocationSubscriberID("com.example.app\(s)")
            for r in 0..<regionsEach {
                let c = point(north: .random(in: -halfSpan...halfSpan, using: &rng), east: .random(in: -halfSpan...halfSpan, using: &rng))
                let region = LocationCircularRegion(identifier: "region-\(r)", center: c, radius: .random(in: 100...1_000, using: &rng))
                guard case .monitoring = monitor.startMonitoring(region, for: subscriber) else { fatalError("registration failed") }
            }
        }
        return monitor
    }

    /// A drive between random waypoints at 8–30 m/s, 1 fix per second.
    static func makeDrive(count: Int, halfSpan: Double = 25_000, rng: inout BenchRandom) -> [LocationFix] {
        var fixes: [LocationFix] = []
        fixes.reserveCapacity(count)
        var north = 0.0, east = 0.0
        var t = 1_714_980_000.0
        while fixes.count < count {
            let tn = Double.random(in: -halfSpan...halfSpan, using: &rng), te = Double.random(in: -halfSpan...halfSpan, using: &rng)
            let speed = Double.random(in: 8...30, using: &rng)
            let d = ((tn - north) * (tn - north) + (te - east) * (te - east)).squareRoot()
            let steps = max(1, Int(d / speed))
            let dn = (tn - north) / Double(steps), de = (te - east) / Double(steps)
            for _ in 0..<steps where fixes.count < count {
                north += dn
                east += de
                let c = point(north: north, east: east)
                fixes.append(LocationFix(latitude: c.latitude, longitude: c.longitude, time: t))
                t += 1
            }
            // Park for a while (dwell at the destination).
            for _ in 0..<Int.random(in: 0...120, using: &rng) where fixes.count < count {
                let c = point(north: north, east: east)
                fixes.append(LocationFix(latitude: c.latitude, longitude: c.longitude, time: t))
                t += 1
            }
        }
        return fixes
    }

    static func run(fixCount: Int, naiveFixCount: Int, side: Double) throws {
        let halfSpan = side / 2
        print("== Region monitoring: 5,000 subscribers × 20 regions (radius 100–1,000 m) over \(Int(side / 1000)) × \(Int(side / 1000)) km ==")
        var rng = BenchRandom(state: 2024)
        let clock = ContinuousClock()
        let buildStart = clock.now
        let monitor = makeMonitor(subscribers: 5_000, regionsEach: 20, halfSpan: halfSpan, rng: &rng)
        let buildTime = clock.now - buildStart
        let drive = makeDrive(count: fixCount, halfSpan: halfSpan, rng: &rng)
        print("  \(grouped(Double(monitor.regionCount))) regions indexed in \(String(format: "%.2f", seconds(buildTime))) s; \(grouped(Double(drive.count))) fixes")

        // Indexed, all fixes.
        var indexed = monitor
        var events: [LocationRegionEvent] = []
        events.reserveCapacity(1_024)
        var eventCount = 0
        let start = clock.now
        for fix in drive {
            indexed.process(fix, into: &events)
            if events.count > 512 {
                eventCount += events.count
                events.removeAll(keepingCapacity: true)
            }
        }
        let indexedTime = clock.now - start
        eventCount += events.count
        let indexedRate = Double(drive.count) / seconds(indexedTime)

        // Naive (every region per fix) on the first fixes, and the indexed
        // run over the same fixes, to check they agree.
        var naive = monitor
        var check = monitor
        var naiveEvents: [LocationRegionEvent] = []
        var checkEvents: [LocationRegionEvent] = []
        let naiveStart = clock.now
        for fix in drive.prefix(naiveFixCount) { naive.process(fix, into: &naiveEvents, strategy: .exhaustive) }
        let naiveTime = clock.now - naiveStart
        for fix in drive.prefix(naiveFixCount) { check.process(fix, into: &checkEvents) }
        let naiveRate = Double(naiveFixCount) / seconds(naiveTime)

        print("  indexed:  \(grouped(indexedRate)) fixes/s (\(String(format: "%.3f", seconds(indexedTime) / Double(drive.count) * 1e6)) µs/fix), \(grouped(Double(eventCount))) events, tracked regions at end: \(indexed.trackedRegionCount)")
        print("  naive:    \(grouped(naiveRate)) fixes/s (every region per fix; first \(grouped(Double(naiveFixCount))) fixes)")
        print("  speed-up: \(String(format: "%.0f", indexedRate / naiveRate))×   (goal ≥ 1,000,000 fixes/s and ≥ 50×)")
        print("  agreement on the first \(naiveFixCount) fixes: \(naiveEvents == checkEvents ? "identical" : "DIFFERENT") (\(naiveEvents.count) events)")
        if naiveEvents != checkEvents { throw BenchmarkFailure("indexed and naive results differ") }
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
