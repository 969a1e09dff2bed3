#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on the monotonic clock, comparable across threads and processes.
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Durations in nanoseconds, summarized by nearest-rank percentiles.
struct Samples: Sendable {
    private(set) var nanos: [UInt64] = []

    init(_ nanos: [UInt64] = []) { self.nanos = nanos }

    mutating func append(_ value: UInt64) { nanos.append(value) }

    /// Times `body` and keeps the sample.
    @discardableResult
    mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let start = monotonicNanos()
        let result = try body()
        nanos.append(monotonicNanos() - start)
        return result
    }

    @discardableResult
    mutating func time<T>(_ body: () async throws -> T) async rethrows -> T {
        let start = monotonicNanos()
        let result = try await body()
        nanos.append(monotonicNanos() - start)
        return result
    }

    var count: Int { nanos.count }

    /// The `p`-th percentile (0...100), nearest rank; 0 when empty.
    func percentile(_ p: Double) -> UInt64 {
        guard !nanos.isEmpty else { return 0 }
        let sorted = nanos.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    var p50: UInt64 { percentile(50) }
    var p99: UInt64 { percentile(99) }
    var total: UInt64 { nanos.reduce(0, +) }
}

/// `12.3 µs`, `4.56 ms`, `7.89 s`.
func formatNanos(_ nanos: UInt64) -> String {
    let value = Double(nanos)
    if value < 1_000_000 { return fmt(value / 1_000, digits: 1) + " µs" }
    if value < 1_000_000_000 { return fmt(value / 1_000_000, digits: 2) + " ms" }
    return fmt(value / 1_000_000_000, digits: 2) + " s"
}

func fmt(_ value: Double, digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    } else if digits > 0 {
        text += "." + String(repeating: "0", count: digits)
    }
    return text
}

/// Writes `text` to standard error, unbuffered.
func printError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(2, raw.baseAddress! + offset, raw.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
