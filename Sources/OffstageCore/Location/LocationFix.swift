/// A point on the WGS-84 ellipsoid, in degrees.
public struct LocationCoordinate: Sendable, Hashable, Codable {
    /// Latitude in degrees, positive north, in -90...90.
    public var latitude: Double
    /// Longitude in degrees, positive east, in -180...180.
    public var longitude: Double

    /// Creates a coordinate from degrees.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both values are finite and in range.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite
            && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }
}

/// One position fix, stamped with its own fix time (not its receipt time).
///
/// Time is seconds since 1970-01-01T00:00:00Z (UTC, no leap seconds), as
/// GPS receivers and gpsd report it. The core never reads a clock: every
/// engine takes its notion of "now" from the fixes it is given.
public struct LocationFix: Sendable, Hashable, Codable {
    /// Latitude in degrees.
    public var latitude: Double
    /// Longitude in degrees.
    public var longitude: Double
    /// Fix time, seconds since the Unix epoch (UTC).
    public var time: Double
    /// Altitude above mean sea level in metres, if known.
    public var altitude: Double?
    /// Speed over ground in metres per second, if known.
    public var speed: Double?
    /// Course over ground in degrees from true north, if known.
    public var course: Double?
    /// Estimated horizontal error in metres, if known.
    public var horizontalAccuracy: Double?

    /// What is impossible about the fix's time or optional values, if
    /// anything: a value that is not a number or no receiver could report
    /// (written to NMEA it would trap or mislead gpsd), or a time no
    /// four-digit year holds (a route timed at a tiny speed reached one; it
    /// trapped the writers, or was written as a time no reader takes back).
    public var implausibility: String? {
        func check(_ name: String, _ value: Double?, _ range: ClosedRange<Double>) -> String? {
            guard let value, !(value.isFinite && range.contains(value)) else { return nil }
            return "\(name) out of range (\(Self.plain(value)); \(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound)))"
        }
        if !Self.timeRange.contains(time) {
            return "time out of range (\(time) s from 1970; a fix's year is 0000 to 9999)"
        }
        return check("altitude", altitude, -20_000...1_000_000) ?? check("speed", speed, Self.speedRange)
            ?? check("course", course, Self.courseRange) ?? check("horizontal accuracy", horizontalAccuracy, Self.horizontalAccuracyRange)
    }

    /// A number as a fixture would write it: -30000, not -30000.0.
    public static func plain(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : "\(x)" }

    /// The times ISO 8601's four-digit years hold, 0000-01-01 to the last
    /// millisecond of 9999 (seconds from 1970).
    public static let timeRange = -62_167_219_200.0...253_402_300_799.999

    /// The speeds (m/s) a receiver could report.
    public static let speedRange = 0.0...100_000
    /// The horizontal accuracies (metres) a fix may state.
    public static let horizontalAccuracyRange = 0.0...10_000_000
    /// The courses (degrees true; 360 is north, as some writers put it).
    public static let courseRange = 0.0...360

    /// Creates a fix.
    public init(
        latitude: Double, longitude: Double, time: Double,
        altitude: Double? = nil, speed: Double? = nil, course: Double? = nil,
        horizontalAccuracy: Double? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.time = time
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.horizontalAccuracy = horizontalAccuracy
    }

    /// The fix's position.
    public var coordinate: LocationCoordinate {
        LocationCoordinate(latitude: latitude, longitude: longitude)
    }
}

/// Identifies one consumer of location services (an app, by bundle id).
public struct LocationSubscriberID: Sendable, Hashable, Codable, Comparable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    /// The identifier, usually a bundle identifier.
    public var rawValue: String

    /// Creates an identifier.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
