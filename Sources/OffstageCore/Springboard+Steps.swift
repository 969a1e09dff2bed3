// The work queue: performing steps, expanding inputs into steps, firing timers.

extension Springboard {
    /// Performs queued work until the queue is empty or a callback or launch
    /// must be waited for; returns the actions collected.
    mutating func run() -> [SystemAction] {
        while inFlight == nil, let step = work.popFirst() {
            perform(step)
        }
        return takeActions()
    }

    /// Puts steps at the head of the queue, in order.
    mutating func doNext(_ steps: [Step]) {
        work.prepend(contentsOf: steps)
    }

    mutating func perform(_ step: Step) {
        switch step {
        case .input(let input):
            lastInputRun += 1
            // Checked now: queued behind a hung app, it was not checked against what the inputs before it did.
            do throws(LifecycleError) {
                try validate(input, againstState: true)
            } catch {
                emit(
                    .error, input.app, "refused",
                    ["input": .string(input.description), "reason": .string(error.message), "ticket": JSONValue(lastInputRun)])
                return
            }
            doNext(expand(input))

        case .log(let entry):
            actions.append(.log(entry))

        case .spawn(let app, let background):
            guard var record = apps[app] else { return }
            record.launch += 1
            record.spawning = true
            record.connected = false
            record.frozen = false
            apps[app] = record
            emit(.system, app, "spawn", ["launch": JSONValue(record.launch), "background": .bool(background)])
            actions.append(.spawn(app: app, launch: record.launch))
            let watchdog = timers.schedule(.watchdog(app: app), at: now + policy.launchLimit)
            inFlight = .launching(app: app, launch: record.launch, watchdog: watchdog)

        case .callback(let app, let name, let stateOverride, let detail):
            guard let record = apps[app], record.hasProcess else { return }
            if record.frozen { perform(.thaw(app: app)) }
            let id = nextCallbackID
            nextCallbackID += 1
            emit(.callback, app, name, detail)
            let message = CallbackMessage(
                id: id, name: name, state: stateOverride ?? record.state, time: now.seconds, detail: detail)
            actions.append(.deliver(app: app, message))
            let watchdog = timers.schedule(.watchdog(app: app), at: now + policy.limit(for: name))
            inFlight = .callback(app: app, id: id, name: name, watchdog: watchdog)

        case .setState(let app, let state):
            setState(app, state)

        case .freeze(let app):
            guard var record = apps[app], record.hasProcess, !record.frozen else { return }
            record.frozen = true
            apps[app] = record
            actions.append(.freeze(app: app))

        case .thaw(let app):
            guard var record = apps[app], record.frozen else { return }
            record.frozen = false
            apps[app] = record
            actions.append(.thaw(app: app))

        case .resume(let app):
            guard let record = apps[app], record.hasProcess else { return }
            if record.frozen { perform(.thaw(app: app)) }
            if record.state == .suspended { setState(app, .background) }

        case .evaluateSuspension(let app):
            guard let record = apps[app], record.state == .background, record.tasks.isEmpty,
                record.activeModes.isEmpty
            else { return }
            if let end = record.wakeWindowEnd, end > now { return }
            // An app that opts out of background execution ends where it
            // would be suspended (after a background launch or a wake too).
            if record.descriptor.exitsOnSuspend {
                doNext([
                    .callback(app: app, name: CallbackName.willTerminate.rawValue, state: nil, detail: .emptyObject),
                    .kill(app: app, reason: "UIApplicationExitsOnSuspend"),
                ])
                return
            }
            setState(app, .suspended)
            perform(.freeze(app: app))

        case .openWakeWindow(let app):
            // A zero window is none: suspension waits only for the callbacks.
            guard var record = apps[app], policy.wakeWindow > .zero else { return }
            let end = now + policy.wakeWindow
            record.wakeWindowEnd = end
            apps[app] = record
            timers.schedule(.wakeWindowEnd(app: app, launch: record.launch), at: end)

        case .kill(let app, let reason):
            guard let record = apps[app], record.hasProcess else { return }
            actions.append(.kill(app: app, launch: record.launch))
            terminate(app, reason: reason)

        case .background(let app):
            doNext(backgroundSteps(app))

        case .terminateFromSwitcher(let app):
            doNext(switcherKillSteps(app))

        case .timerDue(let app, let timer):
            guard var record = apps[app], record.hasProcess else { return }
            if record.state == .suspended {
                record.dueTimers.append(timer)
                apps[app] = record
            } else {
                doNext([
                    .callback(app: app, name: CallbackName.timer.rawValue, state: nil, detail: ["timer": JSONValue(timer)]),
                    .evaluateSuspension(app: app),
                ])
            }

        case .expireTasks(let app):
            guard let record = apps[app], record.hasProcess, record.state == .background else { return }
            doNext(record.tasks.sorted().map { .expireTask(app: app, task: $0) })

        case .expireTask(let app, let task):
            // Checked when it runs: an earlier handler may have ended this task.
            guard let record = apps[app], record.hasProcess, record.tasks.contains(task) else { return }
            perform(
                .callback(
                    app: app, name: CallbackName.backgroundTaskExpiration.rawValue, state: nil,
                    detail: ["task": JSONValue(task)]))

        case .deliverQueued(let app):
            guard var record = apps[app], record.hasProcess else { return }
            var steps: [Step] = record.queuedNotifications.keys.sorted().map { name in
                .callback(app: app, name: name.rawValue, state: nil, detail: record.queuedNotifications[name]!)
            }
            steps += record.dueTimers.map {
                .callback(app: app, name: CallbackName.timer.rawValue, state: nil, detail: ["timer": JSONValue($0)])
            }
            record.queuedNotifications = [:]
            record.dueTimers = []
            apps[app] = record
            doNext(steps)
        }
    }

    mutating func setState(_ app: String, _ state: AppState, reason: String? = nil) {
        guard var record = apps[app] else { return }
        let old = record.state
        record.state = state
        switch state {
        case .background:
            record.backgroundSince = now
        case .active, .inactive:
            record.backgroundSince = nil
            record.wakeWindowEnd = nil
        case .suspended, .notRunning:
            break
        }
        apps[app] = record
        if state != .background { disarmBudget(app) }
        if state == .background, !record.tasks.isEmpty { armBudget(app) }
        var detail: [String: JSONValue] = ["from": .string(old.rawValue)]
        if let reason { detail["reason"] = .string(reason) }
        emit(.state, app, state.rawValue, .object(detail))
    }

    /// The process is gone, or is being killed: forget it and its pending work.
    mutating func terminate(_ app: String, reason: String? = nil) {
        guard var record = apps[app] else { return }
        for timer in record.appTimers.values { timers.cancel(timer) }
        record.appTimers = [:]
        record.spawning = false
        record.connected = false
        record.frozen = false
        record.tasks = []
        record.queuedNotifications = [:]
        record.dueTimers = []
        record.wakeWindowEnd = nil
        record.activeModes = []
        apps[app] = record
        disarmBudget(app)
        if record.state != .notRunning { setState(app, .notRunning, reason: reason) }
        if foregroundApp == app { foregroundApp = nil }
        work.removeAll { $0.app == app }
        if let waiting = inFlight, waiting.app == app { clearInFlight() }
    }

    mutating func clearInFlight() {
        switch inFlight {
        case .callback(_, _, _, let watchdog)?, .launching(_, _, let watchdog)?: timers.cancel(watchdog)
        case nil: break
        }
        inFlight = nil
    }

    mutating func fire(_ event: TimerEvent) {
        switch event {
        case .watchdog(let app):
            guard let waiting = inFlight, waiting.app == app else { return }
            guard let record = apps[app] else {
                clearInFlight()  // the app was removed meanwhile
                return
            }
            switch waiting {
            case .callback(_, _, let name, _):
                emit(
                    .error, app, "watchdogTimeout",
                    [
                        "callback": .string(name), "limit": JSONValue(policy.limit(for: name).seconds),
                        "code": "0x8badf00d",
                    ])
            case .launching:
                emit(.error, app, "launchTimeout", ["limit": JSONValue(policy.launchLimit.seconds), "code": "0x8badf00d"])
            }
            actions.append(.kill(app: app, launch: record.launch))
            terminate(app, reason: "watchdog")

        case .expirationWarning(let app, let launch):
            guard let record = apps[app], record.launch == launch, !record.tasks.isEmpty else { return }
            work.append(.expireTasks(app: app))

        case .lateTaskWarning(let app, let launch, let task):
            guard apps[app]?.launch == launch else { return }
            work.append(.expireTask(app: app, task: task))

        case .budgetEnd(let app, let launch):
            guard let record = apps[app], record.launch == launch, !record.tasks.isEmpty else { return }
            emit(
                .error, app, "backgroundTimeExpired",
                [
                    "tasks": .array(record.tasks.sorted().map { JSONValue($0) }),
                    "budget": JSONValue(policy.backgroundTaskBudget.seconds), "code": "0x8badf00d",
                ])
            actions.append(.kill(app: app, launch: record.launch))
            terminate(app, reason: "backgroundTimeExpired")

        case .wakeWindowEnd(let app, let launch):
            guard var record = apps[app], record.launch == launch, let end = record.wakeWindowEnd, end <= now else {
                return
            }
            record.wakeWindowEnd = nil
            apps[app] = record
            work.append(.evaluateSuspension(app: app))

        case .appTimer(let app, let launch, let timer):
            guard var record = apps[app], record.launch == launch, record.appTimers[timer] != nil else { return }
            record.appTimers[timer] = nil
            apps[app] = record
            work.append(.timerDue(app: app, timer: timer))
        }
    }
}
