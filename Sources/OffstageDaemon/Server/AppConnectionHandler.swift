import NIOCore
import NIOPosix
import OffstageCore

#if canImport(Glibc)
    import Glibc
#endif

/// One app's connection: the first line must be a valid `hello`; then acks
/// and requests. Garbage, oversized lines and bad tokens are logged as
/// `protocolViolation` errors and end the connection; the daemon keeps going.
final class AppConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let engine: NIOLoopBound<Engine>
    var identity: AppConnectionIdentity?
    /// The connecting process's pid as the kernel knows it (`SO_PEERCRED`),
    /// read when the connection is accepted: the pid a `hello` claims could
    /// be any, and a process that read another app's token from
    /// `/proc/PID/environ` took over that app's launch by claiming its pid.
    var peerPID: Int32?
    /// When the peer process started, read with its pid: names it even
    /// once its pid is another's.
    var peerStartTicks: UInt64?

    init(engine: NIOLoopBound<Engine>) {
        self.engine = engine
    }

    func channelActive(context: ChannelHandlerContext) {
        if let provider = context.channel as? SocketOptionProvider {
            let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            // On the channel's loop the option is read at once.
            credentials.assumeIsolated().whenSuccess {
                self.peerPID = $0.pid
                self.peerStartTicks = AppProcessHost.startTicks(of: $0.pid)
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        // A blank line (a doubled newline: Python's print of a line that
        // ends in "\n") says nothing; it was a violation that killed the app.
        if line.readableBytesView.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        let engine = self.engine.value
        let message: AppMessage
        do {
            message = try line.withUnsafeReadableBytes { try AppMessage(bytes: $0) }
        } catch {
            let culprit = self.culprit(engine)
            if identity == nil, culprit == nil, Self.isControlRequest(line) {
                // `--socket` given the app socket by mistake: said to the command, not logged as an app's fault.
                let reply = ControlReply.failure("this is the daemon's app socket, where apps connect; commands go to its control socket")
                let channel = context.channel
                channel.writeAndFlush(channel.allocator.buffer(bytes: LineFraming.encode(reply.json)))
                    .whenComplete { _ in channel.close(promise: nil) }
                return
            }
            engine.violation(
                app: culprit?.bundleID, launch: culprit?.launch, reason: "unreadable message: \(error)",
                detail: ["bytes": JSONValue(line.readableBytes)])
            context.close(promise: nil)
            return
        }
        if let identity {
            engine.received(message, from: identity, channel: context.channel)
            return
        }
        guard case .hello(let token, let pid, let version) = message else {
            let culprit = self.culprit(engine)
            engine.violation(app: culprit?.bundleID, launch: culprit?.launch, reason: "first message must be hello", detail: [:])
            context.close(promise: nil)
            return
        }
        identity = engine.hello(
            token: token, pid: pid, peerPID: peerPID, peerStartTicks: peerStartTicks, version: version, channel: context.channel)
        if identity == nil {
            let refusal = DaemonMessage.failure(id: 0, code: "rejected", message: "hello refused")
            let channel = context.channel
            channel.writeAndFlush(channel.allocator.buffer(bytes: LineFraming.encode(refusal.json)))
                .whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let identity { engine.value.connectionClosed(identity) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A reset or broken pipe is the peer dying (a killed app with unread
        // data): its exit is reported through waitpid, not as a violation.
        if let io = error as? IOError, io.errnoCode == ECONNRESET || io.errnoCode == EPIPE {
            context.close(promise: nil)
            return
        }
        let culprit = self.culprit(engine.value)
        engine.value.violation(app: culprit?.bundleID, launch: culprit?.launch, reason: "\(error)", detail: [:])
        context.close(promise: nil)
    }

    /// A control command's request (`{"command": …}`, no `type`), as the CLI sends.
    private static func isControlRequest(_ line: ByteBuffer) -> Bool {
        guard let request = try? line.withUnsafeReadableBytes({ try JSONValue(parsing: $0.bindMemory(to: UInt8.self)) }) else {
            return false
        }
        return request["command"]?.stringValue != nil && request["type"] == nil
    }

    /// Whose fault a broken connection is: its app's after `hello`; before,
    /// the app whose launched process connected (``Engine/launchAwaitingHello(peerPID:startTicks:)``),
    /// which is then killed like any app that breaks the protocol.
    private func culprit(_ engine: Engine) -> AppConnectionIdentity? {
        identity ?? engine.launchAwaitingHello(peerPID: peerPID, startTicks: peerStartTicks)
    }
}

/// Linux's `struct ucred`, which Swift's Glibc does not bring in (it needs
/// `_GNU_SOURCE`): what `SO_PEERCRED` reads, with the same layout.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
