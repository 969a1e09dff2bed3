/// Continuous location updates (`startUpdatingLocation`) with a distance
/// filter, per subscriber.
///
/// A fix is delivered to a subscriber when it has received none yet, or
/// when the fix is at least the subscriber's distance filter from the last
/// fix delivered to it. A nil filter (`kCLDistanceFilterNone`) delivers
/// every fix.
public struct LocationContinuousUpdates: Sendable {
    private struct Subscription: Sendable {
        var distanceFilter: Double?
        var last: LocationFix?
    }

    private var subscriptions: [LocationSubscriberID: Subscription] = [:]

    /// Creates a filter with no subscribers.
    public init() {}

    /// Subscribers, sorted.
    public var subscribers: [LocationSubscriberID] { subscriptions.keys.sorted() }

    /// Starts (or restarts, with a new filter) updates for a subscriber.
    /// - Parameter distanceFilter: metres, or nil for every fix.
    public mutating func subscribe(_ subscriber: LocationSubscriberID, distanceFilter: Double? = nil) {
        subscriptions[subscriber] = Subscription(distanceFilter: distanceFilter, last: nil)
    }

    /// Stops updates for a subscriber.
    public mutating func unsubscribe(_ subscriber: LocationSubscriberID) {
        subscriptions[subscriber] = nil
    }

    /// Processes a fix; returns the deliveries, sorted by subscriber.
    public mutating func process(_ fix: LocationFix) -> [LocationUpdate] {
        var result: [LocationUpdate] = []
        for (subscriber, subscription) in subscriptions {
            if let last = subscription.last, let filter = subscription.distanceFilter,
                LocationGeodesy.distance(last, fix) < filter
            {
                continue
            }
            subscriptions[subscriber]?.last = fix
            result.append(LocationUpdate(subscriber: subscriber, fix: fix))
        }
        return result.sorted { $0.subscriber < $1.subscriber }
    }
}
