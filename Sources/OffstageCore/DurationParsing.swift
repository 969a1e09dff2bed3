extension Duration {
    /// The longest duration the CLI, scenarios and apps may ask for: 100
    /// years (36500d). Clock times are Int64 nanoseconds, which end after
    /// 292 years.
    public static let longestAccepted: Duration = .seconds(36500 * 86400)

    /// `seconds` as a duration, if it is finite, not negative and at most
    /// ``longestAccepted``.
    public init?(acceptedSeconds seconds: Double) {
        guard seconds.isFinite, seconds >= 0, seconds <= Double(Self.longestAccepted.components.seconds) else { return nil }
        self = .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}

/// Parses durations as the CLI and scenarios write them: `90` (seconds),
/// `1.5s`, `250ms`, `5m`, `2h`, `1d`, and sums such as `1m30s`, largest
/// unit first, each unit once; nil for anything else (`1s1s`, `2h1d`,
/// `1e3`), and for more than ``Duration/longestAccepted`` (100 years).
public func parseDuration(_ text: String) -> Duration? {
    let trimmed = text.trimmingWhitespace()
    guard !trimmed.isEmpty else { return nil }
    if let seconds = decimal(Substring(trimmed)) {
        return Duration(acceptedSeconds: seconds)
    }
    // Largest first: a unit may only follow a larger one.
    let units: [(String, Double)] = [("d", 86400), ("h", 3600), ("ms", 1e-3), ("m", 60), ("s", 1)]
    let rank = ["d": 0, "h": 1, "m": 2, "s": 3, "ms": 4]
    var total = 0.0
    var previous = -1
    var rest = Substring(trimmed)
    while !rest.isEmpty {
        let number = rest.prefix { $0.isNumber || $0 == "." }
        guard let value = decimal(number) else { return nil }
        rest = rest.dropFirst(number.count)
        guard let (unit, scale) = units.first(where: { rest.hasPrefix($0.0) }), let order = rank[unit], order > previous
        else { return nil }
        previous = order
        rest = rest.dropFirst(unit.count)
        total += value * scale
    }
    return Duration(acceptedSeconds: total)
}

/// Digits with at most one decimal point (no sign, exponent, hex, `inf`
/// or `nan`), as a number.
private func decimal(_ text: Substring) -> Double? {
    guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
        text.filter({ $0 == "." }).count <= 1
    else { return nil }
    return Double(text)
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// Parses a byte size: `1048576`, `500K`, `200M`, `1.5G` (powers of 1024);
/// nil for anything else (a sign, an exponent, `inf`) and for a size an
/// `Int` cannot hold.
public func parseByteSize(_ text: String) -> Int? {
    let scales: [Character: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024]
    let trimmed = text.trimmingWhitespace().uppercased()
    if let last = trimmed.last, let scale = scales[last] {
        guard let value = decimal(trimmed.dropLast()) else { return nil }
        return Int(exactly: (value * scale).rounded(.down))
    }
    guard !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return Int(trimmed)
}
