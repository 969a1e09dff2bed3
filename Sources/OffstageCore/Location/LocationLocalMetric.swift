#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A precomputed local metric around a centre point, for fast repeated
/// distance checks from that centre (the region monitor's hot path).
///
/// It evaluates the same mean-latitude formula as
/// ``LocationGeodesy/localDistance(_:_:)``, with the radii of curvature at
/// the mean latitude expanded to first order around the centre, so a check
/// is a handful of multiplications and no trigonometry. The second-order
/// term it drops is about δ²/8 of the distance (δ the latitude difference
/// in radians): under 1 mm at 10 km. Use it only for points within
/// ``LocationBoundingBox`` reach of the centre; beyond, compare boxes.
public struct LocationLocalMetric: Sendable, Hashable {
    /// Centre latitude and longitude, in degrees.
    public let center: LocationCoordinate
    private let phi0: Double
    private let lambda0: Double
    private let m0: Double
    private let mSlope: Double
    private let g0: Double
    private let gSlope: Double

    /// Precomputes the metric at a centre.
    public init(center: LocationCoordinate) {
        self.center = center
        let phi = center.latitude * .pi / 180
        phi0 = phi
        lambda0 = center.longitude * .pi / 180
        let e2 = LocationGeodesy.eccentricitySquared
        let s = sin(phi), c = cos(phi)
        let w = 1 - e2 * s * s
        let m = LocationGeodesy.meridionalRadius(latitude: phi)
        let n = LocationGeodesy.primeVerticalRadius(latitude: phi)
        m0 = m
        // dM/dφ = 3 e² sinφ cosφ M / w
        mSlope = 3 * e2 * s * c * m / w
        g0 = n * c
        // d(N cosφ)/dφ = -M sinφ
        gSlope = -m * s
    }

    /// Squared distance in square metres from the centre to a point given
    /// in radians.
    @inline(__always)
    public func distanceSquared(latitudeRadians phi: Double, longitudeRadians lambda: Double) -> Double {
        let dPhi = phi - phi0
        var dLambda = lambda - lambda0
        if dLambda > .pi { dLambda -= 2 * .pi } else if dLambda < -.pi { dLambda += 2 * .pi }
        let half = dPhi * 0.5
        let dy = dPhi * (m0 + mSlope * half)
        let dx = dLambda * (g0 + gSlope * half)
        return dx * dx + dy * dy
    }

    /// Distance in metres from the centre to a coordinate.
    public func distance(to point: LocationCoordinate) -> Double {
        distanceSquared(
            latitudeRadians: point.latitude * .pi / 180,
            longitudeRadians: point.longitude * .pi / 180
        ).squareRoot()
    }
}

/// A latitude/longitude box, in degrees, that contains every point within a
/// given distance of a centre. It may be larger than needed, never smaller.
public struct LocationBoundingBox: Sendable, Hashable {
    public var minLatitude: Double
    public var maxLatitude: Double
    public var minLongitude: Double
    public var maxLongitude: Double
    /// Whether the box spans every longitude (near a pole or very large).
    public var coversAllLongitudes: Bool

    /// The box around `center` reaching `distance` metres in every direction.
    public init(center: LocationCoordinate, distance: Double) {
        let margin = 1.01
        let r = max(0, distance) * margin + 1
        // The meridional radius is smallest at the equator.
        let minM = LocationGeodesy.semiMajorAxis * (1 - LocationGeodesy.eccentricitySquared)
        let dLat = r / minM * 180 / .pi
        minLatitude = max(-90, center.latitude - dLat)
        maxLatitude = min(90, center.latitude + dLat)
        let poleward = max(abs(minLatitude), abs(maxLatitude))
        if poleward >= 89.5 {
            coversAllLongitudes = true
            minLongitude = -180
            maxLongitude = 180
        } else {
            let phi = poleward * .pi / 180
            let parallelRadius = LocationGeodesy.primeVerticalRadius(latitude: phi) * cos(phi)
            let dLon = r / parallelRadius * 180 / .pi
            if dLon >= 180 {
                coversAllLongitudes = true
                minLongitude = -180
                maxLongitude = 180
            } else {
                coversAllLongitudes = false
                minLongitude = center.longitude - dLon
                maxLongitude = center.longitude + dLon
            }
        }
    }

    /// Whether the box contains a point; handles boxes crossing ±180°.
    @inline(__always)
    public func contains(latitude: Double, longitude: Double) -> Bool {
        guard latitude >= minLatitude, latitude <= maxLatitude else { return false }
        if coversAllLongitudes { return true }
        if longitude >= minLongitude && longitude <= maxLongitude { return true }
        if minLongitude < -180 { return longitude >= minLongitude + 360 }
        if maxLongitude > 180 { return longitude <= maxLongitude - 360 }
        return false
    }
}
