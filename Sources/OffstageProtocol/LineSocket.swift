#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A failed system call, with its errno.
public struct SystemCallError: Error, Equatable, CustomStringConvertible {
    public var call: String
    public var errno: Int32
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }
    public var description: String { "\(call): \(String(cString: strerror(errno)))" }

    /// The peer went away: a reset, or a write to a closed connection.
    public var isHangUp: Bool { errno == ECONNRESET || errno == EPIPE }
}

/// Runs a system call, retrying on `EINTR`, turning `-1` into ``SystemCallError``.
@discardableResult
public func syscall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call: name, errno: code)
    }
}

/// Whether `descriptor` became readable (or had one of `events`) within
/// `limit` (nil: waits for good); a signal's interruption waits on for the
/// rest of it. For a pidfd: whether the process has exited; with `POLLPRI`,
/// for a cgroup file: whether it changed.
public func awaitReadable(_ descriptor: Int32, within limit: Duration?, events: Int32 = Int32(POLLIN)) -> Bool {
    let deadline = limit.map { ContinuousClock.now + $0 }
    var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
    while true {
        let milliseconds = deadline.map { deadline in
            Int32(min((max(.zero, deadline - ContinuousClock.now) / .milliseconds(1)).rounded(.up), Double(Int32.max)))
        } ?? -1
        let ready = poll(&entry, 1, milliseconds)
        if ready > 0 { return true }
        if ready == 0 || errno != EINTR { return false }
    }
}

/// A blocking, connected Unix stream socket that exchanges newline-delimited
/// JSON messages. Used by the SDK (app side) and by CLI clients.
///
/// Not thread-safe: callers serialize sends and receives themselves.
public final class LineSocket {
    public let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline goes on: the bytes before it
    /// (from `start`) hold none. Searched once each, a long line (a 6 MB
    /// `events` reply comes in 64 KiB reads) is read in linear time; from
    /// `start` on each read, 100,000 events took the CLI 55 s.
    private var scanned = 0
    private var scratch = [UInt8](repeating: 0, count: 65536)
    private let maxLine: Int
    /// Wait for data in `poll` before each `read` (see ``readLine()``). A
    /// thread blocked in a Unix socket's `read` is also woken, for nothing,
    /// whenever the peer reads what this side wrote (write space is signalled
    /// on the same wait queue); `poll` wakes only for data or the end of the
    /// stream. Worth the extra call where the peer is a latency-bound loop.
    public var waitsInPoll = false
    /// When set, reading fails with `EAGAIN` once this instant has passed
    /// without a whole line: a bound on the wait for all of a reply (a
    /// per-`read` timeout is never tripped by one that trickles in). Reads
    /// then wait in `poll`.
    public var deadline: ContinuousClock.Instant?

    /// Connects to the socket at `path`.
    /// - Throws: ``SystemCallError`` (`ENOENT`/`ECONNREFUSED` when nobody listens).
    public init(connectingTo path: String, maxLine: Int = maximumMessageBytes) throws(SystemCallError) {
        self.maxLine = maxLine
        let fd = try syscall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            close(fd)
            throw SystemCallError(call: "connect (path too long)", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        do {
            try syscall("connect") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
    }

    /// Wraps an already connected socket (e.g. one end of a socketpair; not
    /// a pipe: it is written with `send`).
    public init(fd: Int32, maxLine: Int = maximumMessageBytes) {
        self.fd = fd
        self.maxLine = maxLine
    }

    deinit { close(fd) }

    /// Writes all of `bytes`. A peer gone away is an `EPIPE` error, not a
    /// SIGPIPE that would end the process without a word.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try bytes.withUnsafeBytes { raw in
                try syscall("send") { sendWithoutSignal(fd, raw.baseAddress! + offset, raw.count - offset) }
            }
            offset += written
        }
    }

    /// Sends one message as a line.
    public func send(_ value: JSONValue) throws {
        try send(LineFraming.encode(value))
    }

    /// Reads the next line (without its newline); `nil` at end of stream.
    /// - Throws: ``SystemCallError``, or ``ProtocolError`` for an over-long line.
    public func readLine() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = start
                return line
            }
            scanned = buffer.count
            if buffer.count - start > maxLine { throw ProtocolError("line longer than \(maxLine) bytes") }
            if start > 0, start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
                scanned = 0
            } else if start > 65536 {
                buffer.removeFirst(start)
                scanned -= start
                start = 0
            }
            let fd = self.fd
            if let deadline {
                // Readable: data, the end of the stream, or an error the read reports.
                guard awaitReadable(fd, within: deadline - .now) else { throw SystemCallError(call: "read", errno: EAGAIN) }
            } else if waitsInPoll {
                // An error of poll's own is the read's to report.
                _ = awaitReadable(fd, within: nil)
            }
            let count = try scratch.withUnsafeMutableBytes { raw in
                try syscall("read") { read(fd, raw.baseAddress!, raw.count) }
            }
            if count == 0 { return nil }
            buffer.append(contentsOf: scratch[0..<count])
        }
    }

    /// Reads and parses the next line; `nil` at end of stream.
    public func receive() throws -> JSONValue? {
        guard let line = try readLine() else { return nil }
        return try JSONValue(parsing: line)
    }
}

/// `send` with `MSG_NOSIGNAL` (a free function: in ``LineSocket`` the name
/// is its own method's).
private func sendWithoutSignal(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
}
