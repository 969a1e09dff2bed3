import NIOCore
import OffstageCore

/// What the daemon knows of one app connection.
struct AppConnectionIdentity {
    var bundleID: String
    var launch: Int
}

extension Engine {
    /// A `hello`: the token must be the one given to this launch, presented by
    /// the process it was given to, once.
    /// - Parameter peerPID: the connecting process as the kernel knows it,
    ///   which must be the token's process too. Nil (the credentials could
    ///   not be read) refuses the hello: it let any claimed pid through.
    func hello(
        token: String, pid: Int32, peerPID: Int32?, peerStartTicks: UInt64? = nil, version: Int, channel: Channel
    ) -> AppConnectionIdentity? {
        guard let (app, launch) = tokens[token], var process = processes[app], process.launch == launch else {
            let peer = launchAwaitingHello(peerPID: peerPID, startTicks: peerStartTicks)
            violation(
                app: peer?.bundleID, launch: peer?.launch, reason: "hello with an unknown token",
                detail: ["claimedPid": JSONValue(Int(pid)), "peerPid": peerPID.map { JSONValue(Int($0)) } ?? .null])
            return nil
        }
        guard let peerPID else {
            violation(
                app: app, reason: "hello from a process the kernel does not name (SO_PEERCRED failed)",
                detail: ["claimedPid": JSONValue(Int(pid))], kill: false)
            return nil
        }
        guard process.pid == pid, process.pid == peerPID else {
            // The token's own process, claiming another pid: its first line is not its hello.
            if process.pid == peerPID, process.channel == nil {
                violation(
                    app: app, reason: "hello claiming pid \(pid), not its own",
                    detail: ["claimedPid": JSONValue(Int(pid)), "peerPid": JSONValue(Int(peerPID))])
                return nil
            }
            // Logged against the token's app, which is the victim here: it is not killed.
            let detail: [String: JSONValue] = [
                "claimedPid": JSONValue(Int(pid)), "tokenPid": JSONValue(Int(process.pid)), "peerPid": JSONValue(Int(peerPID)),
            ]
            violation(app: app, reason: "hello with the token of another process", detail: detail, kill: false)
            // A launched app that has not said hello sent it: its first line
            // is not its own hello, which kills it as any such line does.
            if let sender = launchAwaitingHello(peerPID: peerPID, startTicks: peerStartTicks), sender.bundleID != app {
                violation(
                    app: sender.bundleID, launch: sender.launch, reason: "hello with another app's token",
                    detail: ["tokenApp": .string(app), "claimedPid": JSONValue(Int(pid)), "peerPid": JSONValue(Int(peerPID))])
            }
            return nil
        }
        guard process.channel == nil else {
            violation(app: app, reason: "second hello with a used token", detail: [:], kill: false)
            return nil
        }
        guard version == offstageProtocolVersion else {
            violation(
                app: app, reason: "unsupported protocol version",
                detail: ["version": JSONValue(version), "supported": JSONValue(offstageProtocolVersion)], kill: true)
            return nil
        }
        process.channel = channel
        processes[app] = process
        let welcome = DaemonMessage.welcome(
            bundleID: app, container: host.containerPath(for: app), clock: clock.mode.rawValue, time: now.seconds)
        channel.writeAndFlush(channel.allocator.buffer(bytes: LineFraming.encode(welcome.json)), promise: nil)
        perform(board.appConnected(app, launch: launch, at: now))
        return AppConnectionIdentity(bundleID: app, launch: launch)
    }

    /// The launch whose spawned process is `peerPID` (as the kernel names a
    /// connection's peer), started at `startTicks` (read when the
    /// connection was accepted: a connection kept by a process that has
    /// died since is not blamed on a launch given its pid), and has not
    /// said hello yet: what a connection breaks before its hello is that
    /// app's. Nil for any other process (one an app started, or none the
    /// daemon launched).
    func launchAwaitingHello(peerPID: Int32?, startTicks: UInt64?) -> AppConnectionIdentity? {
        guard let peerPID, let startTicks,
            let (app, process) = processes.first(where: {
                $0.value.livePID == peerPID && $0.value.channel == nil && $0.value.startTicks == startTicks
            })
        else { return nil }
        return AppConnectionIdentity(bundleID: app, launch: process.launch)
    }

    /// A message after `hello`.
    func received(_ message: AppMessage, from identity: AppConnectionIdentity, channel: Channel) {
        guard processes[identity.bundleID]?.launch == identity.launch else { return }
        switch message {
        case .hello:
            violation(app: identity.bundleID, reason: "second hello on a connection", detail: [:], kill: false)
        case .ack(let id):
            let (accepted, actions) = board.acknowledge(identity.bundleID, callback: id, at: now)
            // A late ack (after a watchdog fired) from an app already gone is no violation.
            if !accepted, board.hasProcess(identity.bundleID) {
                violation(
                    app: identity.bundleID, reason: "ack for a callback that is not waiting", detail: ["id": JSONValue(id)],
                    kill: false)
            }
            perform(actions)
        case .request(let id, let method, let params):
            let reply: DaemonMessage
            do {
                reply = .reply(id: id, result: try request(identity.bundleID, method: method, params: params))
            } catch let error as LifecycleError {
                reply = .failure(id: id, code: error.code.rawValue, message: error.message)
            } catch {
                reply = .failure(id: id, code: "badRequest", message: "\(error)")
            }
            channel.writeAndFlush(channel.allocator.buffer(bytes: LineFraming.encode(reply.json)), promise: nil)
        }
    }

    func request(_ app: String, method: String, params: JSONValue) throws -> JSONValue {
        switch RequestMethod(rawValue: method) {
        case .beginBackgroundTask:
            if let name = params["name"], name != .null, name.stringValue == nil {
                throw ProtocolError("beginBackgroundTask's name must be a string")
            }
            let (task, remaining, actions) = try board.beginBackgroundTask(app, at: now)
            perform(actions)
            return ["task": task.map { JSONValue($0) } ?? .null, "remaining": JSONValue(remaining)]
        case .endBackgroundTask:
            guard let task = params["task"]?.intValue else { throw ProtocolError("endBackgroundTask needs a task") }
            perform(try board.endBackgroundTask(app, task: task, at: now))
            return .emptyObject
        case .backgroundTimeRemaining:
            return ["remaining": JSONValue(board.backgroundTimeRemaining(app, at: now))]
        case .scheduleTimer:
            guard let after = params["after"]?.doubleValue.flatMap(Duration.init(acceptedSeconds:)) else {
                throw ProtocolError("scheduleTimer needs a number of seconds from 0 to 100 years in \"after\"")
            }
            guard after <= ClockTime.latest - now else {
                throw ProtocolError("scheduleTimer: the timer would fire after the virtual clock's end, 250 years after its start")
            }
            let timer = try board.scheduleTimer(app, after: after, at: now)
            perform([])
            return ["timer": JSONValue(timer)]
        case .cancelTimer:
            guard let timer = params["timer"]?.intValue else { throw ProtocolError("cancelTimer needs a timer") }
            board.cancelTimer(app, timer: timer)
            perform([])
            return .emptyObject
        case nil:
            throw ProtocolError("unknown method \"\(method)\"")
        }
    }

    /// An app's connection ended. An app that exits closes it on its way
    /// out, and its exit is reported on its own (a moment later, from its
    /// wait thread); one still running after ``connectionCloseGrace`` closed
    /// it itself and can no longer answer a callback, which would stall
    /// the system until a watchdog: a protocol violation, and it is killed.
    func connectionClosed(_ identity: AppConnectionIdentity) {
        guard processes[identity.bundleID]?.launch == identity.launch else { return }
        let bound = handle.engine
        eventLoop.scheduleTask(in: Self.connectionCloseGrace) {
            let engine = bound.value
            guard let process = engine.processes[identity.bundleID], process.launch == identity.launch,
                // Exited but not yet reported (its wait thread is late): not a violation.
                let state = AppProcessHost.state(of: process.pid), !AppProcessHost.isDead(state)
            else { return }
            engine.violation(
                app: identity.bundleID, launch: identity.launch, reason: "closed its connection while running", detail: [:])
        }
    }

    /// How long an app whose connection closed may take to exit.
    static let connectionCloseGrace: TimeAmount = .milliseconds(250)

    /// Logs a protocol violation; unless `kill` is false, the app's process of
    /// launch `launch` is killed (it can no longer be trusted to answer, and
    /// would stall the system). A later launch of the same app is never hit.
    func violation(app: String?, launch: Int? = nil, reason: String, detail: [String: JSONValue], kill: Bool = true) {
        var detail = detail
        detail["reason"] = .string(reason)
        let victim = kill ? app.flatMap { app in processes[app].flatMap { launch == nil || $0.launch == launch ? $0 : nil } } : nil
        // Said in the event: an app killed before it ran (a wrong version at
        // hello) changes no state, so no later event would tell.
        if victim != nil { detail["killed"] = true }
        // The callback it broke off, as a crash's or a watchdog's event says.
        if victim != nil, let wait = board.currentWait, wait.app == app, let callback = wait.callback {
            detail["callback"] = .string(callback)
        }
        record(LogEntry(kind: .error, app: app, name: "protocolViolation", detail: .object(detail)))
        log.flush()
        if let app, let victim {
            // One the core counts as gone already was killed already.
            perform(board.killForProtocolViolation(app, launch: victim.launch, at: now))
        }
    }
}
