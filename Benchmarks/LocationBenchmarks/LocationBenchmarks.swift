import Foundation
import OffstageCore
import OffstageDaemon

/// Location engine benchmarks. Run in release mode:
///
///     swift run -c release LocationBenchmarks [--quick]
///
/// Prints each figure with its baseline from the same run.
@main
enum LocationBenchmarks {
    static func main() async throws {
        let quick = CommandLine.arguments.contains("--quick")
        print("Offstage location benchmarks (\(quick ? "quick" : "full") run, one core per engine)")
        print("")
        let only = CommandLine.arguments.firstIndex(of: "--only").map { CommandLine.arguments[$0 + 1] }
        let naiveFixes = CommandLine.arguments.firstIndex(of: "--naive-fixes").flatMap { Int(CommandLine.arguments[$0 + 1]) }
        if only == nil || only == "regions" {
            // A 100 × 100 km metropolitan area (10,000 km², the size of
            // Greater Paris or London's commuter belt), and a 4× denser one.
            let sides = CommandLine.arguments.firstIndex(of: "--side-km").flatMap { Double(CommandLine.arguments[$0 + 1]) }.map { [$0 * 1000] }
            for side in sides ?? [100_000.0, 50_000.0] {
                try RegionBenchmark.run(fixCount: quick ? 100_000 : 1_000_000, naiveFixCount: naiveFixes ?? (quick ? 300 : 2_000), side: side)
                print("")
            }
        }
        if only == nil || only == "gpsd" {
            try await GPSDThroughputBenchmark.run(fixCount: quick ? 10_000 : 50_000)
            print("")
            try await GPSDLatencyBenchmark.run(fixCount: quick ? 300 : 2_000, rate: 200)
        }
    }
}

/// Seconds in a Duration.
func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Formats a number with thousands separators.
func grouped(_ value: Double) -> String {
    let n = Int(value.rounded())
    let s = String(abs(n))
    var out = ""
    for (i, c) in s.reversed().enumerated() {
        if i > 0 && i % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + String(out.reversed())
}

/// A deterministic generator (SplitMix64).
struct BenchRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
