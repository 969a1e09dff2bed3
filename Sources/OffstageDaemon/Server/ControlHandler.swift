import NIOCore
import OffstageCore

/// One control connection: a JSON request per line, a JSON reply per line,
/// in the order of the requests: a request is taken up once the one before
/// it on the connection has its reply (a `status` sent after a `launch`
/// that waits behind a hung app describes the state after that launch).
/// `{"command":"events","follow":true}` streams events until the client leaves.
final class ControlHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let engine: NIOLoopBound<Engine>
    var subscription: Int?
    /// The client shut down its writing side: no request comes any more.
    private var inputClosed = false
    /// Requests not yet answered, and replies not yet written: a client
    /// whose input has closed is hung up on once both are none.
    private var unanswered = 0
    /// Requests read while one before them waits for its reply, in order
    /// (a line that did not parse: its error).
    private var queued: [Result<JSONValue, ControlLineError>] = []
    /// A command of this connection is with the engine.
    private var commandUnderWay = false

    struct ControlLineError: Error {
        var message: String
    }

    init(engine: NIOLoopBound<Engine>) {
        self.engine = engine
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        // A blank line (`printf '…\n\n'`) asks nothing, as on the app socket.
        if line.readableBytesView.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        do {
            queued.append(.success(try JSONValue(parsing: line.readableBytesView)))
        } catch {
            queued.append(.failure(ControlLineError(message: "malformed request: \(error)")))
        }
        takeUpNext(context.channel)
    }

    /// Takes up the requests queued, in order, until one goes to the engine.
    private func takeUpNext(_ channel: Channel) {
        while !commandUnderWay, !queued.isEmpty {
            switch queued.removeFirst() {
            case .failure(let error): write(ControlReply.failure(error.message).json, on: channel)
            case .success(let request): take(request, on: channel)
            }
        }
        hangUpIfDone(channel)
    }

    private func take(_ request: JSONValue, on channel: Channel) {
        let engine = self.engine.value
        let id = request["id"]
        if request["command"]?.stringValue == "events", request["follow"]?.boolValue == true {
            let app: String?
            let known: Bool
            let after: Int
            do {
                (app, known) = try engine.resolveAppFilter(request["appFilter"]?.stringValue, following: true)
                after = try Engine.afterSeq(request)
            } catch {
                write(withID(ControlReply.failure("\(error)").json, id), on: channel)
                return
            }
            let backlog = engine.log.events(after: after, app: app)
            var reply = ControlReply.ok(.array(backlog.map(\.json))).json
            // A bundle id no app has yet is followed as it is (installed
            // later, or a typo): the reply says so, for the CLI to warn.
            if !known, case .object(var members) = reply {
                members["waiting"] = true
                reply = .object(members)
            }
            write(withID(reply, id), on: channel)
            if let subscription { engine.log.unsubscribe(subscription) }
            subscription = engine.log.subscribe { event in
                // The daemon's stop reaches every follower, whatever its
                // filter: the end of the stream without it reads as a crash.
                guard (event.seq > after && (app == nil || event.app == app))
                    || (event.kind == .system && event.name == "daemonStopped")
                else { return }
                channel.writeAndFlush(channel.allocator.buffer(bytes: LineFraming.encode(["event": event.json])), promise: nil)
            }
            return
        }
        // A command still waiting for its turn when its client leaves (Ctrl-C, --timeout) is dropped.
        unanswered += 1
        commandUnderWay = true
        let bound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        engine.control(request, stillWanted: { channel.isActive }).whenComplete { result in
            let reply: ControlReply
            switch result {
            case .success(let value): reply = value
            case .failure(let error): reply = .failure("\(error)")
            }
            let handler = bound.value
            // Counted by the write from here on (a write done at once completes inside it).
            handler.unanswered -= 1
            handler.commandUnderWay = false
            handler.write(withID(reply.json, id), on: channel)
            handler.takeUpNext(channel)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent {
            inputClosed = true
            hangUpIfDone(context.channel)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Closes a connection whose client has no more to send once every
    /// request has its reply (a follower of events stays, for the events).
    private func hangUpIfDone(_ channel: Channel) {
        guard inputClosed, unanswered == 0, queued.isEmpty, !commandUnderWay, subscription == nil else { return }
        channel.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let subscription { engine.value.log.unsubscribe(subscription) }
        subscription = nil
        // The commands it sent after one still waiting are dropped in their
        // turn, each with its commandDropped event, as that one is.
        let left = queued
        queued = []
        for case .success(let request) in left where request["command"]?.stringValue != nil {
            _ = engine.value.control(request, stillWanted: { false })
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        write(ControlReply.failure("\(error)").json, on: context.channel)
        context.close(promise: nil)
    }

    /// Writes a reply; once written, a client with no more to send may be hung up on.
    private func write(_ value: JSONValue, on channel: Channel) {
        unanswered += 1
        let bound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        channel.writeAndFlush(channel.allocator.buffer(bytes: LineFraming.encode(value))).whenComplete { _ in
            bound.value.unanswered -= 1
            bound.value.hangUpIfDone(channel)
        }
    }
}

private func withID(_ reply: JSONValue, _ id: JSONValue?) -> JSONValue {
    guard let id, case .object(var members) = reply else { return reply }
    members["id"] = id
    return .object(members)
}
