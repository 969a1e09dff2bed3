// Requests an app makes while it runs: background tasks and timers.

extension Springboard {
    /// `beginBackgroundTask(expirationHandler:)`.
    ///
    /// In the foreground the task has no deadline yet; in the background it
    /// shares the budget that started when the app entered the background (or
    /// was woken). Returns `task: nil` (`UIBackgroundTaskInvalid`) when the
    /// budget is already spent.
    /// - Throws: ``LifecycleError`` when the app has no running process.
    public mutating func beginBackgroundTask(_ app: String, at time: ClockTime) throws -> (
        task: Int?, remaining: Double, actions: [SystemAction]
    ) {
        advanceNow(time)
        guard var record = apps[app], record.isRunning else {
            throw LifecycleError(.notRunning, "\(app) is not running")
        }
        if record.state == .background, budgetDeadline(for: record) <= now {
            emit(.system, app, "beginBackgroundTask", ["task": nil, "remaining": 0])
            return (nil, 0, run())
        }
        let task = record.nextTaskID
        record.nextTaskID += 1
        record.tasks.insert(task)
        apps[app] = record
        if record.state == .background {
            let warningPassed = record.budgetDeadline.map { $0 - policy.expirationLead <= now } ?? false
            armBudget(app)
            if warningPassed { warnLate(app, task: task) }
        }
        let remaining = backgroundTimeRemaining(app)
        emit(.system, app, "beginBackgroundTask", ["task": JSONValue(task), "remaining": milliseconds(remaining)])
        return (task, remaining, run())
    }

    /// `endBackgroundTask(_:)`: with no task left, a background app suspends.
    /// - Throws: ``LifecycleError`` for a task the app does not hold.
    public mutating func endBackgroundTask(_ app: String, task: Int, at time: ClockTime) throws -> [SystemAction] {
        advanceNow(time)
        guard var record = apps[app], record.tasks.contains(task) else {
            throw LifecycleError(.invalidTask, "no open background task \(task) for \(app)")
        }
        record.tasks.remove(task)
        apps[app] = record
        emit(.system, app, "endBackgroundTask", ["task": JSONValue(task), "remaining": milliseconds(backgroundTimeRemaining(app))])
        if record.tasks.isEmpty {
            disarmBudget(app)
            work.append(.evaluateSuspension(app: app))
        }
        return run()
    }

    /// `backgroundTimeRemaining`: infinite in the foreground, the rest of the
    /// budget in the background, zero otherwise; at `time` (the clock's now)
    /// rather than at the last input, which may be long past.
    public func backgroundTimeRemaining(_ app: String, at time: ClockTime? = nil) -> Double {
        guard let record = apps[app] else { return 0 }
        switch record.state {
        case .active, .inactive: return .infinity
        case .background: return max(0, (budgetDeadline(for: record) - max(now, time ?? now)).seconds)
        case .suspended, .notRunning: return 0
        }
    }

    /// Schedules a timer in the daemon's clock; it fires as a `timerFired`
    /// callback (delivered on resume if the app is suspended by then).
    public mutating func scheduleTimer(_ app: String, after delay: Duration, at time: ClockTime) throws -> Int {
        advanceNow(time)
        guard var record = apps[app], record.hasProcess else {
            throw LifecycleError(.notRunning, "\(app) is not running")
        }
        let id = record.nextTimerID
        record.nextTimerID += 1
        record.appTimers[id] = timers.schedule(
            .appTimer(app: app, launch: record.launch, timer: id), at: now + max(delay, .zero))
        apps[app] = record
        return id
    }

    /// Cancels an app timer; unknown ids are ignored.
    public mutating func cancelTimer(_ app: String, timer: Int) {
        guard let scheduled = apps[app]?.appTimers.removeValue(forKey: timer) else { return }
        timers.cancel(scheduled)
    }

    func budgetDeadline(for record: AppRecord) -> ClockTime {
        record.budgetDeadline ?? (record.backgroundSince ?? now) + policy.backgroundTaskBudget
    }

    /// Starts the budget clock of a background app holding tasks.
    mutating func armBudget(_ app: String) {
        guard var record = apps[app], record.budgetDeadline == nil else { return }
        let deadline = budgetDeadline(for: record)
        record.budgetDeadline = deadline
        let warning = max(deadline - policy.expirationLead, now)
        record.budgetTimers = [
            timers.schedule(.expirationWarning(app: app, launch: record.launch), at: warning),
            timers.schedule(.budgetEnd(app: app, launch: record.launch), at: deadline),
        ]
        apps[app] = record
    }

    mutating func disarmBudget(_ app: String) {
        guard var record = apps[app] else { return }
        for timer in record.budgetTimers { timers.cancel(timer) }
        record.budgetTimers = []
        record.budgetDeadline = nil
        record.lateWarning = nil
        apps[app] = record
    }

    /// The shortest time between two warnings of tasks begun after the
    /// budget's warning.
    static let lateWarningGap: Duration = .seconds(1)

    /// Warns a task begun after the other tasks were warned: at once, or
    /// ``lateWarningGap`` after the last such warning. An app that began a
    /// new task in each expiration handler was warned again at the same
    /// instant, for good: virtual time never moved on to the budget's end
    /// (which kills it, as on iOS), and no other command was taken.
    mutating func warnLate(_ app: String, task: Int) {
        guard var record = apps[app] else { return }
        let at = record.lateWarning.map { max($0 + Self.lateWarningGap, now) } ?? now
        record.lateWarning = at
        if at == now {
            work.append(.expireTask(app: app, task: task))
        } else {
            record.budgetTimers.append(timers.schedule(.lateTaskWarning(app: app, launch: record.launch, task: task), at: at))
        }
        apps[app] = record
    }
}

/// Seconds rounded to the millisecond, for event details.
func milliseconds(_ seconds: Double) -> JSONValue {
    seconds.isFinite ? JSONValue((seconds * 1000).rounded() / 1000) : .null
}
