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
/// newline when the peer goes away is dropped (it went away mid-message).
/// Once a handler after this one closes the channel, the rest of the read
/// is dropped.
final class LineSplitter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    struct LineTooLongError: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "message longer than \(limit) bytes" }
    }

    let maximumLength: Int
    /// The start of a line whose newline has not arrived yet.
    private var partial: ByteBuffer?
    /// A line was too long: nothing more is read from this peer.
    private var failed = false

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        var buffer = unwrapInboundIn(data)
        if var partial = partial {
            self.partial = nil
            partial.writeBuffer(&buffer)
            buffer = partial
        }
        while let length = Self.lineLength(in: buffer) {
            guard length <= maximumLength else { return fail(context) }
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            context.fireChannelRead(wrapInboundOut(line))
            guard context.channel.isActive else { return }
        }
        guard buffer.readableBytes <= maximumLength else { return fail(context) }
        if buffer.readableBytes > 0 { partial = buffer }
    }

    func channelInactive(context: ChannelHandlerContext) {
        partial = nil
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext) {
        failed = true
        partial = nil
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
