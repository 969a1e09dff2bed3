#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Distances on the WGS-84 ellipsoid.
///
/// Two methods:
/// - ``vincentyDistance(_:_:)``: Vincenty's inverse formula on the ellipsoid,
///   accurate to about half a millimetre; iterative, so slower.
/// - ``localDistance(_:_:)``: a flat-earth approximation that scales the
///   latitude and longitude differences by the ellipsoid's meridional and
///   prime-vertical radii of curvature at the mean latitude. Its error grows
///   with the cube of the distance: measured against Vincenty below 80°
///   latitude it stays under 1 mm up to 5 km and under 2 cm up to 20 km
///   (see `LocationGeodesyTests`).
///
/// ``distance(_:_:)`` picks the local formula below
/// ``localDistanceLimit`` between points no nearer a pole than
/// ``localLatitudeLimit``, and Vincenty otherwise, so it is good to a few
/// centimetres at any range and latitude (Vincenty's own error is
/// sub-millimetre). Near a pole the flat approximation fails: points
/// 500 m apart on either side of it differ by 180° of longitude.
public enum LocationGeodesy {
    /// WGS-84 semi-major axis, metres.
    public static let semiMajorAxis = 6_378_137.0
    /// WGS-84 flattening.
    public static let flattening = 1 / 298.257_223_563
    /// First eccentricity squared.
    public static let eccentricitySquared = flattening * (2 - flattening)
    /// Above this many metres, ``distance(_:_:)`` uses Vincenty.
    public static let localDistanceLimit = 10_000.0
    /// Beyond this latitude (north or south), ``distance(_:_:)`` uses Vincenty.
    public static let localLatitudeLimit = 80.0

    /// Geodesic distance in metres between two coordinates.
    public static func distance(_ a: LocationCoordinate, _ b: LocationCoordinate) -> Double {
        guard max(abs(a.latitude), abs(b.latitude)) <= localLatitudeLimit else { return vincentyDistance(a, b) }
        let local = localDistance(a, b)
        return local < localDistanceLimit ? local : vincentyDistance(a, b)
    }

    /// Geodesic distance in metres between two fixes.
    public static func distance(_ a: LocationFix, _ b: LocationFix) -> Double {
        distance(a.coordinate, b.coordinate)
    }

    /// Meridional radius of curvature M at a latitude (radians).
    public static func meridionalRadius(latitude phi: Double) -> Double {
        let s = sin(phi)
        let w = 1 - eccentricitySquared * s * s
        return semiMajorAxis * (1 - eccentricitySquared) / (w * w.squareRoot())
    }

    /// Prime-vertical radius of curvature N at a latitude (radians).
    public static func primeVerticalRadius(latitude phi: Double) -> Double {
        let s = sin(phi)
        return semiMajorAxis / (1 - eccentricitySquared * s * s).squareRoot()
    }

    /// The flat-earth approximation at the mean latitude (see the type's
    /// discussion for its error bound).
    public static func localDistance(_ a: LocationCoordinate, _ b: LocationCoordinate) -> Double {
        let phiA = a.latitude * .pi / 180
        let phiB = b.latitude * .pi / 180
        let mean = (phiA + phiB) / 2
        let dy = (phiB - phiA) * meridionalRadius(latitude: mean)
        let dx = wrappedLongitudeDifference(b.longitude - a.longitude) * .pi / 180
            * primeVerticalRadius(latitude: mean) * cos(mean)
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Vincenty's inverse formula on WGS-84. Falls back to the
    /// great-circle distance on the mean sphere for nearly antipodal points
    /// where the iteration does not converge.
    public static func vincentyDistance(_ p: LocationCoordinate, _ q: LocationCoordinate) -> Double {
        let a = semiMajorAxis, f = flattening, b = a * (1 - f)
        let l = wrappedLongitudeDifference(q.longitude - p.longitude) * .pi / 180
        let u1 = atan((1 - f) * tan(p.latitude * .pi / 180))
        let u2 = atan((1 - f) * tan(q.latitude * .pi / 180))
        let sinU1 = sin(u1), cosU1 = cos(u1), sinU2 = sin(u2), cosU2 = cos(u2)
        var lambda = l
        for _ in 0..<200 {
            let sinLambda = sin(lambda), cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            let sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return 0 }
            let cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            let sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            let cos2Alpha = 1 - sinAlpha * sinAlpha
            let cos2SigmaM = cos2Alpha == 0 ? 0 : cosSigma - 2 * sinU1 * sinU2 / cos2Alpha
            let c = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
            let previous = lambda
            lambda = l + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 {
                let uSquared = cos2Alpha * (a * a - b * b) / (b * b)
                let bigA = 1 + uSquared / 16384 * (4096 + uSquared * (-768 + uSquared * (320 - 175 * uSquared)))
                let bigB = uSquared / 1024 * (256 + uSquared * (-128 + uSquared * (74 - 47 * uSquared)))
                let deltaSigma = bigB * sinSigma * (cos2SigmaM + bigB / 4
                    * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
                        - bigB / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
                return b * bigA * (sigma - deltaSigma)
            }
        }
        return greatCircleDistance(p, q)
    }

    /// Haversine distance on a sphere of the WGS-84 mean radius (about
    /// 0.5 % off); used only where Vincenty does not converge.
    public static func greatCircleDistance(_ p: LocationCoordinate, _ q: LocationCoordinate) -> Double {
        let meanRadius = 6_371_008.8
        let phi1 = p.latitude * .pi / 180, phi2 = q.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = wrappedLongitudeDifference(q.longitude - p.longitude) * .pi / 180
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * meanRadius * asin(min(1, h.squareRoot()))
    }

    /// A longitude difference in degrees brought into -180...180.
    @inline(__always)
    public static func wrappedLongitudeDifference(_ degrees: Double) -> Double {
        if degrees > 180 { return degrees - 360 }
        if degrees < -180 { return degrees + 360 }
        return degrees
    }
}
