import OffstageProtocol

/// Whether a launch came up, judged from the log: by a scenario's `launch`
/// and `launch-background` steps that waited (queued behind a hung app),
/// and by the `launchInBackground` command, whose app may end on purpose
/// once its launch is done (`UIApplicationExitsOnSuspend`).
enum LaunchJudgement {
    /// The callbacks a launch delivers, in order; it is done after the last.
    static func callbacks(background: Bool) -> [String] {
        let finishing = [CallbackName.willFinishLaunching.rawValue, CallbackName.didFinishLaunching.rawValue]
        return background ? finishing : finishing + [CallbackName.didBecomeActive.rawValue]
    }

    /// Why the launch of `app` failed, or nil when the app came up, judged
    /// from the log as its step would have been had nothing held the
    /// launch up: it fails when the app died before its launch callbacks
    /// (``callbacks(background:)``) were done, of a crash, an exit, a
    /// watchdog, a failed spawn or a protocol violation, or when the run
    /// ended with the app still in one of them (`stillIn`, the callback
    /// the system waited for at the end).
    /// The launch is the step's own: its `launch` (or `launchInBackground`)
    /// system event, the app's first after `since`, and the spawn that
    /// comes next in the app's events if it spawned one; else (the app was
    /// running) what it did to the app (``resumeFailure(of:launchedAt:in:stillIn:)``).
    /// - Returns: the failure, and the seq of the step's system event
    ///   (nil: none came), after which a later launch step's is sought.
    static func judge(
        _ app: String, background: Bool = false, since: Int, in events: [Event], stillIn: String? = nil
    ) -> (failure: String?, launch: Int?) {
        let own = events.filter { $0.app == app }
        let entryName = background ? "launchInBackground" : "launch"
        let entry = own.firstIndex { $0.seq > since && $0.kind == .system && $0.name == entryName }
        let start: Int?
        if let entry {
            let spawned = own.index(after: entry) < own.endIndex && isSpawn(own[entry + 1])
            // The app was running: the launch brought it to the front (the
            // launch callbacks of its spawn were done long before).
            if !spawned, !background { return (resumeFailure(of: app, launchedAt: entry, in: own, stillIn: stillIn), own[entry].seq) }
            // Its own spawn follows it at once; a later one is another step's (it was judged by one).
            start = spawned ? entry + 1 : own[..<entry].lastIndex(where: isSpawn)
        } else {
            start = own.firstIndex { $0.seq > since && isSpawn($0) } ?? own.lastIndex(where: isSpawn)
        }
        let launch = entry.map { own[$0].seq }
        guard let start else { return (nil, launch) }
        return (failure(of: app, after: start, in: own, callbacks: callbacks(background: background), stillIn: stillIn), launch)
    }

    /// A launch of a running app, judged as the same launch that ran at
    /// once is (by the state it left): it fails when the app died before
    /// its resume callbacks (`applicationWillEnterForeground:` when it was
    /// in the background, `applicationDidBecomeActive:`) were done. One
    /// already active did nothing.
    private static func resumeFailure(of app: String, launchedAt entry: Int, in own: [Event], stillIn: String?) -> String? {
        if own[..<entry].last(where: { $0.kind == .state })?.name == AppState.active.rawValue { return nil }
        let callbacks = [CallbackName.willEnterForeground.rawValue, CallbackName.didBecomeActive.rawValue]
        return failure(of: app, after: entry, in: own, callbacks: callbacks, resuming: true, stillIn: stillIn)
    }

    private static func isSpawn(_ event: Event) -> Bool { event.kind == .system && event.name == "spawn" }

    /// Whether `app` was spawned again after the launch whose system event
    /// has the seq `launch` (past that launch's own spawn): its latest
    /// process is then another launch's.
    static func respawned(_ app: String, after launch: Int, in events: [Event]) -> Bool {
        let later = events.lazy.filter { $0.app == app && $0.seq > launch }
        let ownSpawn = later.first.map(isSpawn) ?? false
        return later.dropFirst(ownSpawn ? 1 : 0).contains(where: isSpawn)
    }

    /// The launch whose events follow `own[start]` (its spawn, or for a
    /// resume its `launch` event; `own`: the app's events), which delivers
    /// `callbacks` in order. A resume (`resuming`) may leave out the first
    /// (an inactive app only becomes active), and delivers what the app
    /// missed while suspended (notifications, due timers) between them.
    static func failure(
        of app: String, after start: Int, in own: [Event], callbacks: [String], resuming: Bool = false, stillIn: String?
    ) -> String? {
        let deaths: Set<String> = ["crashed", "exited", "watchdogTimeout", "launchTimeout", "launchFailed"]
        var delivered = 0
        var missed: String?
        for event in own[(start + 1)...] {
            if isSpawn(event) { return nil }
            if event.kind == .callback {
                if resuming, delivered == 0, callbacks.count > 1, event.name == callbacks[1] { delivered = 1 }
                if resuming, delivered > 0, delivered < callbacks.count, event.name != callbacks[delivered] {
                    // One it missed while suspended: the resume goes on after it.
                    missed = event.name
                    continue
                }
                missed = nil
                // Another callback: the launch was done.
                guard delivered < callbacks.count, event.name == callbacks[delivered] else { return nil }
                delivered += 1
            } else if deaths.contains(event.name) || (event.name == "protocolViolation" && event.detail["killed"] == true) {
                // Died after its launch, with nothing in flight, or in a later callback.
                if delivered == callbacks.count, event.detail["callback"]?.stringValue != callbacks.last { return nil }
                return "\(app) did not launch: \(Engine.describe(event))"
            }
        }
        // No later launch, nor death: still in the last callback delivered?
        if let stillIn, delivered > 0, stillIn == missed ?? callbacks[delivered - 1] {
            return "\(app) did not launch: it was still in \(stillIn) when the run ended (give the run an end past its watchdog)"
        }
        return nil
    }
}
