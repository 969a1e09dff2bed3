import Foundation
import Testing
@testable import OffstageDaemon
import OffstageCore
import OffstageProtocol
import NIOEmbedded

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Bad input gets a clear error and the daemon keeps running", .serialized)
struct BadInputTests {
    func writeApp(_ directory: String, plist: String, executable: String? = "/bin/true") throws -> String {
        let app = directory + "/App-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        try plist.write(toFile: app + "/Info.plist", atomically: true, encoding: .utf8)
        return app
    }

    func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>\(body)</dict></plist>
        """
    }

    @Test func installErrorsNameTheFileAndTheProblem() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let dir = test.directory
        var message = try await test.refused(["command": "install", "path": .string(dir + "/nope")])
        #expect(message.contains("no such file or directory"))

        let garbage = try writeApp(dir, plist: "this is not a plist")
        message = try await test.refused(["command": "install", "path": .string(garbage)])
        #expect(message.hasSuffix("Info.plist: not a property list (XML or binary)"))

        let brokenXML = try writeApp(dir, plist: plist("<key>CFBundleIdentifier</key>\n<string>x</strin>"))
        message = try await test.refused(["command": "install", "path": .string(brokenXML)])
        #expect(message.contains("Info.plist:3: not a property list: not well-formed XML (at column "), "\(message)")

        let noID = try writeApp(dir, plist: plist("<key>CFBundleExecutable</key><string>x</string>"))
        message = try await test.refused(["command": "install", "path": .string(noID)])
        #expect(message.hasSuffix("missing required key CFBundleIdentifier"))

        let badMode = try writeApp(
            dir,
            plist: plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>StateLab</string><key>UIBackgroundModes</key><array><string>voip</string></array>"))
        message = try await test.refused(["command": "install", "path": .string(badMode)])
        #expect(message.contains("unknown UIBackgroundModes entry voip"))

        let missing = try writeApp(
            dir, plist: plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>NoSuchBinary</string>"))
        message = try await test.refused(["command": "install", "path": .string(missing)])
        #expect(message.contains("executable NoSuchBinary not found (looked in \(missing), "))

        // An absolute path is the only place looked in, so none is listed.
        let missingAbsolute = try writeApp(
            dir, plist: plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>/nonexistent/App</string>"))
        message = try await test.refused(["command": "install", "path": .string(missingAbsolute)])
        #expect(message == missingAbsolute + "/Info.plist: executable /nonexistent/App not found")
        // A directory named as the executable is one; it was "not found".
        let directory = try writeApp(
            dir, plist: plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>/tmp</string>"))
        message = try await test.refused(["command": "install", "path": .string(directory)])
        #expect(message == directory + "/Info.plist: /tmp is a directory, not an executable")
        // --executable names the executable: the plist is not to blame.
        message = try await test.refused(["command": "install", "path": .string(directory), "executable": "/tmp"])
        #expect(message == "--executable: /tmp is a directory, not an executable")
        message = try await test.refused(["command": "install", "path": .string(directory), "executable": "/nonexistent/App"])
        #expect(message == "--executable: executable /nonexistent/App not found")
        // A relative name that is a directory in the app (and nothing
        // else where it is looked for) says so; it was "not found".
        let subdirectory = try writeApp(
            dir, plist: plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>sub</string>"))
        try FileManager.default.createDirectory(atPath: subdirectory + "/sub", withIntermediateDirectories: false)
        message = try await test.refused(["command": "install", "path": .string(subdirectory)])
        #expect(message == "\(subdirectory)/Info.plist: \(subdirectory)/sub is a directory, not an executable, and no file sub is in the other places looked in (\(Paths.products))")

        // Ids that would name a directory above the containers (or all of them).
        for id in ["..", ".", "a..b", ".a", "a."] {
            let dotted = try writeApp(
                dir, plist: plist("<key>CFBundleIdentifier</key><string>\(id)</string><key>CFBundleExecutable</key><string>StateLab</string>"))
            message = try await test.refused(["command": "install", "path": .string(dotted)])
            #expect(message.hasSuffix("CFBundleIdentifier \"\(id)\" has an empty part (it starts or ends with '.' or has '..')"), "\(message)")
        }
        // Not ASCII (two forms of "é" were one app to the daemon, two to the
        // store), and too long for its log's name (launches failed).
        let cases = [
            ("com.ex.Caf\u{E9}", "may hold only ASCII letters and digits, '.', '-' and '_'"),
            ("com.ex.Cafe\u{301}", "may hold only ASCII letters and digits, '.', '-' and '_'"),
            ("com.ex." + String(repeating: "b", count: 194), "is longer than 200 characters (it names the app's container and log file)"),
        ]
        for (id, problem) in cases {
            let odd = try writeApp(
                dir, plist: plist("<key>CFBundleIdentifier</key><string>\(id)</string><key>CFBundleExecutable</key><string>StateLab</string>"))
            message = try await test.refused(["command": "install", "path": .string(odd)])
            #expect(message.hasSuffix("CFBundleIdentifier \"\(id)\" \(problem)"), "\(message)")
        }
        #expect(AppBundle.bundleIDProblem("com.ex." + String(repeating: "b", count: 193)) == nil)

        let notExecutable = try writeApp(
            dir, plist: plist("<key>CFBundleIdentifier</key><string>a.b</string><key>CFBundleExecutable</key><string>Info.plist</string>"))
        message = try await test.refused(["command": "install", "path": .string(notExecutable)])
        #expect(message.contains("is not executable"))

        message = try await test.refused(["command": "launch", "app": "com.example.unknown"])
        #expect(message == "no app with bundle id com.example.unknown is installed")
        message = try await test.refused(["command": "alert", "action": "dismiss"])
        #expect(message == "no system alert is shown")
        #expect(try await test.ok(["command": "apps"]) == [])
        await test.stop()
    }

    /// A count that is not a whole number of 0 or more is refused: a
    /// negative events `limit` trapped the daemon, and a memory pressure
    /// `bytes` of "200M" was taken as none, killing every suspended app.
    @Test func countsThatAreNotWholeNumbersAreRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        try await test.ok(["command": "home"])
        for limit: JSONValue in [-1, 1.5, "3"] {
            #expect(try await test.refused(["command": "events", "limit": limit])
                == "events: \"limit\" must be a whole number of 0 or more, not \(limit.jsonText)")
        }
        #expect(try await test.ok(["command": "events", "limit": 2]).arrayValue?.count == 2)
        for bytes: JSONValue in ["200M", -5] {
            #expect(try await test.refused(["command": "memory", "action": "pressure", "bytes": bytes])
                == "memory pressure: \"bytes\" must be a whole number of 0 or more, not \(bytes.jsonText)")
        }
        // Still there: nothing was killed.
        #expect(try await test.pid(stateLab) != nil)
        await test.stop()
    }

    @Test func binaryPlistsInstall() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let info: [String: Any] = ["CFBundleIdentifier": "com.example.binary", "CFBundleExecutable": "StateLab"]
        let data = try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0)
        let app = test.directory + "/BinaryApp"
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: app + "/Info.plist"))
        let result = try await test.ok(["command": "install", "path": .string(app)])
        #expect(result["bundleID"] == "com.example.binary")
        await test.stop()
    }

    @Test func reinstallReplacesButIsRefusedWhileRunning() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let first = try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        #expect(first["replaced"] == false)
        let second = try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        #expect(second["replaced"] == true)
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        let message = try await test.refused(["command": "install", "path": .string(Paths.sample("StateLab"))])
        #expect(message.contains("is running; kill it"))
        await test.stop()
    }

    /// A log the app's output cannot go to (here a directory in its place)
    /// failed posix_spawn in the child, blamed on the executable.
    @Test func aLogThatCannotBeOpenedIsNamedAtLaunch() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        let app = try #require(try await test.ok(["command": "apps"]).arrayValue?.first)
        let log = try #require(app["log"]?.stringValue)
        try FileManager.default.createDirectory(atPath: log, withIntermediateDirectories: true)
        let message = try await test.refused(["command": "launch", "app": .string(stateLab)])
        #expect(message.hasPrefix("\(stateLab) did not launch: cannot open the app's log \(log): Is a directory;"), "\(message)")
        try FileManager.default.removeItem(atPath: log)
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        await test.stop()
    }

    @Test func uninstallIsRefusedWhileRunningAndThenTakesTheAppsDataWithIt() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        let app = try #require(try await test.ok(["command": "apps"]).arrayValue?.first)
        let container = try #require(app["container"]?.stringValue)
        let log = try #require(app["log"]?.stringValue)
        // StateLab saves its index in its container's defaults when it goes to the background.
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        try await test.ok(["command": "home"])
        #expect(FileManager.default.fileExists(atPath: container + "/Library/Preferences/defaults.json"))
        let message = try await test.refused(["command": "uninstall", "app": .string(stateLab)])
        #expect(message == "\(stateLab) is running; kill it before removing it")
        try await test.ok(["command": "switcher", "action": "kill", "app": .string(stateLab)])
        try await test.ok(["command": "uninstall", "app": .string(stateLab)])
        #expect(!FileManager.default.fileExists(atPath: container))
        #expect(FileManager.default.fileExists(atPath: log))
        #expect(try await test.ok(["command": "apps"]) == [])
        await test.stop()
    }

    func rawAppConnection(_ test: TestDaemon) throws -> LineSocket {
        try LineSocket(connectingTo: test.directory + "/apps.sock")
    }

    /// A command sent to the app socket (`--socket` given it by mistake) is
    /// told where commands go. It was "the daemon closed the connection
    /// without replying", and an app's protocol violation was logged.
    @Test func aCommandOnTheAppSocketIsToldWhereCommandsGo() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let result = try runOffstage(["status", "--socket", test.directory + "/apps.sock"])
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: this is the daemon's app socket, where apps connect; commands go to its control socket\n")
        // No app broke the protocol (the reply came after the line was handled), and the daemon serves on.
        #expect(try await test.events(kind: .error) == [])
        try await test.ok(["command": "status"])
    }

    @Test func garbageOversizedAndForgedHellosAreProtocolViolations() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }

        let garbage = try rawAppConnection(test)
        try garbage.send(Array("this is not json\n".utf8))
        #expect(try garbage.readLine() == nil)  // the daemon hangs up

        let oversized = try rawAppConnection(test)
        try? oversized.send([UInt8](repeating: UInt8(ascii: "x"), count: maximumMessageBytes + 10))
        #expect((try? oversized.readLine()) ?? nil == nil)

        let unknown = try rawAppConnection(test)
        try unknown.send(AppMessage.hello(token: "forged", pid: getpid(), version: 1).json)
        let refusal = try #require(try unknown.receive())
        #expect(refusal["error"]?["code"] == "rejected")

        // A token that is not UTF-8: it was read with U+FFFD in place of the byte.
        let garbled = try rawAppConnection(test)
        try garbled.send(Array(#"{"pid":1,"token":"a"#.utf8) + [0xFF] + Array(#"","type":"hello","version":1}"#.utf8) + [0x0A])
        #expect(try garbled.readLine() == nil)

        let errors = try await test.awaitEvents(kind: .error, count: 4)
        #expect(errors.map(\.name) == ["protocolViolation", "protocolViolation", "protocolViolation", "protocolViolation"])
        #expect(errors[0].detail["reason"]?.stringValue?.hasPrefix("unreadable message") == true)
        #expect(errors[1].detail["reason"]?.stringValue?.contains("longer than") == true)
        #expect(errors[2].detail["reason"] == "hello with an unknown token")
        #expect(errors[3].detail["reason"] == "unreadable message: invalid JSON at byte 17: string is not valid UTF-8")
        // Still serving.
        try await test.ok(["command": "status"])
        await test.stop()
    }

    /// Garbage from a process the daemon did not launch names no app, and
    /// kills none, even while a launched app has not said hello yet: only
    /// the launched process's own connection is blamed on its launch.
    @Test func garbageFromAnotherProcessWhileAnAppStartsNamesNoApp() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let go = test.directory + "/go"
        let app = try scriptApp(
            "com.example.LateHello", in: test.directory,
            script: pythonAckingApp(beforeHello: "while not os.path.exists(\"\(go)\"): time.sleep(0.01)"))
        try await test.ok(["command": "install", "path": .string(app)])
        let before = try await test.events(kind: .system).count
        let launch = Task { try await test.ok(["command": "launch", "app": "com.example.LateHello"]) }
        // [launch], then [spawn]: the app is started, waiting to say hello.
        let system = try await test.awaitEvents(kind: .system, count: before + 2)
        #expect(system.last?.name == "spawn", "\(system.map(\.name))")
        let stranger = try rawAppConnection(test)
        try stranger.send(Array("this is not json\n".utf8))
        #expect(try stranger.readLine() == nil)
        let violation = try #require(try await test.awaitEvents(kind: .error, count: 1).first)
        #expect(violation.name == "protocolViolation" && violation.app == nil && violation.detail["killed"] == nil, "\(violation)")
        #expect(FileManager.default.createFile(atPath: go, contents: nil))
        _ = try await launch.value
        #expect(try await test.callbacks("com.example.LateHello").last == "applicationDidBecomeActive:")
        await test.stop()
    }

    /// Tokens were printed without zero-padding: 62 to 64 hex digits.
    @Test func tokensAreAlways64HexDigits() {
        let tokens = (0..<2000).map { _ in Engine.makeToken() }
        #expect(tokens.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) })
        #expect(Set(tokens).count == tokens.count)
    }

    @Test func anotherAppsTokenIsRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        let token = try await test.daemon.engine.submit { $0.processes[stateLab]!.token }.get()
        let thief = try rawAppConnection(test)
        try thief.send(AppMessage.hello(token: token, pid: getpid(), version: 1).json)
        let refusal = try #require(try thief.receive())
        #expect(refusal["error"]?["code"] == "rejected")
        let error = try #require(try await test.awaitEvents(kind: .error, count: 1).first)
        #expect(error.app == stateLab)
        #expect(error.detail["reason"] == "hello with the token of another process")
        // The real app is unaffected.
        try await test.ok(["command": "home"])
        #expect(try await test.callbacks(stateLab).last == "applicationDidEnterBackground:")
        await test.stop()
    }

    /// A launched app that says hello with another running app's token
    /// (readable in /proc) is the one to blame: the token's app was logged
    /// as the victim, and the sender lived on until its launch watchdog.
    @Test func aLaunchThatSaysHelloWithAnotherAppsTokenIsKilled() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let directory = try temporaryDirectory()
        let stolen = directory + "/token"
        let victim = try scriptApp(
            "com.example.Victim", in: directory,
            script: pythonAckingApp(beforeHello: "open(\"\(stolen)\", \"w\").write(os.environ[\"OFFSTAGE_TOKEN\"])"))
        let thief = try scriptApp(
            "com.example.Thief", in: directory,
            script: pythonAckingApp(beforeHello: "os.environ[\"OFFSTAGE_TOKEN\"] = open(\"\(stolen)\").read()"))
        try await test.ok(["command": "install", "path": .string(victim)])
        try await test.ok(["command": "install", "path": .string(thief)])
        try await test.ok(["command": "launch", "app": "com.example.Victim"])
        let message = try await test.refused(["command": "launch", "app": "com.example.Thief"])
        #expect(message.hasPrefix("com.example.Thief did not launch: it broke the protocol (hello with another app's token) and was killed"), "\(message)")
        let errors = try await test.events(kind: .error)
        #expect(errors.map(\.app) == ["com.example.Victim", "com.example.Thief"], "\(errors)")
        #expect(errors.last?.detail["tokenApp"] == "com.example.Victim" && errors.last?.detail["killed"] == true, "\(errors)")
        // The victim is unaffected: backgrounded by the thief's launch, it
        // comes back to the foreground.
        #expect(errors.first?.detail["killed"] == nil, "\(errors)")
        try await test.ok(["command": "launch", "app": "com.example.Victim"])
        #expect(try await test.callbacks("com.example.Victim").last == "applicationDidBecomeActive:")
        await test.stop()
    }

    /// An ack written just before the app exits is read before its exit is
    /// handled: the exit raced the read, and launches failed at random (3
    /// in 5 through the CLI, about 1 in 20 here), the app blamed for the
    /// callback it had answered.
    @Test func anAckWrittenJustBeforeExitingCounts() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let app = try scriptApp(
            "com.example.AckAndGo", in: test.directory,
            script: pythonAckingApp(afterAck: #"if message["name"] == "applicationDidBecomeActive:": os._exit(3)"#))
        try await test.ok(["command": "install", "path": .string(app)])
        for round in 1...30 {
            // Refused as "did not launch" when the exit came first.
            try await test.ok(["command": "launch", "app": "com.example.AckAndGo"])
            let crashes = try await test.awaitEvents(kind: .error, count: round)
            #expect(crashes.last?.name == "crashed" && crashes.last?.detail == ["status": 3], "\(crashes)")
        }
        let states = try await test.events(kind: .state, app: "com.example.AckAndGo").map(\.name)
        #expect(states.filter { $0 == "active" }.count == 30, "\(states)")
        await test.stop()
    }

    /// Peer credentials that could not be read let any claimed pid through.
    @Test func aHelloFromAnUnnamedProcessIsRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        let (accepted, used) = try await test.daemon.engine.submit { engine in
            let process = engine.processes[stateLab]!
            // As before the app's own hello: its token not yet used, so only
            // the unnamed peer can refuse it (a used token was refused anyway).
            engine.processes[stateLab]!.channel = nil
            let identity = engine.hello(
                token: process.token, pid: process.pid, peerPID: nil, version: offstageProtocolVersion,
                channel: EmbeddedChannel())
            let untaken = engine.processes[stateLab]!.channel == nil
            engine.processes[stateLab]!.channel = process.channel
            return (identity != nil, untaken)
        }.get()
        #expect(!accepted && used)
        let error = try #require(try await test.awaitEvents(kind: .error, count: 1).first)
        #expect(error.app == stateLab)
        #expect(error.detail["reason"] == "hello from a process the kernel does not name (SO_PEERCRED failed)")
        #expect(error.detail["killed"] == nil)
        try await test.ok(["command": "home"])
        #expect(try await test.callbacks(stateLab).last == "applicationDidEnterBackground:")
        await test.stop()
    }

    @Test func advancingTheVirtualClockPastItsEndIsRefused() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let century = 36500.0 * 86400
        try await test.ok(["command": "clock", "action": "advance", "seconds": .number(century)])
        try await test.ok(["command": "clock", "action": "advance", "seconds": .number(century)])
        // A third century would pass 250 years; it trapped the daemon on Int64 nanoseconds.
        let refusal = try await test.refused(["command": "clock", "action": "advance", "seconds": .number(century)])
        #expect(refusal.contains("past its end"), "\(refusal)")
        let tooLong = try await test.refused(["command": "clock", "action": "advance", "seconds": 1e300])
        #expect(tooLong.contains("0 to 100 years"), "\(tooLong)")
        let clock = try await test.ok(["command": "clock", "action": "now"])
        #expect(clock["time"]?.doubleValue == 2 * century)
        await test.stop()
    }

    @Test func anAppsTimerPastTheVirtualClocksEndIsRefused() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        let century = 36500.0 * 86400
        for _ in 0..<2 { try await test.ok(["command": "clock", "action": "advance", "seconds": .number(century)]) }
        // What StateLab's scheduleTimer requests would get, asked on the engine's loop.
        func scheduleTimer(after seconds: Double) async throws -> Result<JSONValue, ProtocolError> {
            try await test.daemon.engine.submit { engine in
                Result { try engine.request(stateLab, method: "scheduleTimer", params: ["after": .number(seconds)]) }
                    .mapError { ($0 as? ProtocolError) ?? ProtocolError("not a protocol error: \($0)") }
            }.get()
        }
        func refusal(_ result: Result<JSONValue, ProtocolError>) -> String? {
            if case .failure(let error) = result { return error.description }
            return nil
        }
        let pastEnd = refusal(try await scheduleTimer(after: century - 1))
        #expect(pastEnd?.contains("after the virtual clock's end") == true, "\(String(describing: pastEnd))")
        for seconds in [1e300, -1] {
            let outOfRange = refusal(try await scheduleTimer(after: seconds))
            #expect(outOfRange?.contains("from 0 to 100 years") == true, "\(String(describing: outOfRange))")
        }
        let minute = try await scheduleTimer(after: 60).get()
        #expect(minute["timer"]?.intValue != nil)
        await test.stop()
    }

    @Test func anAppThatClosesItsConnectionButRunsOnIsKilled() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        // What the app's connection handler reports when the socket closes:
        // StateLab itself is still running, so it closed the socket itself.
        try await test.daemon.engine.submit { engine in
            engine.connectionClosed(AppConnectionIdentity(bundleID: stateLab, launch: engine.processes[stateLab]!.launch))
        }.get()
        let errors = try await test.awaitEvents(kind: .error, count: 1)
        #expect(errors.map(\.name) == ["protocolViolation"])
        #expect(errors[0].detail["reason"] == "closed its connection while running")
        let status = try await test.ok(["command": "status"])
        #expect(status["apps"]?.arrayValue?.first?["state"] == "notRunning")
        let stopped = try await test.events(kind: .state, app: stateLab).last
        #expect(stopped?.name == "notRunning" && stopped?.detail["reason"] == "protocolViolation")
        // Killed by the daemon, as after a watchdog: its death is not logged as a crash once reaped.
        try await test.daemon.processGone(stateLab)
        #expect(try await test.events(kind: .error).map(\.name) == ["protocolViolation"])
        await test.stop()
    }

    /// A request with bad params is refused in its reply (the app lives):
    /// a task name that is not a string was taken.
    @Test func requestsWithBadParamsAreRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        let refusals: [(String, JSONValue, String)] = [
            ("beginBackgroundTask", ["name": 5], "beginBackgroundTask's name must be a string"),
            ("endBackgroundTask", ["task": "one"], "endBackgroundTask needs a task"),
            ("scheduleTimer", ["after": "soon"], "scheduleTimer needs a number of seconds from 0 to 100 years in \"after\""),
            ("cancelTimer", .emptyObject, "cancelTimer needs a timer"),
            ("openURL", .emptyObject, "unknown method \"openURL\""),
        ]
        for (method, params, message) in refusals {
            let error = try await test.daemon.engine.submit { engine -> String? in
                do {
                    _ = try engine.request(stateLab, method: method, params: params)
                    return nil
                } catch {
                    return "\(error)"
                }
            }.get()
            #expect(error == message, "\(method)")
        }
        // A name that is a string, or none, begins a task.
        for params: JSONValue in [["name": "upload"], .emptyObject] {
            let result = try await test.daemon.engine.submit { try $0.request(stateLab, method: "beginBackgroundTask", params: params) }.get()
            #expect(result["task"]?.intValue != nil, "\(params)")
        }
        #expect(try await test.events(kind: .error).isEmpty)
        await test.stop()
    }

    @Test func secondDaemonOnTheSameSocketIsRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        // Other data (so the data lock does not answer first), the same sockets.
        let other = try temporaryDirectory()
        let configuration = DaemonConfiguration(
            dataDirectory: other + "/new/data", controlSocket: test.directory + "/control.sock",
            appSocket: test.directory + "/apps.sock", clock: .real, executableSearchPaths: [Paths.products])
        let error = await #expect(throws: DaemonError.self) { _ = try await RunningDaemon.start(configuration) }
        #expect(error?.message == "a daemon is already running on \(test.directory)/control.sock")
        // The first one's socket is still there and listening.
        #expect((try? LineSocket(connectingTo: test.directory + "/control.sock")) != nil)
        // The refused daemon left no data directory behind, nor the parent it made…
        #expect(FileKind(atPath: other + "/new") == nil)
        #expect(FileKind(atPath: other) == .directory)
        // …and leaves one that was there as it was.
        try FileManager.default.createDirectory(atPath: other + "/kept", withIntermediateDirectories: false)
        let existing = DaemonConfiguration(
            dataDirectory: other + "/kept", controlSocket: test.directory + "/control.sock",
            appSocket: test.directory + "/apps.sock", clock: .real, executableSearchPaths: [Paths.products])
        await #expect(throws: DaemonError.self) { _ = try await RunningDaemon.start(existing) }
        #expect(FileKind(atPath: other + "/kept") == .directory)
        await test.stop()
    }

    @Test func secondDaemonOnTheSameDataIsRefusedAndTheFirstsAppsLive() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let pid = try await test.launchStateLab()
        // Other sockets, the same data: it took StateLab for an orphan and killed it.
        let other = try temporaryDirectory()
        let configuration = DaemonConfiguration(
            dataDirectory: test.directory + "/data", controlSocket: other + "/control.sock",
            appSocket: other + "/apps.sock", clock: .real, executableSearchPaths: [Paths.products])
        let error = await #expect(throws: DaemonError.self) { _ = try await RunningDaemon.start(configuration) }
        #expect(error?.message == "another daemon is running on the data directory \(test.directory)/data")
        #expect(kill(pid, 0) == 0)
        #expect(try await test.pid(stateLab) == pid)
        // Stopped, the first lets a new daemon have the data.
        await test.stop()
        let next = try await RunningDaemon.start(configuration)
        await next.stop()
    }

    /// The lock holds across processes too: `offstage daemon` on a running
    /// daemon's data is refused in one line, and the first one's app lives.
    @Test(.timeLimit(.minutes(1))) func aDaemonProcessOnTheSameDataIsRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let pid = try await test.launchStateLab()
        let other = try temporaryDirectory()
        // Within the suite's minute: a hung daemon fails the test, not the time limit.
        let result = try runOffstage(["daemon", "--data", test.directory + "/data", "--socket", other + "/control.sock"], within: .seconds(45))
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: another daemon is running on the data directory \(test.directory)/data\n")
        #expect(kill(pid, 0) == 0)
        await test.stop()
    }

    @Test func aFileThatIsNotASocketIsNotTakenOver() async throws {
        let directory = try temporaryDirectory()
        let path = directory + "/control.sock"
        try "someone's notes\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = await #expect(throws: DaemonError.self) { _ = try await TestDaemon.start(directory: directory) }
        #expect(error?.message == "\(path) exists and is not a socket; choose another --socket path")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone's notes\n")
    }

    @Test func anExistingSocketDirectoryKeepsItsPermissions() async throws {
        let directory = try temporaryDirectory()
        chmod(directory, 0o755)
        let test = try await TestDaemon.start(directory: directory)
        let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
        #expect(mode == 0o755)
        let socketMode = try FileManager.default.attributesOfItem(atPath: directory + "/control.sock")[.posixPermissions] as? Int
        #expect(socketMode == 0o600)
        await test.stop()
    }
}

