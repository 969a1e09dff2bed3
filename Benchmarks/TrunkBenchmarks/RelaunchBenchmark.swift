import OffstageCore
import OffstageDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Relaunch of a terminated app: `switcher kill`, wait until the old process
/// is gone, then `launch`, timed.
///
/// From the event stamps: `spawn` (logged just before `posix_spawn`) to the
/// `active` state change the ack of `application:didFinishLaunchingWithOptions:`
/// causes, split at the `inactive` state change the app's `hello` causes.
enum RelaunchBenchmark {
    struct Figures {
        var spawnToDidFinishAck = Samples()
        var spawnToHello = Samples()
        var helloToDidFinishAck = Samples()
        var control = Samples()
    }

    static func run(_ context: BenchContext, relaunches: Int, into report: inout Report) async throws {
        for (name, path) in context.apps {
            let floor = Report.Baseline(
                name: "spawn→exit",
                samples: try Baselines.processStart(
                    executable: name == "StateLab" ? context.executableDirectory + "/StateLab" : context.executable,
                    arguments: name == "StateLab" ? [] : ["--help"], iterations: relaunches))
            let figures = try await measure(context, app: path, label: name, relaunches: relaunches, ephemeral: false)
            report.add(
                "relaunch \(name), spawn→didFinishLaunching ack", figures.spawnToDidFinishAck, baseline: floor,
                goal: .p50Under(50_000_000))
            report.add("relaunch \(name), spawn→hello", figures.spawnToHello, baseline: floor)
            report.add("relaunch \(name), hello→didFinishLaunching ack", figures.helloToDidFinishAck)
            report.add("relaunch \(name), control API launch", figures.control)
        }
        let ephemeral = try await measure(
            context, app: context.benchApp, label: "BenchApp-ephemeral", relaunches: relaunches, ephemeral: true)
        report.add("relaunch BenchApp, no store (ephemeral)", ephemeral.spawnToDidFinishAck)
        report.note(
            "relaunch: `switcher kill`, wait until the old process is reaped, then `launch`. "
                + "spawn→didFinishLaunching ack runs from the engine logging `spawn` (just before posix_spawn) "
                + "to it logging `active` while handling the ack of application:didFinishLaunchingWithOptions:; "
                + "spawn→hello ends when the app's hello is accepted. The control API figure runs on to the ack of "
                + "applicationDidBecomeActive:. BenchApp is this benchmark binary (it links the daemon too, so it is "
                + "a large executable); StateLab is the sample (it reads its defaults and logs in "
                + "didFinishLaunching). The ephemeral row is the same daemon without its SQLite store and "
                + "events.jsonl. Baseline spawn→exit: the same executable spawned with no daemon (StateLab exits at "
                + "once without its socket; this binary prints --help), reaped with waitpid: the process start-up "
                + "floor (dynamic loading, Foundation).")
    }

    static func measure(
        _ context: BenchContext, app path: String, label: String, relaunches: Int, ephemeral: Bool
    ) async throws -> Figures {
        let harness = try await DaemonHarness.start(
            in: context.directory + "/relaunch-" + label, clock: .real, ephemeral: ephemeral,
            searchPath: context.executableDirectory)
        do {
            let app = try await harness.install(path)
            let launch: JSONValue = ["command": "launch", "app": .string(app)]
            let kill: JSONValue = ["command": "switcher", "action": "kill", "app": .string(app)]
            try await harness.control(launch)
            var figures = Figures()
            for round in 0..<(relaunches + 2) {
                guard try await harness.pid(of: app) != nil else { throw BenchError("\(label) has no process") }
                try await harness.control(kill)
                try await harness.daemon.processGone(app)
                if round == 2 { _ = harness.stamps.take() }
                if round >= 2 {
                    try await figures.control.time { try await harness.control(launch) }
                } else {
                    try await harness.control(launch)
                }
            }
            let stamps = harness.stamps.take()
            var index = 0
            while let spawn = stamps.firstIndex(.system, "spawn", from: index),
                let hello = stamps.firstIndex(.state, AppState.inactive.rawValue, from: spawn + 1),
                let active = stamps.firstIndex(.state, AppState.active.rawValue, from: hello + 1)
            {
                figures.spawnToDidFinishAck.append(stamps[active].nanos - stamps[spawn].nanos)
                figures.spawnToHello.append(stamps[hello].nanos - stamps[spawn].nanos)
                figures.helloToDidFinishAck.append(stamps[active].nanos - stamps[hello].nanos)
                index = active + 1
            }
            await harness.stop()
            return figures
        } catch {
            await harness.stop()
            throw error
        }
    }
}
