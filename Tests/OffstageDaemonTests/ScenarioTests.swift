import Foundation
import Synchronization
import Testing
@testable import OffstageDaemon
import OffstageCore

@Suite("Scenarios", .serialized)
struct ScenarioTests {
    static let files: [String] = {
        let directory = Paths.sample("scenarios")
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted().map { directory + "/" + $0 }
    }()

    @Test func everySampleScenarioIsFound() {
        #expect(Self.files.count >= 10)
    }

    @Test(arguments: files)
    func sampleScenarioMeetsItsExpectations(file: String) async throws {
        let scenario = try Scenario.load(path: file)
        #expect(!scenario.expectations.isEmpty)
        let outcome = try await ScenarioRunner(scenario: scenario, executableSearchPaths: [Paths.products]).run()
        #expect(outcome.failures == [])
    }

    @Test func theSameScenarioGivesTheSameTimelineTwice() async throws {
        let scenario = try Scenario.load(path: Paths.sample("scenarios/statelab-tour.yaml"))
        let runner = ScenarioRunner(scenario: scenario, executableSearchPaths: [Paths.products])
        let first = try await runner.run().timeline.map(\.humanLine)
        let second = try await runner.run().timeline.map(\.humanLine)
        #expect(first == second)
        #expect(first.count > 40)
    }

    /// A service's relaunch names why in the launch options, as iOS does.
    @Test func aBackgroundLaunchCarriesItsLaunchOptionKey() async throws {
        let yaml = """
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - do: launch-background \(stateLab) UIApplicationLaunchOptionsLocationKey
            expect:
              \(stateLab):
                - application:willFinishLaunchingWithOptions:
                - application:didFinishLaunchingWithOptions:
            """
        let outcome = try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "bg.yaml"), executableSearchPaths: [Paths.products]).run()
        #expect(outcome.failures == [])
        let launching = outcome.timeline.first { $0.name == "application:willFinishLaunchingWithOptions:" }
        #expect(launching?.detail == ["UIApplicationLaunchOptionsLocationKey": true])
        // The timeline names the step first, as it does `launch` and `wake` (it began at the spawn).
        #expect(outcome.timeline.first { $0.app == stateLab }.map { [$0.kind.rawValue, $0.name] } == ["system", "launchInBackground"])
    }

    /// A run's directory is in TMPDIR (it was always /tmp), unless the
    /// run's sockets would not fit in a socket address there.
    @Test func aRunsDirectoryIsInTheTemporaryDirectoryWhenItsSocketsFit() throws {
        // Short enough for the run's sockets (the tests' own directories are not).
        var template = Array("/tmp/osr-XXXXXX".utf8CString)
        let parent = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let near = try ScenarioRunner.makeTemporaryDirectory(in: URL(fileURLWithPath: parent))
        defer { near.remove() }
        #expect((near.path as NSString).deletingLastPathComponent == parent)
        // PARENT/offstage-run-UUID/control.sock is 104 bytes here: one too many for SwiftNIO (the kernel takes 107).
        let deep = parent + "/" + String(repeating: "d", count: 103 - parent.utf8.count - "/offstage-run-/control.sock".utf8.count - 36)
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let far = try ScenarioRunner.makeTemporaryDirectory(in: URL(fileURLWithPath: deep))
        defer { far.remove() }
        #expect((far.path as NSString).deletingLastPathComponent == "/tmp")
        // One byte shorter fits.
        let fitting = String(deep.dropLast())
        try FileManager.default.createDirectory(atPath: fitting, withIntermediateDirectories: true)
        let close = try ScenarioRunner.makeTemporaryDirectory(in: URL(fileURLWithPath: fitting))
        defer { close.remove() }
        #expect((close.path as NSString).deletingLastPathComponent == fitting)
        #expect((close.path + "/control.sock").utf8.count == 103)
        // A TMPDIR that does not exist: /tmp, as before (every run failed).
        let missing = try ScenarioRunner.makeTemporaryDirectory(in: URL(fileURLWithPath: parent + "/missing"))
        defer { missing.remove() }
        #expect((missing.path as NSString).deletingLastPathComponent == "/tmp")
    }

    @Test func aWrongExpectationFailsWithTheFirstDifference() async throws {
        let yaml = """
            name: wrong
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - at: 0s
                do: launch \(stateLab)
            expect:
              \(stateLab):
                callbacks:
                  - application:willFinishLaunchingWithOptions:
                  - applicationDidBecomeActive:
                finalState: background
            """
        let scenario = try Scenario.parse(yaml, file: "wrong.yaml")
        let outcome = try await ScenarioRunner(scenario: scenario, executableSearchPaths: [Paths.products]).run()
        // Each at the line it is about: the callback that differs, finalState.
        #expect(outcome.failures == [
            "wrong.yaml:10: \(stateLab): callback 2 was application:didFinishLaunchingWithOptions:, expected applicationDidBecomeActive: (got 3 callbacks, expected 2)",
            "wrong.yaml:11: \(stateLab): final state active, expected background",
        ])
        // A failed run keeps its daemon's data for a look; this one is done with.
        let kept = try #require(outcome.dataDirectory)
        #expect(FileManager.default.fileExists(atPath: kept))
        try FileManager.default.removeItem(atPath: (kept as NSString).deletingLastPathComponent)
    }

    @Test func anExpectationOrStepForAnAppNotInTheScenarioSaysSoBeforeRunning() async throws {
        let yaml = """
            apps: [\(Paths.sample("StateLab"))]
            expect:
              com.example.Missing:
                - applicationDidBecomeActive:
            """
        var error = await #expect(throws: ScenarioError.self) {
            try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "x.yaml"), executableSearchPaths: [Paths.products]).run()
        }
        #expect(error?.description == "x.yaml:3: com.example.Missing is not one of the scenario's apps (\(stateLab))")
        // A step too, unless it is expected to fail; found before the first step runs.
        let steps = """
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - do: launch com.example.Nope
                expectFailure: true
              - at: 1h
                do: launch \(stateLab)x
            """
        var runner = ScenarioRunner(scenario: try Scenario.parse(steps, file: "y.yaml"), executableSearchPaths: [Paths.products])
        let seen = Mutex<[String]>([])
        runner.onStep = { step in seen.withLock { $0.append(step.action.joined(separator: " ")) } }
        error = await #expect(throws: ScenarioError.self) { try await runner.run() }
        #expect(error?.description == "y.yaml:6: \(stateLab)x is not one of the scenario's apps (\(stateLab))")
        #expect(seen.withLock { $0 }.isEmpty)
    }

    @Test func stepsPastTheVirtualClocksEndAreRefusedAtTheirLine() async throws {
        // Two centuries in two advances of 100 years, then a third: past 250 years.
        let yaml = """
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - do: advance 36500d
              - do: advance 36500d
              - do: home
              - do: advance 36500d
              - do: home
            """
        let error = await #expect(throws: ScenarioError.self) {
            try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "x.yaml"), executableSearchPaths: [Paths.products]).run()
        }
        // The third advance, a step of its own, is the one that cannot be reached.
        #expect(error?.line == 6, "\(String(describing: error))")
        // Found when the file is read, before two centuries of virtual time are played.
        #expect(error?.message == "this step comes after the virtual clock's end, 250 years after its start", "\(String(describing: error))")
    }

    /// A step's `after:` that takes it past the end is the line named, not its `do:`.
    @Test func aStepsAfterPastTheClocksEndIsNamedAtItsOwnLine() {
        let yaml = """
            apps: [a]
            steps:
              - at: 36500d
                do: home
              - after: 36500d
                do: home
              - after: 36500d
                do: home
            """
        #expect {
            _ = try Scenario.parse(yaml, file: "x.yaml")
        } throws: { error in
            "\(error)" == "x.yaml:7: this step comes after the virtual clock's end, 250 years after its start"
        }
    }

    /// Runs `yaml` as `q.yaml` with the built apps, and removes the data
    /// directory a failed run keeps (the outcome holds its timeline).
    func runQueued(_ yaml: String) async throws -> ScenarioRunner.Outcome {
        let outcome = try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "q.yaml"), executableSearchPaths: [Paths.products]).run()
        if let kept = outcome.dataDirectory { try? FileManager.default.removeItem(atPath: (kept as NSString).deletingLastPathComponent) }
        return outcome
    }

    /// A scenario whose first step launches BlockingApp (which hangs in
    /// `applicationDidEnterBackground:`, with a 300 ms hang grace) and
    /// whose second is at 1 s: `rest` goes on from that step's `do:`,
    /// indented as under `  - at: 1s`; `also` are more apps.
    func behindBlockingApp(also apps: [String] = [], _ rest: String) -> String {
        """
        apps: [\(([Paths.sample("misbehaving/BlockingApp")] + apps).joined(separator: ", "))]
        hangGrace: 300ms
        steps:
          - do: launch com.offstage.tests.BlockingApp
          - at: 1s

        """ + rest
    }

    /// Steps queued behind a hung app are judged when they run: the
    /// second lock is refused and the launch on the locked device too (both
    /// went through, judged when issued), and the unlock after the queued
    /// lock is taken (it was refused: the device was not locked yet).
    @Test func stepsQueuedBehindAHungAppAreJudgedWhenTheyRun() async throws {
        let yaml = behindBlockingApp(also: [Paths.sample("StateLab")], """
                do: home
              - do: lock
              - do: lock
                expectFailure: true
              - do: launch \(stateLab)
                expectFailure: true
              - do: unlock
              - do: launch \(stateLab)
            end: 10s
            expect:
              com.offstage.tests.BlockingApp: {finalState: notRunning}
              \(stateLab): {finalState: active}
            """)
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [])
        let refused = outcome.timeline.filter { $0.name == "refused" }.map { [formatSeconds($0.time), $0.detail["input"]?.stringValue] }
        #expect(refused == [["6", "lock"], ["6", "launch \(stateLab)"]])
    }

    /// More than 1,000 steps refused when they ran: each is judged by its
    /// own refusal. The core kept 1,000 refusals, and the oldest, dropped,
    /// was judged as taken ("was expected to fail").
    @Test func everyQueuedStepRefusedIsJudgedSoHoweverMany() async throws {
        let refusals = 1_001
        let yaml = behindBlockingApp("""
                do: home
              - do: lock

            """) + String(repeating: "  - do: lock\n    expectFailure: true\n", count: refusals) + "end: 10s\n"
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [])
        #expect(outcome.timeline.filter { $0.name == "refused" }.count == refusals)
    }

    /// A step still queued behind a hung app when the run ends never took
    /// effect: it fails, saying so (it counted as done).
    @Test func aStepStillQueuedWhenTheRunEndsFails() async throws {
        let yaml = behindBlockingApp("""
                do: home
              - do: lock
            """)
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [
            "q.yaml:7: lock never ran: it was still queued behind com.offstage.tests.BlockingApp, which had not answered, when the run ended (give the run an end past that app's watchdog)"
        ])
    }

    /// A launch whose input ran at once but whose app waits behind a hung
    /// app (its spawn queued) is judged by the launch: the app that crashes
    /// in it fails the step, as a launch that fails at once does, and a
    /// later kill of an app that came up does not. It was judged as taken
    /// when issued.
    @Test func aLaunchStartingBehindAHungAppIsJudgedByItsLaunch() async throws {
        let yaml = behindBlockingApp(also: [Paths.sample("misbehaving/CrashAtLaunchApp"), Paths.sample("StateLab")], """
                do: launch com.offstage.tests.CrashAtLaunchApp
                expectFailure: true
              - do: launch \(stateLab)
              - do: switcher kill \(stateLab)
            end: 10s
            expect:
              com.offstage.tests.CrashAtLaunchApp: {finalState: notRunning}
              \(stateLab): {finalState: notRunning}
            """)
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [])
        // The crash came after the hung app's watchdog (5 s after 1 s), not when the step was issued.
        #expect(outcome.timeline.first { $0.name == "crashed" }.map { formatSeconds($0.time) } == "6")
        // Not expected to fail, it fails naming the cause.
        let failing = try await runQueued(yaml.replacingOccurrences(of: "    expectFailure: true\n", with: ""))
        #expect(failing.failures.count == 1)
        #expect(failing.failures.first?.hasPrefix(
            "q.yaml:6: launch com.offstage.tests.CrashAtLaunchApp failed: com.offstage.tests.CrashAtLaunchApp did not launch: it crashed (signal ") == true,
            "\(failing.failures)")
    }

    /// A `launch-background` step is judged by how the launch went, as a
    /// `launch` step is, whether it ran at once or behind a hung app: an
    /// app that crashes in `application:didFinishLaunchingWithOptions:`
    /// fails it. Such a step passed, and failed with `expectFailure`.
    @Test func aBackgroundLaunchStepIsJudgedByItsLaunch() async throws {
        let crashing = "launch-background com.offstage.tests.CrashAtLaunchApp"
        let atOnce = """
            apps: [\(Paths.sample("misbehaving/CrashAtLaunchApp"))]
            steps:
              - do: \(crashing)
                expectFailure: true

            """
        let queued = behindBlockingApp(also: [Paths.sample("misbehaving/CrashAtLaunchApp")], """
                do: home
              - do: \(crashing)
                expectFailure: true
            end: 10s
            """)
        for (yaml, line) in [(atOnce, 3), (queued, 7)] {
            let outcome = try await runQueued(yaml)
            #expect(outcome.failures == [])
            #expect(outcome.timeline.contains { $0.name == "crashed" })
            // Queued, it ran after the hung app's watchdog (5 s after 1 s).
            #expect(outcome.timeline.first { $0.name == "launchInBackground" }.map { formatSeconds($0.time) } == (line == 3 ? "0" : "6"))
            let failing = try await runQueued(yaml.replacingOccurrences(of: "    expectFailure: true\n", with: ""))
            #expect(failing.failures.count == 1)
            #expect(failing.failures.first?.hasPrefix(
                "q.yaml:\(line): \(crashing) failed: com.offstage.tests.CrashAtLaunchApp did not launch: it crashed (signal ") == true,
                "\(failing.failures)")
        }
    }

    /// A `launch` of a running app that dies on its way back to the front
    /// (in `applicationWillEnterForeground:`) fails, queued behind a hung
    /// app as at once. Queued, it was judged by the app's first spawn,
    /// whose launch was done long before, and passed.
    @Test(arguments: [false, true])
    func aLaunchThatResumesARunningAppIsJudgedByTheResume(behindAHungApp: Bool) async throws {
        let directory = try temporaryDirectory()
        let app = try scriptApp(
            "com.example.CrashesComingBack", in: directory,
            script: pythonAckingApp(beforeAck: #"""
                if message["name"] == "applicationWillEnterForeground:": print("coming back", flush=True); os._exit(3)
                """#))
        let blocking = "com.offstage.tests.BlockingApp"
        let yaml = """
            apps: [\(app), \(Paths.sample("misbehaving/BlockingApp"))]
            hangGrace: 300ms
            steps:
              - do: launch com.example.CrashesComingBack
              - do: launch \(behindAHungApp ? blocking : stateLab)
              - at: 1s
                do: home
              - do: launch com.example.CrashesComingBack
                expectFailure: true
            end: 10s

            """.replacingOccurrences(of: "\(Paths.sample("misbehaving/BlockingApp"))]", with: behindAHungApp
                ? "\(Paths.sample("misbehaving/BlockingApp"))]" : "\(Paths.sample("StateLab"))]")
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [])
        let crash = try #require(outcome.timeline.first { $0.name == "crashed" })
        #expect(crash.detail["callback"] == "applicationWillEnterForeground:")
        // Queued, it ran after the hung app's watchdog (5 s after 1 s).
        #expect(formatSeconds(crash.time) == (behindAHungApp ? "6" : "1"))
        let failing = try await runQueued(yaml.replacingOccurrences(of: "    expectFailure: true\n", with: ""))
        // Queued, it names the log and its last line as at once (it named neither).
        #expect(failing.failures == [
            "q.yaml:8: launch com.example.CrashesComingBack failed: com.example.CrashesComingBack did not launch: it exited with status 3"
                + "; its log: \(failing.dataDirectory ?? "?")/logs/com.example.CrashesComingBack.log, which ends: coming back"
        ])
    }

    /// An app that exits (status 3) in `application:didFinishLaunchingWithOptions:`
    /// of its `launch`th launch only (a file counts its launches).
    func appCrashingInLaunch(_ launch: Int, _ bundleID: String) throws -> String {
        let directory = try temporaryDirectory()
        let count = directory + "/launches"
        return try scriptApp(
            bundleID, in: directory,
            script: pythonAckingApp(
                beforeHello: "f = open(\"\(count)\", \"a\"); f.write(\"x\"); f.close(); n = os.path.getsize(\"\(count)\")",
                beforeAck: #"if n == \#(launch) and message["name"] == "application:didFinishLaunchingWithOptions:": os._exit(3)"#))
    }

    /// Two launches of one app queued together are each judged by their
    /// own spawn: the second was judged by the first's, so a first launch
    /// that crashed failed the second too, which came up.
    @Test func twoQueuedLaunchesOfOneAppAreJudgedByTheirOwnSpawns() async throws {
        let app = try appCrashingInLaunch(1, "com.example.CrashesFirstTime")
        let yaml = behindBlockingApp(also: [app], """
                do: launch com.example.CrashesFirstTime
                expectFailure: true
              - do: launch com.example.CrashesFirstTime
            end: 10s
            expect:
              com.example.CrashesFirstTime: {finalState: active}
            """)
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [])
        #expect(outcome.timeline.filter { $0.app == "com.example.CrashesFirstTime" && $0.name == "spawn" }.count == 2)
        #expect(outcome.timeline.contains { $0.name == "crashed" })
    }

    /// A queued launch of an app already up spawns nothing and is judged
    /// by the spawn under way, not by a later step's: it failed when the
    /// app, killed and launched again later, crashed then.
    @Test func aQueuedLaunchThatSpawnsNothingIsNotJudgedByALaterSpawn() async throws {
        let app = try appCrashingInLaunch(2, "com.example.CrashesSecondTime")
        let yaml = behindBlockingApp(also: [app], """
                do: launch com.example.CrashesSecondTime
              - do: launch com.example.CrashesSecondTime
              - do: switcher kill com.example.CrashesSecondTime
              - do: launch com.example.CrashesSecondTime
                expectFailure: true
            end: 10s
            expect:
              com.example.CrashesSecondTime: {finalState: notRunning}
            """)
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [])
        let own = outcome.timeline.filter { $0.app == "com.example.CrashesSecondTime" }
        #expect(own.filter { $0.name == "launch" }.count == 3 && own.filter { $0.name == "spawn" }.count == 2, "\(own.map(\.name))")
        #expect(own.contains { $0.name == "crashed" })
    }

    /// An app killed for breaking the protocol in `applicationDidBecomeActive:`
    /// did not launch, whether its launch ran at once or waited behind a
    /// hung app. The violation's event named no callback, so the waiting
    /// launch, judged from the log, passed.
    @Test(arguments: [false, true])
    func aLaunchKilledForAViolationInDidBecomeActiveFails(behindAHungApp: Bool) async throws {
        let directory = try temporaryDirectory()
        let app = try scriptApp(
            "com.example.BreaksWhenActive", in: directory,
            script: pythonAckingApp(
                beforeAck: #"if message["name"] == "applicationDidBecomeActive:": s.sendall(b"not json\n"); time.sleep(60)"#))
        let steps =
            behindAHungApp
            ? "  - do: launch com.offstage.tests.BlockingApp\n  - at: 1s\n    do: launch com.example.BreaksWhenActive"
            : "  - do: launch com.example.BreaksWhenActive"
        let yaml = """
            apps: [\(Paths.sample("misbehaving/BlockingApp")), \(app)]
            hangGrace: 300ms
            steps:
            \(steps)
            end: 10s
            """
        let outcome = try await runQueued(yaml)
        let line = behindAHungApp ? 6 : 4
        #expect(outcome.failures.count == 1)
        #expect(outcome.failures.first?.hasPrefix(
            "q.yaml:\(line): launch com.example.BreaksWhenActive failed: com.example.BreaksWhenActive did not launch: it broke the protocol (unreadable message: invalid JSON at byte 0: invalid literal) and was killed") == true,
            "\(outcome.failures)")
        let violation = try #require(outcome.timeline.first { $0.name == "protocolViolation" })
        #expect(violation.detail["callback"] == "applicationDidBecomeActive:")
    }

    /// A launch whose app hangs in `application:didFinishLaunchingWithOptions:`
    /// past the hang grace did not launch once its watchdog kills it: it
    /// passed, judged when the command settled (the app was `inactive`).
    @Test func aLaunchThatHangsInItsLaunchCallbacksFailsWhenTheWatchdogKillsIt() async throws {
        let directory = try temporaryDirectory()
        let app = try scriptApp(
            "com.example.HangsAtLaunch", in: directory,
            script: pythonAckingApp(beforeAck: #"if message["name"] == "application:didFinishLaunchingWithOptions:": time.sleep(600)"#))
        let yaml = """
            apps: [\(app)]
            hangGrace: 300ms
            steps:
              - do: launch com.example.HangsAtLaunch
            end: 30s
            """
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures.count == 1)
        #expect(outcome.failures.first?.hasPrefix(
            "q.yaml:4: launch com.example.HangsAtLaunch failed: com.example.HangsAtLaunch did not launch: the watchdog killed it after ") == true,
            "\(outcome.failures)")
        #expect(outcome.failures.first?.contains("in application:didFinishLaunchingWithOptions:") == true)
        // Ended before the watchdog: it never came up either (it passed).
        let cut = try await runQueued(yaml.replacingOccurrences(of: "end: 30s", with: "end: 10s"))
        #expect(cut.failures == [
            "q.yaml:4: launch com.example.HangsAtLaunch failed: com.example.HangsAtLaunch did not launch: it was still in application:didFinishLaunchingWithOptions: when the run ended (give the run an end past its watchdog)"
                + "; its log: \(cut.dataDirectory ?? "?")/logs/com.example.HangsAtLaunch.log"
        ], "\(cut.failures)")
    }

    /// A launch whose app is still waiting behind a hung app when the run
    /// ends never came up: it fails, saying so. It passed, judged when
    /// issued.
    @Test func aLaunchStillWaitingWhenTheRunEndsFails() async throws {
        let yaml = behindBlockingApp(also: [Paths.sample("StateLab")], """
                do: launch \(stateLab)
            """)
        let outcome = try await runQueued(yaml)
        #expect(outcome.failures == [
            "q.yaml:6: launch \(stateLab) never came up: it was still waiting behind com.offstage.tests.BlockingApp, which had not answered, when the run ended (give the run an end past that app's watchdog)"
        ])
    }

    /// Preferences changed in Settings: NSUserDefaultsDidChangeNotification,
    /// which the spec lists among the system changes, could not be made.
    /// The running app gets it now; a suspended one, once, when it returns.
    @Test func preferencesChangedInSettingsReachTheApp() async throws {
        let yaml = """
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - do: launch \(stateLab)
              - after: 1s
                do: device defaults
              - after: 1s
                do: home
              - after: 1m
                do: device defaults
              - after: 1s
                do: device defaults
              - after: 1s
                do: launch \(stateLab)
            """
        let outcome = try await ScenarioRunner(scenario: try Scenario.parse(yaml, file: "x.yaml"), executableSearchPaths: [Paths.products]).run()
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        let name = SystemNotificationName.userDefaults.rawValue
        let times = outcome.timeline.filter { $0.kind == .callback && $0.name == name }.map { formatSeconds($0.time) }
        #expect(times == ["1", "64"])
    }

    @Test func anAdvanceIsAStepEvenWhenItIsTheLast() async throws {
        // StateLab goes home at 1 s with its 25 s task; the run must reach 61 s.
        let yaml = """
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - do: launch \(stateLab)
              - after: 1s
                do: home
              - do: advance 1m
            expect:
              \(stateLab): {finalState: suspended}
            """
        let scenario = try Scenario.parse(yaml, file: "x.yaml")
        #expect(scenario.steps.map { $0.action.first } == ["launch", "home", "advance"])
        #expect(scenario.steps.last?.at == .seconds(61))
        let outcome = try await ScenarioRunner(scenario: scenario, executableSearchPaths: [Paths.products]).run()
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        // Its task ends at 26 s and it is suspended: the run went past that.
        #expect(outcome.timeline.last.map { [$0.name, formatSeconds($0.time)] } == ["suspended", "26"])
    }

    @Test func theDocsExamplePassesAsWritten() async throws {
        let docs = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/scenarios.md"), encoding: .utf8)
        let block = try #require(docs.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```").first)
        let yaml = block.replacingOccurrences(of: "  - ../StateLab", with: "  - \(Paths.sample("StateLab"))")
        let outcome = try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "docs.yaml"), executableSearchPaths: [Paths.products]).run()
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(outcome.timeline.contains { $0.name == "applicationWillEnterForeground:" })
    }

    @Test func anAppThatCannotBeInstalledIsReportedAtItsLine() async throws {
        let yaml = "apps:\n  - \(Paths.sample("StateLab"))\n  - /nonexistent/NoSuchApp\n"
        let error = await #expect(throws: ScenarioError.self) {
            try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "x.yaml"), executableSearchPaths: [Paths.products]).run()
        }
        #expect(error?.description == "x.yaml:3: cannot install the app: /nonexistent/NoSuchApp: no such file or directory")
    }

    /// The same app twice (a copy of its directory, say): the second install
    /// replaced the first, and the run went on with one app fewer than written.
    @Test func twoAppsWithOneBundleIDAreReportedAtTheSecond() async throws {
        let yaml = "apps:\n  - \(Paths.sample("StateLab"))\n  - \(Paths.sample("misbehaving/../StateLab"))\n"
        let error = await #expect(throws: ScenarioError.self) {
            try await ScenarioRunner(scenario: Scenario.parse(yaml, file: "x.yaml"), executableSearchPaths: [Paths.products]).run()
        }
        #expect(
            error?.description
                == "x.yaml:3: \(Paths.sample("misbehaving/../StateLab")) has the bundle id com.offstage.samples.StateLab of the app at line 2")
    }

    @Test(arguments: [
        ("name: [unclosed", "bad.yaml:2: not valid YAML: did not find expected"),
        ("apps: [a]\nsteps:\n  - at: soon\n    do: home\n", "bad.yaml:3: expected a duration for at"),
        ("apps: [a]\nsteps:\n  - at: 1s\n    do: fly away\n", "bad.yaml:4: unknown action \"fly away\""),
        ("apps: [a]\nsteps:\n  - at: 5s\n    do: home\n  - at: 1s\n    do: home\n", "bad.yaml:5: steps must be in time order"),
        ("apps: [a]\nstepz: []\n", "bad.yaml:2: unknown key \"stepz\""),
        ("apps: [a]\nsteps:\n  - at: 1s\n    do: launch\n", "bad.yaml:4: \"launch\" takes 1 argument"),
        ("apps: [a]\nsteps:\n  - at: 1s\n    do: memory\n", "bad.yaml:4: \"memory\" takes 1 to 2 arguments"),
        ("apps: [a]\nsteps:\n  - at: 1s\n    after: 2s\n    do: home\n", "bad.yaml:3: a step has \"at\" or \"after\", not both"),
        ("apps: [a]\nend: 99999999d\n", "bad.yaml:2: expected a duration for end"),
        ("apps: [a]\nsteps:\n  - do: switcher kill\n", "bad.yaml:3: switcher kill needs the app's bundle id"),
        ("apps: [a]\nsteps:\n  - do: switcher show x\n", "bad.yaml:3: switcher show takes nothing more"),
        ("apps: [a]\nsteps:\n  - do: device battery 7\n", "bad.yaml:3: device battery takes a level from 0 to 1"),
        ("apps: [a]\nsteps:\n  - do: device locale\n", "bad.yaml:3: device locale needs a value"),
        ("apps: [a]\nsteps:\n  - do: device volume 3\n", "bad.yaml:3: device takes battery, orientation, locale, time-jump or defaults"),
        ("apps: [a]\nexpect:\n  x: {finalState: asleep}\n", "bad.yaml:3: finalState must be one of"),
        ("steps: []\n", "bad.yaml:1: expected \"apps\""),
        ("apps: [a]\nsteps:\n  - at: 1s\n    do: memory pressure lots\n", "bad.yaml:4: memory pressure takes a size"),
        ("apps: [a]\nsteps:\n  - at: 1s\n    do: memory pressure 1e30K\n", "bad.yaml:4: memory pressure takes a size"),
        // A misspelt or mistyped expectation used to pass without checking anything.
        ("apps: [a]\nexpect:\n  x: {callback: [a], final: suspended}\n", "bad.yaml:3: unknown expectation key \"callback\" (callbacks, finalState)"),
        ("apps: [a]\nexpect:\n  x: {callbacks: \"applicationWillTerminate:\"}\n", "bad.yaml:3: callbacks is a list of callback names"),
        ("apps: [a]\nsteps:\n  - do: home\n    expectFailure: yes please\n", "bad.yaml:4: expectFailure is true or false"),
        ("apps: [a]\nsteps:\n  - do: advance 5s\n    expectFailure: true\n", "bad.yaml:3: advance only moves the clock"),
        ("apps: [a]\nsteps:\n  - at: 1m\n    do: home\nend: 30s\n", "bad.yaml:5: end (30 s) is before the last step (60 s)"),
        ("apps: [a]\nhangGrace: 0s\n", "bad.yaml:2: hangGrace must be at least 10ms"),
        ("apps: [a]\nsteps:\n  - do: launch-background a UIApplicationLaunchOptionLocationKey\n",
         "bad.yaml:3: UIApplicationLaunchOptionLocationKey is not a launch option key; a service sets UIApplicationLaunchOptionsLocationKey, "),
        ("apps: [a]\nhangGrace: 2h\n", "bad.yaml:2: hangGrace must be at most an hour, as the daemon's --hang-grace (not 2h)"),
        ("apps: [a]\nexpect:\n  x:\n    callbacks: [applicationDidBecomeActive:]\n", "bad.yaml:4: not valid YAML: found unexpected ':' (quote names"),
        ("apps: [a]\nsteps:\n  - at: 1s\n    at: 2s\n    do: home\n", "bad.yaml:4: not valid YAML: a key appears twice in one mapping: at"),
        ("name: a\nname: b\napps: [a]\nsteps: []\n", "bad.yaml:2: not valid YAML: a key appears twice in one mapping: name"),
        // A list for a text ran as ios7 (a 180 s budget for ios6's 600 s) or under the file's name.
        ("apps: [a]\nprofile: [ios6]\n", "bad.yaml:2: profile is a text, not a list or a mapping"),
        ("name: [a, b]\napps: [a]\n", "bad.yaml:1: name is a text, not a list or a mapping"),
        // A typo was checked only when the step ran, and passed as an expected failure.
        ("apps: [a]\nsteps:\n  - do: alert shw\n    expectFailure: true\n", "bad.yaml:3: alert takes show, dismiss or reply, not \"shw\""),
        ("apps: [a]\nsteps:\n  - do: memory warnin\n", "bad.yaml:3: memory takes warning or pressure [SIZE], not \"warnin\""),
        ("apps: [a]\nsteps:\n  - do: memory warning 5M\n", "bad.yaml:3: memory warning takes nothing more"),
        // The CLI's form: the count of words was blamed, not the option.
        ("apps: [a]\nsteps:\n  - do: memory pressure --free 100M\n", "bad.yaml:3: a step takes no options such as --free: memory warning | memory pressure [SIZE]"),
        // A control character: libyaml's reader error had no line and ended in a colon.
        ("apps: [a]\nname: a\u{1}b\n", "bad.yaml:2: not valid YAML: control characters are not allowed (U+0001)"),
        // Yams counts characters, and CRLF is one: counted as bytes, the line came out short.
        ("apps: [a]\r\n\u{1}\r\n", "bad.yaml:2: not valid YAML: control characters are not allowed (U+0001)"),
        // Every selector ends in ':', so an unquoted `wake` step is a key.
        ("apps: [a]\nsteps:\n  - at: 1m\n    do: wake a application:performFetchWithCompletionHandler:\n",
         "bad.yaml:4: not valid YAML: mapping values are not allowed in this context (quote a value that ends in ':', such as do: \"wake ID application:performFetchWithCompletionHandler:\")"),
        // A duplicated key in a CRLF (or CR) file: split on "\n", it was one line, and the search trapped.
        ("apps: [a]\r\nsteps:\r\n  - at: 1s\r\n    do: home\r\n    at: 2s\r\n", "bad.yaml:5: not valid YAML: a key appears twice in one mapping: at"),
        ("apps: [a]\rsteps:\r  - at: 1s\r    do: home\r    at: 2s\r", "bad.yaml:5: not valid YAML: a key appears twice in one mapping: at"),
        // Quoted once and not the other time: the first copy's line was named.
        ("apps: [a]\nsteps:\n  - at: 1s\n    do: home\n    \"at\": 2s\n", "bad.yaml:5: not valid YAML: a key appears twice in one mapping: at"),
        ("apps: [a]\nsteps:\n  - 'at': 1s\n    do: home\n    at: 2s\n", "bad.yaml:5: not valid YAML: a key appears twice in one mapping: at"),
        // An empty `do:` was an unknown action "", and a list a missing "do".
        ("apps: [a]\nsteps:\n  - at: 1s\n    do:\n", "bad.yaml:4: \"do\" takes an action as text, e.g. do: launch com.example.App (this one is empty)"),
        ("apps: [a]\nsteps:\n  - do: [home]\n", "bad.yaml:3: \"do\" takes an action as text, e.g. do: launch com.example.App (this one is a list)"),
        // The system's own callbacks were refused only when the step ran (the run's data kept).
        ("apps: [a]\nsteps:\n  - do: wake a timerFired\n", "bad.yaml:3: timerFired is the system's own callback; wake delivers a service's"),
        ("apps: [a]\nsteps:\n  - do: \"wake a applicationDidBecomeActive:\"\n", "bad.yaml:3: applicationDidBecomeActive: is the system's own callback"),
        // `{}` checked nothing and counted as an expectation met.
        ("apps: [a]\nexpect:\n  x: {}\n", "bad.yaml:3: an expectation needs callbacks, finalState or both"),
    ])
    func malformedScenariosNameFileLineAndWhatWasExpected(yaml: String, message: String) {
        #expect {
            _ = try Scenario.parse(yaml, file: "bad.yaml")
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    /// An app path is relative to the scenario's directory, even one that
    /// starts with `~` in a scenario named without a directory (it went to
    /// the daemon as it was, which read `~` as root's home; `./e.yaml`
    /// worked), and YAML's null (`~`) or an empty path is no app directory
    /// (they meant the home and the scenario's directories).
    @Test func appPathsAreRelativeToTheScenarioAndNeverEmptyOrNull() throws {
        #expect(try Scenario.parse("apps: [\"~/x\"]\n", file: "e.yaml").appPaths == ["./~/x"])
        #expect(try Scenario.parse("apps: [\"~/x\"]\n", file: "dir/e.yaml").appPaths == ["dir/~/x"])
        #expect(try Scenario.parse("apps: [x]\n", file: "~/e.yaml").appPaths == ["./~/x"])
        // Other paths are kept as written (errors showed ./../apps/App for ../apps/App).
        #expect(try Scenario.parse("apps: [App, /abs/App, ../App]\n", file: "e.yaml").appPaths == ["App", "/abs/App", "../App"])
        for (yaml, message) in [
            ("apps: [~]\n", "e.yaml:1: expected an app directory path (~ is YAML's null; quote it)"),
            ("apps: [null]\n", "e.yaml:1: expected an app directory path (null is YAML's null; quote it)"),
            ("apps: [\"\"]\n", "e.yaml:1: expected an app directory path, not an empty one"),
            ("apps:\n  -\n", "e.yaml:2: expected an app directory path, not an empty one"),
        ] {
            let error = #expect(throws: ScenarioError.self) { try Scenario.parse(yaml, file: "e.yaml") }
            #expect(error?.description == message)
        }
    }

    /// The hint to quote a value ending in ':' is for such lines only.
    @Test func theQuoteHintIsForValuesEndingInAColon() {
        #expect {
            _ = try Scenario.parse("name: a: b\napps: [a]\n", file: "bad.yaml")
        } throws: { error in
            "\(error)" == "bad.yaml:1: not valid YAML: mapping values are not allowed in this context"
        }
    }

    /// A file that starts with a byte order mark (an editor on Windows
    /// writes one; YAML allows it) reads as without: it was "not valid YAML:
    /// did not find expected <document start>" at line 2. Lines keep their
    /// numbers.
    @Test func aByteOrderMarkAtTheStartIsRead() throws {
        let file = try temporaryDirectory() + "/bom.yaml"
        try Data([0xEF, 0xBB, 0xBF] + Array("apps: [a]\nsteps:\n  - do: home\n".utf8)).write(to: URL(fileURLWithPath: file))
        let scenario = try Scenario.load(path: file)
        #expect(scenario.steps.map(\.action) == [["home"]] && scenario.appLines == [1])
        #expect {
            _ = try Scenario.parse("\u{FEFF}apps: [a]\nname: a\u{1}b\n", file: "bad.yaml")
        } throws: { error in
            "\(error)" == "bad.yaml:2: not valid YAML: control characters are not allowed (U+0001)"
        }
    }

    /// `steps:` with nothing after it is no steps, as no `steps` key is; it
    /// was "expected a list".
    @Test func stepsWithNoValueAreNoSteps() throws {
        for yaml in ["apps: [a]\nsteps:\n", "apps: [a]\n", "apps: [a]\nsteps: []\n"] {
            #expect(try Scenario.parse(yaml, file: "empty.yaml").steps.isEmpty, "\(yaml)")
        }
    }
}
