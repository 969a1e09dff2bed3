import NIOCore

/// Splits a byte stream into newline-terminated lines, refusing lines longer
/// than `maximumLength` (an oversized message is a protocol violation, not a
/// reason to buffer without bound).
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    struct LineTooLongError: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "message longer than \(limit) bytes" }
    }

    let maximumLength: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maximumLength { throw LineTooLongError(limit: maximumLength) }
            return .needMoreData
        }
        let length = newline - view.startIndex
        if length > maximumLength { throw LineTooLongError(limit: maximumLength) }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        // A final line without a newline is dropped: the peer went away mid-message.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }
}
