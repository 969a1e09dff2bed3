/// A point on the daemon's clock: nanoseconds since the clock's epoch.
///
/// The core never reads a clock; every input carries the time it happened.
/// Both the real and the virtual clock produce `ClockTime`s.
public struct ClockTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public init(seconds: Double) { self.nanoseconds = Int64((seconds * 1e9).rounded()) }

    public static let zero = ClockTime(nanoseconds: 0)

    /// The latest time a virtual clock may be advanced to: 250 years after
    /// its start, short of where Int64 nanoseconds end (292 years), so
    /// deadlines computed from it (a wake window, a task's budget) still fit.
    public static let latest = ClockTime(nanoseconds: 250 * 365 * 86400 * 1_000_000_000)

    /// Seconds since the epoch, as the event log writes them.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (lhs: ClockTime, rhs: ClockTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: ClockTime, rhs: Duration) -> ClockTime {
        ClockTime(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }

    public static func - (lhs: ClockTime, rhs: Duration) -> ClockTime {
        ClockTime(nanoseconds: lhs.nanoseconds - rhs.nanoseconds)
    }

    public static func - (lhs: ClockTime, rhs: ClockTime) -> Duration {
        .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
    }

    public var description: String { formatSeconds(seconds) }
}

extension Duration {
    /// The duration in whole nanoseconds.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in seconds, as a `Double`.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Formats seconds with up to three decimals and no trailing zeros: `12`, `12.5`, `0.001`.
/// A value no clock holds (non-finite, or past 10^15 s) keeps Swift's own form: `1e+300`.
public func formatSeconds(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds.magnitude < 1e15 else { return "\(seconds)" }
    let millis = (seconds * 1000).rounded()
    if millis.truncatingRemainder(dividingBy: 1000) == 0 { return String(Int64(millis / 1000)) }
    var text = String(format3(millis / 1000))
    while text.hasSuffix("0") { text.removeLast() }
    return text
}

/// ``formatSeconds(_:)`` aligned on its decimal point, for columns: the
/// whole seconds right-aligned in `wholeWidth`, then the fraction (up to
/// three digits) and `unit`, then as many spaces as the fraction lacks:
/// `"    10    "`, `"    26.84 "`; with a unit `" s"`: `"   1 s    "`.
public func alignedSeconds(_ seconds: Double, wholeWidth: Int, unit: String = "") -> String {
    let text = formatSeconds(seconds)
    let point = text.firstIndex(of: ".") ?? text.endIndex
    let whole = text[..<point]
    let fraction = text[point...]
    return String(repeating: " ", count: max(0, wholeWidth - whole.count)) + whole + fraction + unit
        + String(repeating: " ", count: max(0, 4 - fraction.count))
}

private func format3(_ value: Double) -> String {
    let negative = value < 0
    let scaled = Int64((abs(value) * 1000).rounded())
    let whole = scaled / 1000
    let frac = scaled % 1000
    let fracText = String(frac)
    return (negative ? "-" : "") + "\(whole)." + String(repeating: "0", count: 3 - fracText.count) + fracText
}
