import DequeModule

/// The lifecycle system of one device: every app's state, the foreground
/// app, the overlays (app switcher, system alert, lock screen), background
/// tasks, timers and the policies around them.
///
/// `Springboard` is a value-type state machine. Each input carries the time it
/// happened and returns the ``SystemAction``s the daemon must perform: spawn,
/// deliver a callback, freeze, thaw, kill, log. Nothing here performs I/O or
/// reads a clock.
///
/// Work runs on one serial queue, like a device's system run loop: a user
/// action is expanded into steps (callbacks, state changes, freezes) when it
/// reaches the head of the queue, and a callback step holds the queue until
/// the app acknowledges it (or its watchdog fires). That makes the callback
/// order across apps a function of the inputs alone, which virtual time needs.
///
/// ```swift
/// var board = Springboard(policy: .default)
/// board.install(AppDescriptor(bundleID: "com.example.lab"))
/// var actions = try board.submit(.launch("com.example.lab"), at: .zero)
/// // [.log(system launch), .spawn(app: "com.example.lab", launch: 1)]
/// actions = board.appConnected("com.example.lab", launch: 1, at: .zero)
/// // [.log(state inactive), .log(callback …), .deliver(willFinishLaunching…)]
/// ```
public struct Springboard: Sendable {
    /// A user, device or service action.
    public enum Input: Equatable, Sendable, CustomStringConvertible {
        /// Tap the app's icon (or open it from the switcher).
        case launch(String)
        case home
        case lock
        case unlock
        case switcherShow
        case switcherHide
        case switcherKill(String)
        case alertShow
        case alertDismiss
        case alertReply
        case memoryWarning
        /// Kill suspended apps, largest resident memory first, until `bytes`
        /// are freed (`nil`: every suspended app). `residentMemory` is read by
        /// the daemon at the time of the input.
        case memoryPressure(bytes: Int?, residentMemory: [String: Int])
        case deviceChange(SystemNotificationName, JSONValue)
        /// A service wakes a suspended (or running) app with a callback.
        case wake(String, callback: String, detail: JSONValue)
        /// A service launches a terminated app into the background.
        case launchInBackground(String, options: JSONValue)

        /// The app the input names, if any.
        var app: String? {
            switch self {
            case .launch(let app), .switcherKill(let app), .wake(let app, _, _), .launchInBackground(let app, _): app
            default: nil
            }
        }

        /// The input as a command or a scenario step says it (`lock`,
        /// `switcher kill ID`, `device battery`; `wake ID CALLBACK` and
        /// `launch-background ID`, which only scenarios have), without the
        /// value a device change sets: for a refusal's event and a queued
        /// command's warning.
        public var description: String {
            switch self {
            case .launch(let app): "launch \(app)"
            case .home: "home"
            case .lock: "lock"
            case .unlock: "unlock"
            case .switcherShow: "switcher show"
            case .switcherHide: "switcher hide"
            case .switcherKill(let app): "switcher kill \(app)"
            case .alertShow: "alert show"
            case .alertDismiss: "alert dismiss"
            case .alertReply: "alert reply"
            case .memoryWarning: "memory warning"
            case .memoryPressure: "memory pressure"
            case .deviceChange(let name, _):
                switch name {
                case .batteryLevel: "device battery"
                case .orientation: "device orientation"
                case .locale: "device locale"
                case .significantTimeChange: "device time-jump"
                case .userDefaults: "device defaults"
                }
            case .wake(let app, let callback, _): "wake \(app) \(callback)"
            case .launchInBackground(let app, _): "launch-background \(app)"
            }
        }
    }

    enum Overlay: Hashable, Sendable {
        case switcher
        case alert
        case lock
    }

    enum Step: Sendable {
        /// A submitted input queued behind work the system waits for (one
        /// submitted to an idle system is expanded at once). Its ticket is
        /// not kept: inputs run in the order they were submitted (nothing
        /// removes one from the queue), so the next to run has ticket
        /// ``lastInputRun`` + 1.
        case input(Input)
        case spawn(app: String, background: Bool)
        /// Deliver a callback; `state` overrides the state the app is told (nil: its current state).
        case callback(app: String, name: String, state: AppState?, detail: JSONValue)
        case setState(app: String, AppState)
        case freeze(app: String)
        case thaw(app: String)
        /// Thaw the app if it is frozen and bring it from suspended into the
        /// background, where it runs what follows (a wake's callback,
        /// `applicationWillEnterForeground:`); decided when it runs.
        case resume(app: String)
        case evaluateSuspension(app: String)
        case kill(app: String, reason: String)
        case timerDue(app: String, timer: Int)
        case expireTasks(app: String)
        case expireTask(app: String, task: Int)
        case deliverQueued(app: String)
        case openWakeWindow(app: String)
        /// Send the app to the background (expanded when it reaches the head).
        case background(app: String)
        /// Kill the app from the shown switcher (expanded when it reaches the head).
        case terminateFromSwitcher(app: String)
        case log(LogEntry)

        /// The app the step is for; nil for an input, which is never removed
        /// from the queue with an app's work (``lastInputRun`` counts on it).
        var app: String? {
            switch self {
            case .input, .log: return nil
            case .spawn(let app, _), .callback(let app, _, _, _), .setState(let app, _), .freeze(let app),
                .thaw(let app), .resume(let app), .evaluateSuspension(let app), .kill(let app, _), .timerDue(let app, _),
                .expireTasks(let app), .expireTask(let app, _), .deliverQueued(let app), .openWakeWindow(let app), .background(let app),
                .terminateFromSwitcher(let app):
                return app
            }
        }
    }

    enum InFlight: Sendable {
        case callback(app: String, id: Int, name: String, watchdog: TimerID)
        case launching(app: String, launch: Int, watchdog: TimerID)

        var app: String {
            switch self {
            case .callback(let app, _, _, _), .launching(let app, _, _): return app
            }
        }
    }

    enum TimerEvent: Sendable {
        case watchdog(app: String)
        case expirationWarning(app: String, launch: Int)
        case lateTaskWarning(app: String, launch: Int, task: Int)
        case budgetEnd(app: String, launch: Int)
        case wakeWindowEnd(app: String, launch: Int)
        case appTimer(app: String, launch: Int, timer: Int)
    }

    public private(set) var policy: LifecyclePolicy
    var apps: [String: AppRecord] = [:]
    /// Install order, for deterministic iteration over apps.
    var installOrder: [String] = []
    /// The app in the foreground, if it is one of ours.
    public internal(set) var foregroundApp: String?
    /// An app that is not one of ours in the foreground: Messages, opened
    /// by an alert's reply, until home or a launch.
    public internal(set) var otherForegroundApp: String?
    var overlays: Set<Overlay> = []
    /// The device's battery level, orientation and locale as last set: the
    /// same value again changes nothing, and UIKit posts nothing for it.
    var deviceValues: [SystemNotificationName: JSONValue] = [:]
    var work = Deque<Step>()
    /// The ticket of the input submitted last (they count from 1).
    public private(set) var lastInput = 0
    /// The ticket of the input that ran last, taken or refused: inputs
    /// run in the order they were submitted.
    public internal(set) var lastInputRun = 0
    var inFlight: InFlight?
    var timers = Scheduler<TimerEvent>()
    var nextCallbackID = 1
    var actions: [SystemAction] = []
    /// The latest time an input carried.
    public private(set) var now = ClockTime.zero

    public init(policy: LifecyclePolicy = .default) {
        self.policy = policy
    }

    // MARK: Apps

    /// Adds an app, or replaces the descriptor of a not-running one.
    public mutating func install(_ descriptor: AppDescriptor) {
        if var record = apps[descriptor.bundleID] {
            record.descriptor = descriptor
            apps[descriptor.bundleID] = record
        } else {
            apps[descriptor.bundleID] = AppRecord(descriptor: descriptor)
            installOrder.append(descriptor.bundleID)
        }
    }

    /// Removes a not-running app.
    public mutating func uninstall(_ bundleID: String) throws {
        guard let record = apps[bundleID] else { throw unknownApp(bundleID) }
        guard !record.hasProcess else {
            throw LifecycleError(.invalidState, "\(bundleID) is running; kill it before removing it")
        }
        // A request queued behind an app the system waits for (a launch, say)
        // would otherwise run for an app that is gone: a launch left a
        // foreground app that no longer existed.
        if hasQueuedWork(naming: bundleID) {
            let behind = waitingFor.map { " behind \($0)" } ?? ""
            throw LifecycleError(.invalidState, "\(bundleID) has a request queued\(behind); remove it once that has run")
        }
        apps[bundleID] = nil
        installOrder.removeAll { $0 == bundleID }
    }

    /// The installed apps, in install order.
    public var installedApps: [AppDescriptor] { installOrder.compactMap { apps[$0]?.descriptor } }

    /// The state of an app (`nil` if not installed).
    public func state(of bundleID: String) -> AppState? { apps[bundleID]?.state }

    /// The launch number of the app's current process (0 when none ran yet).
    public func launchNumber(of bundleID: String) -> Int? { apps[bundleID]?.launch }

    /// Background task ids the app holds open.
    public func openTasks(of bundleID: String) -> [Int] { apps[bundleID]?.tasks.sorted() ?? [] }

    /// Whether the user killed the app from the switcher since its last user launch.
    public func wasTerminatedByUser(_ bundleID: String) -> Bool { apps[bundleID]?.terminatedByUser ?? false }

    /// Marks a background mode as in use (audio playing, continuous location),
    /// which keeps the app running in the background.
    public mutating func setBackgroundActivity(_ mode: BackgroundMode, active: Bool, for bundleID: String, at time: ClockTime)
        -> [SystemAction]
    {
        advanceNow(time)
        guard var record = apps[bundleID], record.descriptor.backgroundModes.contains(mode) else { return [] }
        if active { record.activeModes.insert(mode) } else { record.activeModes.remove(mode) }
        apps[bundleID] = record
        if !active, record.state == .background { work.append(.evaluateSuspension(app: bundleID)) }
        return run()
    }

    /// A summary of the system for `status`.
    public var overlaysShown: (switcher: Bool, alert: Bool, locked: Bool) {
        (overlays.contains(.switcher), overlays.contains(.alert), overlays.contains(.lock))
    }

    /// No work is queued and no callback or launch is waiting for the app.
    public var isIdle: Bool { inFlight == nil && work.isEmpty }

    /// The app a callback or launch is waiting for, if any.
    public var waitingFor: String? { currentWait?.app }

    /// What the system waits for, if anything: the app, the callback (nil
    /// for a launch waiting for its hello) and the wait's watchdog, which no
    /// other wait shares, so one wait can be told from the next.
    public var currentWait: (app: String, callback: String?, watchdog: TimerID)? {
        switch inFlight {
        case .callback(let app, _, let name, let watchdog): return (app, name, watchdog)
        case .launching(let app, _, let watchdog): return (app, nil, watchdog)
        case nil: return nil
        }
    }

    /// The system waits for a spawned app to say hello (start-up, not a hang).
    public var isWaitingForLaunch: Bool { currentWait.map { $0.callback == nil } ?? false }

    /// The app has a process, or one is being started.
    public func hasProcess(_ bundleID: String) -> Bool { apps[bundleID]?.hasProcess ?? false }

    /// Work naming the app waits in the queue: a request, or the steps of
    /// one already expanded (a launch behind a hung app's callback has set
    /// the foreground and queued its spawn).
    func hasQueuedWork(naming bundleID: String) -> Bool {
        foregroundApp == bundleID || work.contains {
            if case .input(let input) = $0 { return input.app == bundleID }
            return $0.app == bundleID
        }
    }

    /// A launch of the app (in the foreground or the background) is queued or under way.
    public func isLaunchPending(_ bundleID: String) -> Bool {
        if case .launching(let app, _, _) = inFlight, app == bundleID { return true }
        return work.contains {
            if case .input(.launch(let app)) = $0 { return app == bundleID }
            if case .input(.launchInBackground(let app, _)) = $0 { return app == bundleID }
            if case .spawn(let app, _) = $0 { return app == bundleID }
            return false
        }
    }

    // MARK: Inputs

    /// Submits a user, device or service action, and gives it the next
    /// ticket (``lastInput``).
    ///
    /// The action takes effect when it reaches the head of the work queue:
    /// at once when the system waits for nothing, where a bad action is
    /// refused (thrown) and gets no ticket. Behind work the system waits
    /// for (a hung app's callback), it is queued and checked when it
    /// reaches the head, against the state the inputs before it left: two
    /// `lock`s behind a hung app both went through, checked before the
    /// first had locked anything. One refused then is logged, an `error`
    /// event `refused` with its `ticket`; ``hasRun(input:)`` says whether
    /// it has run.
    /// - Throws: ``LifecycleError`` when the action does not apply now, or
    ///   names an app that is not installed.
    public mutating func submit(_ input: Input, at time: ClockTime) throws(LifecycleError) -> [SystemAction] {
        advanceNow(time)
        if isIdle {
            // At the head at once: checked once, against the state, and expanded.
            try validate(input, againstState: true)
            lastInput += 1
            lastInputRun = lastInput
            doNext(expand(input))
        } else {
            try validate(input, againstState: false)
            lastInput += 1
            work.append(.input(input))
        }
        return run()
    }

    /// Whether the input with this ticket has run (taken or refused), or is
    /// still queued.
    public func hasRun(input ticket: Int) -> Bool { ticket <= lastInputRun }

    /// The app's process said `hello` with a valid token for launch `launch`.
    public mutating func appConnected(_ bundleID: String, launch: Int, at time: ClockTime) -> [SystemAction] {
        advanceNow(time)
        if case .launching(let app, let number, let watchdog) = inFlight, app == bundleID, number == launch {
            timers.cancel(watchdog)
            inFlight = nil
            apps[bundleID]?.connected = true
        }
        return run()
    }

    /// The app acknowledged callback `id`. Returns `false` in `accepted` when
    /// no such callback was waiting (a protocol violation the daemon reports).
    public mutating func acknowledge(_ bundleID: String, callback id: Int, at time: ClockTime) -> (
        accepted: Bool, actions: [SystemAction]
    ) {
        advanceNow(time)
        guard case .callback(let app, let waiting, _, let watchdog) = inFlight, app == bundleID, waiting == id else {
            return (false, [])
        }
        timers.cancel(watchdog)
        inFlight = nil
        return (true, run())
    }

    /// The process could not be started.
    public mutating func spawnFailed(_ bundleID: String, launch: Int, reason: String, at time: ClockTime)
        -> [SystemAction]
    {
        advanceNow(time)
        guard let record = apps[bundleID], record.launch == launch, record.state != .notRunning || record.spawning
        else { return [] }
        emit(.error, bundleID, "launchFailed", ["reason": .string(reason)])
        terminate(bundleID, reason: "launchFailed")
        return run()
    }

    /// The app's process ended on its own (crash or exit).
    public mutating func processExited(_ bundleID: String, launch: Int, status: ExitStatus, at time: ClockTime)
        -> [SystemAction]
    {
        advanceNow(time)
        guard let record = apps[bundleID], record.launch == launch, record.hasProcess else {
            // An uninstalled app's process: nothing to log, but never leave the queue waiting for it.
            if apps[bundleID] == nil, let waiting = inFlight, waiting.app == bundleID { clearInFlight() }
            return run()
        }
        var detail = status.json.objectValue ?? [:]
        if !record.connected { detail["phase"] = "launch" }
        if case .callback(let app, _, let name, _) = inFlight, app == bundleID { detail["callback"] = .string(name) }
        // The event's name is the state event's reason, as a watchdog's or the switcher's is.
        let reason = status == .exited(0) ? "exited" : "crashed"
        emit(status == .exited(0) ? .system : .error, bundleID, reason, .object(detail))
        terminate(bundleID, reason: reason)
        return run()
    }

    /// The daemon kills the app's process of launch `launch` for breaking
    /// the protocol (logged by the caller): it is not running from now on,
    /// as after a watchdog, and its death is not a crash of its own.
    public mutating func killForProtocolViolation(_ bundleID: String, launch: Int, at time: ClockTime) -> [SystemAction] {
        advanceNow(time)
        guard let record = apps[bundleID], record.launch == launch, record.hasProcess else { return run() }
        perform(.kill(app: bundleID, reason: "protocolViolation"))
        return run()
    }

    /// Moves time forward to `time`, firing every timer due by then in order.
    public mutating func advance(to time: ClockTime) -> [SystemAction] {
        while let (_, deadline, event) = timers.popDue(by: time) {
            advanceNow(deadline)
            fire(event)
        }
        advanceNow(time)
        return run()
    }

    /// The deadline of the next timer, if any.
    public mutating func nextDeadline() -> ClockTime? { timers.nextDeadline() }

    // MARK: Helpers

    /// Whether the app has a process (nil: it is not installed), read in
    /// place. `apps[id]?.hasProcess` makes a copy of the whole record
    /// first, retaining and releasing each of its references (descriptor,
    /// sets, dictionaries), which the optimizer does not avoid; the
    /// dictionary's in-place access (`_modify`, as for an `inout`
    /// argument) moves the record out and back instead. Every input is
    /// checked with it. (For an app not installed the dictionary may grow
    /// its storage, as for an insertion; nothing is inserted.)
    mutating func appHasProcess(_ id: String) -> Bool? {
        func read(_ record: inout AppRecord?) -> Bool? { record?.hasProcess }
        return read(&apps[id])
    }

    mutating func advanceNow(_ time: ClockTime) {
        if time > now { now = time }
    }

    mutating func emit(_ kind: EventKind, _ app: String?, _ name: String, _ detail: JSONValue = .emptyObject) {
        actions.append(.log(LogEntry(kind: kind, app: app, name: name, detail: detail)))
    }

    func unknownApp(_ bundleID: String) -> LifecycleError {
        LifecycleError(.unknownApp, "no app with bundle id \(bundleID) is installed")
    }

    mutating func takeActions() -> [SystemAction] {
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }
}

/// The core's record of one installed app.
struct AppRecord: Sendable {
    var descriptor: AppDescriptor
    var state: AppState = .notRunning
    /// Launch number of the current (or last) process.
    var launch = 0
    /// A process was requested and has not ended.
    var spawning = false
    /// The current process said hello.
    var connected = false
    var frozen = false
    var tasks: Set<Int> = []
    var nextTaskID = 1
    var backgroundSince: ClockTime?
    var budgetDeadline: ClockTime?
    var budgetTimers: [TimerID] = []
    /// When the latest task begun after the budget's warning is (or was) warned.
    var lateWarning: ClockTime?
    var wakeWindowEnd: ClockTime?
    var activeModes: Set<BackgroundMode> = []
    /// Notifications that arrived while suspended, latest of each kind.
    var queuedNotifications: [SystemNotificationName: JSONValue] = [:]
    /// App timers that came due while suspended.
    var dueTimers: [Int] = []
    var appTimers: [Int: TimerID] = [:]
    var nextTimerID = 1
    var terminatedByUser = false

    init(descriptor: AppDescriptor) { self.descriptor = descriptor }

    var hasProcess: Bool { spawning || state != .notRunning }
    var isRunning: Bool { state == .active || state == .inactive || state == .background }
}
