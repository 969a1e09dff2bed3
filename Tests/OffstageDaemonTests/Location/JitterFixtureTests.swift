import OffstageCore
import OffstageDaemon
import Testing

@Suite struct JitterFixtureTests {
    @Test func jitterTrackAcrossTheBoundaryGivesNoEnterOrExit() throws {
        let path = repositoryRoot.appendingPathComponent("samples/fixtures/jitter-boundary.gpx").path
        let centre = LocationCoordinate(latitude: 48.8566, longitude: 2.3522)
        var monitor = LocationRegionMonitor()
        var events: [LocationRegionEvent] = []
        var crossings = 0
        var wasInside: Bool?
        var registered = false
        _ = try LocationFixtureReader(path: path).read { fix in
            monitor.process(fix, into: &events)
            if !registered {
                let result = monitor.startMonitoring(LocationCircularRegion(identifier: "edge", center: centre, radius: 500), for: "app")
                #expect(result == .monitoring(region: LocationCircularRegion(identifier: "edge", center: centre, radius: 500), state: .outside))
                registered = true
            }
            let inside = LocationGeodesy.distance(centre, fix.coordinate) <= 500
            if let wasInside, wasInside != inside { crossings += 1 }
            wasInside = inside
        }
        #expect(crossings >= 10, "the fixture should cross the raw boundary many times")
        #expect(events.isEmpty)
        #expect(monitor.state(of: "edge", for: "app") == .outside)
    }

    @Test func commuteFixtureIsAFewHoursAtOneHertz() throws {
        let path = repositoryRoot.appendingPathComponent("samples/fixtures/commute.gpx").path
        var first: LocationFix?, last: LocationFix?
        let summary = try LocationFixtureReader(path: path, options: .init(policy: .strict)).read { fix in
            if first == nil { first = fix }
            last = fix
        }
        let hours = ((last?.time ?? 0) - (first?.time ?? 0)) / 3600
        #expect(summary.fixes > 9_000 && hours > 2.5 && summary.skipped == 0)
    }
}
