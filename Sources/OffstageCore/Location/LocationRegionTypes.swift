/// A circular region to monitor, as `CLCircularRegion`.
public struct LocationCircularRegion: Sendable, Hashable, Codable {
    /// Identifier, unique per subscriber; re-adding an identifier replaces
    /// the region.
    public var identifier: String
    /// Centre of the circle.
    public var center: LocationCoordinate
    /// Radius in metres; capped at the monitor's maximum monitoring distance.
    public var radius: Double
    /// Whether entering produces a `didEnterRegion` event.
    public var notifyOnEntry: Bool
    /// Whether exiting produces a `didExitRegion` event.
    public var notifyOnExit: Bool

    /// Creates a region; both notifications are on by default, as in Core
    /// Location.
    public init(
        identifier: String, center: LocationCoordinate, radius: Double,
        notifyOnEntry: Bool = true, notifyOnExit: Bool = true
    ) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }
}

/// A region and the subscriber that monitors it (the unit to persist).
public struct LocationMonitoredRegion: Sendable, Hashable, Codable {
    public var subscriber: LocationSubscriberID
    public var region: LocationCircularRegion

    public init(subscriber: LocationSubscriberID, region: LocationCircularRegion) {
        self.subscriber = subscriber
        self.region = region
    }
}

/// Where the device is relative to a region, as `CLRegionState`.
public enum LocationRegionState: String, Sendable, Hashable, Codable {
    case unknown
    case inside
    case outside
}

/// Why a region could not be monitored (delivered to the app as
/// `locationManager:monitoringDidFailForRegion:withError:`).
public enum LocationRegionMonitoringFailure: String, Sendable, Hashable, Codable, Error {
    /// The subscriber already monitors the maximum number of regions.
    case tooManyRegions
    /// The centre is not a valid coordinate, or the radius is not a
    /// positive finite number.
    case invalidRegion
}

/// The outcome of ``LocationRegionMonitor/startMonitoring(_:for:)``.
public enum LocationRegionRegistration: Sendable, Hashable {
    /// Monitoring started (or the region replaced an earlier one with the
    /// same identifier); the state is the one known at registration.
    case monitoring(region: LocationCircularRegion, state: LocationRegionState)
    /// Monitoring failed; the subscriber's other regions are unchanged.
    case failed(region: LocationCircularRegion, failure: LocationRegionMonitoringFailure)
}

/// One thing the region monitor tells a subscriber.
public struct LocationRegionEvent: Sendable, Hashable, Codable {
    /// What happened.
    public enum Kind: Sendable, Hashable, Codable {
        /// `locationManager:didEnterRegion:`.
        case didEnter
        /// `locationManager:didExitRegion:`.
        case didExit
        /// `locationManager:didDetermineState:forRegion:`.
        case didDetermineState(LocationRegionState)
    }

    /// Who gets it.
    public var subscriber: LocationSubscriberID
    /// The region's identifier.
    public var identifier: String
    /// What happened.
    public var kind: Kind
    /// Fix time of the decision, seconds since the Unix epoch (nil when a
    /// state is requested before any fix is known).
    public var time: Double?

    public init(subscriber: LocationSubscriberID, identifier: String, kind: Kind, time: Double?) {
        self.subscriber = subscriber
        self.identifier = identifier
        self.kind = kind
        self.time = time
    }
}

/// Tunables of the region monitor. Defaults follow Core Location.
public struct LocationRegionMonitorConfiguration: Sendable, Hashable {
    /// How far past the boundary (metres) the device must be for an enter or
    /// exit. The inward band is capped at half the radius so that small
    /// regions can still be entered.
    public var hysteresis: Double = 200
    /// How long (seconds of fix time) the device must stay past the band.
    public var dwell: Double = 20
    /// Regions per subscriber; one more fails with `tooManyRegions`.
    public var maximumRegionsPerSubscriber: Int = 20
    /// Largest radius (metres); larger radii are clamped to it, as
    /// `CLLocationManager.maximumRegionMonitoringDistance`.
    public var maximumRadius: Double = 400_000
    /// Grid cell size of the spatial index, in degrees.
    public var cellSizeDegrees: Double = 0.0025

    public init(
        hysteresis: Double = 200, dwell: Double = 20, maximumRegionsPerSubscriber: Int = 20,
        maximumRadius: Double = 400_000, cellSizeDegrees: Double = 0.0025
    ) {
        self.hysteresis = hysteresis
        self.dwell = dwell
        self.maximumRegionsPerSubscriber = maximumRegionsPerSubscriber
        self.maximumRadius = maximumRadius
        self.cellSizeDegrees = cellSizeDegrees
    }
}
