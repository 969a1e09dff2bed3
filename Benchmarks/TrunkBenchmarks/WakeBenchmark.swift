import OffstageCore
import OffstageDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Wake of a suspended app: `wake {callback: benchPing}` to BenchApp frozen
/// with SIGSTOP.
///
/// The daemon runs with a zero wake window, so the app is suspended (and
/// frozen) again as soon as it acks, and every sample starts from a frozen
/// process (waited for with `waitid`, as the baseline waits in `waitpid`).
enum WakeBenchmark {
    static func run(_ context: BenchContext, iterations: Int, into report: inout Report) async throws {
        let peer = try Baselines.peer(executable: context.executable, codec: .raw, warmUp: 50)
        defer { peer.finish() }
        var baseline = Samples()
        var policy = LifecyclePolicy.default
        policy.wakeWindow = .zero
        let harness = try await DaemonHarness.start(
            in: context.directory + "/wake", clock: .real, policy: policy, ephemeral: false,
            searchPath: context.executableDirectory)
        do {
            let app = try await harness.install(context.benchApp)
            try await harness.control(["command": "launch", "app": .string(app)])
            try await harness.control(["command": "home"])
            guard let pid = try await harness.pid(of: app) else { throw BenchError("BenchApp has no process") }
            let wake: JSONValue = ["command": "wake", "app": .string(app), "callback": .string(BenchApp.pingCallback)]

            for _ in 0..<min(iterations, 50) {
                try waitStopped(pid)
                try await harness.control(wake)
            }
            _ = try await harness.handlerEntries(of: app, path: nil)
            try waitStopped(pid)
            _ = harness.stamps.take()
            let watched = WatchedThreads(threads: [
                ("engine loop", getpid(), try await harness.engineThread()), ("BenchApp", pid, pid),
                ("ping-pong child", peer.pid, peer.pid),
            ])
            let before = watched.read()
            // In rounds: baseline wakes, then as many wakes driven on the
            // engine's loop, each once the loop has waited for BenchApp to stop.
            var done = 0
            while done < iterations {
                let round = min(RoundTripBenchmark.roundLength, iterations - done)
                for _ in 0..<round { try Baselines.wake(peer, into: &baseline) }
                try await LoopDriver.run([wake], times: round, on: harness.daemon.engine) { try waitStopped(pid) }
                done += round
            }
            let accounting = watched.describe(
                from: before, operations: iterations, per: "iteration: one wake, one baseline wake")
            let stamps = harness.stamps.take()
            try waitStopped(pid)
            let entries = try await harness.handlerEntries(of: app, path: harness.directory + "/handler-entries.txt")
            var engine = Samples()
            var deliverToAck = Samples()
            var toApp = Samples()
            var toDaemon = Samples()
            var sample = 0
            var index = 0
            while let woken = stamps.firstIndex(.system, "wake", from: index),
                let callback = stamps.firstIndex(.callback, BenchApp.pingCallback, from: woken + 1),
                let suspended = stamps.firstIndex(.state, AppState.suspended.rawValue, from: callback + 1)
            {
                engine.append(stamps[suspended].nanos - stamps[woken].nanos)
                deliverToAck.append(stamps[suspended].nanos - stamps[callback].nanos)
                if sample < entries.count {
                    toApp.append(entries[sample] &- stamps[woken].nanos)
                    toDaemon.append(stamps[suspended].nanos &- entries[sample])
                }
                sample += 1
                index = suspended + 1
            }
            if toApp.count != engine.count { toApp = Samples(); toDaemon = Samples() }
            var control = Samples()
            var controlBaseline = Samples()
            for _ in 0..<iterations {
                try Baselines.wake(peer, into: &controlBaseline)
                try waitStopped(pid)
                try await control.time { try await harness.control(wake) }
            }
            let bare = Report.Baseline(name: "SIGCONT+ping-pong", samples: baseline)
            report.add(
                "wake, engine SIGCONT→callback→ack", engine, baseline: bare, goal: .withinBaseline(factor: 2))
            report.add("  part: engine SIGCONT→app handler", toApp)
            report.add("  part: app handler→engine ack", toDaemon)
            report.add("  part: engine deliver→ack", deliverToAck)
            report.add(
                "wake, control API", control,
                baseline: Report.Baseline(name: "SIGCONT+ping-pong", samples: controlBaseline))
            report.note("wake, scheduler accounting: " + accounting)
            report.note(
                "wake, engine: BenchApp suspended (SIGSTOP, waited for with waitid before every sample); from the engine "
                    + "logging `wake` (just before SIGCONT) to it logging `suspended` while handling the ack "
                    + "(just before the SIGSTOP that re-freezes it; the wake window is set to 0 s so each wake "
                    + "re-suspends). The wakes are issued on the engine's loop, each once the loop has seen "
                    + "BenchApp stopped (blocking in waitid, as the baseline blocks in waitpid), in rounds of \(RoundTripBenchmark.roundLength) after as many "
                    + "baseline samples. Baseline: a stopped child (seen stopped with waitpid) gets SIGCONT, then "
                    + "one ping-pong. The control API row times `RunningDaemon.control` around each wake, in a "
                    + "second loop.")
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
