import Testing
@testable import OffstageCore

@Suite("Policies: watchdog, background tasks, memory, notifications, wakes")
struct PolicyTests {
    @Test func didEnterBackgroundWatchdogKillsAfterFiveSeconds() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        device.hangs[lab] = [CB.didEnterBackground]
        try device.submit(.launch(lab))
        try device.submit(.home)
        #expect(device.state(lab) == .background)
        device.advance(by: 4.9)
        #expect(device.killed.isEmpty)
        device.advance(by: 0.1)
        #expect(device.killed == [lab])
        #expect(device.state(lab) == .notRunning)
        let error = try #require(device.log.first { $0.kind == .error })
        #expect(error.name == "watchdogTimeout")
        #expect(error.detail["code"] == "0x8badf00d")
        #expect(device.board.isIdle)
    }

    @Test(arguments: [("ios6", 600.0), ("ios7", 180.0), ("ios13", 30.0)])
    func backgroundTaskBudgetFollowsTheProfile(profile: String, budget: Double) throws {
        var device = DeviceHarness(
            policy: LifecyclePolicy.profile(named: profile)!, apps: [AppDescriptor(bundleID: lab)])
        var remainingAtStart = 0.0
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                remainingAtStart = try! device.board.beginBackgroundTask(app, at: device.time).remaining
            }
        }
        try device.submit(.launch(lab))
        #expect(device.board.backgroundTimeRemaining(lab) == .infinity)
        try device.submit(.home)
        #expect(remainingAtStart == budget)
        // Asked for a time after the last input, the budget has run on.
        #expect(device.board.backgroundTimeRemaining(lab, at: device.time + .seconds(2)) == budget - 2)
        device.advance(by: budget - 5.001)
        #expect(!device.names(lab).contains(CB.expiration))
        device.advance(by: 0.001)
        #expect(device.names(lab).last == CB.expiration)
        #expect(device.state(lab) == .background)
        device.advance(by: 5)
        #expect(device.killed == [lab])
        #expect(device.log.contains { $0.kind == .error && $0.name == "backgroundTimeExpired" })
    }

    @Test func endingTheTaskInTheExpirationHandlerSuspendsInsteadOfKilling() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                _ = try! device.board.beginBackgroundTask(app, at: device.time)
            }
            if message.name == CB.expiration, let task = message.detail["task"]?.intValue {
                device.perform(try! device.board.endBackgroundTask(app, task: task, at: device.time))
            }
        }
        try device.submit(.launch(lab))
        try device.submit(.home)
        device.advance(by: 200)
        #expect(device.killed.isEmpty)
        #expect(device.state(lab) == .suspended)
    }

    @Test func stateLabTwentyFiveSecondTask() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        var task = 0
        var remainingAtEnd = 0.0
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                task = try! device.board.beginBackgroundTask(app, at: device.time).task!
                _ = try! device.board.scheduleTimer(app, after: .seconds(25), at: device.time)
            }
            if message.name == CB.timer {
                remainingAtEnd = device.board.backgroundTimeRemaining(app)
                device.perform(try! device.board.endBackgroundTask(app, task: task, at: device.time))
            }
        }
        try device.submit(.launch(lab))
        device.advance(by: 9)
        try device.submit(.home)
        #expect(device.state(lab) == .background)
        device.advance(by: 25)
        #expect(remainingAtEnd == 155)
        #expect(device.state(lab) == .suspended)
        #expect(device.names(lab).suffix(3) == [CB.willResign, CB.didEnterBackground, CB.timer])
    }

    @Test func memoryWarningGoesToRunningAppsOnly() throws {
        var device = try labThenOtherLaunched()
        try device.submit(.memoryWarning)
        #expect(device.names(other) == [CB.memoryWarning])
        #expect(device.names(lab) == [])
    }

    @Test func memoryPressureKillsSuspendedAppsLargestFirst() throws {
        let third = "com.example.Third"
        var device = DeviceHarness(apps: [lab, other, third].map { AppDescriptor(bundleID: $0) })
        for app in [lab, other, third] { try device.submit(.launch(app)) }
        try device.submit(.home)  // all three suspended now
        device.clear()
        let resident = [lab: 30_000_000, other: 80_000_000, third: 50_000_000]
        try device.submit(.memoryPressure(bytes: 100_000_000, residentMemory: resident))
        #expect(device.killed == [other, third])
        #expect(device.state(lab) == .suspended)
        #expect(device.callbacks.isEmpty)
        try device.submit(.memoryPressure(bytes: nil, residentMemory: resident))
        #expect(device.killed == [other, third, lab])
    }

    @Test func notificationsAreQueuedAndCoalescedForSuspendedApps() throws {
        var device = try labThenOtherLaunched()
        try device.submit(.deviceChange(.batteryLevel, ["level": 0.5]))
        try device.submit(.deviceChange(.batteryLevel, ["level": 0.2]))
        try device.submit(.deviceChange(.locale, ["locale": "fr_FR"]))
        #expect(device.names(lab) == [])
        #expect(device.names(other).count == 3)
        try device.submit(.launch(lab))
        let names = device.names(lab)
        #expect(
            names == [
                CB.willEnterForeground, SystemNotificationName.locale.rawValue,
                SystemNotificationName.batteryLevel.rawValue, CB.didBecomeActive,
            ])
        let battery = device.callbacks.last { $0.app == lab && $0.name == SystemNotificationName.batteryLevel.rawValue }
        #expect(battery?.detail["level"] == 0.2)
    }

    /// UIKit posts a battery, orientation or locale change only when the
    /// value changes; a time jump is news every time.
    @Test func theSameDeviceValueAgainNotifiesNobody() throws {
        var device = try labThenOtherLaunched()
        try device.submit(.deviceChange(.batteryLevel, ["level": 0.5]))
        try device.submit(.deviceChange(.batteryLevel, ["level": 0.5]))
        try device.submit(.deviceChange(.orientation, ["orientation": "landscapeLeft"]))
        try device.submit(.deviceChange(.orientation, ["orientation": "landscapeLeft"]))
        try device.submit(.deviceChange(.significantTimeChange, .emptyObject))
        try device.submit(.deviceChange(.significantTimeChange, .emptyObject))
        #expect(
            device.names(other) == [
                SystemNotificationName.batteryLevel.rawValue, SystemNotificationName.orientation.rawValue,
                SystemNotificationName.significantTimeChange.rawValue, SystemNotificationName.significantTimeChange.rawValue,
            ])
        #expect(
            device.log.filter { $0.kind == .system && $0.name == SystemNotificationName.batteryLevel.rawValue }.map(\.detail)
                == [["level": 0.5], ["level": 0.5, "unchanged": true]])
    }

    /// A suspended app is not given a value it already has either: the
    /// repeat is dropped, not queued for its resumption.
    @Test func theSameDeviceValueIsNotQueuedForASuspendedApp() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        try device.submit(.launch(lab))
        try device.submit(.deviceChange(.batteryLevel, ["level": 0.5]))
        try #require(device.names(lab).contains(SystemNotificationName.batteryLevel.rawValue))
        try device.submit(.launch(other))
        try #require(device.state(lab) == .suspended)
        device.clear()
        try device.submit(.deviceChange(.batteryLevel, ["level": 0.5]))
        try device.submit(.launch(lab))
        #expect(device.names(lab) == [CB.willEnterForeground, CB.didBecomeActive])
    }

    @Test func serviceWakeOpensATenSecondWindowThenSuspends() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        try device.submit(.launch(lab))
        try device.submit(.home)
        device.clear()
        try device.submit(.wake(lab, callback: "locationManager:didUpdateLocations:", detail: [:]))
        #expect(device.names(lab) == ["locationManager:didUpdateLocations:"])
        #expect(device.state(lab) == .background)
        device.advance(by: 9.9)
        #expect(device.state(lab) == .background)
        device.advance(by: 0.1)
        #expect(device.state(lab) == .suspended)
    }

    /// A wake with the lifecycle's own callback gave an active app
    /// `applicationWillTerminate:` and `applicationDidEnterBackground:`,
    /// and left it active.
    @Test func aWakeWithTheSystemsOwnCallbackIsRefused() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        try device.submit(.launch(lab))
        device.clear()
        for name in [CallbackName.willTerminate.rawValue, CallbackName.didEnterBackground.rawValue, "timerFired",
            SystemNotificationName.locale.rawValue]
        {
            let error = #expect(throws: LifecycleError.self) {
                try device.submit(.wake(lab, callback: name, detail: [:]))
            }
            #expect(error?.code == .invalidCallback && error?.message.hasPrefix("\(name) is the system's own callback") == true)
        }
        #expect(device.names(lab).isEmpty)
        #expect(device.state(lab) == .active)
    }

    @Test func aZeroWakeWindowSuspendsAsSoonAsTheCallbackIsAckedWithoutATimer() throws {
        var policy = LifecyclePolicy.default
        policy.wakeWindow = .zero
        var device = DeviceHarness(policy: policy, apps: [AppDescriptor(bundleID: lab)])
        try device.submit(.launch(lab))
        try device.submit(.home)
        device.clear()
        try device.submit(.wake(lab, callback: "event", detail: [:]))
        #expect(device.names(lab) == ["event"])
        #expect(device.state(lab) == .suspended)
        #expect(device.board.nextDeadline() == nil)
    }

    @Test func launchInBackgroundSkipsDidBecomeActive() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        try device.submit(.launchInBackground(lab, options: [LaunchOptionKey.location: true]))
        #expect(device.names(lab) == [CB.willFinish, CB.didFinish])
        #expect(device.callbacks[0].detail[LaunchOptionKey.location] == true)
        #expect(device.state(lab) == .background)
        device.advance(by: 10)
        #expect(device.state(lab) == .suspended)
    }

    @Test func anAppThatExitsOnSuspendEndsWhereItWouldBeSuspendedAfterABackgroundLaunch() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab, exitsOnSuspend: true)])
        try device.submit(.launchInBackground(lab, options: [LaunchOptionKey.location: true]))
        #expect(device.state(lab) == .background)
        device.advance(by: 10)
        #expect(device.names(lab) == [CB.willFinish, CB.didFinish, CB.willTerminate])
        #expect(device.state(lab) == .notRunning)
        #expect(device.killed == [lab])
        #expect(device.frozen.isEmpty)
        #expect(!device.log.contains { $0.kind == .state && $0.name == "suspended" })
    }

    @Test func timerDueWhileSuspendedIsDeliveredOnResume() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        try device.submit(.launch(lab))
        _ = try device.board.scheduleTimer(lab, after: .seconds(30), at: device.time)
        try device.submit(.home)
        device.advance(by: 60)
        #expect(!device.names(lab).contains(CB.timer))
        try device.submit(.launch(lab))
        #expect(device.names(lab).suffix(3) == [CB.willEnterForeground, CB.timer, CB.didBecomeActive])
    }

    @Test func sameInputsGiveTheSameTimeline() throws {
        func run() throws -> [String] {
            var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
            try device.submit(.launch(lab))
            try device.submit(.launch(other))
            try device.submit(.alertShow)
            try device.submit(.alertReply)
            try device.submit(.launch(lab))
            device.advance(by: 100)
            return device.log.map { "\($0.kind) \($0.app ?? "-") \($0.name)" }
        }
        #expect(try run() == run())
    }

    @Test func aTaskEndedByAnEarlierExpirationHandlerGetsNoExpirationCallback() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        var tasks: [Int] = []
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                tasks.append(try! device.board.beginBackgroundTask(app, at: device.time).task!)
                tasks.append(try! device.board.beginBackgroundTask(app, at: device.time).task!)
            }
            if message.name == CB.expiration {
                // The first handler ends both tasks.
                for task in device.board.openTasks(of: app) {
                    device.perform(try! device.board.endBackgroundTask(app, task: task, at: device.time))
                }
            }
        }
        try device.submit(.launch(lab))
        try device.submit(.home)
        device.advance(by: 200)
        #expect(device.names(lab).filter { $0 == CB.expiration }.count == 1)
        #expect(device.killed.isEmpty)
        #expect(device.state(lab) == .suspended)
    }

    @Test func aTaskBegunAfterTheWarningIsWarnedAtOnce() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        var late: Int?
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                _ = try! device.board.beginBackgroundTask(app, at: device.time)
            }
            if message.name == CB.expiration, late == nil {
                late = try! device.board.beginBackgroundTask(app, at: device.time).task
            }
        }
        var warnedAt: [Double] = []
        let onCallback = device.onCallback
        device.onCallback = { device, app, message in
            if message.name == CB.expiration { warnedAt.append(device.time.seconds) }
            onCallback?(&device, app, message)
        }
        try device.submit(.launch(lab))
        try device.submit(.home)
        device.advance(by: 176)
        let expirations = device.callbacks.filter { $0.name == CB.expiration }.map { $0.detail["task"] }
        #expect(expirations == [1, 2])
        // Both at the warning's time (5 s before the 180 s budget), the late one not a moment after.
        #expect(warnedAt == [175, 175])
    }

    /// An app that begins a new task in each expiration handler and ends
    /// the expiring one was warned again at the same instant, for good:
    /// virtual time stood still (`offstage run` never ended, the daemon
    /// took no other command). Late warnings come a second apart, so the
    /// budget's end comes and kills the app, as on iOS.
    @Test func anAppRenewingItsTaskInEachHandlerIsKilledAtTheBudgetsEnd() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        var warnedAt: [Double] = []
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                _ = try! device.board.beginBackgroundTask(app, at: device.time)
            }
            if message.name == CB.expiration, let task = message.detail["task"]?.intValue {
                warnedAt.append(device.time.seconds)
                _ = try! device.board.beginBackgroundTask(app, at: device.time)
                device.perform(try! device.board.endBackgroundTask(app, task: task, at: device.time))
            }
        }
        try device.submit(.launch(lab))
        try device.submit(.home)
        device.advance(by: 200)
        // The warning (175 s), the first late task at once, then one a second until the end (180 s).
        #expect(warnedAt == [175, 175, 176, 177, 178, 179])
        #expect(device.killed == [lab])
        #expect(device.log.contains { $0.kind == .error && $0.name == "backgroundTimeExpired" })
    }

    @Test func aSecondWakeExtendsTheWindow() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        try device.submit(.launch(lab))
        try device.submit(.home)
        try device.submit(.wake(lab, callback: "event", detail: [:]))
        device.advance(by: 9.5)
        try device.submit(.wake(lab, callback: "event", detail: [:]))
        device.advance(by: 9)
        #expect(device.state(lab) == .background)
        device.advance(by: 1)
        #expect(device.state(lab) == .suspended)
    }

    @Test func uninstallIsRefusedWhileTheAppIsBeingSpawned() throws {
        var board = Springboard()
        board.install(AppDescriptor(bundleID: lab))
        let actions = try board.submit(.launch(lab), at: .zero)
        #expect(actions.contains(.spawn(app: lab, launch: 1)))
        #expect(throws: LifecycleError.self) { try board.uninstall(lab) }
    }

    /// A launch queued behind a hung app keeps its app installed: removing
    /// it left the queued launch to bring a foreground app that no longer
    /// existed (no process, gone from the app list) to the screen.
    @Test func uninstallIsRefusedWhileALaunchOfTheAppIsQueued() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        device.hangs[other] = [CB.willResign]
        try device.submit(.launch(other))
        try device.submit(.home)
        try device.submit(.launch(lab))
        #expect(device.board.waitingFor == other)
        let error = #expect(throws: LifecycleError.self) { try device.board.uninstall(lab) }
        #expect(error?.message == "\(lab) has a request queued behind \(other); remove it once that has run")
        // Once the hung app's watchdog has ended it, the launch runs.
        device.advance(by: 10)
        #expect(device.state(lab) == .active)
        #expect(device.board.installedApps.map(\.bundleID).contains(lab))
    }

    /// The same once the launch has begun: launched over an app that hangs
    /// in applicationWillResignActive:, StateLab is the foreground app and
    /// its spawn waits behind the hung callback (no request is queued).
    @Test func uninstallIsRefusedWhileALaunchOfTheAppHasBegunBehindAHungApp() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        device.hangs[other] = [CB.willResign]
        try device.submit(.launch(other))
        try device.submit(.launch(lab))
        #expect(device.board.waitingFor == other && device.board.foregroundApp == lab)
        #expect(throws: LifecycleError.self) { try device.board.uninstall(lab) }
        device.advance(by: 10)
        #expect(device.state(lab) == .active)
    }

    /// Inputs queued behind a hung app are checked when they run, against
    /// the state the inputs before them left: two `lock`s both went through
    /// (checked when issued, the first not yet done), and a `launch` after
    /// them launched the app on the locked device.
    @Test func inputsQueuedBehindAHungAppAreCheckedWhenTheyRun() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        device.hangs[other] = [CB.didEnterBackground]
        try device.submit(.launch(other))
        try device.submit(.home)
        #expect(device.board.waitingFor == other)
        try device.submit(.lock)
        try device.submit(.lock)
        let secondLock = device.board.lastInput
        try device.submit(.launch(lab))
        let launch = device.board.lastInput
        #expect(!device.board.hasRun(input: secondLock - 1) && !device.board.hasRun(input: launch))
        device.clear()
        device.advance(by: 10)  // the watchdog ends the hung app; the queue runs
        #expect(device.board.hasRun(input: launch) && device.board.lastInputRun == launch)
        #expect(device.log.filter { $0.kind == .system }.map(\.name) == ["lock"])
        // The refusals, each with its input's ticket; the first lock has none.
        let refused = device.log.filter { $0.kind == .error && $0.name == "refused" }
        #expect(refused.map(\.app) == [nil, lab])
        #expect(refused.map(\.detail) == [
            ["input": "lock", "reason": "the device is already locked", "ticket": JSONValue(secondLock)],
            ["input": .string("launch \(lab)"), "reason": "the device is locked; unlock it first", "ticket": JSONValue(launch)],
        ])
        #expect(device.state(lab) == .notRunning && device.board.foregroundApp == nil)
        #expect(device.board.overlaysShown.locked)
    }

    /// A queued input is named (its `refused` event's `input`, the pending
    /// warning) as a command or a scenario step says it: a device change
    /// was its notification's name, `device UIDeviceBatteryLevelDidChangeNotification`.
    @Test func aQueuedInputIsNamedAsACommandSaysIt() {
        let inputs: [Springboard.Input] = [
            .lock, .switcherKill(lab), .memoryPressure(bytes: nil, residentMemory: [:]),
            .deviceChange(.batteryLevel, ["level": 0.2]), .deviceChange(.orientation, ["orientation": "faceUp"]),
            .deviceChange(.locale, ["locale": "fr_FR"]), .deviceChange(.significantTimeChange, .emptyObject),
            .deviceChange(.userDefaults, .emptyObject), .wake(lab, callback: "application:performFetchWithCompletionHandler:", detail: .emptyObject),
            .launchInBackground(lab, options: .emptyObject),
        ]
        #expect(inputs.map(\.description) == [
            "lock", "switcher kill \(lab)", "memory pressure", "device battery", "device orientation", "device locale",
            "device time-jump", "device defaults", "wake \(lab) application:performFetchWithCompletionHandler:",
            "launch-background \(lab)",
        ])
    }

    /// An input that needs one queued before it to have run (an unlock
    /// after a queued lock, a switcher kill of an app whose launch is
    /// queued) is taken: it was refused when issued.
    @Test func anInputThatNeedsAQueuedOneIsTakenWhenItRuns() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        device.hangs[other] = [CB.didEnterBackground]
        try device.submit(.launch(other))
        try device.submit(.home)
        try device.submit(.launch(lab))
        try device.submit(.switcherKill(lab))
        try device.submit(.lock)
        try device.submit(.unlock)
        device.advance(by: 10)
        #expect(!device.log.contains { $0.kind == .error && $0.name == "refused" })
        #expect(device.killed == [other, lab])
        #expect(!device.board.overlaysShown.locked)
    }

    /// StateLab launched, then Other in front of it; the log cleared.
    func labThenOtherLaunched() throws -> DeviceHarness {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        try device.submit(.launch(lab))
        try device.submit(.launch(other))
        device.clear()
        return device
    }
}

