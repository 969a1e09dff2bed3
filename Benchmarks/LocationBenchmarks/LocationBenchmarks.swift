import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// Location engine benchmarks. Run in release mode with
/// `scripts/bench-location.sh`; `--help` lists the options.
///
/// Prints each figure with its baseline from the same run.
@main
struct LocationBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "LocationBenchmarks",
        abstract: "Benchmarks region monitoring and the gpsd client.",
        discussion: """
            regions: a drive at 1 Hz through 100,000 regions (5,000 subscribers × 20) over a \
            metropolitan area, indexed, against checking every region on every fix. gpsd: fixes \
            per second from a fixture through a real gpsd into the reader, and the latency from a \
            fix written to gpsd's device to the engines' decision (needs gpsd: scripts/setup.sh). \
            Build in release mode (scripts/bench-location.sh does).
            """)

    enum Benchmark: String, CaseIterable, ExpressibleByArgument {
        case regions, gpsd
    }

    @Flag(help: "A short run: 100,000 fixes through the region engine, 10,000 through gpsd.")
    var quick = false

    @Option(help: "Run only this benchmark.")
    var only: Benchmark?

    @Option(help: ArgumentHelp("Fixes for the check-every-region baseline (default 2,000, 300 with --quick).", valueName: "count"))
    var naiveFixes: Int?

    @Option(help: ArgumentHelp("Side of the square area, in km (default: 100 and then 50).", valueName: "km"))
    var sideKm: Double?

    func validate() throws {
        if let naiveFixes, naiveFixes <= 0 { throw ValidationError("--naive-fixes must be positive") }
        if let sideKm, !(sideKm > 0 && sideKm <= 10_000) { throw ValidationError("--side-km must be above 0 and at most 10,000") }
    }

    func run() async throws {
        print("Offstage location benchmarks (\(quick ? "quick" : "full") run, one core per engine)")
        print("")
        if only == nil || only == .regions {
            // A 100 × 100 km metropolitan area (10,000 km², the size of
            // Greater Paris or London's commuter belt), and a 4× denser one.
            for side in sideKm.map({ [$0 * 1000] }) ?? [100_000.0, 50_000.0] {
                try RegionBenchmark.run(fixCount: quick ? 100_000 : 1_000_000, naiveFixCount: naiveFixes ?? (quick ? 300 : 2_000), side: side)
                print("")
            }
        }
        if only == nil || only == .gpsd {
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
