import Foundation
import OffstageCore
import Testing

@Suite struct LocationRegionMonitorTests {
    let app: LocationSubscriberID = "com.example.geo"
    let region = LocationCircularRegion(identifier: "office", center: paris, radius: 500)

    /// A monitor with one region registered while the device is far outside.
    func outsideMonitor() -> LocationRegionMonitor {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 3_000, at: 0))
        let result = monitor.startMonitoring(region, for: app)
        #expect(result == .monitoring(region: region, state: .outside))
        return monitor
    }

    func kinds(_ events: [LocationRegionEvent]) -> [LocationRegionEvent.Kind] { events.map(\.kind) }

    @Test func entersAfterCrossingByTheHysteresisAndDwelling() {
        var monitor = outsideMonitor()
        // 250 m inside the boundary (past the 200 m band): pending.
        #expect(monitor.process(fix(paris, north: 250, at: 100)).isEmpty)
        #expect(monitor.process(fix(paris, north: 240, at: 110)).isEmpty)
        #expect(monitor.nextDeadline == 120)
        let events = monitor.process(fix(paris, north: 230, at: 120))
        #expect(kinds(events) == [.didEnter, .didDetermineState(.inside)])
        #expect(events.allSatisfy { $0.subscriber == app && $0.identifier == "office" && $0.time == 120 })
        #expect(monitor.state(of: "office", for: app) == .inside)
    }

    @Test func noEnterWhenLeavingThePastBandZoneBeforeTheDwell() {
        var monitor = outsideMonitor()
        #expect(monitor.process(fix(paris, north: 250, at: 100)).isEmpty)
        #expect(monitor.process(fix(paris, north: 350, at: 115)).isEmpty)  // back inside the band
        #expect(monitor.process(fix(paris, north: 250, at: 125)).isEmpty)  // restarts the dwell
        #expect(monitor.process(fix(paris, north: 250, at: 140)).isEmpty)
        #expect(kinds(monitor.process(fix(paris, north: 250, at: 145))) == [.didEnter, .didDetermineState(.inside)])
    }

    @Test func exitsAfterCrossingOutwardByTheHysteresisAndDwelling() {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 0, at: 0))
        #expect(monitor.startMonitoring(region, for: app) == .monitoring(region: region, state: .inside))
        #expect(monitor.process(fix(paris, north: 650, at: 10)).isEmpty)  // in the band
        #expect(monitor.process(fix(paris, north: 710, at: 20)).isEmpty)  // past it: pending
        #expect(monitor.process(fix(paris, north: 720, at: 39)).isEmpty)
        #expect(kinds(monitor.process(fix(paris, north: 730, at: 40))) == [.didExit, .didDetermineState(.outside)])
        #expect(monitor.trackedRegionCount == 0)
    }

    /// A region by the North Pole, entered from across it: the flat metric
    /// put the device 1,144 m from the centre when it was 670 m away, and
    /// the enter never came.
    @Test func aRegionByThePoleIsEnteredAcrossIt() {
        let pole = LocationCircularRegion(
            identifier: "pole", center: LocationCoordinate(latitude: 89.995, longitude: 0), radius: 1_000)
        var monitor = LocationRegionMonitor()
        _ = monitor.process(LocationFix(latitude: 89.96, longitude: 0, time: 0))
        #expect(monitor.startMonitoring(pole, for: app) == .monitoring(region: pole, state: .outside))
        var events: [LocationRegionEvent] = []
        for t in stride(from: 10.0, through: 70, by: 10) {
            events += monitor.process(LocationFix(latitude: 89.999, longitude: 180, time: t))
        }
        #expect(kinds(events) == [.didEnter, .didDetermineState(.inside)])
    }

    @Test func jitterInsideTheHysteresisBandGivesNoEvents() {
        var monitor = outsideMonitor()
        var rng = SplitMix(seed: 7)
        var t = 10.0
        for _ in 0..<3_600 {
            // Anywhere from 190 m inside to 190 m outside the boundary.
            let d = 500 + Double.random(in: -190...190, using: &rng)
            #expect(monitor.process(fix(paris, north: d, at: t)).isEmpty)
            t += 1
        }
        #expect(monitor.state(of: "office", for: app) == .outside)
    }

    @Test func noEnterForARegionAlreadyInsideAtRegistration() {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 100, at: 0))
        #expect(monitor.startMonitoring(region, for: app) == .monitoring(region: region, state: .inside))
        for t in stride(from: 1.0, to: 100, by: 1) {
            #expect(monitor.process(fix(paris, north: 50, at: t)).isEmpty)
        }
    }

    @Test func unknownStateIsDeterminedByTheFirstFixWithoutEnter() {
        var monitor = LocationRegionMonitor()
        #expect(monitor.startMonitoring(region, for: app) == .monitoring(region: region, state: .unknown))
        #expect(monitor.requestState(identifier: "office", for: app)?.kind == .didDetermineState(.unknown))
        let events = monitor.process(fix(paris, north: 10, at: 5))
        #expect(kinds(events) == [.didDetermineState(.inside)])
        #expect(monitor.requestState(identifier: "office", for: app)
            == LocationRegionEvent(subscriber: app, identifier: "office", kind: .didDetermineState(.inside), time: 5))
    }

    @Test func twentyFirstRegionFailsWithTooManyRegions() {
        var monitor = LocationRegionMonitor()
        for i in 0..<20 {
            let r = LocationCircularRegion(identifier: "r\(i)", center: paris, radius: 100 + Double(i))
            guard case .monitoring = monitor.startMonitoring(r, for: app) else {
                Issue.record("region \(i) failed")
                return
            }
        }
        let extra = LocationCircularRegion(identifier: "r20", center: paris, radius: 100)
        #expect(monitor.startMonitoring(extra, for: app) == .failed(region: extra, failure: .tooManyRegions))
        #expect(monitor.monitoredRegions(for: app).count == 20)
        // Re-adding an existing identifier replaces it and still succeeds.
        let replacement = LocationCircularRegion(identifier: "r3", center: paris, radius: 900)
        #expect(monitor.startMonitoring(replacement, for: app) == .monitoring(region: replacement, state: .unknown))
        #expect(monitor.monitoredRegions(for: app).first { $0.identifier == "r3" }?.radius == 900)
        #expect(monitor.regionCount == 20)
        // Another subscriber has its own 20.
        #expect(monitor.startMonitoring(extra, for: "other") == .monitoring(region: extra, state: .unknown))
    }

    @Test func replacingARegionMovesIt() {
        var monitor = outsideMonitor()
        let moved = LocationCircularRegion(identifier: "office", center: offset(paris, north: 3_000, east: 0), radius: 500)
        #expect(monitor.startMonitoring(moved, for: app) == .monitoring(region: moved, state: .inside))
        // The old circle is gone: dwelling at the old centre gives nothing but the exit from the new one.
        #expect(monitor.process(fix(paris, north: 0, at: 10)).isEmpty)
        #expect(kinds(monitor.process(fix(paris, north: 0, at: 30))) == [.didExit, .didDetermineState(.outside)])
    }

    @Test func radiusIsClampedToTheMaximumMonitoringDistance() {
        var monitor = LocationRegionMonitor(configuration: .init(maximumRadius: 1_000))
        let huge = LocationCircularRegion(identifier: "huge", center: paris, radius: 50_000)
        var clamped = huge
        clamped.radius = 1_000
        #expect(monitor.startMonitoring(huge, for: app) == .monitoring(region: clamped, state: .unknown))
        #expect(monitor.monitoredRegions(for: app) == [clamped])
    }

    @Test func invalidRegionsFail() {
        var monitor = LocationRegionMonitor()
        let bad = [
            LocationCircularRegion(identifier: "a", center: paris, radius: 0),
            LocationCircularRegion(identifier: "b", center: paris, radius: .nan),
            LocationCircularRegion(identifier: "c", center: LocationCoordinate(latitude: 91, longitude: 0), radius: 10),
        ]
        for r in bad {
            let result = monitor.startMonitoring(r, for: app)
            guard case .failed(_, .invalidRegion) = result else {
                Issue.record("expected invalidRegion for \(r.identifier), got \(result)")
                continue
            }
        }
        #expect(monitor.regionCount == 0)
    }

    @Test func notifyFlagsSuppressEnterAndExitButNotState() {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 3_000, at: 0))
        let quiet = LocationCircularRegion(identifier: "q", center: paris, radius: 500, notifyOnEntry: false, notifyOnExit: false)
        _ = monitor.startMonitoring(quiet, for: app)
        _ = monitor.process(fix(paris, north: 0, at: 1))
        #expect(kinds(monitor.process(fix(paris, north: 0, at: 21))) == [.didDetermineState(.inside)])
        _ = monitor.process(fix(paris, north: 3_000, at: 30))
        #expect(kinds(monitor.process(fix(paris, north: 3_000, at: 50))) == [.didDetermineState(.outside)])
    }

    @Test func stopMonitoringAndRemoveSubscriber() {
        var monitor = outsideMonitor()
        let first = monitor.stopMonitoring(identifier: "office", for: app)
        let second = monitor.stopMonitoring(identifier: "office", for: app)
        #expect(first && !second)
        _ = monitor.process(fix(paris, north: 0, at: 10))
        #expect(monitor.process(fix(paris, north: 0, at: 40)).isEmpty)
        _ = monitor.startMonitoring(region, for: app)
        _ = monitor.startMonitoring(region, for: "b")
        monitor.removeSubscriber(app)
        #expect(monitor.monitoredRegions(for: app).isEmpty)
        #expect(monitor.regionCount == 1)
    }

    @Test func advanceCompletesAPendingTransitionWithoutANewFix() {
        var monitor = outsideMonitor()
        _ = monitor.process(fix(paris, north: 0, at: 100))
        #expect(monitor.nextDeadline == 120)
        var events: [LocationRegionEvent] = []
        monitor.advance(to: 119, into: &events)
        #expect(events.isEmpty)
        monitor.advance(to: 120, into: &events)
        #expect(kinds(events) == [.didEnter, .didDetermineState(.inside)])
        #expect(monitor.nextDeadline == nil)
    }

    @Test func smallRegionCanStillBeEntered() {
        // Radius 100 m: the inward band is capped at 50 m.
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 1_000, at: 0))
        let small = LocationCircularRegion(identifier: "s", center: paris, radius: 100)
        _ = monitor.startMonitoring(small, for: app)
        _ = monitor.process(fix(paris, north: 40, at: 1))
        #expect(kinds(monitor.process(fix(paris, north: 40, at: 21))) == [.didEnter, .didDetermineState(.inside)])
        // Exit needs 100 + 200 m.
        _ = monitor.process(fix(paris, north: 290, at: 30))
        #expect(monitor.process(fix(paris, north: 290, at: 60)).isEmpty)
        _ = monitor.process(fix(paris, north: 310, at: 61))
        #expect(kinds(monitor.process(fix(paris, north: 310, at: 81))) == [.didExit, .didDetermineState(.outside)])
    }

    @Test func eventsOfOneFixAreSortedBySubscriberAndIdentifier() {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 3_000, at: 0))
        for s in ["c", "a", "b"] {
            for id in ["y", "x"] {
                _ = monitor.startMonitoring(LocationCircularRegion(identifier: id, center: paris, radius: 500), for: LocationSubscriberID(s))
            }
        }
        _ = monitor.process(fix(paris, north: 0, at: 1))
        let events = monitor.process(fix(paris, north: 0, at: 21)).filter { $0.kind == .didEnter }
        #expect(events.map { "\($0.subscriber)/\($0.identifier)" } == ["a/x", "a/y", "b/x", "b/y", "c/x", "c/y"])
    }

    @Test func largeRegionsUseTheGeodesicDistance() {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 100_000, at: 0))
        let big = LocationCircularRegion(identifier: "big", center: paris, radius: 50_000)
        _ = monitor.startMonitoring(big, for: app)
        _ = monitor.process(fix(paris, north: 49_900, at: 1))
        #expect(monitor.process(fix(paris, north: 49_900, at: 30)).isEmpty)  // inside the band
        _ = monitor.process(fix(paris, north: 49_790, at: 40))
        #expect(kinds(monitor.process(fix(paris, north: 49_750, at: 60))) == [.didEnter, .didDetermineState(.inside)])
    }

    @Test func allRegionsListsEverySubscribersRegionsForPersistence() throws {
        var monitor = LocationRegionMonitor()
        let a = LocationCircularRegion(identifier: "a", center: paris, radius: 100)
        let b = LocationCircularRegion(identifier: "b", center: paris, radius: 200, notifyOnExit: false)
        _ = monitor.startMonitoring(b, for: "y")
        _ = monitor.startMonitoring(a, for: "y")
        _ = monitor.startMonitoring(a, for: "x")
        let all = monitor.allRegions
        #expect(all == [.init(subscriber: "x", region: a), .init(subscriber: "y", region: a), .init(subscriber: "y", region: b)])
        let decoded = try JSONDecoder().decode([LocationMonitoredRegion].self, from: JSONEncoder().encode(all))
        #expect(decoded == all)
    }

    @Test func aJumpFarAwayExitsEveryRegionAfterTheDwell() {
        var monitor = LocationRegionMonitor()
        _ = monitor.process(fix(paris, north: 0, at: 0))
        for r in [300.0, 800, 5_000] {
            _ = monitor.startMonitoring(LocationCircularRegion(identifier: "r\(Int(r))", center: paris, radius: r), for: app)
        }
        // Creep about inside for a while (the monitor may skip checks while
        // the device cannot have reached an exit band).
        for t in 1..<60 { #expect(monitor.process(fix(paris, north: Double(t % 7), at: Double(t))).isEmpty) }
        _ = monitor.process(fix(paris, north: 100_000, at: 60))
        let exits = monitor.process(fix(paris, north: 100_000, at: 80)).filter { $0.kind == .didExit }
        #expect(exits.map(\.identifier) == ["r300", "r5000", "r800"])
    }

    @Test func indexedAndExhaustiveStrategiesAgreeOnARandomCity() {
        var rng = SplitMix(seed: 42)
        var indexed = LocationRegionMonitor()
        for s in 0..<200 {
            for r in 0..<20 {
                let c = offset(paris, north: Double.random(in: -10_000...10_000, using: &rng),
                               east: Double.random(in: -10_000...10_000, using: &rng))
                _ = indexed.startMonitoring(
                    LocationCircularRegion(identifier: "r\(r)", center: c, radius: Double.random(in: 100...1_500, using: &rng)),
                    for: LocationSubscriberID("s\(s)"))
            }
        }
        var exhaustive = indexed
        var position = paris
        var t = 0.0
        var total = 0
        for _ in 0..<5_000 {
            // Mostly a walk, sometimes a jump of up to 3 km.
            let step = Int.random(in: 0..<100, using: &rng) == 0 ? 3_000.0 : 40.0
            position = offset(position, north: Double.random(in: -step...step, using: &rng), east: Double.random(in: -step...step, using: &rng))
            let f = LocationFix(latitude: position.latitude, longitude: position.longitude, time: t)
            let a = indexed.process(f)
            let b = exhaustive.process(f, strategy: .exhaustive)
            #expect(a == b)
            total += a.count
            t += 1
        }
        #expect(total > 20, "the walk should cross some regions")
    }

    @Test(arguments: [(200.0, 20.0), (50.0, 5.0), (300.0, 60.0)])
    func indexedAndExhaustiveAgreeWhenDrivingWithIrregularFixTimes(hysteresis: Double, dwell: Double) {
        var rng = SplitMix(seed: UInt64(hysteresis * 1000 + dwell))
        var indexed = LocationRegionMonitor(configuration: .init(hysteresis: hysteresis, dwell: dwell))
        _ = indexed.process(LocationFix(latitude: paris.latitude, longitude: paris.longitude, time: 0))
        for s in 0..<100 {
            for r in 0..<20 {
                let c = offset(paris, north: Double.random(in: -6_000...6_000, using: &rng),
                               east: Double.random(in: -6_000...6_000, using: &rng))
                _ = indexed.startMonitoring(
                    LocationCircularRegion(identifier: "r\(r)", center: c, radius: Double.random(in: 80...2_000, using: &rng)),
                    for: LocationSubscriberID("s\(s)"))
            }
        }
        var exhaustive = indexed
        var position = paris
        var heading = 0.0
        var t = 0.0
        var total = 0
        for _ in 0..<8_000 {
            // A vehicle: turns, stops, speeds up; fixes 0.5 to 30 s apart.
            heading += Double.random(in: -0.4...0.4, using: &rng)
            let dt = Int.random(in: 0..<20, using: &rng) == 0 ? Double.random(in: 5...30, using: &rng) : Double.random(in: 0.5...2, using: &rng)
            let speed = Int.random(in: 0..<10, using: &rng) == 0 ? 0 : Double.random(in: 2...25, using: &rng)
            position = offset(position, north: cos(heading) * speed * dt, east: sin(heading) * speed * dt)
            if LocationGeodesy.distance(position, paris) > 7_000 { heading += .pi }
            t += dt
            let f = LocationFix(latitude: position.latitude, longitude: position.longitude, time: t)
            let a = indexed.process(f)
            let b = exhaustive.process(f, strategy: .exhaustive)
            #expect(a == b)
            if a != b { return }
            total += a.count
        }
        #expect(total > 100, "the drive should cross many regions")
    }
}
