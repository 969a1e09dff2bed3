import Foundation
import OffstageCore

#if canImport(Glibc)
    import Glibc
#endif

/// Plays a scenario against a private daemon in virtual time.
public struct ScenarioRunner {
    /// What a run produced.
    public struct Outcome: Sendable {
        /// The events from the first step on, volatile fields removed.
        public var timeline: [Event]
        /// One line per failed expectation or unexpected step result.
        public var failures: [String]
        /// Where the private daemon kept its data (app logs), kept when the run failed.
        public var dataDirectory: String?
    }

    public var scenario: Scenario
    public var executableSearchPaths: [String]
    /// Called once the apps are installed and every step's and
    /// expectation's app is known to be one of them, before the first step:
    /// a scenario that fails before this has only its error to show.
    public var onReady: (@Sendable () -> Void)?
    /// Called with each step as it starts (progress).
    public var onStep: (@Sendable (Scenario.Step) -> Void)?
    /// Called once the private daemon runs, so that whoever interrupts the
    /// run can stop it (and remove the directory ``onDirectory`` gave).
    public var onStart: (@Sendable (RunningDaemon) -> Void)?
    /// Called with the run's temporary directory as soon as it is made,
    /// before the daemon starts in it.
    public var onDirectory: (@Sendable (String) -> Void)?

    public init(scenario: Scenario, executableSearchPaths: [String]) {
        self.scenario = scenario
        self.executableSearchPaths = executableSearchPaths
    }

    /// Detail keys that differ between machines or runs (paths, pids, the
    /// real memory a memory pressure freed), left out of timelines and
    /// golden files, as gpsd's regression driver does.
    public static let volatileKeys: Set<String> = ["pid", "executable", "path", "container", "log", "claimedPid", "tokenPid", "peerPid", "freed"]

    public func run() async throws -> Outcome {
        // Locked until the run ends: each way out removes or keeps it.
        let owned = try Self.makeTemporaryDirectory()
        let directory = owned.path
        onDirectory?(directory)
        let configuration = DaemonConfiguration(
            dataDirectory: directory + "/data", controlSocket: directory + "/control.sock",
            appSocket: directory + "/apps.sock", clock: .virtual,
            policy: LifecyclePolicy.profile(named: scenario.profile) ?? .default,
            hangGrace: .nanoseconds(scenario.hangGrace.nanoseconds), executableSearchPaths: executableSearchPaths,
            ephemeral: true)
        let daemon: RunningDaemon
        do {
            daemon = try await RunningDaemon.start(configuration)
        } catch {
            owned.remove()
            throw error
        }
        onStart?(daemon)
        var failures: [String] = []
        var timeline: [Event] = []
        do {
            /// The line of each bundle id installed so far.
            var installedAt: [String: Int] = [:]
            for (path, line) in zip(scenario.appPaths, scenario.appLines) {
                let reply = try await daemon.control(["command": "install", "path": .string(path)])
                switch reply {
                case .failure(let message):
                    // The daemon's message names the path already.
                    throw ScenarioError(file: scenario.file, line: line > 0 ? line : nil, message: "cannot install the app: \(message)")
                case .ok(let app):
                    // A second install replaces the first: one of the two apps would silently not run.
                    guard let id = app["bundleID"]?.stringValue else { break }
                    if let first = installedAt[id] {
                        throw ScenarioError(
                            file: scenario.file, line: line > 0 ? line : nil,
                            message: "\(path) has the bundle id \(id) of the app at line \(first)")
                    }
                    installedAt[id] = line
                }
            }
            let installed = try await daemon.engine.submit { $0.board.installedApps.map(\.bundleID) }.get()
            try checkAppNames(installed: Set(installed))
            onReady?()
            let start = try await daemon.engine.submit { $0.log.lastSeq }.get()
            // Step failures, by step. A step still pending when it replied
            // (queued behind a hung app, or a launch whose app waits behind
            // one) is judged at the end, by what it did when it ran.
            var stepFailures: [Int: String] = [:]
            var pending: [(step: Int, ticket: Int?, since: Int)] = []
            for (index, step) in scenario.steps.enumerated() {
                onStep?(step)
                let now = try await daemon.engine.submit { $0.now }.get()
                let wait = step.at - (now - .zero)
                if wait > .zero {
                    try await advance(daemon, by: wait, line: step.line)
                }
                // An advance step only moves the clock, which the wait above did.
                if step.action.first == "advance" { continue }
                // Where a launch's own events start (a pending one is judged by them).
                let launches = ["launch", "launch-background"].contains(step.action.first)
                let since = launches ? try await daemon.engine.submit { $0.log.lastSeq }.get() : 0
                let reply = try await daemon.control(Self.request(for: step.action))
                if case .ok(let result) = reply, result["pending"] != nil {
                    pending.append((index, result["queued"]?.intValue, since))
                    continue
                }
                stepFailures[index] = judge(step, refusal: reply.failureMessage)
            }
            if let end = scenario.end {
                let now = try await daemon.engine.submit { $0.now }.get()
                let wait = end - (now - .zero)
                if wait > .zero {
                    try await advance(daemon, by: wait, line: scenario.endLine)
                }
            }
            // The apps of pending launch steps, whose failures name their logs.
            let launched = Set(pending.compactMap { entry -> String? in
                let action = scenario.steps[entry.step].action
                return ["launch", "launch-background"].contains(action.first) && action.count > 1 ? action[1] : nil
            })
            let (events, states, lastInputRun, endWait, launching, logs) = try await daemon.engine.submit { engine in
                let apps = engine.board.installedApps.map(\.bundleID)
                return (
                    engine.log.events(after: start),
                    Dictionary(uniqueKeysWithValues: apps.map { ($0, engine.board.state(of: $0) ?? .notRunning) }),
                    engine.board.lastInputRun, engine.board.currentWait.map { ($0.app, $0.callback) },
                    Set(apps.filter(engine.board.isLaunchPending)),
                    Dictionary(uniqueKeysWithValues: launched.map {
                        ($0, (path: engine.logReference(for: $0, lastLine: false), lastLine: engine.logReference(for: $0)))
                    })
                )
            }.get()
            let blocker = endWait?.0
            // The refusals of inputs that ran queued, by ticket.
            var refusals: [Int: String] = [:]
            for refusal in events.lazy.compactMap(\.refusal) { refusals[refusal.ticket] = refusal.reason }
            let behind = blocker.map { " behind \($0), which had not answered," } ?? ""
            let giveAnEnd = "when the run ended (give the run an end past that app's watchdog)"
            // The `launch` (or `launchInBackground`) event of each app's last pending launch step: a
            // later step's comes after it (two launches queued together were
            // both judged by the first's spawn).
            var judgedLaunch: [String: Int] = [:]
            for (index, ticket, since) in pending {
                let step = scenario.steps[index]
                let words = "\(scenario.file):\(step.line): \(step.action.joined(separator: " "))"
                if let ticket, ticket > lastInputRun {
                    // It never took effect, nor was refused: neither outcome can be checked.
                    stepFailures[index] = "\(words) never ran: it was still queued\(behind) \(giveAnEnd)"
                } else if let ticket, let refusal = refusals[ticket] {
                    stepFailures[index] = judge(step, refusal: refusal)
                } else if ["launch", "launch-background"].contains(step.action.first), step.action.count > 1 {
                    let app = step.action[1]
                    let background = step.action[0] == "launch-background"
                    if launching.contains(app) {
                        let waiting = blocker == app ? " it had not said hello" : " it was still waiting\(behind)"
                        stepFailures[index] = "\(words) never came up:\(waiting) \(giveAnEnd)"
                    } else {
                        let hung = endWait.flatMap { $0.0 == app ? $0.1 : nil }
                        let (failure, launch) = LaunchJudgement.judge(
                            app, background: background, since: max(since, judgedLaunch[app] ?? 0), in: events, stillIn: hung)
                        if let launch { judgedLaunch[app] = launch }
                        // As a launch run at once names its log: the line it ends in only when it is this launch's.
                        let log = launch.map { LaunchJudgement.respawned(app, after: $0, in: events) } == false
                            ? logs[app]?.lastLine : logs[app]?.path
                        let named = failure.map { failure in log.map { "\(failure); \($0)" } ?? failure }
                        stepFailures[index] = judge(step, refusal: named)
                    }
                } else {
                    stepFailures[index] = judge(step, refusal: nil)
                }
            }
            failures += stepFailures.sorted { $0.key < $1.key }.map(\.value)
            timeline = events.map(Self.normalized)
            failures += check(timeline, finalStates: states)
        } catch {
            await daemon.stop()
            // Only a run that ends with failures reports (and keeps) its data.
            owned.remove()
            throw error
        }
        await daemon.stop()
        if failures.isEmpty {
            owned.remove()
            return Outcome(timeline: timeline, failures: failures, dataDirectory: nil)
        }
        owned.keep()
        return Outcome(timeline: timeline, failures: failures, dataDirectory: directory + "/data")
    }

    /// A step's failure line, given the refusal it met (nil: it was taken), or nil.
    func judge(_ step: Scenario.Step, refusal: String?) -> String? {
        switch (refusal, step.expectFailure) {
        case (let message?, false):
            return "\(scenario.file):\(step.line): \(step.action.joined(separator: " ")) failed: \(message)"
        case (nil, true):
            return "\(scenario.file):\(step.line): \(step.action.joined(separator: " ")) was expected to fail"
        default:
            return nil
        }
    }

    /// Moves the private daemon's clock on; a refusal (past the clock's
    /// end) stops the run at the step (or `end`) it was moving to.
    /// A wait longer than one advance may take (100 years) goes in parts.
    private func advance(_ daemon: RunningDaemon, by wait: Duration, line: Int?) async throws {
        var left = wait
        while left > .zero {
            let part = min(left, .longestAccepted)
            let reply = try await daemon.control(["command": "clock", "action": "advance", "seconds": JSONValue(part.seconds)])
            if case .failure(let message) = reply {
                throw ScenarioError(file: scenario.file, line: line, message: "the clock cannot get here: \(message)")
            }
            left -= part
        }
    }

    /// Before any step runs: a step (not expected to fail) or an
    /// expectation naming an app the scenario does not install is an error
    /// at its line, not a failure found once every step has been played.
    func checkAppNames(installed: Set<String>) throws {
        let known = installed.isEmpty ? "none" : installed.sorted().joined(separator: ", ")
        for step in scenario.steps where !step.expectFailure {
            if let app = Self.request(for: step.action)["app"]?.stringValue, !installed.contains(app) {
                throw ScenarioError(
                    file: scenario.file, line: step.line, message: "\(app) is not one of the scenario's apps (\(known))")
            }
        }
        for expectation in scenario.expectations where !installed.contains(expectation.app) {
            throw ScenarioError(
                file: scenario.file, line: expectation.line, message: "\(expectation.app) is not one of the scenario's apps (\(known))")
        }
    }

    func check(_ timeline: [Event], finalStates: [String: AppState]) -> [String] {
        var failures: [String] = []
        for expectation in scenario.expectations {
            func at(_ line: Int?) -> String { "\(scenario.file):\(line ?? expectation.line)" }
            if let expected = expectation.callbacks {
                let actual = timeline.filter { $0.kind == .callback && $0.app == expectation.app }.map(\.name)
                if actual != expected {
                    let index = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                        ?? min(actual.count, expected.count)
                    let what =
                        index >= actual.count
                        ? "callback \(index + 1) never came, expected \(expected[index])"
                        : "callback \(index + 1) was \(actual[index]), expected \(index < expected.count ? expected[index] : "nothing more")"
                    // At the expected callback that differs; past the list's end, at its last.
                    let line = expectation.callbackLines.isEmpty
                        ? nil : expectation.callbackLines[min(index, expectation.callbackLines.count - 1)]
                    failures.append(
                        "\(at(line)): \(expectation.app): \(what) (got \(actual.count) callbacks, expected \(expected.count))")
                }
            }
            if let state = expectation.finalState, finalStates[expectation.app] != state {
                failures.append(
                    "\(at(expectation.finalStateLine)): \(expectation.app): final state \(finalStates[expectation.app]?.rawValue ?? "unknown"), expected \(state.rawValue)")
            }
        }
        return failures
    }

    /// The control request for a step's words.
    static func request(for words: [String]) -> JSONValue {
        let verb = words[0]
        let args = Array(words.dropFirst())
        switch verb {
        case "launch": return ["command": "launch", "app": .string(args[0])]
        case "launch-background":
            // The key the service would set, true: UIApplicationLaunchOptionsLocationKey, for one.
            let options: JSONValue = args.count > 1 ? .object([args[1]: true]) : .emptyObject
            return ["command": "launchInBackground", "app": .string(args[0]), "options": options]
        case "switcher":
            var request: [String: JSONValue] = ["command": "switcher", "action": .string(args[0])]
            if args.count > 1 { request["app"] = .string(args[1]) }
            return .object(request)
        case "alert": return ["command": "alert", "action": .string(args[0])]
        case "memory":
            var request: [String: JSONValue] = ["command": "memory", "action": .string(args[0])]
            if args.count > 1, let bytes = parseByteSize(args[1]) { request["bytes"] = JSONValue(bytes) }
            return .object(request)
        case "device": return Engine.deviceRequest(what: args[0], value: args.count > 1 ? args[1] : nil)
        case "wake": return ["command": "wake", "app": .string(args[0]), "callback": .string(args[1])]
        default: return ["command": .string(verb)]
        }
    }

    static func normalized(_ event: Event) -> Event {
        var copy = event
        if case .object(let members) = event.detail {
            copy.detail = .object(members.filter { !volatileKeys.contains($0.key) })
        }
        return copy
    }

    /// A new run directory, locked while the run lasts (a later run
    /// removes it should this one be killed outright): in `temporary`
    /// (`TMPDIR`; it was always `/tmp`), or in `/tmp` when the run's sockets
    /// would not fit in a socket address there or it cannot be made there
    /// (a `TMPDIR` that does not exist).
    static func makeTemporaryDirectory(
        in temporary: URL = FileManager.default.temporaryDirectory
    ) throws -> OwnedTemporaryDirectory {
        // The longest socket path: PARENT/offstage-run-UUID/control.sock.
        let longest = temporary.appendingPathComponent("offstage-run-\(UUID().uuidString)/control.sock").path
        if SocketPreparation.fits(longest), let made = try? OwnedTemporaryDirectory(prefix: "offstage-run", in: temporary) {
            return made
        }
        do {
            return try OwnedTemporaryDirectory(prefix: "offstage-run", in: URL(fileURLWithPath: "/tmp"))
        } catch {
            throw DaemonError(.storage, "cannot create the run's directory \(error.path): \(error.reason)")
        }
    }
}
