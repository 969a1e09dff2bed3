import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Splits a byte stream into newline-terminated lines and passes each one
/// on (without its newline), refusing lines longer than `maximumLength`: an
/// oversized message is a protocol violation, not a reason to buffer
/// without bound.
///
/// A handler of its own rather than NIO's `ByteToMessageHandler`: every
/// callback's ack comes through here, and a read usually holds exactly one
/// whole line, which is passed on as a slice of the read buffer, without
/// the general decoder's accumulation and state machine around it. A line
/// split across reads is kept until its newline arrives; one left without a
/// newline when the peer goes away is dropped (it went away mid-message),
/// and passed on when the peer only shut down its writing side;
/// only its own bytes are kept, so a peer whose reads always end mid-line
/// does not grow the buffer. Once a handler after this one closes the
/// channel, the rest of the read is dropped. A read that arrives while a
/// line is being handled (a handler causing one) is queued behind the rest.
final class LineSplitter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    struct LineTooLongError: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "message longer than \(limit) bytes" }
    }

    let maximumLength: Int
    /// Bytes received and not yet passed on: the start of a line whose
    /// newline has not arrived, or the rest of a read being split.
    private(set) var pending: ByteBuffer?
    /// Lines are being passed on (a read arriving now is queued in `pending`).
    private var splitting = false
    /// A line was too long: nothing more is read from this peer.
    private var failed = false

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        var incoming = unwrapInboundIn(data)
        if pending == nil {
            pending = incoming
        } else {
            pending!.writeBuffer(&incoming)
        }
        guard !splitting else { return }
        splitting = true
        defer { splitting = false }
        while var buffer = pending, let length = Self.lineLength(in: buffer) {
            guard length <= maximumLength else { return fail(context) }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            pending = buffer.readableBytes > 0 ? buffer : nil
            context.fireChannelRead(wrapInboundOut(line))
            guard context.channel.isActive else {
                pending = nil
                return
            }
        }
        guard (pending?.readableBytes ?? 0) <= maximumLength else { return fail(context) }
        // Only the unfinished line's own bytes are kept, not the lines read before it.
        pending?.discardReadBytes()
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending = nil
        context.fireChannelInactive()
    }

    /// A peer that shut down its writing side (a control client's `nc -N`,
    /// where half-closure is allowed) has said all it will: what it sent
    /// after its last newline is its last line.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent, !failed, !splitting, let last = pending, last.readableBytes > 0 {
            pending = nil
            context.fireChannelRead(wrapInboundOut(last))
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func fail(_ context: ChannelHandlerContext) {
        failed = true
        pending = nil
        context.fireErrorCaught(LineTooLongError(limit: maximumLength))
    }

    /// The length of the first line in `buffer` (the bytes before its first
    /// newline), or nil when no newline has arrived.
    private static func lineLength(in buffer: ByteBuffer) -> Int? {
        buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard let base = bytes.baseAddress, let newline = memchr(base, Int32(UInt8(ascii: "\n")), bytes.count) else {
                return nil
            }
            return UnsafeRawPointer(newline) - base
        }
    }
}
