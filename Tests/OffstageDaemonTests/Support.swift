import Foundation
import NIOCore
@testable import OffstageDaemon
import OffstageCore
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Paths of the package: the repository root and the build products.
enum Paths {
    static let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The directory holding the test binary, the `offstage` CLI and the sample apps.
    static let products: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = (exe as NSString).deletingLastPathComponent
        // The XCTest bundle on Linux is a file in the products directory; walk up if needed.
        while !FileManager.default.fileExists(atPath: directory + "/StateLab"), directory != "/" {
            directory = (directory as NSString).deletingLastPathComponent
        }
        return directory
    }()

    static func sample(_ path: String) -> String { repository + "/samples/" + path }
}

/// The directory this test process keeps its files in, one per run. Making
/// it removes those of test processes that have exited, so runs do not pile
/// up directories in /tmp (the last run's stays, for a look after a failure).
let testRunDirectory: String = {
    let prefix = "offstage-tests-"
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? [] where entry.hasPrefix(prefix) {
        guard let pid = Int32(entry.dropFirst(prefix.count).prefix { $0 != "-" }) else { continue }
        if kill(pid, 0) != 0, errno == ESRCH { try? FileManager.default.removeItem(atPath: "/tmp/" + entry) }
    }
    var template = Array("/tmp/\(prefix)\(getpid())-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot create a directory in /tmp") }
    return String(cString: made)
}()

/// A fresh directory for one test, inside ``testRunDirectory``.
func temporaryDirectory() throws -> String {
    var template = Array((testRunDirectory + "/t-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw DaemonError(.storage, "mkdtemp failed") }
    return String(cString: made)
}

/// A private daemon for one test, on the real or the virtual clock.
struct TestDaemon {
    let daemon: RunningDaemon
    let directory: String

    static func start(
        clock: ClockMode = .real, directory: String? = nil, hangGrace: TimeAmount = .milliseconds(300),
        policy: LifecyclePolicy = .default, cgroupParent: String? = nil
    ) async throws -> TestDaemon {
        let directory = try directory ?? temporaryDirectory()
        var configuration = DaemonConfiguration(
            dataDirectory: directory + "/data", controlSocket: directory + "/control.sock",
            appSocket: directory + "/apps.sock", clock: clock, policy: policy, hangGrace: hangGrace,
            executableSearchPaths: [Paths.products])
        configuration.cgroupParent = cgroupParent
        let daemon = try await RunningDaemon.start(configuration)
        return TestDaemon(daemon: daemon, directory: directory)
    }

    /// Runs a command and returns its result, failing the test on refusal.
    @discardableResult
    func ok(_ request: JSONValue) async throws -> JSONValue {
        switch try await daemon.control(request) {
        case .ok(let result): return result
        case .failure(let message): throw DaemonError(.badRequest, "command \(request.jsonText) refused: \(message)")
        }
    }

    /// Runs a command that must be refused; returns the message.
    func refused(_ request: JSONValue) async throws -> String {
        switch try await daemon.control(request) {
        case .ok(let result): throw DaemonError(.badRequest, "command \(request.jsonText) succeeded: \(result.jsonText)")
        case .failure(let message): return message
        }
    }

    func events(kind: EventKind? = nil, app: String? = nil) async throws -> [Event] {
        try await daemon.engine.submit { $0.log.events(app: app) }.get().filter { kind == nil || $0.kind == kind }
    }

    /// Awaits (through a log subscription, not polling) until `count` events
    /// of `kind` have been logged; fails after 10 s.
    func awaitEvents(kind: EventKind, count: Int) async throws -> [Event] {
        let loop = daemon.engine.eventLoop
        let promise = loop.makePromise(of: [Event].self)
        try await daemon.engine.submit { engine in
            func matching() -> [Event] { engine.log.events().filter { $0.kind == kind } }
            if matching().count >= count { return promise.succeed(matching()) }
            var subscription = 0
            subscription = engine.log.subscribe { _ in
                guard matching().count >= count else { return }
                engine.log.unsubscribe(subscription)
                promise.succeed(matching())
            }
            promise.expire(after: .seconds(10), on: loop) {
                engine.log.unsubscribe(subscription)
                promise.fail(DaemonError(.invalidState, "fewer than \(count) \(kind) events after 10 s"))
            }
        }.get()
        return try await promise.futureResult.get()
    }

    func callbacks(_ app: String) async throws -> [String] {
        try await events(kind: .callback, app: app).map(\.name)
    }

    /// Installs and launches StateLab; its process.
    func launchStateLab() async throws -> Int32 {
        try await ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await ok(["command": "launch", "app": .string(stateLab)])
        return try #require(try await pid(stateLab))
    }

    func pid(_ app: String) async throws -> Int32? {
        try await daemon.engine.submit { $0.processes[app]?.pid }.get()
    }

    func stop() async {
        await daemon.stop()
    }
}

/// The state letter of a process from `/proc/PID/stat` (`T` = stopped by a signal).
func processState(_ pid: Int32) -> Character? { AppProcessHost.state(of: pid) }

let stateLab = "com.offstage.samples.StateLab"

/// Awaits (bounded, 5 s) until `pid`, an app the daemon in this process
/// spawned (so a child of this process), is stopped by a signal: a thread
/// waits in `waitid` for the stop (`WNOWAIT` leaves the report, and an
/// exit, to the daemon). Signals are delivered asynchronously, so a stop is
/// awaited, not read once from `/proc`. False if it exits or the time runs out.
func awaitStopped(_ pid: Int32) async -> Bool {
    await withCheckedContinuation { continuation in
        let outcome = ResumeOnce(continuation)
        let timeout = Task {
            guard (try? await Task.sleep(for: .seconds(5))) != nil else { return }
            outcome.resume(returning: false)
        }
        Thread {
            outcome.resume(returning: AppProcessHost.waitStopped(pid))
            timeout.cancel()
        }.start()
    }
}

/// A continuation resumed by whichever comes first: the later calls do nothing.
final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = Mutex(continuation) }

    func resume(returning value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

/// An app directory (Info.plist and an executable `run`) for `script`,
/// named by the id's last part in `directory`.
func scriptApp(_ bundleID: String, in directory: String, script: String) throws -> String {
    let app = directory + "/" + (bundleID.split(separator: ".").last.map(String.init) ?? bundleID)
    try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
    try script.write(toFile: app + "/run", atomically: true, encoding: .utf8)
    #expect(chmod(app + "/run", 0o755) == 0)
    try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>CFBundleIdentifier</key><string>\(bundleID)</string>\
        <key>CFBundleExecutable</key><string>run</string></dict></plist>
        """.write(toFile: app + "/Info.plist", atomically: true, encoding: .utf8)
    return app
}

/// A Python app that says hello and acks every callback as protocol.md
/// describes: `helloEnd` and `ackEnd` end its lines (Python text), and
/// `beforeAck` and `afterAck`, one Python statement each, run before and
/// after each ack with the callback in `message` (`time` is imported);
/// `beforeHello`, one statement, runs once connected.
func pythonAckingApp(
    helloEnd: String = #"\n"#, ackEnd: String = #"\n"#, beforeHello: String = "pass", beforeAck: String = "pass",
    afterAck: String = "pass"
) -> String {
    """
    #!/usr/bin/env python3
    import json, os, socket, time
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ["OFFSTAGE_SOCKET"])
    \(beforeHello)
    s.sendall((json.dumps({"type": "hello", "token": os.environ["OFFSTAGE_TOKEN"], "pid": os.getpid(), "version": 1}) + "\(helloEnd)").encode())
    for line in s.makefile():
        message = json.loads(line)
        if message.get("type") == "callback":
            \(beforeAck)
            s.sendall((json.dumps({"type": "ack", "id": message["id"]}) + "\(ackEnd)").encode())
            \(afterAck)

    """
}
