import OffstageCore
import Testing

@Suite struct LocationEngineTests {
    @Test func oneFixFeedsAllThreeEngines() {
        var engine = LocationEngine()
        _ = engine.process(fix(paris, north: 3_000, at: 0))
        _ = engine.regions.startMonitoring(LocationCircularRegion(identifier: "home", center: paris, radius: 500), for: "geo")
        #expect(engine.significantChanges.subscribe("geo")?.fix.time == 0)
        engine.continuousUpdates.subscribe("nav", distanceFilter: 10)

        #expect(engine.process(fix(paris, north: 0, at: 400)).continuousUpdates.map(\.subscriber) == ["nav"])
        let d = engine.process(fix(paris, north: 0, at: 420))
        #expect(d.regionEvents.map(\.kind) == [.didEnter, .didDetermineState(.inside)])
        #expect(d.significantChanges.isEmpty)  // delivered at 400 already
        #expect(d.continuousUpdates.isEmpty)   // did not move
        engine.removeSubscriber("geo")
        engine.removeSubscriber("nav")
        #expect(engine.process(fix(paris, north: 9_000, at: 2_000)).isEmpty)
        #expect(engine.latestFix?.time == 2_000)
    }
}
