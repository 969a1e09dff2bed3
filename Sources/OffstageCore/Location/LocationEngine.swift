/// Everything one fix decides, for every subscriber.
public struct LocationDecisions: Sendable, Hashable, Codable {
    /// `didEnterRegion:` / `didExitRegion:` / `didDetermineState:forRegion:`.
    public var regionEvents: [LocationRegionEvent] = []
    /// Significant-change updates (`didUpdateLocations:`).
    public var significantChanges: [LocationUpdate] = []
    /// Continuous updates (`didUpdateLocations:`), after distance filters.
    public var continuousUpdates: [LocationUpdate] = []

    public init() {}

    /// Whether the fix decided nothing.
    public var isEmpty: Bool { regionEvents.isEmpty && significantChanges.isEmpty && continuousUpdates.isEmpty }
}

/// The location service's three engines behind one value: feed it fixes,
/// get back what each subscriber must be told.
///
/// ```swift
/// var engine = LocationEngine()
/// _ = engine.regions.startMonitoring(region, for: "com.example.geo")
/// let first = engine.significantChanges.subscribe("com.example.geo")
/// let decisions = engine.process(fix)
/// ```
public struct LocationEngine: Sendable {
    /// Region monitoring.
    public var regions: LocationRegionMonitor
    /// The significant-change service.
    public var significantChanges: LocationSignificantChangeEngine
    /// Continuous updates with distance filters.
    public var continuousUpdates: LocationContinuousUpdates

    public init(
        regions: LocationRegionMonitorConfiguration = .init(),
        significantChanges: LocationSignificantChangeConfiguration = .init()
    ) {
        self.regions = LocationRegionMonitor(configuration: regions)
        self.significantChanges = LocationSignificantChangeEngine(configuration: significantChanges)
        self.continuousUpdates = LocationContinuousUpdates()
    }

    /// The most recent fix processed.
    public var latestFix: LocationFix? { regions.latestFix }

    /// Runs a fix through all three engines.
    public mutating func process(_ fix: LocationFix) -> LocationDecisions {
        var decisions = LocationDecisions()
        regions.process(fix, into: &decisions.regionEvents)
        decisions.significantChanges = significantChanges.process(fix)
        decisions.continuousUpdates = continuousUpdates.process(fix)
        return decisions
    }

    /// Removes a subscriber from every engine (an app uninstalled).
    public mutating func removeSubscriber(_ subscriber: LocationSubscriberID) {
        regions.removeSubscriber(subscriber)
        significantChanges.unsubscribe(subscriber)
        continuousUpdates.unsubscribe(subscriber)
    }
}
