import Foundation
import NIOCore
import OffstageCore

/// What the daemon runs with.
public struct DaemonConfiguration: Sendable {
    public var dataDirectory: String
    public var controlSocket: String
    public var appSocket: String
    public var clock: ClockMode
    public var policy: LifecyclePolicy
    /// Virtual time: how long (real time) to wait for a hung app's
    /// acknowledgement before letting virtual time run on to its watchdog.
    public var hangGrace: TimeAmount
    /// Where `CFBundleExecutable` is looked up after the app directory.
    public var executableSearchPaths: [String]
    /// Keep the event log in memory only (no `events.jsonl`, no store on disk).
    public var ephemeral: Bool
    /// The cgroup (a directory of the cgroup2 file system) the daemon makes
    /// its apps' cgroups in, and sweeps dead daemons' from; nil: its own.
    public var cgroupParent: String?

    public init(
        dataDirectory: String, controlSocket: String, appSocket: String, clock: ClockMode = .real,
        policy: LifecyclePolicy = .default, hangGrace: TimeAmount = .seconds(2), executableSearchPaths: [String] = [],
        ephemeral: Bool = false
    ) {
        self.dataDirectory = dataDirectory
        self.controlSocket = controlSocket
        self.appSocket = appSocket
        self.clock = clock
        self.policy = policy
        self.hangGrace = hangGrace
        self.executableSearchPaths = executableSearchPaths
        self.ephemeral = ephemeral
    }
}

/// The daemon's heart: the lifecycle core driven by real processes, sockets
/// and a clock. Every method runs on one event loop, so the core sees one
/// input at a time; other threads reach it through ``EngineHandle``.
public final class Engine {
    let eventLoop: EventLoop
    let configuration: DaemonConfiguration
    var board: Springboard
    var clock: DaemonClock
    let host: AppProcessHost
    let store: AppStore
    public let log: EventLog
    var bundles: [String: AppBundle] = [:]
    var settings: [String: JSONValue] = [:]
    var processes: [String: AppProcess] = [:]
    /// The size of each app's log when its last process was spawned: what
    /// it wrote since is that launch's (the log is appended to).
    var logStarts: [String: Int] = [:]
    /// The input the control command being run submitted to the core: its
    /// ticket, to tell whether it ran, is queued or was refused.
    var submittedInput: (ticket: Int, input: Springboard.Input)?
    /// A store write failed and none has succeeded since (see ``storeWrite(_:)``).
    var storeFailing = false
    var tokens: [String: (bundleID: String, launch: Int)] = [:]
    var idleWaiters: [EventLoopPromise<Void>] = []
    /// Promises of ``whenProcessGone(_:)``, by app.
    var goneWaiters: [String: [EventLoopPromise<Void>]] = [:]
    /// Set while shutting down: completes when the last app process is reaped.
    var reaped: EventLoopPromise<Void>?
    var realTimer: Scheduled<Void>?
    var realTimerDeadline: ClockTime?
    /// Virtual time: a deadline already reached (a timer for 0 s) is to be
    /// fired on the loop's next turn.
    var dueDeadlineQueued = false
    /// Virtual time: the wait (its watchdog) whose hang grace has run out.
    var givenUpWait: TimerID?
    /// Virtual time: the current wait (its watchdog) and when it began, in
    /// real time: its hang grace counts from then.
    var waitStart: (watchdog: TimerID, since: NIODeadline)?
    /// Commands settling in virtual time, each with the timer that ends its
    /// current wait's grace: re-armed when a new wait begins (``perform(_:)``).
    /// Keyed by the promise's future, which is the watch's for its life.
    var hangWatches: [ObjectIdentifier: (promise: EventLoopPromise<Void>, timer: Scheduled<Void>, arming: Int)] = [:]
    /// Numbers each arming of a watch's timer: a timer NIO had already
    /// taken to run when it was cancelled acts only if still its watch's.
    var nextHangArming = 0
    /// Completes when the last control command has replied.
    lazy var controlChain: EventLoopFuture<Void> = eventLoop.makeSucceededVoidFuture()
    /// Handed to process-exit threads so they can come back to the loop.
    var handle: EngineHandle!

    struct AppProcess {
        var pid: Int32
        var launch: Int
        var token: String
        var channel: Channel?
        /// When the process started (`/proc/PID/stat`), which tells it from
        /// a later process given its pid; nil when it could not be read.
        var startTicks: UInt64?
        /// Reaped, its connection still being read (``processExited(_:launch:status:)``):
        /// its pid may be another process's by now, and is never signalled.
        var exitStatus: ExitStatus?
        /// The pid while it is still this app's: nil once reaped.
        var livePID: Int32? { exitStatus == nil ? pid : nil }
    }

    init(eventLoop: EventLoop, configuration: DaemonConfiguration) throws {
        self.eventLoop = eventLoop
        self.configuration = configuration
        board = Springboard(policy: configuration.policy)
        clock = DaemonClock(mode: configuration.clock)
        host = AppProcessHost(dataDirectory: configuration.dataDirectory, cgroups: AppCgroups.make(in: configuration.cgroupParent))
        try makeDirectory(configuration.dataDirectory, for: "data directory")
        store = try AppStore(path: configuration.ephemeral ? ":memory:" : configuration.dataDirectory + "/offstage.sqlite")
        log = try EventLog(
            path: configuration.ephemeral ? nil : configuration.dataDirectory + "/events.jsonl", continuing: try store.lastSeq())
        for app in try store.apps() {
            bundles[app.bundle.descriptor.bundleID] = app.bundle
            settings[app.bundle.descriptor.bundleID] = app.settings
            board.install(app.bundle.descriptor)
        }
        // The last daemon on this data logged no daemonStopped (killed, crashed, the power lost):
        // said here, as nothing else would tell its end from this start in the log.
        if let last = log.events.last, !(last.kind == .system && last.name == "daemonStopped") {
            record(LogEntry(
                kind: .error, app: nil, name: "daemonDied",
                detail: ["lastSeq": JSONValue(last.seq), "reason": "the daemon before this one ended without stopping"]))
        }
        record(LogEntry(
            kind: .system, app: nil, name: "daemonStarted",
            detail: [
                "clock": .string(configuration.clock.rawValue), "profile": .string(configuration.policy.profileName),
                "apps": JSONValue(bundles.count),
            ]))
        reapOrphans()
        storeWrite { try store.recordLastSeq(log.lastSeq) }
        log.flush()
    }

    /// A store write the daemon goes on without (a process record, the
    /// seq reached): the first failure is an `error` event
    /// `storeWriteFailed`, which the command that caused it prints as a
    /// warning (a process not recorded would not be reaped, nor logged
    /// `notRunning`, after a crash of the daemon).
    func storeWrite(_ body: () throws -> Void) {
        do {
            try body()
            storeFailing = false
        } catch {
            guard !storeFailing else { return }
            storeFailing = true
            let reason = (error as? DaemonError)?.message ?? "\(error)"
            record(LogEntry(kind: .error, app: nil, name: "storeWriteFailed", detail: ["reason": .string(reason)]))
        }
    }

    /// The current time on the daemon's clock.
    var now: ClockTime { clock.now }

    /// Processes recorded by a daemon that died are killed, so no frozen
    /// orphan outlives it; every app that was running under it is logged
    /// as `notRunning`, so the timeline does not leave it running.
    ///
    /// The recorded app is killed (with the group it leads) when its pid
    /// is still it: the start time matches, in the same boot. When the app
    /// is gone (killed by `--pdeathsig` with the daemon) and the processes
    /// it started are not, they are left in the group it led, under no
    /// leader: that group is killed when one of its live processes has the
    /// launch's `OFFSTAGE_TOKEN` in its environment (they inherit it). A
    /// group exists as long as it has a process, and no new one can take
    /// its id meanwhile, so one such process shows the group is the app's
    /// own; the pid alone, or start times, cannot tell it from a group
    /// formed after the pid was reused. A record from another boot names
    /// nothing alive; one from an older daemon (no boot, no token) has only
    /// its pid killed, as before.
    func reapOrphans() {
        guard let recorded = try? store.recordedProcesses() else { return }
        let bootID = AppProcessHost.bootID
        // Read once for every record that may have left a group.
        let groups = AppProcessHost.processGroups(
            Set(recorded.filter { $0.token != nil && $0.bootID != nil && $0.bootID == bootID }.map(\.pid)))
        // What the start's sweep of dead daemons' cgroups killed, by app pid.
        let swept = host.cgroups?.swept ?? [:]
        for process in recorded {
            let bundleID = process.bundleID
            // Nothing of another boot is alive.
            if process.bootID == nil || process.bootID == bootID { killLeftovers(of: process, groups: groups, swept: swept) }
            // `from` as every other state event has it: the dead daemon's last
            // state of the app, as its log (read back) says, when it does.
            var detail: [String: JSONValue] = ["reason": "daemonDied"]
            if let last = log.events.last(where: { $0.app == bundleID && $0.kind == .state }),
                last.name != AppState.notRunning.rawValue
            {
                detail["from"] = .string(last.name)
            }
            record(LogEntry(kind: .state, app: bundleID, name: AppState.notRunning.rawValue, detail: .object(detail)))
            storeWrite { try store.forgetProcess(bundleID) }
        }
    }

    /// Kills what is left of a recorded app process of this boot (or of
    /// an older daemon's record, which names no boot), and logs it
    /// (`orphanKilled`). `groups` holds the live processes of the groups
    /// the records name; `swept`, what the start's sweep of dead daemons'
    /// cgroups killed, by app pid.
    private func killLeftovers(of process: RecordedProcess, groups: [Int32: [Int32]], swept: [Int32: [Int32]]) {
        let pid = process.pid
        let started = AppProcessHost.startTicks(of: pid)
        // Its pid is still the app's: alive, or a zombie nobody reaped (not killed again).
        if started == process.startTicks, let state = AppProcessHost.state(of: pid), !AppProcessHost.isDead(state) {
            host.terminate(pid)
            recordOrphanKilled(process, processes: nil)
            return
        }
        // Leaderless: the app is gone or a zombie. (A pid that is another
        // process's now means the app's group had emptied first.)
        if started == nil || started == process.startTicks, let token = process.token, let left = groups[pid],
            left.contains(where: { AppProcessHost.environment(of: $0, contains: AppEnvironment.token + "=" + token) }),
            host.terminateGroup(pid)
        {
            recordOrphanKilled(process, processes: left)
            return
        }
        // What it started outside its group, killed with its cgroup (the pid names it, in this boot).
        if process.bootID == AppProcessHost.bootID, let killed = swept[pid], !killed.isEmpty {
            recordOrphanKilled(process, processes: killed)
        }
    }

    private func recordOrphanKilled(_ process: RecordedProcess, processes: [Int32]?) {
        var detail: [String: JSONValue] = ["pid": JSONValue(Int(process.pid))]
        if let processes { detail["processes"] = .array(processes.map { JSONValue(Int($0)) }) }
        record(LogEntry(kind: .system, app: process.bundleID, name: "orphanKilled", detail: .object(detail)))
    }

    @discardableResult
    func record(_ entry: LogEntry) -> Event {
        log.append(entry, time: now.seconds)
    }

    // MARK: Performing the core's actions

    /// What reaches the apps: signals and callback writes, made in order at
    /// the end of ``perform(_:)``.
    enum Effect {
        case freeze(pid: Int32)
        case thaw(pid: Int32)
        case terminate(pid: Int32)
        case write(Channel, ByteBuffer)
    }

    /// Performs actions in order; actions that produce more (a failed spawn)
    /// are performed in turn. Then sends the signals and writes the callbacks
    /// the actions asked for, in their order, except that a frozen app's
    /// `SIGCONT` follows the callbacks written to it (see ``sendEffects(_:)``);
    /// then flushes the log, re-arms the timer and last wakes idle waiters.
    ///
    /// Sending first lets the app run while the engine does its bookkeeping
    /// (the log's write is a system call), instead of after it. Waking the
    /// waiters last means a control command replies only once the signals
    /// and callbacks it caused are sent. A crash still loses at most the
    /// events of the input being handled.
    func perform(_ initial: [SystemAction]) {
        var pending = initial[...]
        var more: [SystemAction] = []
        var effects: [Effect] = []
        while true {
            while let action = pending.popFirst() {
                more += execute(action, effects: &effects)
            }
            if more.isEmpty { break }
            pending = more[...]
            more = []
        }
        sendEffects(effects)
        log.flush()
        if clock.mode == .real {
            armRealTimer()
        } else {
            if let wait = board.currentWait, wait.watchdog != waitStart?.watchdog {
                waitStart = (wait.watchdog, .now())
                // A settling command watched the wait before (a hello's,
                // whose grace is the launch limit): this one has its own.
                for id in hangWatches.keys {
                    // One settled by an earlier re-arm's promise (its chain ran here) is gone.
                    guard let watch = hangWatches[id] else { continue }
                    armHangWatch(id, settling: watch.promise)
                }
            }
            fireReachedDeadlines()
        }
        if board.isIdle, !idleWaiters.isEmpty {
            let waiters = idleWaiters
            idleWaiters = []
            for waiter in waiters { waiter.succeed() }
        }
    }

    /// Sends the signals and writes the callbacks in `effects`, in order,
    /// but holds each `SIGCONT` back until the process is next frozen or
    /// killed, or to the end: after the callbacks written to it.
    ///
    /// A stopped app cannot tell whether its callback was written just
    /// before or just after it was continued; written before, it is already
    /// there when the app resumes, so the app runs once, straight through to
    /// the ack, instead of resuming into an empty socket, sleeping, and being
    /// woken again by the write.
    private func sendEffects(_ effects: [Effect]) {
        var thawing: [Int32] = []
        func sendThaw(_ pid: Int32) {
            guard let index = thawing.firstIndex(of: pid) else { return }
            thawing.remove(at: index)
            host.thaw(pid)
        }
        for effect in effects {
            switch effect {
            case .thaw(let pid):
                if !thawing.contains(pid) { thawing.append(pid) }
            case .write(let channel, let line):
                channel.writeAndFlush(line, promise: nil)
            case .freeze(let pid):
                sendThaw(pid)
                host.freeze(pid)
            case .terminate(let pid):
                sendThaw(pid)
                host.terminate(pid)
            }
        }
        for pid in thawing { host.thaw(pid) }
    }

    private func execute(_ action: SystemAction, effects: inout [Effect]) -> [SystemAction] {
        switch action {
        case .log(let entry):
            record(entry)
        case .deliver(let app, let message):
            guard let channel = processes[app]?.channel else {
                record(LogEntry(kind: .error, app: app, name: "deliveryFailed", detail: ["callback": .string(message.name)]))
                return []
            }
            effects.append(.write(channel, channel.allocator.buffer(bytes: message.encodedLine())))
        case .spawn(let app, let launch):
            return spawn(app, launch: launch)
        case .freeze(let app):
            if let pid = processes[app]?.livePID { effects.append(.freeze(pid: pid)) }
        case .thaw(let app):
            if let pid = processes[app]?.livePID { effects.append(.thaw(pid: pid)) }
        case .kill(let app, let launch):
            if let process = processes[app], process.launch == launch, let pid = process.livePID {
                effects.append(.terminate(pid: pid))
            }
        }
        return []
    }

    private func spawn(_ app: String, launch: Int) -> [SystemAction] {
        guard let bundle = bundles[app] else {
            return board.spawnFailed(app, launch: launch, reason: "not installed", at: now)
        }
        let token = Self.makeToken()
        let handle = self.handle!
        logStarts[app] = host.logSize(for: app)
        do {
            let pid = try host.spawn(
                executable: bundle.executable, bundleID: app,
                environment: [AppEnvironment.socket: configuration.appSocket, AppEnvironment.token: token],
                // On the daemon's one event-loop thread, which ends only with the daemon.
                diesWithThisThread: true,
                onExit: { status in handle.processExited(app, launch: launch, status: status) })
            let ticks = AppProcessHost.startTicks(of: pid)
            processes[app] = AppProcess(pid: pid, launch: launch, token: token, channel: nil, startTicks: ticks)
            tokens[token] = (app, launch)
            // The seq too: a daemon that crashes then leaves a record near its last.
            if let ticks {
                let recorded = RecordedProcess(
                    bundleID: app, pid: pid, startTicks: ticks, bootID: AppProcessHost.bootID, token: token)
                storeWrite { try store.recordProcess(recorded, lastSeq: log.lastSeq) }
            }
            return []
        } catch {
            return board.spawnFailed(app, launch: launch, reason: "\(error)", at: now)
        }
    }

    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        // Each part zero-padded: 64 hex digits, whatever the random values.
        return (0..<4).map { _ in
            let part = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - part.count) + part
        }.joined()
    }

    // MARK: Processes

    /// An app's process was reaped. What it wrote before it died (an ack,
    /// then `exit`) is read first: its connection ends once the socket is
    /// read to its end, which is at once, as a dead process holds it no
    /// more. Handled at once, the exit raced that read, and an app that
    /// acked and exited was, run to run, blamed for the callback or not.
    /// A process the app started may still hold the socket: the exit is
    /// then handled after ``exitReadGrace``, and the connection closed.
    /// Meanwhile the pid, reaped, is never signalled (``AppProcess/exitStatus``).
    func processExited(_ app: String, launch: Int, status: ExitStatus) {
        guard let process = processes[app], process.launch == launch, let channel = process.channel, channel.isActive
        else { return handleExit(app, launch: launch, status: status) }
        processes[app]?.exitStatus = status
        // Past the grace the connection is closed, which handles the exit too.
        let grace = eventLoop.scheduleTask(in: Self.exitReadGrace) { channel.close(promise: nil) }
        let bound = handle.engine
        channel.closeFuture.whenComplete { _ in
            grace.cancel()
            let engine = bound.value
            // This launch's token goes even if a relaunch (after a kill the
            // core counts as done) has taken the app's entry.
            engine.tokens[process.token] = nil
            engine.handleExit(app, launch: launch, status: status)
        }
    }

    /// How long an exited app's connection may stay open (held by a
    /// process it started) before its exit is handled anyway.
    static let exitReadGrace: TimeAmount = .milliseconds(100)

    private func handleExit(_ app: String, launch: Int, status: ExitStatus) {
        if let process = processes[app], process.launch == launch {
            processes[app] = nil
            tokens[process.token] = nil
            process.channel?.close(promise: nil)
            storeWrite { try store.forgetProcess(app) }
            for waiter in goneWaiters.removeValue(forKey: app) ?? [] { waiter.succeed() }
        }
        if let reaped {
            if processes.isEmpty { reaped.succeed() }
            return
        }
        perform(board.processExited(app, launch: launch, status: status, at: now))
    }

    // MARK: Waiting

    /// Succeeds once `app` has no process: at once if it has none, or when
    /// its process has been reaped (a kill the daemon made logs nothing).
    func whenProcessGone(_ app: String) -> EventLoopFuture<Void> {
        guard processes[app] != nil else { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        goneWaiters[app, default: []].append(promise)
        return promise.futureResult
    }

    /// Succeeds when the core has no queued work and waits for no app.
    func whenIdle() -> EventLoopFuture<Void> {
        if board.isIdle { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        idleWaiters.append(promise)
        return promise.futureResult
    }

    /// Idle, or — in virtual time — the hang grace has passed (a hung app's
    /// watchdog then fires as virtual time moves on). An app starting up is
    /// not hung: while the system waits for a spawned app's hello, the wait
    /// is capped by the launch limit in real time instead.
    ///
    /// The grace is given once per wait, counted from when the wait began:
    /// when it has run out, the wait is logged (`hangGraceExpired`) and
    /// counts as settled from then on, so the clock's later steps before the
    /// watchdog do not each wait again. A wait that ends first hands over to
    /// the next one, which has its own grace from its own start (a hang in
    /// `applicationDidEnterBackground:` costs one grace, not one more for
    /// the `applicationWillResignActive:` answered before it).
    func whenSettled() -> EventLoopFuture<Void> {
        let idle = whenIdle()
        guard clock.mode == .virtual, !board.isIdle else { return idle }
        let promise = eventLoop.makePromise(of: Void.self)
        // A failed wait (the daemon stopping) fails the settling too.
        idle.cascade(to: promise)
        watchForHang(settling: promise)
        return promise.futureResult
    }

    /// Virtual time: settles `promise` once the current wait has had its
    /// grace, or hands over to the wait after it.
    private func watchForHang(settling promise: EventLoopPromise<Void>) {
        let id = ObjectIdentifier(promise.futureResult)
        armHangWatch(id, settling: promise)
        let bound = handle.engine
        promise.futureResult.whenComplete { _ in bound.value.hangWatches.removeValue(forKey: id)?.timer.cancel() }
    }

    /// Arms watch `id`'s timer for the current wait's grace (replacing any
    /// timer it had), or settles `promise` at once when that wait was given up on.
    private func armHangWatch(_ id: ObjectIdentifier, settling promise: EventLoopPromise<Void>) {
        hangWatches.removeValue(forKey: id)?.timer.cancel()
        let wait = board.currentWait
        if let wait, wait.watchdog == givenUpWait { return promise.succeed() }
        let arming = nextHangArming
        nextHangArming += 1
        let grace =
            board.isWaitingForLaunch
            ? TimeAmount.nanoseconds(board.policy.launchLimit.nanoseconds) : configuration.hangGrace
        let start = wait.flatMap { wait in waitStart.flatMap { $0.watchdog == wait.watchdog ? $0.since : nil } } ?? .now()
        let bound = handle.engine
        let timer = eventLoop.scheduleTask(deadline: start + grace) {
            let engine = bound.value
            guard engine.hangWatches[id]?.arming == arming else { return }
            guard let wait, let current = engine.board.currentWait else { return promise.succeed() }
            guard current.watchdog == wait.watchdog else { return engine.armHangWatch(id, settling: promise) }
            engine.giveUp(on: wait, after: grace)
            promise.succeed()
        }
        hangWatches[id] = (promise, timer, arming)
    }

    /// Virtual time: the wait's grace ran out; once per wait, logged.
    private func giveUp(on wait: (app: String, callback: String?, watchdog: TimerID), after grace: TimeAmount) {
        guard givenUpWait != wait.watchdog else { return }
        givenUpWait = wait.watchdog
        var detail: [String: JSONValue] = ["grace": JSONValue(Double(grace.nanoseconds) / 1e9)]
        if let callback = wait.callback { detail["callback"] = .string(callback) }
        record(LogEntry(kind: .system, app: wait.app, name: "hangGraceExpired", detail: .object(detail)))
        log.flush()
    }

    // MARK: Time

    /// Keeps one NIO timer armed no later than the core's next deadline.
    ///
    /// Every callback arms a watchdog and its ack cancels it, so the next
    /// deadline moves on each callback. The timer is re-armed only when the
    /// deadline moves earlier; one armed for a deadline since cancelled fires
    /// early, finds nothing due, and arms the next.
    private func armRealTimer() {
        let next = board.nextDeadline()
        if realTimer != nil, let armed = realTimerDeadline, let next, armed <= next { return }
        if realTimer != nil, next == nil { return }
        realTimer?.cancel()
        realTimer = nil
        realTimerDeadline = next
        guard let next else { return }
        let handle = self.handle!
        realTimer = eventLoop.scheduleTask(deadline: clock.deadline(of: next)) {
            handle.timerFired()
        }
    }

    /// Virtual time: a deadline the clock has already reached (an app's
    /// timer for 0 s) fires now, as on the real clock, not at the next
    /// `clock advance`. On the loop's next turn, after the actions at hand.
    private func fireReachedDeadlines() {
        guard !dueDeadlineQueued, let handle, let next = board.nextDeadline(), next <= now else { return }
        dueDeadlineQueued = true
        let bound = handle.engine
        eventLoop.execute {
            let engine = bound.value
            engine.dueDeadlineQueued = false
            engine.perform(engine.board.advance(to: engine.now))
        }
    }

    func realTimerFired() {
        realTimer = nil
        realTimerDeadline = nil
        perform(board.advance(to: now))
    }

    /// Virtual time: moves the clock forward by `duration`, stopping at each
    /// deadline on the way and waiting for the apps to settle before going on.
    func advance(by duration: Duration) -> EventLoopFuture<Void> {
        precondition(clock.mode == .virtual)
        let target = now + duration
        return advance(to: target)
    }

    func advance(to target: ClockTime) -> EventLoopFuture<Void> {
        let bound = handle.engine
        return whenSettled().flatMap {
            let engine = bound.value
            if let next = engine.board.nextDeadline(), next <= target {
                engine.clock.set(next)
                engine.perform(engine.board.advance(to: next))
                return engine.advance(to: target)
            }
            engine.clock.set(target)
            engine.perform(engine.board.advance(to: target))
            return engine.whenSettled()
        }
    }

    // MARK: Shutdown

    /// Kills every app process (the device powers off) and logs it; the
    /// future completes once every process has been reaped (or after 5 s).
    func shutdown() -> EventLoopFuture<Void> {
        // Reaped, their connections still being read: their exits are
        // handled now (a crash logged as such, not as the daemon's stop).
        for (app, process) in processes.sorted(by: { $0.key < $1.key }) {
            if let status = process.exitStatus { handleExit(app, launch: process.launch, status: status) }
        }
        for (app, process) in processes.sorted(by: { $0.key < $1.key }) {
            host.terminate(process.pid)
            storeWrite { try store.forgetProcess(app) }
            // Killed already (for a protocol violation) and not yet reaped:
            // its notRunning was logged with the kill.
            if !board.hasProcess(app) { continue }
            let from = board.state(of: app) ?? .notRunning
            record(LogEntry(
                kind: .state, app: app, name: AppState.notRunning.rawValue,
                detail: ["from": .string(from.rawValue), "reason": "daemonStopped"]))
        }
        record(LogEntry(kind: .system, app: nil, name: "daemonStopped"))
        storeWrite { try store.recordLastSeq(log.lastSeq) }
        log.flush()
        realTimer?.cancel()
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.fail(DaemonError(.invalidState, "the daemon is stopping")) }
        // Set even with no process left: an exit put off for its connection
        // (handled above) is handled again when that connection closes, and
        // must then change nothing (it ran the core on a stopped engine).
        let promise = eventLoop.makePromise(of: Void.self)
        reaped = promise
        if processes.isEmpty {
            promise.succeed()
            return promise.futureResult
        }
        let bound = handle.engine
        eventLoop.scheduleTask(in: .seconds(5)) {
            let engine = bound.value
            let waiters = engine.goneWaiters.values.joined()
            engine.goneWaiters = [:]
            for waiter in waiters { waiter.fail(DaemonError(.invalidState, "an app outlived the daemon's stop")) }
            promise.succeed()
        }
        return promise.futureResult
    }
}

/// A `Sendable` handle on the engine: hops onto its event loop.
public final class EngineHandle: Sendable {
    let engine: NIOLoopBound<Engine>
    public let eventLoop: EventLoop

    init(engine: Engine) {
        self.engine = NIOLoopBound(engine, eventLoop: engine.eventLoop)
        self.eventLoop = engine.eventLoop
    }

    func processExited(_ app: String, launch: Int, status: ExitStatus) {
        eventLoop.execute { self.engine.value.processExited(app, launch: launch, status: status) }
    }

    func timerFired() {
        engine.value.realTimerFired()
    }

    /// Runs `body` on the engine's loop.
    public func submit<T: Sendable>(_ body: @escaping @Sendable (Engine) throws -> T) -> EventLoopFuture<T> {
        eventLoop.submit { try body(self.engine.value) }
    }

    /// Runs `body` on the engine's loop and flattens the future it returns.
    public func flatSubmit<T: Sendable>(_ body: @escaping @Sendable (Engine) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        eventLoop.flatSubmit { body(self.engine.value) }
    }
}
