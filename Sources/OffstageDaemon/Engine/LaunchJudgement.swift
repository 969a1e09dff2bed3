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
    /// running) the spawn under way before it.
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
            // Its own spawn follows it at once; a later one is another step's (it was judged by one).
            start = own.index(after: entry) < own.endIndex && isSpawn(own[entry + 1]) ? entry + 1 : own[..<entry].lastIndex(where: isSpawn)
        } else {
            start = own.firstIndex { $0.seq > since && isSpawn($0) } ?? own.lastIndex(where: isSpawn)
        }
        let launch = entry.map { own[$0].seq }
        guard let start else { return (nil, launch) }
        return (failure(of: app, spawnedAt: start, in: own, callbacks: callbacks(background: background), stillIn: stillIn), launch)
    }

    private static func isSpawn(_ event: Event) -> Bool { event.kind == .system && event.name == "spawn" }

    /// The launch that began with the spawn `own[start]` (`own`: the app's events).
    private static func failure(of app: String, spawnedAt start: Int, in own: [Event], callbacks: [String], stillIn: String?) -> String? {
        let deaths: Set<String> = ["crashed", "exited", "watchdogTimeout", "launchTimeout", "launchFailed"]
        var delivered = 0
        for event in own[(start + 1)...] {
            if isSpawn(event) { return nil }
            if event.kind == .callback {
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
        if let stillIn, delivered > 0, stillIn == callbacks[delivered - 1] {
            return "\(app) did not launch: it was still in \(stillIn) when the run ended (give the run an end past its watchdog)"
        }
        return nil
    }
}
