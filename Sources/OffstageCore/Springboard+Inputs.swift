// User, device and service inputs: validation and expansion into steps.
//
// Expansion runs when the input reaches the head of the work queue, so it sees
// the effects of everything before it. Steps that depend on the outcome of
// earlier steps of the same input (`.background`, `.terminateFromSwitcher`) are
// expanded in their turn.

extension Springboard {
    /// Throws when the input does not apply: to the current state
    /// (`againstState`), or at all (an app not installed, a wake with the
    /// system's own callback).
    mutating func validate(_ input: Input, againstState: Bool) throws(LifecycleError) {
        /// Whether the app has a process; it must be installed.
        func hasProcess(_ id: String) throws(LifecycleError) -> Bool {
            guard let hasProcess = appHasProcess(id) else { throw unknownApp(id) }
            return hasProcess
        }
        if !againstState {
            if let id = input.app { _ = try hasProcess(id) }
            if case .wake(_, let callback, _) = input { try Self.requireServiceCallback(callback) }
            return
        }
        let locked = overlays.contains(.lock)
        switch input {
        case .launch(let id):
            _ = try hasProcess(id)
            if locked { throw LifecycleError(.deviceLocked, "the device is locked; unlock it first") }
            if overlays.contains(.alert) {
                throw LifecycleError(.alertShown, "a system alert is shown; dismiss it or reply first")
            }
        case .home:
            if locked { throw LifecycleError(.deviceLocked, "the device is locked; unlock it first") }
        case .lock:
            if locked { throw LifecycleError(.invalidState, "the device is already locked") }
        case .unlock:
            if !locked { throw LifecycleError(.invalidState, "the device is not locked") }
        case .switcherShow:
            if locked { throw LifecycleError(.deviceLocked, "the device is locked; unlock it first") }
            if overlays.contains(.switcher) { throw LifecycleError(.invalidState, "the app switcher is already shown") }
        case .switcherHide:
            if !overlays.contains(.switcher) { throw LifecycleError(.switcherHidden, "the app switcher is not shown") }
        case .switcherKill(let id):
            let running = try hasProcess(id)
            if locked { throw LifecycleError(.deviceLocked, "the device is locked; unlock it first") }
            if !running { throw LifecycleError(.notRunning, "\(id) is not running") }
        case .alertShow:
            if overlays.contains(.alert) { throw LifecycleError(.invalidState, "a system alert is already shown") }
        case .alertDismiss, .alertReply:
            if !overlays.contains(.alert) { throw LifecycleError(.noAlert, "no system alert is shown") }
            // Replying opens Messages, which takes unlocking first.
            if case .alertReply = input, locked { throw LifecycleError(.deviceLocked, "the device is locked; unlock it first, or dismiss the alert") }
        case .memoryWarning, .memoryPressure, .deviceChange:
            break
        case .wake(let id, let callback, _):
            try Self.requireServiceCallback(callback)
            if !(try hasProcess(id)) { throw LifecycleError(.notRunning, "\(id) is not running") }
        case .launchInBackground(let id, _):
            if try hasProcess(id) { throw LifecycleError(.invalidState, "\(id) is already running") }
        }
    }

    /// A wake delivers a service's callback: the lifecycle's own, delivered
    /// by a wake, gave an active app `applicationWillTerminate:` and left
    /// it active.
    public static func requireServiceCallback(_ callback: String) throws(LifecycleError) {
        if CallbackName(rawValue: callback) != nil || SystemNotificationName(rawValue: callback) != nil {
            throw LifecycleError(
                .invalidCallback,
                "\(callback) is the system's own callback; wake delivers a service's, such as "
                    + "application:performFetchWithCompletionHandler:")
        }
    }

    /// The input's steps. Only for an input just checked against the state
    /// (``validate(_:againstState:)``): what that check rules out is a
    /// precondition here.
    mutating func expand(_ input: Input) -> [Step] {
        switch input {
        case .launch(let id):
            var steps: [Step] = [.log(LogEntry(kind: .system, app: id, name: "launch"))] + closeSwitcher(by: "launch")
            otherForegroundApp = nil
            apps[id]?.terminatedByUser = false
            if foregroundApp == id, apps[id]?.hasProcess == true {
                return steps + activationSteps()
            }
            if let current = foregroundApp { steps.append(.background(app: current)) }
            foregroundApp = id
            switch apps[id]?.state ?? .notRunning {
            case .notRunning:
                steps += launchSteps(id, background: false, options: .emptyObject)
            case .background, .suspended:
                steps += foregroundSteps(id)
            case .active, .inactive:
                steps += activationSteps()
            }
            return steps

        case .home:
            var steps: [Step] = [.log(LogEntry(kind: .system, app: nil, name: "home"))] + closeSwitcher(by: "home")
            otherForegroundApp = nil
            if let current = foregroundApp { steps.append(.background(app: current)) }
            return steps

        case .lock:
            let closing = closeSwitcher(by: "lock")
            overlays.insert(.lock)
            return [.log(LogEntry(kind: .system, app: nil, name: "lock"))] + closing + activationSteps()

        case .unlock:
            overlays.remove(.lock)
            return [.log(LogEntry(kind: .system, app: nil, name: "unlock"))] + activationSteps()

        case .switcherShow:
            overlays.insert(.switcher)
            return [.log(LogEntry(kind: .system, app: nil, name: "switcherShow"))] + activationSteps()

        case .switcherHide:
            overlays.remove(.switcher)
            return [.log(LogEntry(kind: .system, app: nil, name: "switcherHide"))] + activationSteps()

        case .switcherKill(let id):
            var steps: [Step] = []
            if !overlays.contains(.switcher) {
                overlays.insert(.switcher)
                steps += [.log(LogEntry(kind: .system, app: nil, name: "switcherShow"))] + activationSteps()
            }
            apps[id]?.terminatedByUser = true
            return steps + [
                .log(LogEntry(kind: .system, app: id, name: "switcherKill")), .terminateFromSwitcher(app: id),
            ]

        case .alertShow:
            overlays.insert(.alert)
            return [.log(LogEntry(kind: .system, app: nil, name: "alertShow"))] + activationSteps()

        case .alertDismiss:
            overlays.remove(.alert)
            return [.log(LogEntry(kind: .system, app: nil, name: "alertDismiss"))] + activationSteps()

        case .alertReply:
            // The reply opens Messages: the app comes back for a moment, then
            // goes to the background (the seeds' State Lab console log).
            overlays.remove(.alert)
            var steps: [Step] = [.log(LogEntry(kind: .system, app: nil, name: "alertReply"))] + activationSteps()
            if let current = foregroundApp { steps.append(.background(app: current)) }
            otherForegroundApp = Self.messagesApp
            return steps

        case .memoryWarning:
            var steps: [Step] = [.log(LogEntry(kind: .system, app: nil, name: "memoryWarning"))]
            for id in installOrder where apps[id]!.isRunning {
                steps.append(
                    .callback(app: id, name: CallbackName.didReceiveMemoryWarning.rawValue, state: nil, detail: .emptyObject))
            }
            return steps

        case .memoryPressure(let bytes, let resident):
            let candidates = installOrder.filter { apps[$0]!.state == .suspended }
                .sorted { (resident[$0] ?? 0, $1) > (resident[$1] ?? 0, $0) }
            var killed: [String] = []
            var freed = 0
            for id in candidates {
                if let bytes, freed >= bytes { break }
                killed.append(id)
                freed += resident[id] ?? 0
            }
            let detail: JSONValue = [
                "killed": .array(killed.map { .string($0) }), "freed": JSONValue(freed),
                "target": bytes.map { JSONValue($0) } ?? "all",
            ]
            return [.log(LogEntry(kind: .system, app: nil, name: "memoryPressure", detail: detail))]
                + killed.map { .kill(app: $0, reason: "memoryPressure") }

        case .deviceChange(let name, let detail):
            if name.isValueChange {
                guard deviceValues[name] != detail else {
                    var unchanged = detail.objectValue ?? [:]
                    unchanged["unchanged"] = true
                    return [.log(LogEntry(kind: .system, app: nil, name: name.rawValue, detail: .object(unchanged)))]
                }
                deviceValues[name] = detail
            }
            var steps: [Step] = [.log(LogEntry(kind: .system, app: nil, name: name.rawValue, detail: detail))]
            for id in installOrder {
                let record = apps[id]!
                if record.state == .suspended {
                    apps[id]!.queuedNotifications[name] = detail
                } else if record.isRunning {
                    steps.append(.callback(app: id, name: name.rawValue, state: nil, detail: detail))
                }
            }
            return steps

        case .wake(let id, let callback, let detail):
            guard let record = apps[id], record.hasProcess else { preconditionFailure("wake \(id): checked just before it expands") }
            var steps: [Step] = [.log(LogEntry(kind: .system, app: id, name: "wake", detail: ["callback": .string(callback)]))]
            if record.state == .suspended {
                steps += [.resume(app: id), .openWakeWindow(app: id), .deliverQueued(app: id)]
            } else if record.state == .background, record.wakeWindowEnd != nil {
                steps.append(.openWakeWindow(app: id))  // each wake gets its own window
            }
            steps.append(.callback(app: id, name: callback, state: nil, detail: detail))
            steps.append(.evaluateSuspension(app: id))
            return steps

        case .launchInBackground(let id, let options):
            precondition(apps[id]?.hasProcess == false, "launch-background \(id): checked just before it expands")
            // Named in the timeline as `launch` and `wake` are.
            return [.log(LogEntry(kind: .system, app: id, name: "launchInBackground"))] + launchSteps(id, background: true, options: options)
        }
    }

    /// Steps that bring the foreground app's activity in line with the
    /// overlays: active when nothing covers it, inactive otherwise.
    mutating func activationSteps() -> [Step] {
        guard let id = foregroundApp, let record = apps[id], record.hasProcess else { return [] }
        if record.state == .active, !overlays.isEmpty {
            return [
                .callback(app: id, name: CallbackName.willResignActive.rawValue, state: nil, detail: .emptyObject),
                .setState(app: id, .inactive),
            ]
        }
        if record.state == .inactive, overlays.isEmpty {
            return becomeActiveSteps(id)
        }
        return []
    }

    func becomeActiveSteps(_ id: String) -> [Step] {
        [
            .setState(app: id, .active),
            .callback(app: id, name: CallbackName.didBecomeActive.rawValue, state: nil, detail: .emptyObject),
        ]
    }

    /// The foreground app leaves: resign if active, then background and
    /// suspend, or terminate if it opts out of background execution.
    mutating func backgroundSteps(_ id: String) -> [Step] {
        if foregroundApp == id { foregroundApp = nil }
        guard let record = apps[id], record.hasProcess else { return [] }
        var steps: [Step] = []
        if record.state == .active {
            steps += [
                .callback(app: id, name: CallbackName.willResignActive.rawValue, state: nil, detail: .emptyObject),
                .setState(app: id, .inactive),
            ]
        }
        if record.descriptor.exitsOnSuspend {
            steps += [
                .callback(app: id, name: CallbackName.willTerminate.rawValue, state: nil, detail: .emptyObject),
                .kill(app: id, reason: "UIApplicationExitsOnSuspend"),
            ]
        } else if record.state == .active || record.state == .inactive {
            steps += [
                .setState(app: id, .background),
                .callback(app: id, name: CallbackName.didEnterBackground.rawValue, state: nil, detail: .emptyObject),
                .evaluateSuspension(app: id),
            ]
        }
        return steps
    }

    /// Killing an app in the shown switcher: a suspended app dies silently; a
    /// running background app gets `applicationWillTerminate:`; the app the
    /// switcher was opened over goes to the background first.
    mutating func switcherKillSteps(_ id: String) -> [Step] {
        guard let record = apps[id], record.hasProcess else { return [] }
        let terminate: Step = .callback(app: id, name: CallbackName.willTerminate.rawValue, state: nil, detail: .emptyObject)
        switch record.state {
        case .suspended, .notRunning:
            return [.kill(app: id, reason: "switcher")]
        case .background:
            return [terminate, .kill(app: id, reason: "switcher")]
        case .active, .inactive:
            if foregroundApp == id { foregroundApp = nil }
            // An app that opts out of background execution never enters it:
            // it ends from where it is, as it does on the home button.
            if record.descriptor.exitsOnSuspend { return [terminate, .kill(app: id, reason: "switcher")] }
            return [
                .setState(app: id, .background),
                .callback(app: id, name: CallbackName.didEnterBackground.rawValue, state: nil, detail: .emptyObject),
                terminate, .kill(app: id, reason: "switcher"),
            ]
        }
    }

    func launchSteps(_ id: String, background: Bool, options: JSONValue) -> [Step] {
        var steps: [Step] = [
            .spawn(app: id, background: background),
            .setState(app: id, background ? .background : .inactive),
        ]
        if background { steps.append(.openWakeWindow(app: id)) }
        steps += [
            .callback(app: id, name: CallbackName.willFinishLaunching.rawValue, state: nil, detail: options),
            .callback(app: id, name: CallbackName.didFinishLaunching.rawValue, state: nil, detail: options),
        ]
        if background {
            steps.append(.evaluateSuspension(app: id))
        } else if overlays.isEmpty {
            steps += becomeActiveSteps(id)
        }
        return steps
    }

    /// A background or suspended app returns to the foreground. UIKit calls
    /// `applicationWillEnterForeground:` in the background state, so a
    /// suspended app is thawed into it first: it runs, may begin background
    /// tasks (with a budget from the thaw, as after a wake), and its
    /// remaining time is not 0.
    func foregroundSteps(_ id: String) -> [Step] {
        var steps: [Step] = []
        steps.reserveCapacity(6)
        steps.append(.resume(app: id))
        steps.append(
            .callback(app: id, name: CallbackName.willEnterForeground.rawValue, state: .background, detail: .emptyObject))
        steps.append(.setState(app: id, .inactive))
        steps.append(.deliverQueued(app: id))
        if overlays.isEmpty { steps.append(contentsOf: becomeActiveSteps(id)) }
        return steps
    }

    /// The app an alert's reply opens.
    static let messagesApp = "Messages"

    /// Hides the app switcher if it is shown, as `by` does on the device,
    /// and logs it (`switcherHide` with `by`), so the timeline shows every
    /// close; the caller then settles who is active.
    mutating func closeSwitcher(by input: String) -> [Step] {
        guard overlays.remove(.switcher) != nil else { return [] }
        return [.log(LogEntry(kind: .system, app: nil, name: "switcherHide", detail: ["by": .string(input)]))]
    }
}

extension SystemNotificationName {
    /// A change to a value the device has (battery level, orientation,
    /// locale): setting the value it already has is no change. A time jump
    /// or preferences changed in Settings is an event each time.
    var isValueChange: Bool {
        switch self {
        case .batteryLevel, .orientation, .locale: true
        case .significantTimeChange, .userDefaults: false
        }
    }
}
