/// Where a gpsd listens: `host:port`, default `localhost:2947`.
public struct GPSDEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address.
    public var host: String
    /// TCP port.
    public var port: Int

    /// gpsd's default, `localhost:2947`.
    public static let `default` = GPSDEndpoint(host: "localhost", port: 2947)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, `host`, `:port` or `[v6addr]:port`.
    public init?(parsing text: String) {
        var host = Substring(text)
        var port = 2947
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = Int(rest.dropFirst()) else { return nil }
                port = p
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]) else { return nil }
            port = p
            host = host[..<colon]
        }
        guard (1...65_535).contains(port) else { return nil }
        self.host = host.isEmpty ? "localhost" : String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// What a location source reports.
public enum LocationSourceEvent: Sendable, Hashable {
    /// Connected and watching (gpsd confirmed the watch).
    case connected(String)
    /// A fix, with its own fix time, and the device it came from if known.
    case fix(LocationFixWithDevice)
    /// The connection was lost or could not be made; the source retries.
    case disconnected(String)
}

import OffstageCore

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
