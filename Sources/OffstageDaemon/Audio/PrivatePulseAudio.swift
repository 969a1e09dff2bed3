import Foundation
import OffstageCore
import OffstageProtocol
import Synchronization

/// A headless PulseAudio server of our own, for tests and the demo: two
/// null sinks standing for the speaker and the headphones (paced in real
/// time), and the role-cork policy that makes a `phone` stream interrupt
/// `music` streams.
///
/// It runs `pulseaudio -n -F DIR/offstage.pa --daemonize=no` with its
/// runtime and state in DIR, listening on `DIR/native` only; clients reach
/// it through ``serverAddress`` (what `PULSE_SERVER` would hold).
public final class PrivatePulseAudio: Sendable {
    private let process = Mutex<ChildProcess?>(nil)
    /// The log's size when the server last started: what it logged before
    /// (a named directory keeps its log across runs) is not this run's.
    private let logStart = Mutex<UInt64>(0)
    private let exitWhenIdle: Duration?
    /// The temporary directory made for this server, removed with it (or
    /// by a later server's sweep, should this process be killed outright);
    /// nil for a directory the caller named, which keeps everything but
    /// what the server made there (its log stays).
    private let owned: OwnedTemporaryDirectory?
    /// In a named directory, the server's files that were not there
    /// before it (or that a killed predecessor made): the only ones
    /// removed at the end.
    private let madeHere: [String]
    /// In a named directory, the modes of the user's own `run` and `state`
    /// directories, which PulseAudio makes private (0700): given back at
    /// the end.
    private let modesToRestore: [String: mode_t]
    /// In a named directory, the `flock`ed ``lockName`` held while this
    /// server lives (-1 for a temporary one, locked by its owner file).
    private let lock: Int32

    /// The lock file in a named directory: two commands started at once on
    /// one directory both saw no server answering, both started one, and
    /// both said they ran one, the second answering nobody.
    static let lockName = "offstage.lock"

    /// The directory holding the socket, the configuration and the log.
    public let directory: URL
    /// The address for clients: `unix:DIR/native`.
    public var serverAddress: String { "unix:" + socketPath }
    /// The server's native-protocol socket.
    public var socketPath: String { directory.appendingPathComponent("native").path }
    /// The server's log.
    public var logPath: String { directory.appendingPathComponent("pulseaudio.log").path }

    /// The sink standing for the speaker.
    public static let speakerSink = "offstage_speaker"
    /// The sink standing for wired headphones.
    public static let headphonesSink = "offstage_headphones"

    /// The arguments of `load-module module-null-sink` for the headphones.
    public static let headphonesModuleArguments =
        "sink_name=\(headphonesSink) rate=48000 channels=2 sink_properties=\"device.description=Headphones device.form_factor=headphone\""

    /// Where PulseAudio is installed.
    public static func executable() -> String? {
        for dir in ["/usr/bin", "/usr/local/bin"] + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) {
            let path = "\(dir)/pulseaudio"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts a server and waits (up to `timeout`) until its socket accepts.
    /// - Parameters:
    ///   - directory: where to keep its files; a new temporary one if nil.
    ///     A named directory is created if needed (one level: its parent
    ///     must exist) and never removed: only the files the server makes
    ///     there that were not there before are, when it is done (with the
    ///     lock file, and those a predecessor killed outright made, as its
    ///     record in the lock file names them), and never its log. It may not hold a running server's socket, a `native`
    ///     that is not a socket or an `offstage.pa` offstage did not write,
    ///     nor be locked by another command starting one (``lockName``).
    ///   - headphones: start with the headphones plugged in (they are then
    ///     the default output).
    ///   - exitWhenIdle: let the server exit after this long without
    ///     clients, so one left behind by a killed test or benchmark does
    ///     not live on (nil: it runs until stopped).
    /// - Throws: ``AudioError`` `serverUnavailable` with the server's last log line.
    public init(
        directory: URL? = nil, headphones: Bool = false, exitWhenIdle: Duration? = nil, timeout: Duration = .seconds(10)
    ) throws(AudioError) {
        // Checked before the properties are set: a throw then runs no
        // deinit, which would remove the running server's socket.
        var lock: Int32 = -1
        var lockMade = false
        if let directory {
            try Self.checkSocketPath(in: directory)
            switch FileKind(atPath: directory.path) {
            case .directory?: break
            case nil:
                // One level only: a slip in a long path made every missing directory in it.
                guard mkdir(directory.path, 0o700) == 0 else {
                    let reason = errno == ENOENT ? "there is no directory \(directory.deletingLastPathComponent().path)" : String(cString: strerror(errno))
                    throw AudioError(.serverUnavailable, "cannot prepare \(directory.path) for PulseAudio: \(reason)")
                }
            default:
                throw AudioError(.serverUnavailable, "cannot prepare \(directory.path) for PulseAudio: it is not a directory")
            }
            (lock, lockMade) = try Self.lockDirectory(directory)
            func refuse(_ message: String) -> AudioError {
                if lockMade { unlink(directory.appendingPathComponent(Self.lockName).path) }
                close(lock)
                return AudioError(.serverUnavailable, message)
            }
            let native = directory.appendingPathComponent("native").path
            if Self.accepts(socket: native) {
                throw refuse("a sound server is already running in \(directory.path) (its socket answers)")
            }
            // The socket's name is taken: a stale socket is replaced, anything else kept.
            if let kind = FileKind(atPath: native, followingLinks: false), kind != .socket {
                throw refuse("\(native) exists and is not a socket; name another directory")
            }
            // So is the startup script's: one offstage wrote (a command
            // killed outright leaves it) is written again, anything else
            // kept (a user's was overwritten).
            let script = directory.appendingPathComponent("offstage.pa").path
            if let kind = FileKind(atPath: script, followingLinks: false) {
                let text = kind == .regular ? try? String(contentsOfFile: script, encoding: .utf8) : nil
                guard let text, [false, true].map({ Self.configuration(socket: native, headphones: $0) }).contains(text) else {
                    throw refuse("\(script) exists and is not a startup script offstage wrote; name another directory")
                }
            }
        }
        self.exitWhenIdle = exitWhenIdle
        self.lock = lock
        if let directory {
            owned = nil
            self.directory = directory
            // What a predecessor killed outright made is this server's to
            // remove (it stayed for good), and the modes it was to restore
            // are the user's.
            let inherited = DirectoryRecord(readingFrom: lock)
            let absent = ["native", "offstage.pa", "run", "state", "cookie"].filter {
                !FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path)
            }
            // Only what is still the file it made: one the user has made since under its name is theirs.
            let left = inherited.made.filter { $0.isStill(in: directory) }
            madeHere = Array(Set(absent).union(left.map(\.name)).subtracting([Self.lockName])).sorted() + [Self.lockName]
            var modes = inherited.modes
            for name in ["run", "state"] where !madeHere.contains(name) && modes[name] == nil {
                var info = stat()
                if lstat(directory.appendingPathComponent(name).path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                    modes[name] = info.st_mode & 0o7777
                }
            }
            modesToRestore = modes
        } else {
            madeHere = []
            modesToRestore = [:]
            let made: OwnedTemporaryDirectory
            do {
                made = try OwnedTemporaryDirectory(prefix: "offstage-pulse")
            } catch {
                throw AudioError(.serverUnavailable, "cannot prepare \(error.path) for PulseAudio: \(error.reason)")
            }
            do throws(AudioError) {
                try Self.checkSocketPath(in: made.url)
            } catch {
                made.remove()
                throw error
            }
            owned = made
            self.directory = made.url
        }
        do {
            try Self.configuration(socket: socketPath, headphones: headphones)
                .write(to: self.directory.appendingPathComponent("offstage.pa"), atomically: true, encoding: .utf8)
        } catch {
            throw AudioError(.serverUnavailable, "cannot prepare \(self.directory.path) for PulseAudio: \(error.localizedDescription)")
        }
        try start(timeout: timeout)
        recordWhatWasMade()
    }

    /// Writes the record of what the server made in a named directory (now
    /// that it has made it) and the modes to give back, for a successor
    /// should this process be killed outright.
    private func recordWhatWasMade() {
        guard lock >= 0 else { return }
        let made = madeHere.filter { $0 != Self.lockName }.compactMap { DirectoryRecord.Made(marking: $0, in: directory) }
        DirectoryRecord(made: made, modes: modesToRestore).write(to: lock)
    }

    /// The longest path a Unix socket takes: `sun_path` less its NUL.
    static let maximumSocketPath = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Refuses a directory whose socket path a Unix socket cannot take:
    /// the server then never answered, and the start failed after its
    /// 10 s timeout.
    private static func checkSocketPath(in directory: URL) throws(AudioError) {
        let socket = directory.appendingPathComponent("native").path
        guard socket.utf8.count > maximumSocketPath else { return }
        throw AudioError(
            .serverUnavailable,
            "cannot prepare \(directory.path) for PulseAudio: its socket path, \(socket), is \(socket.utf8.count) bytes long; "
                + "a Unix socket takes at most \(maximumSocketPath)")
    }

    /// Takes the named directory's lock, or says who holds it.
    /// - Returns: the locked descriptor, and whether the file was made here.
    private static func lockDirectory(_ directory: URL) throws(AudioError) -> (Int32, Bool) {
        let path = directory.appendingPathComponent(lockName).path
        while true {
            let made = !FileManager.default.fileExists(atPath: path)
            let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw AudioError(.serverUnavailable, "cannot prepare \(directory.path) for PulseAudio: \(path): \(String(cString: strerror(errno)))")
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let error = errno
                close(fd)
                guard error == EWOULDBLOCK else {
                    throw AudioError(.serverUnavailable, "cannot lock \(path): \(String(cString: strerror(error)))")
                }
                throw AudioError(
                    .serverUnavailable, "another offstage command is starting or running a sound server in \(directory.path) (it holds \(lockName))")
            }
            // Its holder may have removed the file (stopping) after this
            // process opened it: a lock on a name nobody sees is no lock.
            if isStill(fd, namedBy: path) { return (fd, made) }
            close(fd)
        }
    }

    /// The server's startup script.
    static func configuration(socket: String, headphones: Bool) -> String {
        var lines = [
            "load-module module-native-protocol-unix socket=\(socket) auth-anonymous=1 auth-cookie-enabled=0",
            "load-module module-null-sink sink_name=\(speakerSink) rate=48000 channels=2 sink_properties=\"device.description=Speaker device.form_factor=speaker\"",
        ]
        if headphones { lines.append("load-module module-null-sink \(headphonesModuleArguments)") }
        lines += [
            "set-default-sink \(headphones ? headphonesSink : speakerSink)",
            // Streams move to a new output when it appears (headphones plugged
            // in); null sinks are "virtual", which it ignores by default.
            "load-module module-switch-on-connect ignore_virtual=no",
            "load-module module-role-cork trigger_roles=phone cork_roles=music",
            // An idle null sink renders in 2 s blocks and picks up a new
            // stream's latency only at the next block: suspended instead,
            // it starts afresh at the stream's latency, so timing is exact.
            "load-module module-suspend-on-idle timeout=0",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    private func start(timeout: Duration) throws(AudioError) {
        guard let pulseaudio = Self.executable() else {
            throw AudioError(.serverUnavailable, "PulseAudio is not installed (apt-get install pulseaudio)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_RUNTIME_PATH"] = directory.appendingPathComponent("run").path
        environment["PULSE_STATE_PATH"] = directory.appendingPathComponent("state").path
        environment["PULSE_COOKIE"] = directory.appendingPathComponent("cookie").path
        let arguments = [
            "-n", "-F", directory.appendingPathComponent("offstage.pa").path, "--daemonize=no", "--use-pid-file=no",
            "--exit-idle-time=\(exitWhenIdle.map { String(max(1, $0.components.seconds)) } ?? "-1")",
            "--log-target=stderr", "--disallow-exit=no",
        ] + (ProcessInfo.processInfo.environment["OFFSTAGE_PULSE_VERBOSE"] != nil ? ["-vvvv"] : [])
        unlink(socketPath)
        logStart.withLock { $0 = (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? UInt64) ?? 0 }
        let child: ChildProcess
        do {
            child = try ChildProcess(executable: pulseaudio, arguments: arguments, environment: environment, logPath: logPath)
        } catch {
            throw AudioError(.serverUnavailable, "cannot start \(pulseaudio): \(error)")
        }
        process.withLock { $0 = child }
        let deadline = ContinuousClock.now + timeout
        while !isAccepting {
            if !child.isRunning || ContinuousClock.now > deadline {
                stop()
                throw AudioError(
                    .serverUnavailable, "PulseAudio did not start: \(lastLoggedError ?? "no answer in time") (log: \(logPath))")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// The last error line (`E: …`) the server logged since it last started, if any.
    public var lastLoggedError: String? {
        guard let log = FileHandle(forReadingAtPath: logPath) else { return nil }
        defer { try? log.close() }
        try? log.seek(toOffset: logStart.withLock { $0 })
        guard let data = try? log.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("E:") })
            .map(String.init)
    }

    /// Whether the server's socket accepts connections.
    public var isAccepting: Bool { Self.accepts(socket: socketPath) }

    private static func accepts(socket: String) -> Bool { (try? LineSocket(connectingTo: socket)) != nil }

    /// Whether the server process is running.
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Stops the server (SIGTERM) and waits for it to exit.
    public func stop() {
        process.withLock { child in
            child?.stop()
            child = nil
        }
    }

    /// Blocks until the server process exits (stopped, killed or crashed).
    /// - Returns: how it ended (nil: it was already reaped).
    @discardableResult
    public func waitUntilExited() -> ExitStatus? {
        process.withLock { $0 }?.waitUntilExited()
    }

    /// Stops the server and removes what it made: the whole directory if
    /// it is a temporary one, else the files it made there (not its log).
    public func stopAndRemoveFiles() {
        stop()
        if let owned {
            owned.remove()
        } else {
            for (name, mode) in modesToRestore {
                chmod(directory.appendingPathComponent(name).path, mode)
            }
            for made in madeHere {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(made))
            }
        }
    }

    /// Kills the server (SIGKILL), as a crash would, and waits for it.
    public func kill() {
        process.withLock { child in
            child?.stop(signal: SIGKILL)
            child = nil
        }
    }

    /// Starts the server again in the same directory, on the same socket.
    public func restart(timeout: Duration = .seconds(10)) throws(AudioError) {
        stop()
        try start(timeout: timeout)
        recordWhatWasMade()
    }

    deinit {
        stopAndRemoveFiles()
        if lock >= 0 { close(lock) }
    }
}

/// What a server in a named directory made there and the modes it is to
/// give back, kept in the directory's lock file while it runs: a command
/// killed outright (SIGKILL) cannot clean up, and the next one to take the
/// lock finishes the job. Lines of `made NAME DEVICE INODE [MARK]` and
/// `mode NAME OCTAL`.
struct DirectoryRecord: Equatable {
    /// A file or directory the server made.
    struct Made: Equatable {
        var name: String
        /// The file it made, which a file the user made since under that
        /// name is not (unless the kernel gave the new one the same inode).
        var identity: FileIdentity
        /// In a directory it made, the content of its ``markName`` file:
        /// a directory deleted and made again may get the same inode, and
        /// it is removed with all it holds.
        var mark: String?

        static let markName = ".offstage-made"

        init(name: String, identity: FileIdentity, mark: String? = nil) {
            self.name = name
            self.identity = identity
            self.mark = mark
        }

        /// The file `name` in `directory`, as it is now; a directory is
        /// marked as the server's. Nil when there is none.
        init?(marking name: String, in directory: URL) {
            let path = directory.appendingPathComponent(name).path
            guard let identity = FileIdentity(of: path) else { return nil }
            var mark: String?
            if FileKind(atPath: path, followingLinks: false) == .directory {
                let text = UUID().uuidString
                guard (try? text.write(toFile: path + "/" + Self.markName, atomically: false, encoding: .utf8)) != nil else { return nil }
                mark = text
            }
            self.init(name: name, identity: identity, mark: mark)
        }

        /// Whether `directory` still holds this file: the same inode, and for
        /// a directory the same mark.
        func isStill(in directory: URL) -> Bool {
            let path = directory.appendingPathComponent(name).path
            guard FileIdentity(of: path) == identity else { return false }
            guard let mark else { return FileKind(atPath: path, followingLinks: false) != .directory }
            return (try? String(contentsOfFile: path + "/" + Self.markName, encoding: .utf8)) == mark
        }
    }

    var made: [Made] = []
    var modes: [String: mode_t] = [:]

    init(made: [Made], modes: [String: mode_t]) {
        self.made = made
        self.modes = modes
    }

    /// The record in the lock file `fd` (empty when there is none).
    init(readingFrom fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = pread(fd, &bytes, bytes.count, 0)
        self.init(parsing: count > 0 ? String(decoding: bytes.prefix(count), as: UTF8.self) : "")
    }

    /// Reads a record; a line it cannot read is left out: only the names a
    /// server makes are taken.
    init(parsing text: String) {
        let names: Set<String> = ["native", "offstage.pa", "run", "state", "cookie"]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            switch (words.first, words.count) {
            case ("made", 4...5) where names.contains(words[1]):
                let mark = words.count == 5 ? words[4] : nil
                if let device = UInt64(words[2]), let inode = UInt64(words[3]), mark?.isEmpty != true {
                    made.append(Made(name: words[1], identity: FileIdentity(device: device, inode: inode), mark: mark))
                }
            case ("mode", 3) where ["run", "state"].contains(words[1]):
                if let mode = mode_t(words[2], radix: 8), mode <= 0o7777 { modes[words[1]] = mode }
            default:
                continue
            }
        }
    }

    var text: String {
        let madeLines = made.map { "made \($0.name) \($0.identity.device) \($0.identity.inode)\($0.mark.map { " " + $0 } ?? "")\n" }
        return (madeLines + modes.sorted { $0.key < $1.key }.map { "mode \($0.key) \(String($0.value, radix: 8))\n" }).joined()
    }

    /// Replaces the lock file's content with this record: written first,
    /// then cut to its length, so a death between the two leaves a record
    /// (with a stale tail a reader skips), never an empty one.
    func write(to fd: Int32) {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(written)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            written += n
        }
        _ = ftruncate(fd, off_t(bytes.count))
    }
}

/// A file as the kernel tells one from another: its device and inode.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The file at `path` (not following a link); nil when there is none.
    init?(of path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
