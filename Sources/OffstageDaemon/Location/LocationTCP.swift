#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Small loopback TCP and Unix-socket helpers for driving gpsd.
enum LocationSocket {
    /// A TCP port that is free on 127.0.0.1 right now.
    static func freeLoopbackPort() throws -> Int {
        let fd = try LocationSystemError.check("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        defer { close(fd) }
        var address = loopback(port: 0)
        try LocationSystemError.check("bind") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try LocationSystemError.check("getsockname") {
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:port.
    static func isListening(port: Int) -> Bool {
        // Bounded: a listener whose backlog is full keeps a connect waiting for minutes.
        guard let fd = try? connectLoopback(port: port, timeout: .seconds(1)) else { return false }
        close(fd)
        return true
    }

    /// Whether gpsd answers on 127.0.0.1:port: it greets every client with
    /// its `VERSION` report at once; another program on the port does not.
    static func isGPSD(port: Int, within timeout: Duration = .milliseconds(500)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        guard let fd = try? connectLoopback(port: port, timeout: timeout) else { return false }
        defer { close(fd) }
        return readLines(fd, until: deadline) { $0.hasPrefix("{") && $0.contains(#""class":"VERSION""#) }
    }

    /// A connected TCP socket to 127.0.0.1:port.
    static func connectLoopback(port: Int, timeout: Duration? = nil) throws(LocationSystemError) -> Int32 {
        try connectTCP(host: "127.0.0.1", port: port, timeout: timeout)
    }

    /// A TCP socket connected to `host`:port, trying each of its addresses
    /// in turn, as libgps does (`localhost` may be ::1 as well as
    /// 127.0.0.1). An address whose family this machine lacks is passed over.
    /// - Parameter timeout: how long all the tries may take together
    ///   (Linux applies the send timeout to a connect; running out is
    ///   `EINPROGRESS`); nil: the kernel's, minutes against a listener
    ///   whose backlog is full.
    /// - Throws: the first address's that took no connection within the
    ///   time (something may be there), else the last address's error.
    static func connectTCP(host: String, port: Int, timeout: Duration? = nil) throws(LocationSystemError) -> Int32 {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let list else {
            let reason = resolved == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(resolved))
            throw LocationSystemError("resolve \(host)", detail: reason)
        }
        defer { freeaddrinfo(list) }
        let name = "connect \(host):\(port)"
        var failure = LocationSystemError(name, detail: "no address")
        var unanswered: LocationSystemError?
        for entry in sequence(first: list, next: { $0.pointee.ai_next }) {
            let address = entry.pointee
            var limit: timeval?
            if let deadline {
                // SO_SNDTIMEO 0 is no limit at all: the time left must be some.
                let left = deadline - ContinuousClock.now
                guard left >= .milliseconds(1) else {
                    unanswered = unanswered ?? LocationSystemError(name, errno: EINPROGRESS)
                    break
                }
                let (seconds, attoseconds) = left.components
                limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            }
            let fd = socket(address.ai_family, address.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.ai_protocol)
            guard fd >= 0 else {
                failure = LocationSystemError("socket", errno: errno)
                continue
            }
            if var limit { setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) }
            if connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return fd }
            let code = errno
            close(fd)
            failure = LocationSystemError(name, errno: code)
            if code == EINPROGRESS { unanswered = unanswered ?? failure }
        }
        throw unanswered ?? failure
    }

    /// A connected Unix stream socket.
    static func connectUnix(path: String) throws -> Int32 {
        let fd = try LocationSystemError.check("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw LocationSystemError("connect \(path)", detail: "path too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if rc != 0 {
            let code = errno
            close(fd)
            throw LocationSystemError("connect \(path)", errno: code)
        }
        return fd
    }

    /// Writes all bytes of a string.
    static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = try LocationSystemError.check("send") {
                bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            }
            offset += n
        }
    }

    /// Reads lines until `done` returns true for one, or the deadline passes.
    static func readLines(_ fd: Int32, until deadline: ContinuousClock.Instant, _ done: (String) -> Bool) -> Bool {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            let ms = Int32(max(1, min(200, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, ms) > 0 else { continue }
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return false }
            pending.append(contentsOf: buffer[0..<n])
            while let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if done(line) { return true }
            }
        }
        return false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
