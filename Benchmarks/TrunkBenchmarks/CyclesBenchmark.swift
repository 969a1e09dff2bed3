import OffstageCore
import OffstageDaemon

/// The virtual-time scenario: N × (`home`, `launch`) through
/// `RunningDaemon.control` on a private daemon on the virtual clock, as the
/// scenario runner would drive it (ephemeral: no store or event file).
enum CyclesBenchmark {
    static let goalPer10k: UInt64 = 10_000_000_000

    static func run(_ context: BenchContext, cycles: Int, into report: inout Report) async throws {
        let goal = goalPer10k / 10_000 * UInt64(cycles)
        for (name, path) in context.apps {
            let harness = try await DaemonHarness.start(
                in: context.directory + "/cycles-" + name, clock: .virtual, ephemeral: true,
                searchPath: context.executableDirectory)
            do {
                let app = try await harness.install(path)
                let home: JSONValue = ["command": "home"]
                let launch: JSONValue = ["command": "launch", "app": .string(app)]
                try await harness.control(launch)
                var perCycle = Samples()
                let start = monotonicNanos()
                for _ in 0..<cycles {
                    try await perCycle.time {
                        try await harness.control(home)
                        try await harness.control(launch)
                    }
                }
                let wall = monotonicNanos() - start
                let stamps = harness.stamps.take()
                await harness.stop()
                let tenth = max(1, cycles / 10)
                let first = Samples(Array(perCycle.nanos.prefix(tenth)))
                let last = Samples(Array(perCycle.nanos.suffix(tenth)))
                report.add(
                    "\(cycles) home/launch cycles, \(name) (per cycle)", perCycle, total: wall,
                    goal: .totalUnder(goal))
                report.note(
                    "\(cycles) cycles, \(name): \(stamps.count) events logged; per-cycle p50 first tenth "
                        + "\(formatNanos(first.p50)), last tenth \(formatNanos(last.p50))"
                        + (cycles == 10_000 ? "" : "; goal scaled from 10 s per 10,000 cycles")
                        + ". Slowest steps of a cycle (p50; first tenth → last tenth): "
                        + slowestSteps(stamps, cycles: cycles).joined(separator: "; "))
            } catch {
                await harness.stop()
                throw error
            }
        }
        report.note(
            "cycles: virtual clock, ephemeral daemon; each cycle is `home` (willResignActive, didEnterBackground, "
                + "then suspend + SIGSTOP for BenchApp; StateLab starts its 25 s task and stays in the background) and "
                + "`launch` (SIGCONT, willEnterForeground, didBecomeActive), each command awaited.")
    }

    /// The steps of a cycle between consecutive logged events, slowest first:
    /// `label: p50 (first tenth p50 → last tenth p50)`.
    static func slowestSteps(_ stamps: [EventStamps.Stamp], cycles: Int, count: Int = 5) -> [String] {
        let starts = stamps.indices.filter { stamps[$0].kind == .system && stamps[$0].name == "home" }
        guard starts.count > 2 else { return [] }
        func label(_ stamp: EventStamps.Stamp) -> String {
            switch stamp.kind {
            case .callback: return stamp.name
            case .state: return "state " + stamp.name
            case .system, .error: return "[" + stamp.name + "]"
            }
        }
        var steps: [String: [UInt64]] = [:]
        var order: [String] = []
        for (start, next) in zip(starts, starts.dropFirst()) {
            for (position, index) in (start..<next).enumerated() {
                let key = "\(position). \(label(stamps[index])) ⇒ \(label(stamps[index + 1]))"
                if steps[key] == nil { order.append(key) }
                steps[key, default: []].append(stamps[index + 1].nanos - stamps[index].nanos)
            }
        }
        let tenth = max(1, (starts.count - 1) / 10)
        return order.filter { steps[$0]!.count == starts.count - 1 }
            .map { key in (key, Samples(steps[key]!)) }
            .sorted { $0.1.p50 > $1.1.p50 }
            .prefix(count)
            .map { key, samples in
                let first = Samples(Array(samples.nanos.prefix(tenth)))
                let last = Samples(Array(samples.nanos.suffix(tenth)))
                return "\(key.drop { $0 != " " }.dropFirst()) \(formatNanos(samples.p50)) "
                    + "(\(formatNanos(first.p50)) → \(formatNanos(last.p50)))"
            }
    }
}
