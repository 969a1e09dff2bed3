import Foundation
import NIOCore
import OffstageCore

/// A control command's outcome: a result, or one line saying what is wrong.
public enum ControlReply: Sendable {
    case ok(JSONValue)
    case failure(String)

    public var json: JSONValue {
        switch self {
        case .ok(let result): return ["ok": true, "result": result]
        case .failure(let message): return ["ok": false, "error": .string(message)]
        }
    }

    /// The refusal's message; nil for a result.
    public var failureMessage: String? {
        if case .failure(let message) = self { return message }
        return nil
    }
}

extension Engine {
    /// Runs one control command: waits for earlier work to settle, performs
    /// the command, waits for its callbacks to settle, then replies. Errors
    /// the command caused (a crash, a watchdog kill) come back in `errors`.
    /// On the engine's loop (``EngineHandle/flatSubmit(_:)`` gets there).
    /// - Parameter stillWanted: asked when the command is about to act
    ///   (after the commands before it, on a settled system): false (its
    ///   client has gone, given up waiting or interrupted) drops it, done
    ///   nothing but log `commandDropped` (``droppedReason``).
    public func control(_ request: JSONValue, stillWanted: (@Sendable () -> Bool)? = nil) -> EventLoopFuture<ControlReply> {
        eventLoop.preconditionInEventLoop()
        let readOnly = ["status", "apps", "events"].contains(request["command"]?.stringValue ?? "")
            || (request["command"]?.stringValue == "clock" && request["action"]?.stringValue != "advance")
        if readOnly {
            do { return try execute(request) } catch { return eventLoop.makeSucceededFuture(.failure("\(error)")) }
        }
        // Commands run one after another, each on a settled system.
        let previous = controlChain
        let done = eventLoop.makePromise(of: Void.self)
        controlChain = done.futureResult
        let bound = handle.engine
        let reply = previous.flatMap { bound.value.runControl(request, stillWanted: stillWanted) }
        reply.whenComplete { _ in done.succeed() }
        return reply
    }

    /// Why a command was dropped: its event's `reason`, and its reply's (which no one reads).
    static let droppedReason = "its client left before the command's turn"

    /// Logs a command dropped before it did anything (``control(_:stillWanted:)``), and gives its reply.
    private func dropped(_ request: JSONValue) -> ControlReply {
        record(LogEntry(
            kind: .system, app: request["app"]?.stringValue, name: "commandDropped",
            detail: ["command": .string(request["command"]?.stringValue ?? "?"), "reason": .string(Self.droppedReason)]))
        log.flush()
        return .failure("dropped: " + Self.droppedReason)
    }

    private func runControl(_ request: JSONValue, stillWanted: (@Sendable () -> Bool)?) -> EventLoopFuture<ControlReply> {
        let bound = handle.engine
        return whenSettled().flatMap {
            let engine = bound.value
            // Asked once its turn has come and the system has settled (a hung app's watchdog), just before it acts.
            if stillWanted?() == false { return engine.eventLoop.makeSucceededFuture(engine.dropped(request)) }
            let before = engine.log.lastSeq
            let waitBefore = engine.board.currentWait?.watchdog
            // The CLI prints the state the command left (and who it stopped) from its own reply: a
            // `status` asked for afterwards could come after a later client's command had run.
            let runningBefore = request["withStatus"]?.boolValue == true ? engine.runningApps() : nil
            let outcome: EventLoopFuture<ControlReply>
            engine.submittedInput = nil
            do {
                outcome = try engine.execute(request)
            } catch let error as LifecycleError {
                return engine.eventLoop.makeSucceededFuture(.failure(error.message))
            } catch let error as DaemonError {
                return engine.eventLoop.makeSucceededFuture(.failure(error.message))
            } catch {
                return engine.eventLoop.makeSucceededFuture(.failure("\(error)"))
            }
            let submitted = engine.submittedInput
            return outcome.flatMap { reply in
                bound.value.whenSettled().map {
                    let engine = bound.value
                    let annotated = engine.annotate(reply, request: request, since: before, submitted: submitted, waitBefore: waitBefore)
                    return runningBefore.map { engine.addingStatus(to: annotated, runningBefore: $0) } ?? annotated
                }
            }
        }
    }

    /// Adds the errors logged since `seq`; a launch (in the foreground or
    /// the background) whose app did not come up fails. The command's input (`submitted`) refused when it reached
    /// the head of the queue (its `refused` event, by ticket) fails as it
    /// would have at once; one still queued behind an app that has not
    /// answered (in virtual time, past the hang grace) is `pending`, with
    /// its ticket in `queued`.
    func annotate(
        _ reply: ControlReply, request: JSONValue, since seq: Int, submitted: (ticket: Int, input: Springboard.Input)? = nil,
        waitBefore: TimerID? = nil
    ) -> ControlReply {
        log.flush()
        guard case .ok(let result) = reply else { return reply }
        let errors = log.errors(after: seq)
        var queued: Int?
        if let submitted {
            if !board.hasRun(input: submitted.ticket) {
                queued = submitted.ticket
            } else if let refusal = errors.lazy.compactMap(\.refusal).first(where: { $0.ticket == submitted.ticket }) {
                return .failure(refusal.reason)
            }
        }
        let command = request["command"]?.stringValue
        if command == "launch" || command == "launchInBackground", let app = request["app"]?.stringValue,
            board.state(of: app) == .notRunning
        {
            if board.isLaunchPending(app) {
                // Queued, the launch is still to be checked (and may be refused): said below, as for any input.
                if queued == nil {
                    let blocker = board.waitingFor.map { $0 == app ? "" : " behind \($0), which has not answered" } ?? ""
                    return .ok(["pending": .string("\(app) is still launching\(blocker)")])
                }
            } else if command == "launch"
                // In the background, an app may end once launched (UIApplicationExitsOnSuspend, no wake window).
                || LaunchJudgement.judge(app, background: true, since: seq, in: log.events(after: seq)).failure != nil
            {
                return launchFailure(app, errors: errors)
            }
        }
        // Settled with an app still in a callback (virtual time, past the
        // hang grace): the work of a command that made an input or began
        // this wait is not all done either (a `status` during an older hang
        // has nothing to do with it).
        let unanswered =
            queued == nil
            ? board.currentWait.flatMap { wait in
                submitted != nil || wait.watchdog != waitBefore ? wait.callback.map { (wait.app, $0) } : nil
            } : nil
        // Most replies go as they are: the object is taken apart only to add to it.
        guard !errors.isEmpty || queued != nil || unanswered != nil, case .object(var members) = result else { return reply }
        if !errors.isEmpty { members["errors"] = .array(errors.map(\.json)) }
        if let queued, let submitted {
            let blocker = board.waitingFor.map { " behind \($0), which has not answered" } ?? ""
            members["pending"] = .string("\(submitted.input) is queued\(blocker); it is checked when it runs")
            members["queued"] = JSONValue(queued)
        } else if let (app, callback) = unanswered {
            members["pending"] = .string("\(app) has not answered \(callback) (past the hang grace, the clock runs on without it)")
        }
        return .ok(.object(members))
    }

    /// The bundle ids of the apps that are not `notRunning`.
    func runningApps() -> Set<String> {
        Set(board.installedApps.map(\.bundleID).filter { (board.state(of: $0) ?? .notRunning) != .notRunning })
    }

    /// A successful reply with the state its command left: `status` (as
    /// the `status` command gives it) and `stopped`, the apps running
    /// before the command that no longer are.
    func addingStatus(to reply: ControlReply, runningBefore: Set<String>) -> ControlReply {
        guard case .ok(let result) = reply else { return reply }
        var members: [String: JSONValue]
        switch result {
        case .object(let object): members = object
        case .null: members = [:]
        default: return reply
        }
        members["status"] = status()
        members["stopped"] = .array(runningBefore.subtracting(runningApps()).sorted().map { .string($0) })
        return .ok(.object(members))
    }

    /// A `launch` whose app did not come up: the cause, the app's log and
    /// the last line the launch wrote in it.
    func launchFailure(_ app: String, errors: [Event]) -> ControlReply {
        // A kill for a violation or a watchdog is followed by its `crashed`: the cause says more.
        let why = (errors.last { $0.app == app && $0.name != "crashed" } ?? errors.last { $0.app == app })
            .map(Self.describe) ?? "it exited"
        return .failure("\(app) did not launch: \(why); \(logReference(for: app))")
    }

    /// "its log: PATH, which ends: LINE": where `app`'s output is, and
    /// (`lastLine`) the last line its latest process wrote there.
    func logReference(for app: String, lastLine: Bool = true) -> String {
        // Only what this daemon's last spawn of it wrote (no spawn noted: nothing).
        let said = lastLine ? logStarts[app].flatMap { host.lastLogLine(for: app, since: $0) }.map { ", which ends: " + $0 } : nil
        return "its log: \(host.logPath(for: app))\(said ?? "")"
    }

    /// What an error event says of an app that did not launch.
    static func describe(_ event: Event) -> String {
        switch event.name {
        case "crashed":
            if let signal = event.detail["signal"]?.intValue {
                return "it crashed (signal \(signal)\(signalName(signal).map { ", " + $0 } ?? ""))"
            }
            return "it exited with status \(event.detail["status"]?.intValue ?? -1)"
        case "watchdogTimeout":
            return "the watchdog killed it after \(event.detail["limit"]?.doubleValue.map(formatSeconds) ?? "?") s in "
                + (event.detail["callback"]?.stringValue ?? "a callback") + " (0x8badf00d)"
        case "launchTimeout":
            return "it never said hello, and the watchdog killed it after "
                + (event.detail["limit"]?.doubleValue.map(formatSeconds) ?? "?") + " s (0x8badf00d)"
        case "launchFailed":
            return event.detail["reason"]?.stringValue ?? "it could not be started"
        case "protocolViolation":
            // A refused hello (the token's app may be the victim) kills nothing.
            let killed = event.detail["killed"] == true
            return "it broke the protocol (" + (event.detail["reason"]?.stringValue ?? "?") + ")" + (killed ? " and was killed" : "")
        default:
            return event.name + " " + event.detail.jsonText
        }
    }

    func execute(_ request: JSONValue) throws -> EventLoopFuture<ControlReply> {
        guard let command = request["command"]?.stringValue else {
            throw DaemonError(.badRequest, "request has no \"command\"")
        }
        func app() throws -> String {
            guard let id = request["app"]?.stringValue else { throw DaemonError(.badRequest, "\(command) needs an app") }
            guard bundles[id] != nil else { throw DaemonError(.unknownApp, "no app with bundle id \(id) is installed") }
            return id
        }
        func submit(_ input: Springboard.Input) throws -> EventLoopFuture<ControlReply> {
            perform(try board.submit(input, at: now))
            submittedInput = (board.lastInput, input)
            return eventLoop.makeSucceededFuture(.ok(.emptyObject))
        }
        func succeed(_ result: JSONValue) -> EventLoopFuture<ControlReply> {
            eventLoop.makeSucceededFuture(.ok(result))
        }

        switch command {
        case "install":
            guard let path = request["path"]?.stringValue else { throw DaemonError(.badRequest, "install needs a path") }
            return succeed(try install(path: path, executable: request["executable"]?.stringValue))
        case "uninstall":
            let id = try app()
            try board.uninstall(id)
            try store.remove(id)
            bundles[id] = nil
            record(LogEntry(kind: .system, app: id, name: "uninstalled"))
            // As deleting an app on iOS: its data goes with it (its log stays, for the record).
            let container = host.containerPath(for: id)
            do {
                if FileManager.default.fileExists(atPath: container) { try FileManager.default.removeItem(atPath: container) }
            } catch {
                record(LogEntry(
                    kind: .error, app: id, name: "containerNotRemoved",
                    detail: ["path": .string(container), "message": .string(error.localizedDescription)]))
            }
            return succeed(["bundleID": .string(id)])
        case "apps":
            return succeed(.array(board.installedApps.map { appJSON($0.bundleID) }))
        case "launch": return try submit(.launch(try app()))
        case "home": return try submit(.home)
        case "lock": return try submit(.lock)
        case "unlock": return try submit(.unlock)
        case "switcher":
            switch request["action"]?.stringValue {
            case "show": return try submit(.switcherShow)
            case "hide": return try submit(.switcherHide)
            case "kill": return try submit(.switcherKill(try app()))
            default: throw DaemonError(.badRequest, "switcher needs show, hide or kill")
            }
        case "alert":
            switch request["action"]?.stringValue {
            case "show": return try submit(.alertShow)
            case "dismiss": return try submit(.alertDismiss)
            case "reply": return try submit(.alertReply)
            default: throw DaemonError(.badRequest, "alert needs show, dismiss or reply")
            }
        case "memory":
            switch request["action"]?.stringValue {
            case "warning": return try submit(.memoryWarning)
            case "pressure":
                var resident: [String: Int] = [:]
                for (id, process) in processes {
                    resident[id] = process.livePID.flatMap(host.appResidentBytes(of:)) ?? 0
                }
                // What it did (killed, freed) is the reply, for the CLI to say.
                let before = log.lastSeq
                let input = Springboard.Input.memoryPressure(
                    bytes: try Self.count(request, "bytes", of: "memory pressure"), residentMemory: resident)
                perform(try board.submit(input, at: now))
                submittedInput = (board.lastInput, input)
                let pressure = log.events(after: before).last { $0.kind == .system && $0.name == "memoryPressure" }
                return succeed(["memoryPressure": pressure?.detail ?? .null])
            default: throw DaemonError(.badRequest, "memory needs warning or pressure")
            }
        case "device":
            let (name, detail) = try Self.deviceChange(request)
            return try submit(.deviceChange(name, detail))
        case "wake":
            guard let callback = request["callback"]?.stringValue else {
                throw DaemonError(.badRequest, "wake needs a callback")
            }
            return try submit(.wake(try app(), callback: callback, detail: request["detail"] ?? .emptyObject))
        case "launchInBackground":
            return try submit(.launchInBackground(try app(), options: request["options"] ?? .emptyObject))
        case "status":
            return succeed(status())
        case "events":
            let events = log.events(after: try Self.afterSeq(request), app: try appFilter(request["appFilter"]?.stringValue))
            let limit = try Self.count(request, "limit", of: "events") ?? events.count
            return succeed(.array(events.suffix(limit).map(\.json)))
        case "clock":
            switch request["action"]?.stringValue {
            case "now", nil:
                return succeed(clockJSON())
            case "advance":
                guard clock.mode == .virtual else {
                    throw DaemonError(.invalidState, "the daemon runs on the real clock; start it with --clock virtual")
                }
                guard let seconds = request["seconds"]?.doubleValue, let duration = Duration(acceptedSeconds: seconds) else {
                    throw DaemonError(.badRequest, "clock advance needs a duration of 0 to 100 years (36500d)")
                }
                guard duration <= ClockTime.latest - now else {
                    throw DaemonError(
                        .badRequest,
                        "clock advance \(formatSeconds(seconds)) s would take the virtual clock past its end, 250 years after its start (it is at \(formatSeconds(now.seconds)) s)")
                }
                let bound = handle.engine
                let before = log.lastSeq
                return advance(by: duration).map {
                    // What the queued memory pressures it ran did (their own replies came before they ran).
                    let engine = bound.value
                    let pressures = engine.log.events(after: before).filter { $0.kind == .system && $0.name == "memoryPressure" }
                    guard !pressures.isEmpty, case .object(var clock) = engine.clockJSON() else { return .ok(engine.clockJSON()) }
                    clock["memoryPressure"] = .array(pressures.map(\.detail))
                    return .ok(.object(clock))
                }
            default:
                throw DaemonError(.badRequest, "clock needs now or advance")
            }
        default:
            throw DaemonError(.badRequest, "unknown command \"\(command)\"")
        }
    }

    /// Installs (or reinstalls) an app. A second install of the same bundle id
    /// replaces the first, keeping its container and settings; it is refused
    /// while the app runs.
    func install(path: String, executable: String?) throws -> JSONValue {
        let bundle = try AppBundle.load(
            path: path, executable: executable, searchPaths: configuration.executableSearchPaths)
        let id = bundle.descriptor.bundleID
        let replaced = bundles[id] != nil
        if replaced, board.hasProcess(id) {
            throw DaemonError(.appRunning, "\(id) is running; kill it (offstage switcher kill \(id)) before reinstalling")
        }
        try host.prepareContainer(for: id)
        try store.save(bundle, installedAt: Date().timeIntervalSince1970)
        bundles[id] = bundle
        board.install(bundle.descriptor)
        record(LogEntry(
            kind: .system, app: id, name: replaced ? "reinstalled" : "installed",
            detail: ["executable": .string(bundle.executable)]))
        return appJSON(id).objectValue.map { .object($0.merging(["replaced": .bool(replaced)]) { $1 }) } ?? .null
    }

    /// The `device` request for a change written as words (`battery 0.2`,
    /// `time-jump`, `defaults`), as the CLI and scenarios write it: a battery level
    /// that is not a finite number stays the text, which ``deviceChange(_:)``
    /// then refuses naming it as written.
    public static func deviceRequest(what: String, value: String?) -> JSONValue {
        var request: [String: JSONValue] = ["command": "device", "what": .string(what)]
        if let value {
            // Decimal only: `Double(_:)` also took `0x1p-2` for 0.25.
            let level: Double? = what == "battery" ? DecimalText.decimal(value).flatMap { $0.isFinite ? $0 : nil } : nil
            request["value"] = level.map { JSONValue($0) } ?? .string(value)
        }
        return .object(request)
    }

    /// The notification a `device` request stands for. Static: scenarios
    /// check their `device` steps with it when the file is read.
    static func deviceChange(_ request: JSONValue) throws(DaemonError) -> (SystemNotificationName, JSONValue) {
        let what = request["what"]?.stringValue ?? ""
        let value = request["value"]
        if ["battery", "orientation", "locale"].contains(what), value == nil {
            throw DaemonError(.badRequest, "device \(what) needs a value")
        }
        switch what {
        case "battery":
            guard let level = value?.doubleValue, (0...1).contains(level) else {
                throw DaemonError(.badRequest, "device battery takes a level from 0 to 1, not \(value?.jsonText ?? "")")
            }
            return (.batteryLevel, ["level": JSONValue(level)])
        case "orientation":
            let known = ["portrait", "portraitUpsideDown", "landscapeLeft", "landscapeRight", "faceUp", "faceDown"]
            guard let orientation = value?.stringValue, known.contains(orientation) else {
                throw DaemonError(.badRequest, "device orientation must be one of \(known.joined(separator: ", "))")
            }
            return (.orientation, ["orientation": .string(orientation)])
        case "locale":
            // An identifier such as fr_FR, zh-Hans_CN or de_DE@collation=phonebook: no blanks, no quotes.
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-@=.;")
            guard let locale = value?.stringValue, !locale.isEmpty, locale.allSatisfy(allowed.contains) else {
                let given = value?.stringValue.map { $0.isEmpty ? "" : ", not \(JSONValue.string($0).jsonText)" } ?? ""
                throw DaemonError(.badRequest, "device locale needs an identifier such as fr_FR\(given)")
            }
            return (.locale, ["locale": .string(locale)])
        case "time-jump":
            guard value == nil else { throw DaemonError(.badRequest, "device time-jump takes nothing more") }
            return (.significantTimeChange, .emptyObject)
        case "defaults":
            // The user changed the app's preferences in Settings.
            guard value == nil else { throw DaemonError(.badRequest, "device defaults takes nothing more") }
            return (.userDefaults, .emptyObject)
        default:
            throw DaemonError(.badRequest, "device takes battery, orientation, locale, time-jump or defaults, not \"\(what)\"")
        }
    }

    func appJSON(_ id: String) -> JSONValue {
        guard let bundle = bundles[id] else { return .null }
        var object: [String: JSONValue] = [
            "bundleID": .string(id), "name": .string(bundle.name), "executable": .string(bundle.executable),
            "backgroundModes": .array(bundle.descriptor.backgroundModes.map(\.rawValue).sorted().map { .string($0) }),
            "exitsOnSuspend": .bool(bundle.descriptor.exitsOnSuspend),
            "state": .string((board.state(of: id) ?? .notRunning).rawValue),
            "container": .string(host.containerPath(for: id)), "log": .string(host.logPath(for: id)),
        ]
        // Spawned, not yet said hello (still notRunning, as on iOS, but with a
        // process: one killed and not yet reaped has none), or its launch queued
        // or its spawn waiting behind an app that has not answered.
        if board.state(of: id) == .notRunning, board.hasProcess(id) || board.isLaunchPending(id) { object["launching"] = true }
        if let process = processes[id] {
            object["pid"] = JSONValue(Int(process.pid))
            object["residentBytes"] = process.livePID.flatMap(host.appResidentBytes(of:)).map { JSONValue($0) } ?? .null
        }
        let tasks = board.openTasks(of: id)
        if !tasks.isEmpty {
            object["backgroundTasks"] = .array(tasks.map { JSONValue($0) })
            object["backgroundTimeRemaining"] = JSONValue(board.backgroundTimeRemaining(id, at: now))
        }
        return .object(object)
    }

    func clockJSON() -> JSONValue {
        ["mode": .string(clock.mode.rawValue), "time": JSONValue(now.seconds)]
    }

    func status() -> JSONValue {
        let overlays = board.overlaysShown
        return [
            "clock": clockJSON(), "profile": .string(board.policy.profileName),
            "foreground": board.foregroundApp.map { .string($0) } ?? .null,
            "otherApp": board.otherForegroundApp.map { .string($0) } ?? .null,
            "switcher": .bool(overlays.switcher), "alert": .bool(overlays.alert), "locked": .bool(overlays.locked),
            "apps": .array(board.installedApps.map { appJSON($0.bundleID) }),
            "lastEvent": JSONValue(log.lastSeq),
            // What the system waits for (commands wait, or queue, behind it): an app's answer to a callback, or its hello.
            "waitingFor": board.currentWait.map { wait in
                ["app": .string(wait.app), "callback": wait.callback.map { .string($0) } ?? .null]
            } ?? .null,
        ]
    }

    /// The bundle id `events --app` means: one installed or in the log, or
    /// the last part of exactly one such id, as the timeline shows it
    /// (`StateLab` for `com.offstage.samples.StateLab`).
    /// - Throws: ``DaemonError`` `unknownApp` when it names none, or several.
    func appFilter(_ name: String?) throws -> String? {
        try resolveAppFilter(name, following: false).app
    }

    /// ``appFilter(_:)``, and whether the app is known (installed or in the
    /// log). For `events --follow` (`following`), a name that matches
    /// nothing yet is taken as a bundle id, as not known: the app may be
    /// installed later (a bundle id needs no dot).
    func resolveAppFilter(_ name: String?, following: Bool) throws -> (app: String?, known: Bool) {
        guard let name, bundles[name] == nil else { return (name, true) }
        guard !name.isEmpty else { throw DaemonError(.badRequest, "events: the app filter is empty; give a bundle id or the last part of one") }
        var known = Set(bundles.keys)
        for event in log.events { if let app = event.app { known.insert(app) } }
        if known.contains(name) { return (name, true) }
        let matches = known.filter { AppNaming.lastPart(of: $0) == name }.sorted()
        // Only a name that could be one: a typo such as "" waited for good.
        if matches.isEmpty, following, AppBundle.bundleIDProblem(name) == nil { return (name, false) }
        guard matches.count == 1 else {
            throw DaemonError(
                .unknownApp,
                matches.isEmpty
                    ? "no app \(name) is installed or in the event log"
                    : "\(name) could be \(matches.joined(separator: " or ")); give the bundle id")
        }
        return (matches[0], true)
    }
}

extension Engine {
    /// An `events` request's `after`: 0 when absent. One that is not an
    /// integer JSON keeps exactly (past 2^53, where 2^63 - 1 came out as no
    /// number and the whole log was sent) is refused.
    /// The request's `key`, a whole number of 0 or more, or nil when it has
    /// none: a negative `limit` trapped the daemon (a suffix of negative
    /// length), and a `bytes` of `"200M"` was taken as none, which kills
    /// every suspended app.
    static func count(_ request: JSONValue, _ key: String, of command: String) throws -> Int? {
        guard let value = request[key], value != .null else { return nil }
        guard let count = value.intValue, count >= 0 else {
            throw DaemonError(.badRequest, "\(command): \"\(key)\" must be a whole number of 0 or more, not \(value.jsonText)")
        }
        return count
    }

    static func afterSeq(_ request: JSONValue) throws -> Int {
        guard let value = request["after"], value != .null else { return 0 }
        guard let seq = value.intValue, seq >= 0, seq <= EventLog.largestSeq else {
            throw DaemonError(.badRequest, "events: \"after\" must be a seq from 0 to 2^53, not \(value.jsonText)")
        }
        return seq
    }
}

func signalName(_ signal: Int) -> String? {
    [4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"][signal]
}

/// Why the daemon would refuse a `device` request (an unknown orientation,
/// an empty locale), or nil: the CLI checks its arguments with it, so a
/// bad value is a usage error before any daemon is asked.
public func deviceChangeProblem(_ request: JSONValue) -> String? {
    do {
        _ = try Engine.deviceChange(request)
        return nil
    } catch {
        return error.message
    }
}
