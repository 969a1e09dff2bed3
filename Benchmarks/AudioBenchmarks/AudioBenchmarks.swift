import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon

/// Audio engine benchmarks against a private PulseAudio server. Run in
/// release mode with `scripts/bench-audio.sh`; `--help` lists the options.
///
/// Prints each figure with its goal and, for CPU time, the baselines
/// (`paplay`) measured in the same run on the same server.
@main
struct AudioBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "AudioBenchmarks",
        abstract: "Benchmarks the audio engine against a private, headless PulseAudio server.",
        discussion: """
            Runs in turn: the CPU time to play a file through the engine and through paplay, \
            the time from a play request to the first audio the server accepts, and the delivery \
            of interruptions from a call placed by another client. Build in release mode \
            (scripts/bench-audio.sh does); needs the packages from scripts/setup.sh.
            """)

    enum Benchmark: String, CaseIterable, ExpressibleByArgument {
        case cpu, start, interruption
    }

    @Flag(help: "A short run: a 10 s file and 30 iterations.")
    var quick = false

    @Option(help: "Run only this benchmark.")
    var only: Benchmark?

    @Option(help: ArgumentHelp("Length of the file the CPU benchmark plays (default 60, 10 with --quick).", valueName: "seconds"))
    var seconds: Int?

    @Option(help: "Plays and calls measured by the latency benchmarks (default 200, 30 with --quick).")
    var iterations: Int?

    @Option(help: ArgumentHelp("The engine's server-side queue (default: PulseAudioOptions' 2 s).", valueName: "seconds"))
    var buffering: Double?

    @Option(help: ArgumentHelp("The sink latency the engine's streams ask for (default: PulseAudioOptions' 50 ms).", valueName: "milliseconds"))
    var latency: Int?

    @Option(help: ArgumentHelp("Use this running server instead of starting a private one.", valueName: "address"))
    var server: String?

    @Flag(help: "CPU: time only the engine in this process (no paplay, no offstage audio play).")
    var engineOnly = false

    @Flag(help: "CPU: print the engine's CPU time per thread, and this process's idle cost.")
    var verbose = false

    func validate() throws {
        if let seconds, seconds <= 0 { throw ValidationError("--seconds must be a positive number of seconds") }
        if let iterations, iterations <= 0 { throw ValidationError("--iterations must be positive") }
        if let latency, !(latency > 0 && latency <= 10_000) {
            throw ValidationError("--latency must be a number of milliseconds above 0 and at most 10000")
        }
        if let buffering, !(buffering > 0 && buffering <= 60) {
            throw ValidationError("--buffering must be a number of seconds above 0 and at most 60")
        }
    }

    func run() async throws {
        let seconds = seconds ?? (quick ? 10 : 60)
        let iterations = iterations ?? (quick ? 30 : 200)
        let buffering = buffering.map { Duration.milliseconds(Int(($0 * 1000).rounded())) }
        let offstage = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("offstage").path

        print("Offstage audio benchmarks (\(quick ? "quick" : "full") run), \(server == nil ? "private PulseAudio server" : "server \(server!)"), null sinks")
        print("")
        let privateServer = try server == nil ? PrivatePulseAudio(exitWhenIdle: .seconds(60)) : nil
        defer { privateServer?.stop() }
        let bench = BenchServer(
            serverAddress: server ?? privateServer!.serverAddress,
            directory: privateServer?.directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("offstage-audio-bench-\(UUID().uuidString)"),
            private: privateServer != nil)
        try FileManager.default.createDirectory(at: bench.directory, withIntermediateDirectories: true)
        print("server: \(bench.serverAddress)")
        if only == nil || only == .cpu {
            try await CPUBenchmark.run(
                server: bench, seconds: seconds, latency: latency.map { .milliseconds($0) }, buffering: buffering, offstage: offstage,
                engineOnly: engineOnly, verbose: verbose)
            print("")
            fflush(nil)
        }
        if only == nil || only == .start {
            try await StartLatencyBenchmark.run(server: bench, iterations: iterations)
            print("")
            fflush(nil)
        }
        if only == nil || only == .interruption {
            try await InterruptionBenchmark.run(server: bench, iterations: iterations)
        }
    }
}

/// The server the benchmarks play on, and a directory for their files.
struct BenchServer {
    var serverAddress: String
    var directory: URL
    /// Started by the benchmark (not the user's `--server`).
    var `private`: Bool
}

/// Sorted durations with percentiles.
struct Samples {
    private(set) var values: [Duration] = []
    mutating func append(_ value: Duration) { values.append(value) }
    func percentile(_ p: Double) -> Duration {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .zero }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
    var p50: Duration { percentile(0.5) }
    var p99: Duration { percentile(0.99) }
    var max: Duration { values.max() ?? .zero }
}

func milliseconds(_ d: Duration) -> String { String(format: "%.2f ms", d.seconds * 1000) }
func microseconds(_ d: Duration) -> String { String(format: "%.0f µs", d.seconds * 1e6) }

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
