import Testing

@testable import OffstageDaemon

@Suite("gpsd device reports")
struct GPSDControlTests {
    let device = "/dev/pts/7"

    @Test func aDeviceIsActivatedWhateverTheOrderOfItsMembers() {
        let listed = #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/3","activated":"2026-11-22T01:00:00.000Z"},{"class":"DEVICE","activated":"2026-11-22T01:00:01.000Z","driver":"NMEA0183","path":"/dev/pts/7"}]}"#
        #expect(GPSDControl.reportsActivated(device, line: listed))
        let single = #"{"class":"DEVICE","activated":"2026-11-22T01:00:01.000Z","path":"/dev/pts/7"}"#
        #expect(GPSDControl.reportsActivated(device, line: single))
    }

    @Test func anotherDeviceOrOneNotActivatedIsNot() {
        let other = #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/3","activated":"2026-11-22T01:00:00.000Z"}]}"#
        #expect(!GPSDControl.reportsActivated(device, line: other))
        let inactive = #"{"class":"DEVICE","path":"/dev/pts/7","driver":"NMEA0183"}"#
        #expect(!GPSDControl.reportsActivated(device, line: inactive))
        let prefix = #"{"class":"DEVICE","path":"/dev/pts/70","activated":"2026-11-22T01:00:01.000Z"}"#
        #expect(!GPSDControl.reportsActivated(device, line: prefix))
        #expect(!GPSDControl.reportsActivated(device, line: #"{"class":"VERSION","release":"3.22"}"#))
        #expect(!GPSDControl.reportsActivated(device, line: "not json"))
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// `gps feed --gpsd HOST:PORT` checks that something answers there before
/// it adds its device: at the host given, in every address it has.
@Suite("gpsd connection checks")
struct GPSDConnectionTests {
    /// A TCP listener on `address` (`::1` or `127.0.0.1`) at a free port,
    /// with the backlog given; its socket and port.
    func listener(on address: String, backlog: Int32 = 8) throws -> (fd: Int32, port: Int) {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var storage = sockaddr_storage()
        var length: socklen_t
        if v6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            try #require(inet_pton(AF_INET6, address, &a.sin6_addr) == 1)
            withUnsafeBytes(of: a) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            try #require(inet_pton(AF_INET, address, &a.sin_addr) == 1)
            withUnsafeBytes(of: a) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        try withUnsafeMutablePointer(to: &storage) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try #require(bind(fd, $0, length) == 0)
                try #require(listen(fd, backlog) == 0)
                try #require(getsockname(fd, $0, &length) == 0)
            }
        }
        let port = withUnsafeBytes(of: storage) { bytes in
            UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self))
        }
        return (fd, Int(port))
    }

    /// A gpsd listening on IPv6 loopback only answers at `::1`: the check
    /// connected to 127.0.0.1 whatever the host.
    @Test(.enabled(if: hasIPv6Loopback(), "no ::1 on this machine"))
    func aListenerOnIPv6LoopbackOnlyIsFoundAtItsHost() throws {
        let (fd, port) = try listener(on: "::1")
        defer { close(fd) }
        #expect(GPSDControl.connectionFailure(GPSDEndpoint(host: "::1", port: port)) == nil)
        #expect(GPSDControl.connectionFailure(GPSDEndpoint(host: "127.0.0.1", port: port)) == "Connection refused")
    }

    /// A listener that takes no more connections (its backlog full) is
    /// reported as not answering: it said "Operation now in progress".
    @Test func aListenerThatDoesNotAnswerIsSaidNotToAnswer() throws {
        let (fd, port) = try listener(on: "127.0.0.1", backlog: 0)
        defer { close(fd) }
        // Connections nobody accepts fill the backlog; later ones hang.
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<2 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            try #require(filler >= 0)
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = UInt16(port).bigEndian
            a.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            fillers.append(filler)
        }
        // Queued: the first filler's handshake is done (else the kernel may
        // still answer the next connection with a SYN cookie).
        var queued = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        try #require(poll(&queued, 1, 5_000) == 1)
        let failure = GPSDControl.connectionFailure(GPSDEndpoint(host: "127.0.0.1", port: port), within: .milliseconds(200))
        #expect(failure == "no answer within 0.2 s")
    }

    @Test func aHostThatDoesNotResolveIsSaidSo() {
        let failure = GPSDControl.connectionFailure(GPSDEndpoint(host: "no-such-host.invalid", port: 2947))
        #expect(failure?.hasPrefix("resolve no-such-host.invalid: ") == true, "\(failure ?? "nil")")
    }
}

/// Whether this machine has IPv6 loopback (a socket can be bound to ::1).
func hasIPv6Loopback() -> Bool {
    let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    } == 0
}
