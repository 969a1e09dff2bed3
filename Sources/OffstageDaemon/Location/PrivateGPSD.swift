import Foundation
import Synchronization

/// A gpsd of our own: started on a loopback port with a private control
/// socket, reading the devices given, stopped with ``stop()``.
///
/// It runs `gpsd -N -n -b -S PORT -F DIR/gpsd.sock DEVICE...`: in the
/// foreground, opening the devices at once (`-n`), read-only (`-b`, no
/// probe strings written to the device), listening on loopback only.
public final class PrivateGPSD: Sendable {
    private let process = Mutex<ChildProcess?>(nil)

    /// The client port.
    public let port: Int
    /// The control socket (for ``GPSDControl/addDevice(_:controlSocket:)``).
    public let controlSocket: String
    /// The devices it reads.
    public let devices: [String]
    /// The directory holding the socket and gpsd's log (locked while we
    /// live, so a later gpsd's sweep removes it should we be killed outright).
    private let owned: OwnedTemporaryDirectory
    public var directory: URL { owned.url }

    /// The endpoint for clients.
    public var endpoint: GPSDEndpoint { GPSDEndpoint(host: "127.0.0.1", port: port) }

    /// What `gps feed` says of the private gpsd it started. On another port
    /// than 2947 (taken: Debian's socket-activated gpsd holds it), how to
    /// watch it: `gps watch` looks on 2947 by default, and would wait there
    /// in silence.
    public static func started(on endpoint: GPSDEndpoint, reading device: String) -> String {
        let elsewhere =
            endpoint.port == GPSDEndpoint.default.port
            ? "" : " Port \(GPSDEndpoint.default.port) is taken (by another gpsd?): watch this one with offstage gps watch --gpsd \(endpoint)"
        return "Started a private gpsd on \(endpoint) reading \(device); it stops when this command ends.\(elsewhere)"
    }

    /// Where gpsd is installed.
    public static func executable() -> String? {
        for dir in ["/usr/sbin", "/usr/local/sbin", "/usr/bin", "/sbin"] + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) {
            let path = "\(dir)/gpsd"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts gpsd and waits (up to `timeout`) until its port answers and,
    /// when it is given devices, lists the first one (so that it is ours,
    /// not another gpsd that took the port first).
    /// - Parameters:
    ///   - port: the port; a free one if nil.
    ///   - preferred: with no `port`, the one to try first; a free one when
    ///     it is taken (another command may have just taken it).
    public init(devices: [String], port: Int? = nil, preferring preferred: Int? = nil, timeout: Duration = .seconds(10)) throws {
        guard let gpsd = Self.executable() else {
            throw LocationSystemError("start gpsd", detail: "gpsd is not installed (apt-get install gpsd)")
        }
        // gpsd drops root for the `gpsd` user, which must reach the socket.
        let owned: OwnedTemporaryDirectory
        do {
            owned = try OwnedTemporaryDirectory(prefix: "offstage-gpsd", permissions: 0o755)
        } catch {
            throw LocationSystemError("start gpsd", detail: error.description)
        }
        let directory = owned.url
        let controlSocket = directory.appendingPathComponent("gpsd.sock").path
        // A free port can be taken by someone else before gpsd binds it: then
        // gpsd fails to start, and another free port is tried.
        var attempt = 1
        var started: (port: Int, process: ChildProcess)
        while true {
            do {
                let chosen = try port ?? (attempt == 1 ? preferred : nil) ?? LocationSocket.freeLoopbackPort()
                let process = try Self.start(
                    gpsd: gpsd, port: chosen, devices: devices, controlSocket: controlSocket, directory: directory,
                    timeout: timeout)
                started = (chosen, process)
                break
            } catch where port == nil && attempt < 3 {
                attempt += 1
            } catch {
                owned.remove()
                throw error
            }
        }
        self.port = started.port
        self.devices = devices
        self.owned = owned
        self.controlSocket = controlSocket
        process.withLock { $0 = started.process }
    }

    private func start(gpsd: String, timeout: Duration) throws {
        let started = try Self.start(
            gpsd: gpsd, port: port, devices: devices, controlSocket: controlSocket, directory: directory,
            timeout: timeout)
        process.withLock { $0 = started }
    }

    /// Spawns gpsd and waits until it answers on its port (and reads our
    /// device); stops it on failure.
    private static func start(
        gpsd: String, port: Int, devices: [String], controlSocket: String, directory: URL, timeout: Duration
    ) throws -> ChildProcess {
        let log = directory.appendingPathComponent("gpsd.log")
        // A failed attempt's log would fail this one at its first look, and
        // its control socket would keep this gpsd from making its own.
        try? FileManager.default.removeItem(at: log)
        unlink(controlSocket)
        let p: ChildProcess
        do {
            p = try ChildProcess(
                executable: gpsd, arguments: ["-N", "-n", "-b", "-S", String(port), "-F", controlSocket] + devices,
                logPath: log.path)
        } catch {
            // Its log, not gpsd, when the log could not be opened.
            if case .output = error { throw LocationSystemError("open gpsd's log \(log.path)", errno: error.errno) }
            throw LocationSystemError("spawn \(gpsd)", errno: error.errno)
        }
        let deadline = ContinuousClock.now + timeout
        // Started once the port answers with gpsd's greeting and, given a
        // device, lists ours. Another program (or another gpsd) may hold
        // 127.0.0.1:port: gpsd then says it cannot bind it but keeps running
        // on ::1, which our clients do not use. And the port may answer for
        // another gpsd that took it first (two commands started at once),
        // ours failing to bind it and exiting: ours is the one that reads
        // our device. The device is looked for in short looks, so that ours
        // losing the port ends the wait.
        while true {
            let started = devices.first.map {
                GPSDControl.waitForDevice($0, port: port, timeout: max(.zero, min(.milliseconds(250), deadline - ContinuousClock.now)))
            } ?? LocationSocket.isGPSD(port: port)
            if started { return p }
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let refused = text.split(separator: "\n").first { $0.contains("can't bind to IPv4 port") }
            let lostPort = refused != nil || !p.isRunning
            guard lostPort || ContinuousClock.now > deadline else {
                if devices.isEmpty { Thread.sleepBriefly() }
                continue
            }
            p.stop()
            let why: String
            if lostPort, !devices.isEmpty, LocationSocket.isGPSD(port: port) {
                why = "another gpsd answers there"
            } else if let device = devices.first, !lostPort, LocationSocket.isGPSD(port: port) {
                why = "it did not open \(device) (\(text.split(separator: "\n").last.map(String.init) ?? "its log is empty"))"
            } else {
                why = (refused ?? text.split(separator: "\n").last).map(String.init) ?? "did not answer in time"
            }
            throw LocationSystemError("start gpsd on port \(port)", detail: why)
        }
    }

    /// Whether the gpsd process is running.
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Stops gpsd (SIGTERM) and waits for it to exit.
    public func stop() {
        process.withLock { p in
            p?.stop()
            p = nil
        }
    }

    /// Stops gpsd and removes its directory (its socket and log).
    public func stopAndRemove() {
        stop()
        owned.remove()
    }

    /// Freezes gpsd (SIGSTOP): it stays, but serves nothing. For tests.
    /// - Returns: whether there was a running gpsd to freeze.
    func freeze() -> Bool {
        process.withLock { p in p.map { $0.isRunning && Glibc.kill($0.pid, SIGSTOP) == 0 } ?? false }
    }

    /// Kills gpsd abruptly (SIGKILL), as a crash would, and waits for it.
    public func kill() {
        process.withLock { p in
            p?.stop(signal: SIGKILL)
            p = nil
        }
    }

    /// Starts gpsd again on the same port, socket and devices.
    public func restart(timeout: Duration = .seconds(10)) throws {
        stop()
        guard let gpsd = Self.executable() else { throw LocationSystemError("start gpsd", detail: "gpsd is not installed") }
        try start(gpsd: gpsd, timeout: timeout)
    }

    deinit { stopAndRemove() }
}
