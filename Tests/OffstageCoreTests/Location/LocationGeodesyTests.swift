import Foundation
import OffstageCore
import Testing

@Suite struct LocationGeodesyTests {
    @Test func vincentyMatchesPublishedFlindersPeakToBuninyong() {
        // Vincenty (1975) / Geoscience Australia worked example: 54 972.271 m.
        let flinders = LocationCoordinate(latitude: -(37 + 57 / 60.0 + 3.72030 / 3600), longitude: 144 + 25 / 60.0 + 29.52440 / 3600)
        let buninyong = LocationCoordinate(latitude: -(37 + 39 / 60.0 + 10.15610 / 3600), longitude: 143 + 55 / 60.0 + 35.38390 / 3600)
        #expect(abs(LocationGeodesy.vincentyDistance(flinders, buninyong) - 54_972.271) < 0.001)
        #expect(abs(LocationGeodesy.distance(flinders, buninyong) - 54_972.271) < 0.001)
    }

    /// Near a pole, points close together can be 180° of longitude apart:
    /// the flat formula made 1,144 m of 670 m across the North Pole.
    @Test func distancesAcrossAPoleAreGeodesic() {
        let a = LocationCoordinate(latitude: 89.995, longitude: 0)
        let b = LocationCoordinate(latitude: 89.999, longitude: 180)
        let c = LocationCoordinate(latitude: -89.999, longitude: -90)
        let d = LocationCoordinate(latitude: -89.999, longitude: 90)
        #expect(abs(LocationGeodesy.distance(a, b) - LocationGeodesy.vincentyDistance(a, b)) < 0.01)
        #expect(abs(LocationGeodesy.distance(a, b) - 670.2) < 0.1)
        #expect(abs(LocationGeodesy.distance(c, d) - LocationGeodesy.vincentyDistance(c, d)) < 0.01)
        // 0.002° of meridian across the South Pole, where a degree is 111.69 km.
        #expect(abs(LocationGeodesy.distance(c, d) - 223.39) < 0.05)
    }

    @Test func vincentyOfOneDegreeOfLatitudeAtEquator() {
        let d = LocationGeodesy.vincentyDistance(
            LocationCoordinate(latitude: 0, longitude: 0), LocationCoordinate(latitude: 1, longitude: 0))
        #expect(abs(d - 110_574.389) < 0.01)
    }

    @Test func nearlyAntipodalFallsBackToGreatCircle() {
        let a = LocationCoordinate(latitude: 0, longitude: 0)
        let b = LocationCoordinate(latitude: 0.5, longitude: 179.7)
        let d = LocationGeodesy.vincentyDistance(a, b)
        // Exactly the fallback's figure (the true geodesic, about 19,936 km, is 14 km shorter).
        #expect(d == LocationGeodesy.greatCircleDistance(a, b))
        #expect(d > 19_940_000 && d < 19_960_000)
    }

    @Test(arguments: [0.0, 30, 48.8566, 60, 75])
    func localDistanceErrorBoundAgainstVincenty(latitude: Double) {
        let origin = LocationCoordinate(latitude: latitude, longitude: 10)
        var worstAt5km = 0.0, worstAt10km = 0.0
        for bearing in stride(from: 0.0, to: 360, by: 15) {
            let r = bearing * .pi / 180
            for d in [100.0, 500, 1_000, 5_000, 10_000] {
                let p = offset(origin, north: d * cos(r), east: d * sin(r))
                let error = abs(LocationGeodesy.localDistance(origin, p) - LocationGeodesy.vincentyDistance(origin, p))
                if d <= 5_000 { worstAt5km = max(worstAt5km, error) } else { worstAt10km = max(worstAt10km, error) }
            }
            // Above the limit, distance() switches to Vincenty.
            let far = offset(origin, north: 30_000 * cos(r), east: 30_000 * sin(r))
            #expect(abs(LocationGeodesy.distance(origin, far) - LocationGeodesy.vincentyDistance(origin, far)) < 1e-6)
        }
        #expect(worstAt5km < 0.003)
        #expect(worstAt10km < 0.02)
    }

    @Test func localMetricAgreesWithLocalDistance() {
        let metric = LocationLocalMetric(center: paris)
        for (n, e) in [(0.0, 700.0), (-3_000.0, 2_000.0), (6_000.0, -6_000.0), (150.0, 0.0)] {
            let p = offset(paris, north: n, east: e)
            #expect(abs(metric.distance(to: p) - LocationGeodesy.localDistance(paris, p)) < 0.001)
        }
    }

    @Test func boundingBoxContainsTheCircleAndNotFarPoints() {
        let box = LocationBoundingBox(center: paris, distance: 1_000)
        for bearing in stride(from: 0.0, to: 360, by: 10) {
            let r = bearing * .pi / 180
            let p = offset(paris, north: 999 * cos(r), east: 999 * sin(r))
            #expect(box.contains(latitude: p.latitude, longitude: p.longitude))
        }
        let far = offset(paris, north: 1_100, east: 0)
        #expect(!box.contains(latitude: far.latitude, longitude: far.longitude))
    }

    @Test func boundingBoxAcrossTheAntimeridian() {
        let box = LocationBoundingBox(center: LocationCoordinate(latitude: 0, longitude: 179.999), distance: 1_000)
        #expect(box.contains(latitude: 0, longitude: -179.999))
        #expect(!box.contains(latitude: 0, longitude: -179.9))
    }

    @Test func distanceWrapsLongitude() {
        let a = LocationCoordinate(latitude: 0, longitude: 179.9995)
        let b = LocationCoordinate(latitude: 0, longitude: -179.9995)
        #expect(abs(LocationGeodesy.distance(a, b) - 111.32) < 0.1)
    }
}
