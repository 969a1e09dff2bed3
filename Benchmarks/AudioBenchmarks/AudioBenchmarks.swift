import Foundation
import OffstageCore
import OffstageDaemon

/// Audio engine benchmarks against a private PulseAudio server. Run in
/// release mode with `scripts/bench-audio.sh` (`--quick` for a short run,
/// `--only cpu|start|interruption`, `--seconds N` for the CPU file,
/// `--buffering SECONDS` for the engine's server-side queue,
/// `--server ADDR` to use a running server instead of a private one,
/// `--engine-only` to time only the engine's CPU, `--verbose` for its
/// CPU per thread and more detail elsewhere).
///
/// Prints each figure with its goal and, for CPU time, the baselines
/// (`paplay`) measured in the same run on the same server.
@main
enum AudioBenchmarks {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let quick = arguments.contains("--quick")
        let only = arguments.firstIndex(of: "--only").map { arguments[$0 + 1] }
        let seconds = arguments.firstIndex(of: "--seconds").flatMap { Int(arguments[$0 + 1]) } ?? (quick ? 10 : 60)
        let iterations = arguments.firstIndex(of: "--iterations").flatMap { Int(arguments[$0 + 1]) } ?? (quick ? 30 : 200)
        let buffering = arguments.firstIndex(of: "--buffering").flatMap { Double(arguments[$0 + 1]) }.map { Duration.milliseconds(Int($0 * 1000)) }
        let offstage = URL(fileURLWithPath: arguments[0]).deletingLastPathComponent().appendingPathComponent("offstage").path

        print("Offstage audio benchmarks (\(quick ? "quick" : "full") run), private PulseAudio server, null sinks")
        print("")
        let external = arguments.firstIndex(of: "--server").map { arguments[$0 + 1] }
        let privateServer = try external == nil ? PrivatePulseAudio(exitWhenIdle: .seconds(60)) : nil
        defer { privateServer?.stop() }
        let server = BenchServer(
            serverAddress: external ?? privateServer!.serverAddress,
            directory: privateServer?.directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("offstage-audio-bench-\(UUID().uuidString)"),
            private: privateServer != nil)
        try FileManager.default.createDirectory(at: server.directory, withIntermediateDirectories: true)
        print("server: \(server.serverAddress)")
        if only == nil || only == "cpu" {
            try await CPUBenchmark.run(
                server: server, seconds: seconds, buffering: buffering, offstage: offstage,
                engineOnly: arguments.contains("--engine-only"), verbose: arguments.contains("--verbose"))
            print("")
            fflush(nil)
        }
        if only == nil || only == "start" {
            try await StartLatencyBenchmark.run(server: server, iterations: iterations)
            print("")
            fflush(nil)
        }
        if only == nil || only == "interruption" {
            try await InterruptionBenchmark.run(server: server, iterations: iterations)
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
