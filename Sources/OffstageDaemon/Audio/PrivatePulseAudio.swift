import Foundation
import OffstageCore
import OffstageProtocol
import Synchronization

/// A headless PulseAudio server of our own, for tests and the demo: two
/// null sinks standing for the speaker and the headphones (paced in real
/// time), and the role-cork policy that makes a `phone` stream interrupt
/// `music` streams.
///
/// It runs `pulseaudio -n -F DIR/offstage.pa --daemonize=no`, listening on
/// `DIR/native` only, with its runtime, state and cookie in a directory of
/// its own (DIR itself when DIR is temporary); clients reach it through
/// ``serverAddress`` (what `PULSE_SERVER` would hold).
public final class PrivatePulseAudio: Sendable {
    private let process = Mutex<ChildProcess?>(nil)
    /// The log's size when the server last started: what it logged before
    /// (a named directory keeps its log across runs) is not this run's.
    private let logStart = Mutex<UInt64>(0)
    private let exitWhenIdle: Duration?
    /// The server's own temporary directory, for its runtime, state and
    /// cookie: ``directory`` itself unless one was named, else
    /// `DIR/offstage-pulse-UUID`. Removed with the server, or by a later
    /// server's sweep should this process be killed outright. So a named
    /// directory's `run` or `state` of the user's is never the server's.
    private let owned: OwnedTemporaryDirectory
    /// In a named directory, the server's files beside its own directory
    /// (its socket, startup script and lock; each one found there was a
    /// predecessor's, or it was refused): removed at the end. Its log stays.
    private let madeHere: [String]
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
        let made: OwnedTemporaryDirectory
        do {
            // In a named directory, its sweep takes what a predecessor killed outright left.
            made = try OwnedTemporaryDirectory(prefix: "offstage-pulse", in: directory ?? FileManager.default.temporaryDirectory)
        } catch {
            if let directory, lockMade { unlink(directory.appendingPathComponent(Self.lockName).path) }
            if lock >= 0 { close(lock) }
            throw AudioError(.serverUnavailable, "cannot prepare \(error.path) for PulseAudio: \(error.reason)")
        }
        owned = made
        if let directory {
            self.directory = directory
            madeHere = ["native", "offstage.pa", Self.lockName]
        } else {
            madeHere = []
            do throws(AudioError) {
                try Self.checkSocketPath(in: made.url)
            } catch {
                made.remove()
                throw error
            }
            self.directory = made.url
        }
        do {
            try Self.configuration(socket: socketPath, headphones: headphones)
                .write(to: self.directory.appendingPathComponent("offstage.pa"), atomically: true, encoding: .utf8)
        } catch {
            throw AudioError(.serverUnavailable, "cannot prepare \(self.directory.path) for PulseAudio: \(error.localizedDescription)")
        }
        try start(timeout: timeout)
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
        environment["PULSE_RUNTIME_PATH"] = owned.url.appendingPathComponent("run").path
        environment["PULSE_STATE_PATH"] = owned.url.appendingPathComponent("state").path
        environment["PULSE_COOKIE"] = owned.url.appendingPathComponent("cookie").path
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
        owned.remove()
        for made in madeHere {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(made))
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
    }

    deinit {
        stopAndRemoveFiles()
        if lock >= 0 { close(lock) }
    }
}
