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
    var help = false

    enum Benchmark: String, CaseIterable {
        case roundtrip, wake, relaunch, cycles
    }

    static let usage = """
        usage: TrunkBenchmarks [--quick] [--iterations N] [--relaunches N] [--cycles N]
                               [--only roundtrip,wake,relaunch,cycles] [--placement free,same,split]
                               [--strict] [--keep]

          --quick          a small run for smoke tests: 200 iterations, 10 relaunches, 1000 cycles
                           (the cycle goal is scaled to the number of cycles)
          --iterations N   samples per round-trip and wake figure and their baselines (default 2000)
          --relaunches N   relaunches measured per app (default 40)
          --cycles N       home/launch cycles in virtual time (default 10000)
          --only LIST      run only these benchmarks (comma-separated)
          --placement LIST where round trip and wake run (default: all three, in turn):
                           free   no pinning: the scheduler places every wake-up
                           same   everything on CPU 0: every wake-up is a context switch
                           split  daemon and driver on CPU 0, app and ping-pong child on
                                  CPU 1: every wake-up crosses CPUs
          --strict         exit with status 1 when a goal is missed
          --keep           keep the temporary data directory and print its path

        Build the sample app too (`swift build -c release --product StateLab`) for the
        StateLab rows; scripts/bench-trunk.sh does both.

        """

    init(arguments: [String]) throws {
        var rest = arguments[...]
        func number(_ flag: String) throws -> Int {
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                throw OptionError("\(flag) needs a positive integer")
            }
            return value
        }
        /// A comma-separated list of names of `Item`'s cases.
        func list<Item: RawRepresentable & CaseIterable>(_ flag: String, of: Item.Type, named noun: String) throws
            -> [Item]
        where Item.RawValue == String {
            guard let text = rest.popFirst() else { throw OptionError("\(flag) needs a list") }
            return try text.split(separator: ",").map { name in
                guard let item = Item(rawValue: String(name)) else {
                    let known = Item.allCases.map(\.rawValue).joined(separator: ", ")
                    throw OptionError("unknown \(noun) \(name) (known: \(known))")
                }
                return item
            }
        }
        var explicit: (iterations: Int?, relaunches: Int?, cycles: Int?) = (nil, nil, nil)
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--iterations": explicit.iterations = try number(argument)
            case "--relaunches": explicit.relaunches = try number(argument)
            case "--cycles": explicit.cycles = try number(argument)
            case "--strict": strict = true
            case "--keep": keep = true
            case "--help", "-h": help = true
            case "--placement": placements = try list(argument, of: Placement.self, named: "placement")
            case "--only": only = Set(try list(argument, of: Benchmark.self, named: "benchmark"))
            default:
                throw OptionError("unknown argument \(argument)")
            }
        }
        if quick {
            iterations = 200
            relaunches = 10
            cycles = 1000
        }
        iterations = explicit.iterations ?? iterations
        relaunches = explicit.relaunches ?? relaunches
        cycles = explicit.cycles ?? cycles
    }
}

struct OptionError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
