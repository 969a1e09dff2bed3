import OffstageCore

/// What a location source reports.
public enum LocationSourceEvent: Sendable, Hashable {
    /// Connected and watching (gpsd confirmed the watch).
    case connected(String)
    /// A fix, with its own fix time, and the device it came from if known.
    case fix(LocationFixWithDevice)
    /// The connection was lost or could not be made; the source retries.
    case disconnected(String)
}

/// A fix and the device that produced it.
public struct LocationFixWithDevice: Sendable, Hashable {
    public var fix: LocationFix
    public var device: String?

    public init(fix: LocationFix, device: String?) {
        self.fix = fix
        self.device = device
    }
}

/// Reconnection backoff: wait `initialDelay`, then twice as long each
/// failed attempt, up to `maximumDelay`; back to `initialDelay` once
/// connected.
public struct LocationReconnectPolicy: Sendable, Hashable {
    public var initialDelay: Duration
    public var maximumDelay: Duration

    public init(initialDelay: Duration = .milliseconds(100), maximumDelay: Duration = .seconds(5)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The delay after `delay`.
    public func next(after delay: Duration) -> Duration { min(delay * 2, maximumDelay) }
}

/// A stream of location events: gpsd (``GPSDLocationSource``) or a fixture
/// file (``LocationFixtureSource``) behind the same shape.
public protocol LocationSource: Sendable {
    /// Starts the source; it stops when the stream is no longer consumed.
    func events() -> AsyncStream<LocationSourceEvent>
}
