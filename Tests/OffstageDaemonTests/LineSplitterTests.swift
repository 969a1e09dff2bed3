import NIOCore
import NIOEmbedded
import Testing

@testable import OffstageDaemon

/// The splitter in front of every app and control connection.
@Suite struct LineSplitterTests {
    /// What the handler after the splitter saw: lines, errors, and whether
    /// it closes the channel on a line (as a handler does on a violation).
    final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var lines: [String] = []
        var errors: [String] = []
        let closeOn: String?

        init(closeOn: String? = nil) { self.closeOn = closeOn }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let line = String(buffer: unwrapInboundIn(data))
            lines.append(line)
            if line == closeOn { context.close(promise: nil) }
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            errors.append("\(error)")
        }
    }

    func channel(_ collector: Collector, maximumLength: Int = 16) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([LineSplitter(maximumLength: maximumLength), collector])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    func send(_ text: String, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    @Test func passesEachLineOnWithoutItsNewlineAcrossAndWithinReads() throws {
        let collector = Collector()
        let channel = try channel(collector)
        try send("one\ntw", to: channel)
        #expect(collector.lines == ["one"])
        try send("o\n\nthree\nfo", to: channel)
        try send("u", to: channel)
        try send("r\n", to: channel)
        #expect(collector.lines == ["one", "two", "", "three", "four"])
        #expect(collector.errors.isEmpty)
    }

    @Test func aLineLongerThanTheLimitIsAnErrorAndEndsReading() throws {
        let collector = Collector()
        let channel = try channel(collector, maximumLength: 4)
        try send("1234\n12345\nnext\n", to: channel)
        #expect(collector.lines == ["1234"])
        #expect(collector.errors == ["message longer than 4 bytes"])
        try send("more\n", to: channel)
        #expect(collector.lines == ["1234"])

        // Without its newline yet: refused once the bytes pass the limit.
        let unfinished = Collector()
        let second = try self.channel(unfinished, maximumLength: 4)
        try send("123", to: second)
        try send("45", to: second)
        #expect(unfinished.errors == ["message longer than 4 bytes"])
    }

    @Test func theRestOfAReadIsDroppedOnceTheChannelIsClosed() throws {
        let collector = Collector(closeOn: "bad")
        let channel = try channel(collector)
        try send("ok\nbad\nafter\n", to: channel)
        #expect(collector.lines == ["ok", "bad"])
    }
}
