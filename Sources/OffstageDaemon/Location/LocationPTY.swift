#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pseudo-terminal pair to feed NMEA into gpsd as if from a serial GPS.
///
/// gpsd opens ``devicePath`` (the slave side); we write to the master. We
/// also keep the slave open ourselves, in raw mode, so that nothing is lost
/// or echoed while gpsd opens, closes or restarts. Writes wait while the
/// terminal's buffer is full, which paces a feed to what gpsd takes; a
/// writer can give up meanwhile (gpsd went away: nobody reads the
/// terminal, and a blocking write waited for good).
///
/// Both descriptors are close-on-exec: a child spawned meanwhile (a gpsd
/// for another device) must not hold the terminal open.
public final class LocationPTY: Sendable {
    /// The device path to give gpsd, e.g. `/dev/pts/3`.
    public let devicePath: String
    private let master: Int32
    private let slave: Int32

    /// Opens a new pair.
    public init() throws {
        // posix_openpt/unlockpt/ptsname are not exported to Swift; do what
        // they do on Linux: open the multiplexer, unlock, ask the number.
        let m = try LocationSystemError.check("open /dev/ptmx") { open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC) }
        do {
            var unlock: Int32 = 0
            try LocationSystemError.check("unlock pty") { ioctl(m, Self.setLock, &unlock) }
            var number: UInt32 = 0
            try LocationSystemError.check("pty number") { ioctl(m, Self.getNumber, &number) }
            let path = "/dev/pts/\(number)"
            let s = try LocationSystemError.check("open \(path)") { open(path, O_RDWR | O_NOCTTY | O_CLOEXEC) }
            // gpsd drops root for its own user (group dialout) before it
            // opens devices added at run time: let that group use the pty.
            if let group = getgrnam("dialout") { fchown(s, uid_t.max, group.pointee.gr_gid) }
            fchmod(s, 0o660)
            var attributes = termios()
            tcgetattr(s, &attributes)
            cfmakeraw(&attributes)
            tcsetattr(s, TCSANOW, &attributes)
            tcgetattr(m, &attributes)
            cfmakeraw(&attributes)
            tcsetattr(m, TCSANOW, &attributes)
            // Writes wait in poll, where they can give up (see write(_:whileWaiting:)).
            _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
            devicePath = path
            slave = s
            master = m
        } catch {
            close(m)
            throw error
        }
    }

    /// `TIOCSPTLCK` and `TIOCGPTN` (the same on x86-64 and arm64 Linux).
    private static let setLock: UInt = 0x4004_5431
    private static let getNumber: UInt = 0x8004_5430

    deinit {
        close(master)
        close(slave)
    }

    /// Writes all of `text`, waiting while the terminal is full; every
    /// quarter of a second of waiting, `check` may end the wait by throwing.
    public func write(_ text: String, whileWaiting check: () throws -> Void = {}) throws {
        var text = text
        try text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(master, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0, errno == EAGAIN || errno == EINTR {
                    var writable = pollfd(fd: master, events: Int16(POLLOUT), revents: 0)
                    if poll(&writable, 1, 250) == 0 { try check() }
                    continue
                }
                offset += try LocationSystemError.check("write \(devicePath)") { n }
            }
        }
    }

    /// Discards what gpsd wrote to the device (it should write nothing
    /// when started with `-b`); keeps the master's input from filling up.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, 0) > 0, poller.revents & Int16(POLLIN) != 0 {
            if read(master, &buffer, buffer.count) <= 0 { return }
        }
    }
}
