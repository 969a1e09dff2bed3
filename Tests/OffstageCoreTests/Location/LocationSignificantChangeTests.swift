import OffstageCore
import Testing

@Suite struct LocationSignificantChangeTests {
    let app: LocationSubscriberID = "com.example.geo"

    @Test func firstUpdateIsTheLatestKnownFix() {
        var engine = LocationSignificantChangeEngine()
        _ = engine.process(fix(paris, north: 0, at: 0))
        let latest = fix(paris, north: 10, at: 5)
        _ = engine.process(latest)
        #expect(engine.subscribe(app) == LocationUpdate(subscriber: app, fix: latest))
    }

    @Test func withNoKnownFixTheFirstFixIsDelivered() {
        var engine = LocationSignificantChangeEngine()
        #expect(engine.subscribe(app) == nil)
        let first = fix(paris, north: 0, at: 0)
        #expect(engine.process(first) == [LocationUpdate(subscriber: app, fix: first)])
        #expect(engine.process(fix(paris, north: 1, at: 1)).isEmpty)
    }

    @Test func needsBothDistanceAndInterval() {
        var engine = LocationSignificantChangeEngine()
        _ = engine.process(fix(paris, north: 0, at: 0))
        _ = engine.subscribe(app)
        #expect(engine.process(fix(paris, north: 2_000, at: 299)).isEmpty)   // far, too soon
        #expect(engine.process(fix(paris, north: 499, at: 400)).isEmpty)     // late, too near
        let due = fix(paris, north: 501, at: 401)
        #expect(engine.process(due) == [LocationUpdate(subscriber: app, fix: due)])
        // Measured from the last delivered update now.
        #expect(engine.process(fix(paris, north: 1_200, at: 600)).isEmpty)
        #expect(engine.process(fix(paris, north: 1_010, at: 701)).count == 1)
    }

    @Test func thresholdsAreConfigurable() {
        var engine = LocationSignificantChangeEngine(configuration: .init(minimumDistance: 50, minimumInterval: 10))
        _ = engine.process(fix(paris, north: 0, at: 0))
        _ = engine.subscribe(app)
        #expect(engine.process(fix(paris, north: 49, at: 20)).isEmpty)
        #expect(engine.process(fix(paris, north: 51, at: 9)).isEmpty)
        #expect(engine.process(fix(paris, north: 51, at: 10)).count == 1)
    }

    @Test func subscribersKeepTheirOwnAnchors() {
        var engine = LocationSignificantChangeEngine()
        _ = engine.process(fix(paris, north: 0, at: 0))
        _ = engine.subscribe("a")
        #expect(engine.process(fix(paris, north: 600, at: 400)).map(\.subscriber) == ["a"])
        #expect(engine.process(fix(paris, north: 700, at: 500)).isEmpty)
        let latest = fix(paris, north: 700, at: 500)
        #expect(engine.subscribe("b") == LocationUpdate(subscriber: "b", fix: latest))
        #expect(engine.process(fix(paris, north: 1_150, at: 750)).map(\.subscriber) == ["a"])
        #expect(engine.process(fix(paris, north: 1_250, at: 810)).map(\.subscriber) == ["b"])
        engine.unsubscribe("a")
        #expect(!engine.isSubscribed("a"))
        #expect(engine.process(fix(paris, north: 3_000, at: 5_000)).map(\.subscriber) == ["b"])
    }
}

@Suite struct LocationContinuousUpdatesTests {
    @Test func distanceFilterDropsSmallMoves() {
        var updates = LocationContinuousUpdates()
        updates.subscribe("f", distanceFilter: 100)
        updates.subscribe("all")
        #expect(updates.process(fix(paris, north: 0, at: 0)).map(\.subscriber) == ["all", "f"])
        #expect(updates.process(fix(paris, north: 60, at: 1)).map(\.subscriber) == ["all"])
        #expect(updates.process(fix(paris, north: 101, at: 2)).map(\.subscriber) == ["all", "f"])
        updates.unsubscribe("all")
        #expect(updates.process(fix(paris, north: 150, at: 3)).isEmpty)
        #expect(updates.subscribers == ["f"])
    }
}
