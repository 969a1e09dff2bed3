import Foundation
import OffstageProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct LineSocketTests {
    /// A long line arrives in many reads, then short ones, some split
    /// across writes: each comes back whole and in order. This guards the
    /// bookkeeping of the search that goes on where it stopped (it was
    /// searched from the line's start on every read, which made a 6 MB
    /// `events` reply take the CLI a minute); the old search gave the same
    /// lines, only slower, which this test does not time.
    @Test func linesSplitAcrossReadsComeBackWholeAndInOrder() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let out = fds[0]
        let reader = LineSocket(fd: fds[1], maxLine: 8 << 20)
        reader.deadline = .now + .seconds(10)
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 3 << 20)
        let short = (0..<200).map { Array("line \($0)".utf8) }
        let stream = long + [10] + short.flatMap { $0 + [10] }
        // Written from another thread, in uneven pieces, while the reader
        // reads; then the end of the stream. A reader that stopped early
        // makes the writer fail (EPIPE), not kill the test process.
        let sent = DispatchSemaphore(value: 0)
        let sending = Thread {
            defer {
                close(out)
                sent.signal()
            }
            var offset = 0
            var piece = 1
            while offset < stream.count {
                let end = min(stream.count, offset + piece)
                let written = stream[offset..<end].withUnsafeBytes { send(out, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { return }
                offset += written
                piece = piece * 7 % 100_003 + 1
            }
        }
        sending.start()
        defer { _ = sent.wait(timeout: .now() + 10) }
        let first = try #require(try reader.readLine())
        #expect(first.count == long.count && first.allSatisfy { $0 == UInt8(ascii: "x") })
        for expected in short {
            #expect(try reader.readLine().map(Array.init) == expected)
        }
        #expect(try reader.readLine() == nil)
    }
}
