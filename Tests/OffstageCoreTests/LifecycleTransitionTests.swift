import Testing
@testable import OffstageCore

@Suite("Lifecycle transitions (the spec's table)")
struct LifecycleTransitionTests {
    func launched(_ apps: [AppDescriptor] = [AppDescriptor(bundleID: lab)]) throws -> DeviceHarness {
        var device = DeviceHarness(apps: apps)
        try device.submit(.launch(apps[0].bundleID))
        return device
    }

    @Test func tapIconOnNotRunningLaunchesToActive() throws {
        let device = try launched()
        #expect(device.names(lab) == [CB.willFinish, CB.didFinish, CB.didBecomeActive])
        #expect(device.state(lab) == .active)
        #expect(device.board.isIdle)
    }

    @Test func homeBackgroundsThenSuspendsSilently() throws {
        var device = try launched()
        device.clear()
        try device.submit(.home)
        #expect(device.names(lab) == [CB.willResign, CB.didEnterBackground])
        #expect(device.state(lab) == .suspended)
        #expect(device.frozen == [lab])
        let states = device.log.filter { $0.kind == .state }.map(\.name)
        #expect(states == ["inactive", "background", "suspended"])
    }

    @Test func tapIconOnSuspendedResumes() throws {
        var device = try launched()
        try device.submit(.home)
        device.clear()
        try device.submit(.launch(lab))
        #expect(device.names(lab) == [CB.willEnterForeground, CB.didBecomeActive])
        #expect(device.state(lab) == .active)
        #expect(device.frozen.isEmpty)
    }

    /// UIKit calls `applicationWillEnterForeground:` in the background
    /// state: an app resuming from suspended is thawed into it, so a task
    /// it begins there is granted, with a budget counted from the thaw
    /// (it was refused as not running, and the time remaining was 0).
    @Test func anAppResumingFromSuspendedRunsWillEnterForegroundInTheBackground() throws {
        var device = try launched()
        try device.submit(.home)
        device.advance(by: 600)  // suspended longer than any budget
        device.clear()
        var during: (state: AppState?, task: Int?, remaining: Double)?
        device.onCallback = { device, app, message in
            guard message.name == CB.willEnterForeground else { return }
            let begun = try? device.board.beginBackgroundTask(app, at: device.time)
            during = (device.state(app), begun?.task, device.board.backgroundTimeRemaining(app))
        }
        try device.submit(.launch(lab))
        #expect(during?.state == .background)
        #expect(during?.task == 1)
        #expect(during?.remaining == 180)
        #expect(device.names(lab) == [CB.willEnterForeground, CB.didBecomeActive])
        let states = device.log.filter { $0.kind == .state }.map { [$0.name, $0.detail["from"]?.stringValue] }
        #expect(states == [["background", "suspended"], ["inactive", "background"], ["active", "inactive"]])
        // The task stays open in the foreground, with no deadline.
        #expect(device.state(lab) == .active && device.board.openTasks(of: lab) == [1])
        #expect(device.board.backgroundTimeRemaining(lab) == .infinity)
    }

    /// Every other `notRunning` says why (`watchdog`, `switcher`, …); one
    /// after a crash or an exit had only `from`.
    @Test func aCrashOrAnExitIsTheReasonOfNotRunning() throws {
        for (status, reason) in [(ExitStatus.signaled(11), "crashed"), (.exited(0), "exited")] {
            var device = try launched()
            device.clear()
            device.perform(device.board.processExited(lab, launch: 1, status: status, at: device.time))
            let last = device.log.last { $0.kind == .state }
            #expect(last?.name == "notRunning" && last?.detail == ["from": "active", "reason": .string(reason)])
        }
    }

    @Test func switcherKillOfSuspendedAppIsSilent() throws {
        var device = try launched()
        try device.submit(.home)
        device.clear()
        try device.submit(.switcherShow)
        try device.submit(.switcherKill(lab))
        #expect(device.names(lab) == [])
        #expect(device.killed == [lab])
        #expect(device.state(lab) == .notRunning)
        #expect(device.board.wasTerminatedByUser(lab))
    }

    @Test func switcherKillOfRunningBackgroundAppCallsWillTerminate() throws {
        var device = try launched()
        // A task keeps the app running in the background.
        device.onCallback = { device, app, message in
            if message.name == CB.didEnterBackground {
                _ = try? device.board.beginBackgroundTask(app, at: device.time)
            }
        }
        try device.submit(.home)
        #expect(device.state(lab) == .background)
        device.clear()
        try device.submit(.switcherKill(lab))
        #expect(device.names(lab) == [CB.willTerminate])
        #expect(device.killed == [lab])
        #expect(device.state(lab) == .notRunning)
    }

    @Test func switcherKillOfTheAppUnderTheSwitcher() throws {
        var device = try launched()
        try device.submit(.switcherShow)
        #expect(device.state(lab) == .inactive)
        device.clear()
        try device.submit(.switcherKill(lab))
        #expect(device.names(lab) == [CB.didEnterBackground, CB.willTerminate])
        #expect(device.state(lab) == .notRunning)
    }

    @Test func switcherShowAndHide() throws {
        var device = try launched()
        device.clear()
        try device.submit(.switcherShow)
        try device.submit(.switcherHide)
        #expect(device.names(lab) == [CB.willResign, CB.didBecomeActive])
        #expect(device.state(lab) == .active)
    }

    @Test func alertDismissed() throws {
        var device = try launched()
        device.clear()
        try device.submit(.alertShow)
        #expect(device.state(lab) == .inactive)
        try device.submit(.alertDismiss)
        #expect(device.names(lab) == [CB.willResign, CB.didBecomeActive])
        #expect(device.state(lab) == .active)
    }

    @Test func alertAnsweredReproducesTheSeedsReplySequence() throws {
        var device = try launched()
        device.clear()
        try device.submit(.alertShow)
        try device.submit(.alertReply)
        #expect(device.names(lab) == [CB.willResign, CB.didBecomeActive, CB.willResign, CB.didEnterBackground])
        #expect(device.state(lab) == .suspended)
        // Messages is in the foreground, not the home screen, until home.
        #expect(device.board.foregroundApp == nil && device.board.otherForegroundApp == "Messages")
        try device.submit(.home)
        #expect(device.board.otherForegroundApp == nil)
    }

    @Test func anAlertIsNotAnsweredOnALockedDevice() throws {
        var device = try launched()
        try device.submit(.lock)
        try device.submit(.alertShow)
        device.clear()
        let error = #expect(throws: LifecycleError.self) { try device.submit(.alertReply) }
        #expect(error?.message == "the device is locked; unlock it first, or dismiss the alert")
        #expect(device.callbacks.isEmpty && device.board.otherForegroundApp == nil)
        try device.submit(.alertDismiss)
        #expect(device.state(lab) == .inactive, "still locked")
    }

    /// Home, a launch or the lock close the switcher: the log says so, as
    /// an explicit `switcher hide` would.
    @Test(arguments: [Springboard.Input.lock, .home]) func closingTheSwitcherImplicitlyIsLogged(input: Springboard.Input) throws {
        var device = try launched()
        try device.submit(.switcherShow)
        device.clear()
        try device.submit(input)
        let hide = device.log.first { $0.name == "switcherHide" }
        #expect(hide?.detail == ["by": .string(input == .lock ? "lock" : "home")])
        #expect(device.board.overlaysShown.switcher == false)
    }

    @Test func lockAndUnlock() throws {
        var device = try launched()
        device.clear()
        try device.submit(.lock)
        #expect(device.state(lab) == .inactive)
        #expect(throws: LifecycleError.self) { try device.submit(.launch(lab)) }
        try device.submit(.unlock)
        #expect(device.names(lab) == [CB.willResign, CB.didBecomeActive])
    }

    @Test func exitsOnSuspendTerminatesOnHome() throws {
        var device = try launched([AppDescriptor(bundleID: lab, exitsOnSuspend: true)])
        device.clear()
        try device.submit(.home)
        #expect(device.names(lab) == [CB.willResign, CB.willTerminate])
        #expect(device.state(lab) == .notRunning)
        #expect(device.killed == [lab])
    }

    /// Killed in the switcher opened over it, an app that opts out of
    /// background execution ends from where it is, as on the home button:
    /// it was sent to the background first (and StateLab began a 180 s
    /// background task there).
    @Test func exitsOnSuspendKilledFromTheSwitcherNeverEntersTheBackground() throws {
        var device = try launched([AppDescriptor(bundleID: lab, exitsOnSuspend: true)])
        device.clear()
        try device.submit(.switcherKill(lab))
        #expect(device.names(lab) == [CB.willResign, CB.willTerminate])
        #expect(!device.log.contains { $0.kind == .state && $0.app == lab && $0.name == AppState.background.rawValue })
        #expect(device.state(lab) == .notRunning)
        #expect(device.killed == [lab])
    }

    @Test func openingAnotherAppBackgroundsTheForegroundOne() throws {
        var device = try launched([AppDescriptor(bundleID: lab), AppDescriptor(bundleID: other)])
        device.clear()
        try device.submit(.launch(other))
        #expect(device.names(lab) == [CB.willResign, CB.didEnterBackground])
        #expect(device.names(other) == [CB.willFinish, CB.didFinish, CB.didBecomeActive])
        // Deterministic order across apps: the old app finishes first.
        #expect(device.callbacks.map(\.app) == [lab, lab, other, other, other])
        #expect(device.board.foregroundApp == other)
        #expect(device.state(lab) == .suspended)
    }

    @Test func badCommandsAreRejectedWithClearErrors() throws {
        var device = try launched()
        #expect(throws: LifecycleError(.noAlert, "no system alert is shown")) { try device.submit(.alertDismiss) }
        #expect(throws: LifecycleError(.unknownApp, "no app with bundle id nope is installed")) {
            try device.submit(.launch("nope"))
        }
        #expect(throws: LifecycleError.self) { try device.submit(.switcherHide) }
        try device.submit(.home)
        try device.submit(.switcherKill(lab))
        #expect(throws: LifecycleError(.notRunning, "\(lab) is not running")) { try device.submit(.switcherKill(lab)) }
    }

    @Test func crashAtLaunchIsAnErrorAndTheAppIsNotRunning() throws {
        var device = DeviceHarness(apps: [AppDescriptor(bundleID: lab)])
        device.crashAtLaunch = [lab]
        try device.submit(.launch(lab))
        #expect(device.state(lab) == .notRunning)
        let error = try #require(device.log.first { $0.kind == .error })
        #expect(error.name == "crashed")
        #expect(error.detail["phase"] == "launch")
        #expect(device.board.isIdle)
        #expect(device.board.foregroundApp == nil)
    }
}
