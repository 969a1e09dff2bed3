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
        /// On this line, more bytes enter the pipeline from its start, as
        /// if read while the line is being handled.
        let feedOn: (line: String, bytes: String)?

        init(closeOn: String? = nil, feedOn: (line: String, bytes: String)? = nil) {
            self.closeOn = closeOn
            self.feedOn = feedOn
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let line = String(buffer: unwrapInboundIn(data))
            lines.append(line)
            if line == closeOn { context.close(promise: nil) }
            if let feedOn, line == feedOn.line {
                context.pipeline.fireChannelRead(ByteBuffer(string: feedOn.bytes))
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            errors.append("\(error)")
        }
    }

    func channel(_ collector: Collector, maximumLength: Int = 16, splitter: LineSplitter? = nil) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([splitter ?? LineSplitter(maximumLength: maximumLength), collector])
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

    @Test func aPeerWhoseReadsEndMidLineKeepsOnlyThatLinesBytes() throws {
        let splitter = LineSplitter(maximumLength: 1000)
        let collector = Collector()
        let channel = try channel(collector, splitter: splitter)
        // Each read ends one line and starts the next: 20,000 × 100 bytes in all.
        try send(String(repeating: "x", count: 50), to: channel)
        for _ in 0..<20_000 { try send(String(repeating: "x", count: 49) + "\n" + String(repeating: "x", count: 50), to: channel) }
        #expect(collector.lines.count == 20_000)
        #expect(splitter.pending?.readableBytes == 50)
        #expect((splitter.pending?.capacity ?? 0) < 4096, "the bytes of lines passed on are not kept")
    }

    @Test func aReadArrivingWhileALineIsHandledIsQueuedBehindTheRest() throws {
        let collector = Collector(feedOn: ("a", "x\ny"))
        let channel = try channel(collector)
        // The bytes fed while "a" is handled follow the rest of the read: "c" + "x".
        try send("a\nb\nc", to: channel)
        #expect(collector.lines == ["a", "b", "cx"])
        try send("\n", to: channel)
        #expect(collector.lines == ["a", "b", "cx", "y"])
    }
}
