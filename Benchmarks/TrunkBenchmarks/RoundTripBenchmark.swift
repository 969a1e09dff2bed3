import OffstageCore
import OffstageDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Callback round trip to a running (active) app.
///
/// - engine deliver → ack: `alert show` sends the active app one callback,
///   `applicationWillResignActive:`, and the engine logs the state change to
///   `inactive` while it handles the ack: the gap between the two stamps.
///   The commands are issued on the engine's loop (``LoopDriver``).
/// - control API: `wake {callback: benchPing}` to the active app (one
///   callback), timed around `RunningDaemon.control` in this process.
enum RoundTripBenchmark {
    /// Iterations per round of the interleaved measurement.
    static let roundLength = 200

    static func run(_ context: BenchContext, iterations: Int, into report: inout Report) async throws {
        let rawPeer = try Baselines.peer(executable: context.executable, codec: .raw, warmUp: 200)
        defer { rawPeer.finish() }
        let jsonPeer = try Baselines.peer(executable: context.executable, codec: .json, warmUp: 200)
        defer { jsonPeer.finish() }
        var baseline = Samples()
        var jsonBaseline = Samples()
        let harness = try await DaemonHarness.start(
            in: context.directory + "/roundtrip", clock: .real, ephemeral: false,
            searchPath: context.executableDirectory)
        do {
            let app = try await harness.install(context.benchApp)
            try await harness.control(["command": "launch", "app": .string(app)])
            let show: JSONValue = ["command": "alert", "action": "show"]
            let dismiss: JSONValue = ["command": "alert", "action": "dismiss"]
            let ping: JSONValue = ["command": "wake", "app": .string(app), "callback": .string(BenchApp.pingCallback)]

            for _ in 0..<min(iterations, 100) {
                try await harness.control(show)
                try await harness.control(dismiss)
                try await harness.control(ping)
            }
            _ = try await harness.handlerEntries(of: app, path: nil)
            _ = harness.stamps.take()
            let dump = harness.directory + "/handler-entries.txt"

            guard let appPid = try await harness.pid(of: app) else { throw BenchError("BenchApp has no process") }
            let watched = WatchedThreads(threads: [
                ("engine loop", getpid(), try await harness.engineThread()), ("BenchApp", appPid, appPid),
                ("ping-pong child", rawPeer.pid, rawPeer.pid), ("ping-pong+JSON child", jsonPeer.pid, jsonPeer.pid),
            ])
            let before = watched.read()
            // In rounds: a few exchanges with each child, then as many
            // show + dismiss pairs driven on the engine's loop.
            var done = 0
            while done < iterations {
                let round = min(roundLength, iterations - done)
                for _ in 0..<round {
                    try Baselines.pingPong(rawPeer, into: &baseline)
                    try Baselines.pingPong(jsonPeer, into: &jsonBaseline)
                }
                try await LoopDriver.run([show, dismiss], times: round, on: harness.daemon.engine)
                done += round
            }
            let accounting = watched.describe(
                from: before, operations: iterations,
                per: "iteration: alert show + dismiss, and one exchange with each child")
            let stamps = harness.stamps.take()
            let entries = try await harness.handlerEntries(of: app, path: dump)
            var engine = Samples()
            var toApp = Samples()
            var toDaemon = Samples()
            var index = 0
            var sample = 0
            while let callback = stamps.firstIndex(.callback, CallbackName.willResignActive.rawValue, from: index),
                let acked = stamps.firstIndex(.state, AppState.inactive.rawValue, from: callback + 1)
            {
                engine.append(stamps[acked].nanos - stamps[callback].nanos)
                if sample < entries.count {
                    toApp.append(entries[sample] &- stamps[callback].nanos)
                    toDaemon.append(stamps[acked].nanos &- entries[sample])
                }
                sample += 1
                index = acked + 1
            }
            if toApp.count != engine.count { toApp = Samples(); toDaemon = Samples() }

            var controlPing = Samples()
            var controlAlert = Samples()
            var pingBaseline = Samples()
            for _ in 0..<iterations {
                try Baselines.pingPong(rawPeer, into: &pingBaseline)
                try await controlPing.time { try await harness.control(ping) }
                try await controlAlert.time { try await harness.control(show) }
                try await harness.control(dismiss)
            }

            let raw = Report.Baseline(name: "ping-pong", samples: baseline)
            report.add(
                "round trip, engine deliver→ack", engine, baseline: raw, goal: .withinBaseline(factor: 2))
            report.add("  part: engine write→app handler", toApp)
            report.add("  part: app handler→engine ack", toDaemon)
            report.add(
                "round trip, engine deliver→ack vs JSON", engine,
                baseline: Report.Baseline(name: "ping-pong+JSON", samples: jsonBaseline))
            report.add(
                "round trip, control API (wake ping)", controlPing,
                baseline: Report.Baseline(name: "ping-pong", samples: pingBaseline))
            report.add(
                "round trip, control API (alert show)", controlAlert,
                baseline: Report.Baseline(name: "ping-pong", samples: pingBaseline))
            report.note(
                "round trip, engine deliver→ack: BenchApp (no-op delegate) is active; `alert show` delivers "
                    + "applicationWillResignActive:. Measured from the engine logging the callback (just before it "
                    + "writes it) to the engine logging the state change the ack causes: encode + write, the app's "
                    + "read, parse, dispatch and ack, the daemon's read, decode and core step, plus one events.jsonl "
                    + "write. The show/dismiss pairs are issued on the engine's loop, each when the previous one "
                    + "has replied, so only the loop and the app take part, as only two processes do in the "
                    + "ping-pong. Stamped on the engine's loop through EventLog.subscribe. The two parts split it at the "
                    + "moment BenchApp's handler starts (monotonic clock, same machine): engine encode + write + app "
                    + "wake-up + read + parse + SDK dispatch, then handler return + ack + engine wake-up + read + "
                    + "decode + core step + log.")
            report.note("round trip, scheduler accounting: " + accounting)
            report.note(
                "ping-pong: a child of this binary on a socketpair echoes a ~110-byte callback line with a "
                    + "~25-byte ack line (no parsing), one exchange before each Offstage sample; ping-pong+JSON "
                    + "also encodes and parses both messages with "
                    + "OffstageProtocol, as the daemon and SDK do.")
            report.note(
                "round trip, control API: `await RunningDaemon.control(…)` from a Swift task in this process, "
                    + "around one callback: hop onto the engine's loop, settle, deliver → ack, settle, annotate, "
                    + "reply, resume the task. The control socket adds one more local round trip on top.")
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}
