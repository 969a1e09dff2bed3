/// Tunables of the significant-change service.
public struct LocationSignificantChangeConfiguration: Sendable, Hashable {
    /// Minimum distance in metres from the last delivered update.
    public var minimumDistance: Double = 500
    /// Minimum fix time in seconds since the last delivered update.
    public var minimumInterval: Double = 300

    public init(minimumDistance: Double = 500, minimumInterval: Double = 300) {
        self.minimumDistance = minimumDistance
        self.minimumInterval = minimumInterval
    }
}

/// One location update for one subscriber.
public struct LocationUpdate: Sendable, Hashable, Codable {
    /// Who gets it.
    public var subscriber: LocationSubscriberID
    /// The fix delivered (`locationManager:didUpdateLocations:`).
    public var fix: LocationFix

    public init(subscriber: LocationSubscriberID, fix: LocationFix) {
        self.subscriber = subscriber
        self.fix = fix
    }
}

/// The significant-change location service.
///
/// Per subscriber: the first update is the latest known fix (delivered at
/// subscription, or with the first fix if none is known yet); after that a
/// fix is delivered when it is at least ``LocationSignificantChangeConfiguration/minimumDistance``
/// from the last update delivered *and* at least
/// ``LocationSignificantChangeConfiguration/minimumInterval`` seconds of fix
/// time after it.
///
/// Subscribers that were last updated with the same fix share one anchor,
/// so a fix costs one distance check per distinct anchor, not per
/// subscriber.
public struct LocationSignificantChangeEngine: Sendable {
    private struct Anchor: Sendable {
        var fix: LocationFix
        var members: Set<LocationSubscriberID>
    }

    /// The configuration in force.
    public let configuration: LocationSignificantChangeConfiguration
    /// The most recent fix processed.
    public private(set) var latestFix: LocationFix?

    private var anchors: [Int: Anchor] = [:]
    private var anchorOf: [LocationSubscriberID: Int] = [:]
    private var waiting: Set<LocationSubscriberID> = []
    private var nextAnchor = 0

    /// Creates an engine with no subscribers.
    public init(configuration: LocationSignificantChangeConfiguration = .init()) {
        self.configuration = configuration
    }

    /// Whether a subscriber is subscribed.
    public func isSubscribed(_ subscriber: LocationSubscriberID) -> Bool {
        anchorOf[subscriber] != nil || waiting.contains(subscriber)
    }

    /// `startMonitoringSignificantLocationChanges`. Returns the first update
    /// (the latest known fix) if a fix is known; otherwise the first fix
    /// processed will be delivered. Subscribing again restarts.
    public mutating func subscribe(_ subscriber: LocationSubscriberID) -> LocationUpdate? {
        unsubscribe(subscriber)
        guard let fix = latestFix else {
            waiting.insert(subscriber)
            return nil
        }
        join(subscriber, anchor: anchorID(for: fix))
        return LocationUpdate(subscriber: subscriber, fix: fix)
    }

    /// `stopMonitoringSignificantLocationChanges`.
    public mutating func unsubscribe(_ subscriber: LocationSubscriberID) {
        waiting.remove(subscriber)
        guard let id = anchorOf.removeValue(forKey: subscriber) else { return }
        anchors[id]?.members.remove(subscriber)
        if anchors[id]?.members.isEmpty == true { anchors[id] = nil }
    }

    /// Processes a fix; returns the updates it causes, sorted by subscriber.
    public mutating func process(_ fix: LocationFix) -> [LocationUpdate] {
        latestFix = fix
        var due: [LocationSubscriberID] = Array(waiting)
        waiting.removeAll()
        for (id, anchor) in anchors {
            let elapsed = fix.time - anchor.fix.time
            guard elapsed >= configuration.minimumInterval,
                LocationGeodesy.distance(anchor.fix, fix) >= configuration.minimumDistance
            else { continue }
            due.append(contentsOf: anchor.members)
            anchors[id] = nil
        }
        guard !due.isEmpty else { return [] }
        due.sort()
        let id = anchorID(for: fix)
        for subscriber in due { join(subscriber, anchor: id) }
        return due.map { LocationUpdate(subscriber: $0, fix: fix) }
    }

    private mutating func anchorID(for fix: LocationFix) -> Int {
        if let existing = anchors.first(where: { $0.value.fix == fix })?.key { return existing }
        let id = nextAnchor
        nextAnchor += 1
        anchors[id] = Anchor(fix: fix, members: [])
        return id
    }

    private mutating func join(_ subscriber: LocationSubscriberID, anchor id: Int) {
        anchors[id]?.members.insert(subscriber)
        anchorOf[subscriber] = id
    }
}
