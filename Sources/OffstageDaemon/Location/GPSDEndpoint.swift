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

    /// Parses `host:port`, `host`, `:port`, `port` or `[v6addr]:port`. A
    /// bare number is a port on this machine: as a host it read as an IPv4
    /// address (`2948` as 0.0.11.132) on port 2947. An empty text is
    /// nothing (it was `localhost:2947`).
    public init?(parsing text: String) {
        guard !text.isEmpty else { return nil }
        var host = Substring(text)
        var port = 2947
        if DecimalText.isDigits(text) {
            guard let p = Int(text) else { return nil }
            port = p
            host = ""
        } else if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
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
