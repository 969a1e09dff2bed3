import ArgumentParser

/// Command-line options of the benchmark driver.
struct BenchOptions {
    /// Samples per round-trip and wake figure (and their baselines).
    var iterations = 2000
    /// Relaunches measured per app.
    var relaunches = 40
    /// home/launch cycles of the virtual-time scenario.
    var cycles = 10_000
    /// Which benchmarks run.
    var only: Set<Benchmark> = Set(Benchmark.allCases)
    /// CPU placements the round-trip and wake benchmarks run under, in order.
    var placements: [Placement] = Placement.allCases
    /// Exit 1 when a goal is missed (off by default: shared machines are noisy).
    var strict = false
    /// Keep the temporary data directories (daemon logs, app logs).
    var keep = false
    var quick = false

    enum Benchmark: String, CaseIterable {
        case roundtrip, wake, relaunch, cycles
    }
}

/// The driver's command line (ArgumentParser), turned into ``BenchOptions``.
struct TrunkBenchmarksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "TrunkBenchmarks",
        abstract: "Benchmarks Offstage's callback round trip, wake, relaunch and a virtual-time scenario.",
        discussion: """
            Each figure is printed next to a baseline measured in the same run. Build the sample \
            app too (swift build -c release --product StateLab) for the StateLab rows; \
            scripts/bench-trunk.sh builds both in release mode and runs this.

            Placements (--placement), where round trip and wake run:
              free   no pinning: the scheduler places every wake-up
              same   everything on CPU 0: every wake-up is a context switch
              split  daemon and driver on CPU 0, app and ping-pong child on CPU 1:
                     every wake-up crosses CPUs
            """)

    @Flag(help: "A small run for smoke tests: 200 iterations, 10 relaunches, 1000 cycles (the cycle goal is scaled to the number of cycles).")
    var quick = false

    @Option(help: ArgumentHelp("Samples per round-trip and wake figure and their baselines (default 2000).", valueName: "n"))
    var iterations: Int?

    @Option(help: ArgumentHelp("Relaunches measured per app (default 40).", valueName: "n"))
    var relaunches: Int?

    @Option(help: ArgumentHelp("home/launch cycles in virtual time (default 10000).", valueName: "n"))
    var cycles: Int?

    @Option(
        help: ArgumentHelp(
            "Run only these benchmarks, comma-separated (\(BenchOptions.Benchmark.allCases.map(\.rawValue).joined(separator: ", "))).",
            valueName: "list"),
        transform: { try Self.list($0, of: BenchOptions.Benchmark.self, named: "benchmark") })
    var only: [BenchOptions.Benchmark]?

    @Option(
        help: ArgumentHelp("Where round trip and wake run, comma-separated, in turn (default: free,same,split).", valueName: "list"),
        transform: { try Self.list($0, of: Placement.self, named: "placement") })
    var placement: [Placement]?

    @Flag(help: "Exit with status 1 when a goal is missed.")
    var strict = false

    @Flag(help: "Keep the temporary data directory (daemon and app logs) and print its path.")
    var keep = false

    func validate() throws {
        for (flag, value) in [("--iterations", iterations), ("--relaunches", relaunches), ("--cycles", cycles)] {
            if let value, value <= 0 { throw ValidationError("\(flag) needs a positive integer") }
        }
    }

    /// A comma-separated list of names of `Item`'s cases.
    static func list<Item: RawRepresentable & CaseIterable>(_ text: String, of: Item.Type, named noun: String) throws -> [Item]
    where Item.RawValue == String {
        let items = try text.split(separator: ",").map { name in
            guard let item = Item(rawValue: String(name)) else {
                let known = Item.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError("unknown \(noun) '\(name)' (known: \(known))")
            }
            return item
        }
        guard !items.isEmpty else { throw ValidationError("an empty list of \(noun)s") }
        return items
    }

    var options: BenchOptions {
        var options = BenchOptions()
        options.quick = quick
        if quick {
            options.iterations = 200
            options.relaunches = 10
            options.cycles = 1000
        }
        options.iterations = iterations ?? options.iterations
        options.relaunches = relaunches ?? options.relaunches
        options.cycles = cycles ?? options.cycles
        if let only { options.only = Set(only) }
        if let placement { options.placements = placement }
        options.strict = strict
        options.keep = keep
        return options
    }

    func run() async throws {
        let status = await BenchmarkDriver.run(options)
        if status != 0 { throw ExitCode(status) }
    }
}
