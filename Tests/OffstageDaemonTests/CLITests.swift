import CLinuxProcess
import Foundation
import NIOCore
import Testing
@testable import OffstageDaemon
import OffstageCore
import OffstageProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The built `offstage` binary, run as a user would.
@Suite("CLI", .serialized, .timeLimit(.minutes(3)))
struct CLITests {
    typealias Result = CommandRun

    func offstage(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        try runOffstage(arguments, environment: environment)
    }

    @Test func noDaemonIsOneLineAndExitOne() throws {
        // The daemon to start is the one on the socket named, on its data:
        // following the hint after a daemon on `--data DIR` had died started
        // one on the default data, where the installed apps were missing.
        let data = ["XDG_DATA_HOME": "/tmp/offstage-no-such-dir/share"]
        let result = try offstage(["status", "--socket", "/tmp/offstage-no-such-dir/control.sock"], environment: data)
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: no daemon is running on /tmp/offstage-no-such-dir/control.sock (start one with `offstage daemon --socket /tmp/offstage-no-such-dir/control.sock`, and `--data DIR` unless its data is in /tmp/offstage-no-such-dir/share/offstage)\n")
        // Named by the environment, the socket is `offstage daemon`'s too.
        let fromEnvironment = try offstage(["status"], environment: data.merging(["OFFSTAGE_SOCKET_PATH": "/tmp/offstage-no-such-dir/control.sock"]) { $1 })
        #expect(fromEnvironment.status == 1)
        #expect(fromEnvironment.stderr == "offstage: error: no daemon is running on /tmp/offstage-no-such-dir/control.sock (start one with `offstage daemon`, and `--data DIR` unless its data is in /tmp/offstage-no-such-dir/share/offstage)\n")
    }

    /// An empty path is refused: the daemon made `--data ""` the current
    /// directory and filled it with its store, and `--socket ""` blamed the
    /// current directory. An empty OFFSTAGE_SOCKET_PATH is as if unset.
    @Test func emptyPathsAreRefused() throws {
        let directory = try temporaryDirectory()
        for (arguments, message) in [
            (["daemon", "--data", "", "--socket", directory + "/control.sock"], "--data needs a directory, not an empty path"),
            (["daemon", "--data", directory + "/data", "--socket", ""], "--socket needs a path, not an empty one"),
            (["status", "--socket", ""], "--socket needs a path, not an empty one"),
            // The daemon refused them (exit 1), or took the working directory for them.
            (["install", ""], "the app directory or plist is an empty path"),
            (["install", "App", "--executable", ""], "--executable needs a path, not an empty one"),
            (["run", ""], "the scenario file is an empty path (- reads standard input)"),
            (["run", "s.yaml", "--record", ""], "--record needs a file, not an empty path"),
            (["run", "s.yaml", "--check", ""], "--check needs a file, not an empty path"),
            (["events", "--app", ""], "--app needs a bundle id, not an empty one"),
        ] {
            // Run in `directory`: an empty --data was the working directory.
            let result = try runOffstage(arguments, in: directory)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("offstage: error: " + message), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        let unset = try offstage(["status"], environment: ["OFFSTAGE_SOCKET_PATH": "", "XDG_RUNTIME_DIR": directory])
        #expect(unset.stderr == "offstage: error: no daemon is running on \(directory)/offstage/control.sock (start one with `offstage daemon`, and `--data DIR` unless its data is in \(DefaultPaths.dataDirectory))\n")
    }

    /// An empty bundle id is a usage error, before any daemon is asked:
    /// `launch ''` was "no app with bundle id  is installed", exit 1. (Other
    /// ids go to the daemon: an older release installed ids today's rule
    /// refuses, and they must still be launched and removed.)
    @Test func anEmptyBundleIDIsAUsageError() throws {
        let socket = try temporaryDirectory() + "/control.sock"
        for (arguments, message) in [
            (["launch", ""], "the bundle id is empty (see offstage launch --help)"),
            (["uninstall", ""], "the bundle id is empty (see offstage uninstall --help)"),
            (["switcher", "kill", ""], "the bundle id is empty (see offstage switcher --help)"),
        ] {
            let result = try runOffstage(arguments + ["--socket", socket])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr == "offstage: error: \(message)\n", "\(arguments)")
        }
        // Any other id goes to the daemon (here: none is running).
        #expect(try runOffstage(["launch", "com.example.App", "--socket", socket]).stderr.hasPrefix("offstage: error: no daemon is running"))
        #expect(try runOffstage(["uninstall", "com.exemple.Appé", "--socket", socket]).stderr.hasPrefix("offstage: error: no daemon is running"))
    }

    /// A path that is not UTF-8 (a Latin-1 `é`) reached the command with
    /// U+FFFD for its byte: an app directory or scenario "did not exist",
    /// and a daemon made its data directory or socket under another name.
    /// As in the gps commands, it is a usage error naming the argument.
    @Test func pathsThatAreNotUTF8AreUsageErrors() throws {
        let directory = try temporaryDirectory()
        let why = "is not valid UTF-8: offstage takes file names in UTF-8 (convmv -f latin1 -t utf8 renames a file)"
        for (script, usage) in [
            (#"exec "$0" install "$(printf 'App\351')""#, "argument 2 (app-dir|plist) \(why) (see offstage install --help)"),
            (#"exec "$0" install App --executable "$(printf 'a\351')""#, "argument 4 (--executable) \(why) (see offstage install --help)"),
            (#"exec "$0" run "$(printf 's\351.yaml')""#, "argument 2 (scenario.yaml) \(why) (see offstage run --help)"),
            (#"exec "$0" run s.yaml --record "$(printf 'g\351')""#, "argument 4 (--record) \(why) (see offstage run --help)"),
            (#"exec "$0" run s.yaml --check "$(printf 'g\351')""#, "argument 4 (--check) \(why) (see offstage run --help)"),
            (#"exec "$0" daemon --data "$(printf 'd\351')" --socket c.sock"#, "argument 3 (--data) \(why) (see offstage daemon --help)"),
            (#"exec "$0" daemon --data d --socket "$(printf 'c\351.sock')""#, "argument 5 (--socket) \(why) (see offstage daemon --help)"),
            (#"exec "$0" status --socket "$(printf 'c\351.sock')""#, "argument 3 (--socket) \(why) (see offstage status --help)"),
        ] {
            let result = try runInShell(script, in: URL(fileURLWithPath: directory))
            #expect(result.status == 64 && result.stderr == "offstage: error: \(usage)\n", "\(script): \(result.stderr)")
        }
        // No daemon made its data directory or socket, under any name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    /// A path that is not a socket is said to be one: the hint was to start
    /// a daemon there, which is refused.
    @Test func aSocketPathThatIsNoSocketIsNamed() throws {
        let directory = try temporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory + "/file", contents: Data()))
        for (path, what) in [(directory, "a directory"), (directory + "/file", "a regular file")] {
            let result = try offstage(["status", "--socket", path])
            #expect(result.status == 1)
            #expect(result.stderr == "offstage: error: \(path) is \(what), not a daemon's control socket (--socket names one)\n")
        }
    }

    /// The tests' own limit on a command: one that waits for good (here a
    /// daemon that never replies, with `--timeout 0`) is killed, and its
    /// stderr says so, instead of holding the test run.
    @Test func aCommandPastTheTestsLimitIsKilledAndSaysSo() throws {
        let path = try temporaryDirectory() + "/silent.sock"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }
        let result = try runOffstage(["status", "--socket", path, "--timeout", "0"], within: .milliseconds(500))
        #expect(result.status == SIGKILL)
        #expect(result.stderr.hasSuffix("[test: killed after 0.5 seconds]\n"), "\(result.stderr)")
    }

    @Test func aDaemonThatNeverRepliesIsOneLineAfterTheTimeout() throws {
        // A socket that listens and never accepts: the kernel completes the
        // connection and buffers the request, and no reply ever comes.
        let path = try temporaryDirectory() + "/silent.sock"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }
        let result = try offstage(["home", "--socket", path, "--timeout", "200ms"])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "offstage: error: no reply from the daemon on \(path) within 200ms: it may be stopped or hung, or waiting for an app that has not answered (the command is then dropped, unless it had begun); --timeout waits longer, 0 for good\n"
        )
        // A read-only command never waits for an app: its message does not say it may.
        for words in [["status"], ["events"], ["clock", "now"]] {
            let readOnly = try offstage(words + ["--socket", path, "--timeout", "200ms"])
            #expect(readOnly.status == 1)
            #expect(
                readOnly.stderr
                    == "offstage: error: no reply from the daemon on \(path) within 200ms: it may be stopped or hung; --timeout waits longer, 0 for good\n",
                "\(words)")
        }
        // Seconds as a bare number are named with their unit: it said "within 0.2".
        let bare = try offstage(["status", "--socket", path, "--timeout", "0.2"])
        #expect(bare.stderr.contains(" within 0.2s: it may be stopped"), "\(bare.stderr)")
        let bad = try offstage(["status", "--socket", path, "--timeout", "soon"])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("offstage: error: --timeout must be a duration such as 30s, 10m or 0 (not soon)"))
    }

    @Test func commandsAgainstARunningDaemon() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        var result = try offstage(["apps"] + socket)
        #expect(result.status == 0)
        #expect(result.stderr == "No app is installed (offstage install DIR installs one).\n")
        result = try offstage(["install", Paths.sample("StateLab")] + socket)
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("installed com.offstage.samples.StateLab"))
        result = try offstage(["launch", stateLab] + socket)
        #expect(result.stdout == "foreground: \(stateLab); \(stateLab)=active\n")
        result = try offstage(["launch", "com.nope"] + socket)
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: no app with bundle id com.nope is installed\n")
        result = try offstage(["alert", "reply"] + socket)
        #expect(result.stderr == "offstage: error: no system alert is shown\n")
        result = try offstage(["memory", "pressure"] + socket)
        #expect(result.stdout == "killed no app (none suspended)\nforeground: \(stateLab); \(stateLab)=active\n")
        // An app the command ended is named as not running, not left out.
        // What covers the foreground is said, as status says it (a lock's line was the line before it).
        result = try offstage(["switcher", "kill", stateLab] + socket)
        #expect(result.stdout == "foreground: home screen (switcher shown); \(stateLab)=notRunning\n")
        result = try offstage(["home"] + socket)
        #expect(result.stdout == "foreground: home screen\n")
        result = try offstage(["lock"] + socket)
        #expect(result.stdout == "foreground: home screen (locked)\n")
        result = try offstage(["unlock"] + socket)
        #expect(result.stdout == "foreground: home screen\n")
        result = try offstage(["launch", stateLab] + socket)
        #expect(result.stdout == "foreground: \(stateLab); \(stateLab)=active\n")
        result = try offstage(["clock", "advance", "5m"] + socket)
        #expect(result.status == 1)
        #expect(result.stderr.contains("real clock"))

        result = try offstage(["events", "--json", "--app", stateLab] + socket)
        let events = result.stdout.split(separator: "\n").map { try? JSONValue(parsing: String($0)) }
        #expect(events.count >= 5)
        for event in events {
            let keys = Set(event?.objectValue?.keys.map { $0 } ?? [])
            #expect(keys == ["seq", "time", "app", "kind", "name", "detail"])
        }
        let names: [String] = events.compactMap { $0?["name"]?.stringValue }
        #expect(names.contains("applicationDidBecomeActive:"))
        // Following an app not installed yet: its bundle id is taken as it is.
        let follower = try LineSocket(connectingTo: test.directory + "/control.sock")
        try follower.send(["command": "events", "follow": true, "appFilter": "com.example.Later", "after": 0])
        #expect(try follower.receive()?["ok"] == .bool(true))
        // The short name the timeline shows selects the same events; an unknown one is an error.
        result = try offstage(["events", "--json", "--app", "StateLab"] + socket)
        #expect(result.stdout.split(separator: "\n").count == events.count)
        result = try offstage(["events", "--app", "com.nope"] + socket)
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: no app com.nope is installed or in the event log\n")
        await test.stop()
    }

    /// A launch behind a hung app is a warning: one whose input ran (the
    /// app's spawn waits behind the hung callback) is still launching; one
    /// queued is checked when it runs, and may yet be refused.
    @Test func aLaunchBehindAHungAppIsAWarning() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await test.ok(["command": "launch", "app": "com.offstage.tests.BlockingApp"])
        // BlockingApp, sent to the background by the launch, hangs in applicationDidEnterBackground:.
        var result = try offstage(["launch", stateLab] + socket)
        #expect(result.status == 0)
        #expect(result.stderr == "offstage: warning: \(stateLab) is still launching behind com.offstage.tests.BlockingApp, which has not answered\n")
        result = try offstage(["launch", stateLab] + socket)
        #expect(result.status == 0)
        #expect(
            result.stderr
                == "offstage: warning: launch \(stateLab) is queued behind com.offstage.tests.BlockingApp, which has not answered; it is checked when it runs\n")
        await test.stop()
    }

    /// Commands queued behind a hung app are checked when they run: a
    /// second `lock` was taken (the first had not locked yet), and a
    /// `launch` after them launched the app on the locked device. Each says
    /// it is queued; the refusals come as warnings of the command that ran
    /// them (here the clock's advance past the hung app's watchdog).
    @Test func commandsQueuedBehindAHungAppAreCheckedWhenTheyRun() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        let blocking = "com.offstage.tests.BlockingApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await test.ok(["command": "launch", "app": .string(blocking)])
        try await test.ok(["command": "home"])  // BlockingApp hangs in applicationDidEnterBackground:
        for _ in 0..<2 {
            let result = try offstage(["lock"] + socket)
            #expect(result.status == 0)
            #expect(result.stderr == "offstage: warning: lock is queued behind \(blocking), which has not answered; it is checked when it runs\n")
        }
        var result = try offstage(["launch", stateLab] + socket)
        // Queued, it may still be refused (it is, below): not 'still launching'.
        #expect(result.stderr == "offstage: warning: launch \(stateLab) is queued behind \(blocking), which has not answered; it is checked when it runs\n")
        result = try offstage(["clock", "advance", "6s"] + socket)
        #expect(result.status == 0)
        let refusals = result.stderr.split(separator: "\n").filter { $0.contains("refused") }
        #expect(refusals == [
            #"offstage: warning: 5      system  ERROR refused  {"input":"lock","reason":"the device is already locked","ticket":4}"#,
            #"offstage: warning: 5      StateLab  ERROR refused  {"input":"launch com.offstage.samples.StateLab","reason":"the device is locked; unlock it first","ticket":5}"#,
        ])
        let status = try await test.ok(["command": "status"])
        #expect(status["locked"] == true && status["foreground"] == .null)
        #expect(status["apps"]?.arrayValue?.first { $0["bundleID"] == .string(stateLab) }?["state"] == "notRunning")
        await test.stop()
    }

    /// A `memory pressure` queued behind a hung app runs when the clock
    /// reaches the app's watchdog: the `clock advance` that ran it says
    /// what it killed. No output said so (its own reply came before it ran).
    @Test func whatAQueuedMemoryPressureKilledIsPrintedByTheAdvanceThatRanIt() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        let blocking = "com.offstage.tests.BlockingApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        try await test.ok(["command": "launch", "app": .string(blocking)])  // StateLab goes to the background
        try await test.ok(["command": "clock", "action": "advance", "seconds": 30])  // and is suspended
        try await test.ok(["command": "home"])  // BlockingApp hangs in applicationDidEnterBackground:
        var result = try offstage(["memory", "pressure"] + socket)
        #expect(result.stderr == "offstage: warning: memory pressure is queued behind \(blocking), which has not answered; it is checked when it runs\n")
        #expect(!result.stdout.contains("killed"))
        result = try offstage(["clock", "advance", "6s"] + socket)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "virtual clock at 36 s")
        #expect(lines.dropFirst().first?.hasPrefix("queued memory pressure: killed \(stateLab) (") == true, "\(result.stdout)")
        // An advance that ran no memory pressure says nothing of it.
        result = try offstage(["clock", "advance", "1s"] + socket)
        #expect(result.stdout == "virtual clock at 37 s\n")
        await test.stop()
    }

    @Test func anInterruptedRunStopsItsApps() throws {
        let scratch = try temporaryDirectory()
        let file = scratch + "/hang.yaml"
        try """
            apps: [\(Paths.sample("misbehaving/BlockingApp"))]
            hangGrace: 1h
            steps:
              - do: launch com.offstage.tests.BlockingApp
              - do: home
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try RunningOffstage(["run", file])
        // The home step starts; BlockingApp then hangs in applicationDidEnterBackground:.
        #expect(run.awaitLine(containing: "home", onStandardError: true))
        let app = try #require(run.children.first)
        kill(run.process.processIdentifier, SIGINT)
        let (status, stderr) = run.finish()
        #expect(status == 130)
        #expect(stderr.contains("offstage: interrupted; the scenario's apps are stopped"))
        #expect(kill(app, 0) == -1 && errno == ESRCH, "BlockingApp (\(app)) outlived the run")
    }

    /// A socket path SwiftNIO cannot bind (104 to 107 bytes, which the
    /// kernel would take) is one line naming the limit: it was NIO's raw
    /// `unixDomainSocketPathTooLong`.
    @Test func aSocketPathTooLongToBindIsOneLine() throws {
        let directory = try temporaryDirectory()
        let socket = directory + "/" + String(repeating: "s", count: 104 - directory.utf8.count - 1)
        #expect(socket.utf8.count == 104)
        let result = try offstage(["daemon", "--data", directory + "/data", "--socket", socket])
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: socket path too long for a Unix socket (max 103 bytes): \(socket)\n", "\(result.stderr)")
    }

    /// Two daemons started at once on one socket both find it free; the
    /// one whose bind fails says another runs there (it printed NIO's
    /// "bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)").
    /// The race cannot be set up at will: this checks the mapping the
    /// daemon's two binds go through.
    @Test func aBindErrorOfAnAddressInUseSaysADaemonRunsThere() {
        let explained = SocketPreparation.explained(IOError(errnoCode: EADDRINUSE, reason: "bind"), binding: "/run/x.sock")
        #expect((explained as? DaemonError)?.description == "a daemon is already running on /run/x.sock", "\(explained)")
        let other = SocketPreparation.explained(IOError(errnoCode: EACCES, reason: "bind"), binding: "/run/x.sock")
        #expect((other as? IOError)?.errnoCode == EACCES)
    }

    @Test func aDaemonThatCannotMakeItsDirectoriesSaysWhyInOneLine() throws {
        let directory = try temporaryDirectory()
        var result = try offstage(["daemon", "--data", "/dev/null/data", "--socket", directory + "/control.sock"])
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: cannot create the data directory /dev/null/data: /dev/null is not a directory\n")
        result = try offstage(["daemon", "--data", directory + "/data", "--socket", "/dev/null/run/control.sock"])
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: cannot create the socket directory /dev/null/run: /dev/null is not a directory\n")
        // The socket's directory itself a file: it was taken for an existing directory.
        result = try offstage(["daemon", "--data", directory + "/data", "--socket", "/dev/null/control.sock"])
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: cannot create the socket directory /dev/null: /dev/null is not a directory\n")
    }

    @Test func eachControlSocketHasItsOwnAppSocket() {
        #expect(DefaultPaths.appSocket(forControlSocket: "/run/x/control.sock") == "/run/x/apps.sock")
        #expect(DefaultPaths.appSocket(forControlSocket: "/tmp/x/v.sock") == "/tmp/x/v.apps.sock")
        #expect(DefaultPaths.appSocket(forControlSocket: "/tmp/x/v2.sock") == "/tmp/x/v2.apps.sock")
        #expect(DefaultPaths.appSocket(forControlSocket: "/tmp/x/ctl") == "/tmp/x/ctl.apps.sock")
    }

    /// Options that point a command at no daemon (never a developer's
    /// running one), should a check under test let it through.
    func nowhere() throws -> [String] {
        let directory = try temporaryDirectory()
        return ["--socket", directory + "/control.sock"]
    }

    @Test func hangGraceIsADurationForTheVirtualClock() throws {
        let scratch = try temporaryDirectory()
        let daemon = ["daemon", "--socket", scratch + "/control.sock", "--data", scratch + "/data"]
        var result = try offstage(daemon + ["--hang-grace", "500ms"])
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: --hang-grace applies to the virtual clock only (add --clock virtual) (see offstage daemon --help)\n")
        result = try offstage(daemon + ["--clock", "virtual", "--hang-grace", "soon"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("offstage: error: --hang-grace must be a duration from 10ms to an hour"))
        // No grace at all: a healthy app's answer could come after the clock ran past its watchdog.
        result = try offstage(daemon + ["--clock", "virtual", "--hang-grace", "0s"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("offstage: error: --hang-grace must be a duration from 10ms to an hour"))
    }

    @Test func extraWordsAreRefused() throws {
        var result = try offstage(["clock", "now", "5s"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: clock now takes no duration (got 5s) (see offstage clock --help)\n")
        result = try offstage(["clock", "advance", "107000d"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("offstage: error: not a duration: 107000d"))
        result = try offstage(["device", "time-jump", "5"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: device time-jump takes no value (got 5) (see offstage device --help)\n")
    }

    /// Values the daemon would refuse are usage errors before any daemon is
    /// asked (`nowhere` has none: a daemon error would be exit 1).
    @Test func badDeviceValuesAndBackwardClocksAreUsageErrors() throws {
        var result = try offstage(["device", "orientation", "sideways"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("offstage: error: device orientation must be one of portrait, "), "\(result.stderr)")
        result = try offstage(["device", "locale", ""] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: device locale needs an identifier such as fr_FR (see offstage device --help)\n")
        result = try offstage(["device", "locale", "  "] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: device locale needs an identifier such as fr_FR, not \"  \" (see offstage device --help)\n")
        // A negative level is a value out of range, not an option (it said a value was missing).
        // Hexadecimal is not a level (`0x1p-2` was taken for 0.25).
        for (level, shown) in [
            ("-1", "-1"), ("-0.5", "-0.5"), ("2", "2"), ("full", "\"full\""), ("nan", "\"nan\""), ("inf", "\"inf\""), ("0x1p-2", "\"0x1p-2\""),
        ] {
            result = try offstage(["device", "battery", level] + nowhere())
            #expect(result.status == 64)
            #expect(result.stderr == "offstage: error: device battery takes a level from 0 to 1, not \(shown) (see offstage device --help)\n", "\(level)")
        }
        // A mistyped option is named as one (it reached the locale's rule as a value).
        result = try offstage(["device", "locale", "--jsn"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: unknown option '--jsn' (see offstage device --help)\n")
        result = try offstage(["device", "battery", "0.5", "0.7"] + nowhere())
        #expect(result.stderr == "offstage: error: device battery takes one value (got 0.5 0.7) (see offstage device --help)\n")
        // ArgumentParser reads -5s as options; it used to say a duration was
        // missing, and `clock now -5s` (the word dropped) exited 0.
        let backward = "the clock only goes forward: -5s is not a duration"
        for (words, message) in [
            (["advance", "-5s"], backward), (["advance", "--", "-5s"], backward),
            (["now", "-5s"], "clock now takes no duration (got -5s)"),
            (["advance", "5s", "--bogus"], "unknown option '--bogus'"),
            (["advance", "5s", "6s"], "clock advance takes one duration (got 5s 6s)"),
        ] {
            result = try offstage(["clock"] + words + nowhere())
            #expect(result.status == 64, "\(words)")
            #expect(result.stderr == "offstage: error: \(message) (see offstage clock --help)\n")
        }
    }

    @Test func usageErrorsAreOneLineNamingTheHelpToRead() throws {
        var result = try offstage(["launch"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: Missing expected argument '<bundle-id>' (see offstage launch --help)\n")
        // An unknown option is named, though the argument is missing too (the argument was).
        for option in ["--bogus", "-abc"] {
            result = try offstage(["launch", option] + nowhere())
            #expect(result.status == 64)
            #expect(result.stderr == "offstage: error: Unknown option '\(option)' (see offstage launch --help)\n")
        }
        result = try offstage(["gps", "feed", "--bogus"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("offstage: error: "))
        #expect(result.stderr.hasSuffix(" (see offstage gps feed --help)\n"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        // An unknown command is not answered with the top-level help.
        result = try offstage(["remote", "--help"])
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: unknown command 'remote' (see offstage --help)\n")
        result = try offstage(["help", "remote"])
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: unknown command 'remote' (see offstage --help)\n")
        result = try offstage(["help", "help"])
        #expect(result.status == 0)
        result = try offstage(["help", "gps", "stream"])
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: unknown command 'stream' in offstage gps (see offstage gps --help)\n")
        // A misspelt command in a group: `gps watc --help` showed the gps help.
        result = try offstage(["gps", "watc", "--help"])
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: unknown command 'watc' in offstage gps (see offstage gps --help)\n")
        result = try offstage(["audio", "plya", "clip.wav"])
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: unknown command 'plya' in offstage audio (see offstage audio --help)\n")
        result = try offstage(["help", "gps", "feed"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: offstage gps feed"))
        result = try offstage(["launch", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("OVERVIEW: Tap the app's icon"))
    }

    @Test func versionNamesTheReleaseAndTheAppProtocol() throws {
        let result = try offstage(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "offstage \(offstageVersion) (app protocol \(offstageProtocolVersion))\n")
    }

    @Test func negativeValuesAreCheckedNotTakenForOptions() throws {
        // ArgumentParser read "-5M" as an option and said "Missing value for '--free <free>'".
        var result = try offstage(["memory", "pressure", "--free", "-5M"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr == "offstage: error: --free must be a size such as 500K, 200M or 1G (see offstage memory --help)\n")
        // A size past Int's range (or infinite) trapped the CLI.
        for size in ["99999999999G", "infG", "1e30K"] {
            result = try offstage(["memory", "pressure", "--free", size] + nowhere())
            #expect(result.status == 64, "\(size)")
            #expect(result.stderr == "offstage: error: --free must be a size such as 500K, 200M or 1G (see offstage memory --help)\n")
        }
        result = try offstage(["events", "--after", "-3"] + nowhere())
        #expect(result.stderr == "offstage: error: --after takes a seq from 0 to 2^53 (got -3) (see offstage events --help)\n")
        result = try offstage(["gps", "feed", "x.nmea", "--hold", "inf"])
        #expect(result.stderr == "offstage: error: --hold takes decimal seconds, not inf (see offstage gps feed --help)\n")
    }

    @Test func followingADaemonThatDiesEndsWithAnError() throws {
        let scratch = try temporaryDirectory()
        let socket = ["--socket", scratch + "/control.sock"]
        let daemon = try RunningOffstage(["daemon", "--data", scratch + "/data"] + socket)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        #expect(daemon.awaitLine(containing: "offstage daemon running", onStandardError: true))
        let follower = try RunningOffstage(["events", "--follow"] + socket)
        #expect(follower.awaitLine(containing: "[daemonStarted]"))
        // Following an app nobody knows (installed later, or a typo) waits, and says so.
        let waiting = try RunningOffstage(["events", "--follow", "--app", "com.example.Later"] + socket)
        #expect(waiting.awaitLine(
            containing: "offstage: warning: no app com.example.Later is installed or in the event log yet; waiting for its events",
            onStandardError: true))
        kill(daemon.process.processIdentifier, SIGKILL)
        let (status, stderr) = follower.finish()
        #expect(status == 1)
        #expect(stderr == "offstage: error: the daemon closed the connection (it died or was killed)\n")
        let (waitingStatus, waitingStderr) = waiting.finish()
        #expect(waitingStatus == 1)
        // (The warning line was read by awaitLine: the rest is the error.)
        #expect(waitingStderr == "offstage: error: the daemon closed the connection (it died or was killed)\n")
    }

    /// An app only in the event log (installed, then uninstalled) is known:
    /// following it with no events yet drew the warning meant for typos,
    /// which checked the installed apps only. The daemon now says in its
    /// reply when it waits for an app nobody knows. Here the test plays the
    /// daemon, so each answer comes in its turn: no backlog, no app
    /// installed, and no `waiting`.
    @Test func followingAnAppTheDaemonKnowsDoesNotWarn() throws {
        let path = try temporaryDirectory() + "/control.sock"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }
        let follower = try RunningOffstage(["events", "--follow", "--app", "com.example.Gone", "--socket", path])
        var stream: LineSocket?
        for expected in ["events", "apps"] {
            let connection = try acceptedCommand(on: listener)
            let request = try #require(try connection.receive())
            try #require(request["command"]?.stringValue == expected, "\(request)")
            if expected == "events" {
                #expect(request["appFilter"] == "com.example.Gone" && request["follow"] == true)
                stream = connection
            }
            try connection.send(["ok": true, "result": .array([])])
        }
        #expect(stream != nil)
        stream = nil  // the daemon goes away
        let (status, stderr) = follower.finish()
        #expect(status == 1)
        #expect(stderr == "offstage: error: the daemon closed the connection (it died or was killed)\n")
    }

    /// A daemon stopping resets the connections it has not read: the
    /// command printed a raw "Error: read: Connection reset by peer". The
    /// test plays that daemon: it takes the command and closes unread.
    @Test func aDaemonThatResetsTheConnectionIsOneLine() throws {
        let path = try temporaryDirectory() + "/control.sock"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }
        let command = try RunningOffstage(["status", "--socket", path])
        do {
            let connection = try acceptedCommand(on: listener)
            #expect(awaitReadable(connection.fd, within: .seconds(30)), "the command sent nothing")
        }  // closed with the command unread: a reset
        let (status, stderr) = command.finish()
        #expect(status == 1)
        #expect(stderr == "offstage: error: the daemon closed the connection without replying\n")
    }

    /// `--timeout` bounds the whole wait for a reply: it bounded each read,
    /// so a reply that came a byte at a time never tripped it. The test
    /// plays a daemon that does that, until the command hangs up.
    @Test func aReplyThatTricklesPastTheTimeoutIsOneLine() throws {
        let path = try temporaryDirectory() + "/control.sock"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }
        let command = try RunningOffstage(["status", "--socket", path, "--timeout", "500ms"])
        let connection = try acceptedCommand(on: listener)
        #expect(try connection.receive()?["command"] == "status")
        // A byte each 100 ms (never a newline) for at most 30 s, until the
        // command hangs up (its close makes the connection readable: its end).
        // It used to wait for as long as the bytes came.
        var hungUp = false
        for _ in 0..<300 {
            hungUp = awaitReadable(connection.fd, within: .milliseconds(100))
            guard !hungUp, (try? connection.send(Array(" ".utf8))) != nil else { break }
        }
        #expect(hungUp, "the command waited for the whole trickle")
        let (status, stderr) = command.finish()
        #expect(status == 1)
        #expect(
            stderr
                == "offstage: error: no reply from the daemon on \(path) within 500ms: it may be stopped or hung; --timeout waits longer, 0 for good\n"
        )
    }

    /// A lifecycle command asks for the state it leaves (`withStatus`); a
    /// daemon older than that (still running after an upgrade) replies
    /// without it, and the state is asked for after the reply: the line
    /// would otherwise say "home screen" with no app.
    @Test func aDaemonWithoutWithStatusIsAskedForTheStateAfterTheReply() throws {
        let path = try temporaryDirectory() + "/old.sock"
        let listener = try listeningSocket(at: path)
        defer { close(listener) }
        let command = try RunningOffstage(["launch", "com.x.App", "--socket", path])
        let request = try acceptedCommand(on: listener)
        let sent = try #require(try request.receive())
        #expect(sent["command"] == "launch" && sent["withStatus"] == true, "\(sent)")
        try request.send(["ok": true, "result": [:]])
        let status = try acceptedCommand(on: listener)
        #expect(try status.receive()?["command"] == "status")
        try status.send(["ok": true, "result": ["foreground": "com.x.App", "apps": [["bundleID": "com.x.App", "state": "active"]]]])
        #expect(command.nextLine() == "foreground: com.x.App; com.x.App=active")
        let (exit, stderr) = command.finish()
        #expect(exit == 0, "\(stderr)")
    }

    /// The daemon's side: a follow of an app only in its log (by id or by
    /// the last part of it) is not `waiting`; one of an id nobody has is.
    @Test func aFollowOfAnUnknownBundleIDIsMarkedWaiting() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let app = "com.offstage.tests.CrashAtLaunchApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/CrashAtLaunchApp"))])
        try await test.ok(["command": "uninstall", "app": .string(app)])
        let after = try await test.daemon.engine.submit { $0.log.lastSeq }.get()
        // A bundle id needs no dot: "Later3" was refused as unknown.
        for (filter, waiting) in [(app, false), ("CrashAtLaunchApp", false), ("com.example.Later", true), ("Later3", true)] {
            let follower = try LineSocket(connectingTo: test.directory + "/control.sock")
            follower.deadline = .now + .seconds(10)
            try follower.send(["command": "events", "follow": true, "after": .number(Double(after)), "appFilter": .string(filter)])
            let reply = try #require(try follower.receive())
            #expect(reply["ok"] == true && reply["result"] == .array([]), "\(filter): \(reply)")
            #expect((reply["waiting"]?.boolValue ?? false) == waiting, "\(filter): \(reply)")
        }
        // A name no bundle id could be is not waited for (for good).
        for (filter, refusal) in [
            ("", "events: the app filter is empty; give a bundle id or the last part of one"),
            ("a..b", "no app a..b is installed or in the event log"),
        ] {
            let follower = try LineSocket(connectingTo: test.directory + "/control.sock")
            follower.deadline = .now + .seconds(10)
            try follower.send(["command": "events", "follow": true, "appFilter": .string(filter)])
            let reply = try #require(try follower.receive())
            #expect(reply["ok"] == false && reply["error"]?.stringValue == refusal, "\(filter): \(reply)")
        }
        await test.stop()
    }

    /// `events --follow --after N` printed the events that came later even
    /// when their seq was N or less. The follower's backlog is received
    /// before the events are made, so they come through the live stream.
    @Test func followingAfterASeqSkipsLaterEventsUpToIt() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let follower = try LineSocket(connectingTo: test.directory + "/control.sock")
        follower.deadline = .now + .seconds(10)
        let after = try await test.daemon.engine.submit { $0.log.lastSeq }.get() + 2
        try follower.send(["command": "events", "follow": true, "after": .number(Double(after))])
        #expect(try follower.receive()?["result"] == .array([]))
        for _ in 0..<3 { try await test.ok(["command": "device", "what": "time-jump"]) }
        let first = try #require(try follower.receive())
        #expect(first["event"]?["seq"]?.intValue == after + 1, "\(first)")
        await test.stop()
    }

    /// A follower whose filter hides `daemonStopped` (another app, a seq
    /// not reached) still gets it: the end of its stream read as a crash.
    /// An `after` past what JSON numbers keep exactly is refused: 2^63 - 1
    /// came out as no number, and the whole log was sent.
    @Test func aFilteredFollowerLearnsOfACleanStopAndAHugeAfterIsRefused() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let huge = try await test.refused(["command": "events", "after": .number(0x1p63)])
        #expect(huge == "events: \"after\" must be a seq from 0 to 2^53, not 9.223372036854776e+18", "\(huge)")
        var followers: [LineSocket] = []
        for request: JSONValue in [
            ["command": "events", "follow": true, "appFilter": "com.example.Other"],
            ["command": "events", "follow": true, "after": 1_000_000],
        ] {
            let follower = try LineSocket(connectingTo: test.directory + "/control.sock")
            follower.deadline = .now + .seconds(10)
            try follower.send(request)
            #expect(try follower.receive()?["ok"] == true)
            followers.append(follower)
        }
        _ = try await test.launchStateLab()
        await test.stop()
        for follower in followers {
            var names: [String] = []
            while let line = try follower.receive() { names.append(line["event"]?["name"]?.stringValue ?? "?") }
            #expect(names == ["daemonStopped"])
        }
    }

    /// SIGHUP (a closed terminal) stops the daemon as SIGTERM does: it died
    /// with no daemonStopped and left its sockets behind.
    @Test func aDaemonStopsCleanlyOnSIGHUP() throws {
        let directory = try temporaryDirectory()
        let (running, _) = try startedDaemon(in: directory)
        kill(running.process.processIdentifier, SIGHUP)
        #expect(running.finish().status == 0)
        let log = try String(contentsOfFile: directory + "/data/events.jsonl", encoding: .utf8)
        #expect(log.split(separator: "\n").last?.contains("\"daemonStopped\"") == true, "\(log)")
        #expect(FileKind(atPath: directory + "/control.sock") == nil && FileKind(atPath: directory + "/apps.sock") == nil)
        let bad = try offstage(["events", "--after", "9223372036854775807", "--socket", directory + "/control.sock"])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("offstage: error: --after takes a seq from 0 to 2^53 (got 9223372036854775807)"))
    }

    /// Blank lines from an app are skipped: a doubled newline (Python's
    /// print of a line ending in "\n") was an unreadable message that
    /// killed the app.
    @Test func blankLinesFromAnAppAreSkipped() throws {
        let directory = try temporaryDirectory()
        let app = try scriptApp(
            "com.example.Blank", in: directory,
            script: pythonAckingApp(helloEnd: #"\n\n"#, ackEnd: #"\n \r\n"#))
        let (running, socket) = try startedDaemon(in: directory)
        defer { stop(running) }
        #expect(try offstage(["install", app] + socket).status == 0)
        let launch = try offstage(["launch", "com.example.Blank"] + socket)
        #expect(launch.status == 0, "\(launch.stderr)")
        #expect(launch.stdout == "foreground: com.example.Blank; com.example.Blank=active\n")
        #expect(try offstage(["events", "--json"] + socket).stdout.contains("protocolViolation") == false)
    }

    /// The next daemon's `notRunning` of an app a killed daemon left says
    /// what state it left it in (`from`, as every other state event has),
    /// from the log it reads back.
    @Test func anAppLeftByAKilledDaemonIsLoggedWithItsLastState() throws {
        let directory = try temporaryDirectory()
        let (first, socket) = try startedDaemon(in: directory)
        #expect(try offstage(["install", Paths.sample("StateLab")] + socket).status == 0)
        #expect(try offstage(["launch", stateLab] + socket).status == 0)
        kill(first.process.processIdentifier, SIGKILL)
        _ = first.finish()
        let (second, _) = try startedDaemon(in: directory)
        var secondRunning = true
        defer { if secondRunning { stop(second) } }
        let lines = try offstage(["events", "--json", "--app", stateLab] + socket).stdout.split(separator: "\n")
        let last = try JSONValue(parsing: String(try #require(lines.last)))
        #expect(last["name"] == "notRunning" && last["detail"] == ["from": "active", "reason": "daemonDied"], "\(last)")
        // Before the second daemon's start, the log says the first died after its last event (nothing did).
        let all = try offstage(["events", "--json"] + socket).stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let started = try #require(all.lastIndex { $0["name"] == "daemonStarted" })
        let died = all[started - 1]
        #expect(died["kind"] == "error" && died["name"] == "daemonDied", "\(died)")
        #expect(died["detail"]?["lastSeq"] == all[started - 2]["seq"])
        #expect(all[started - 2]["name"] != "daemonStopped")
        // A daemon that stopped leaves no such sign.
        stop(second)
        secondRunning = false
        let (third, _) = try startedDaemon(in: directory)
        defer { stop(third) }
        let after = try offstage(["events", "--json", "--after", String(all.count)] + socket).stdout
        #expect(after.contains("daemonStarted") && !after.contains("\"daemonDied\""), "\(after)")
    }

    /// A daemon started ignoring SIGHUP (`nohup offstage daemon &`) keeps
    /// running when its terminal closes: a Dispatch signal source would
    /// catch the signal anyway were it among the shutdown signals.
    @Test func aDaemonUnderNohupOutlivesSIGHUP() throws {
        let directory = try temporaryDirectory()
        let (running, socket) = try startedDaemon(in: directory, through: "/usr/bin/nohup")
        // The kernel discards the signal: ignored and caught by no handler
        // (what a Dispatch signal source installs), whenever it comes.
        let pid = running.process.processIdentifier
        #expect(try signalSet("SigIgn", of: pid).contains(SIGHUP))
        #expect(try !signalSet("SigCgt", of: pid).contains(SIGHUP))
        kill(pid, SIGHUP)
        // Still there: it answers a command sent after the signal, runs on,
        // and has logged no stop.
        #expect(try offstage(["status"] + socket).status == 0)
        #expect(running.process.isRunning)
        let log = try String(contentsOfFile: directory + "/data/events.jsonl", encoding: .utf8)
        #expect(!log.contains("\"daemonStopped\""), "\(log)")
        stop(running)
    }

    /// The signals in one of a process's sets in `/proc/PID/status`
    /// (`SigIgn`, `SigCgt`: ignored, caught by a handler).
    func signalSet(_ name: String, of pid: Int32) throws -> Set<Int32> {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(name + ":") })
        let mask = try #require(UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16))
        return Set((1...64).filter { mask & (1 << UInt64($0 - 1)) != 0 }.map { Int32($0) })
    }

    @Test func badArgumentsAreRejectedByTheParser() throws {
        let result = try offstage(["memory", "pressure", "--free", "lots"] + nowhere())
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("offstage: error: --free must be a size"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    /// The column after the time, where each line names its app: the same
    /// on every line once times reach 7 digits (11.6 days) too.
    func appColumns(_ timeline: String) -> Set<Int> {
        Set(timeline.split(separator: "\n").map { line in
            let time = line.drop { $0 == " " }.prefix { $0 != " " }
            return line.distance(from: line.startIndex, to: line[time.endIndex...].drop { $0 == " " }.startIndex)
        })
    }

    /// A launch still waiting behind an app that has not answered names the
    /// app launching: its line named it in front and left it out of the list.
    @Test func aLaunchWaitingBehindAnUnansweredAppIsShownLaunching() async throws {
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .milliseconds(100))
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        let slow = "com.offstage.tests.SlowResignApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/SlowResignApp"))])
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await test.ok(["command": "launch", "app": .string(slow)])
        // SlowResignApp takes 0.5 s to answer applicationWillResignActive:, past the 100 ms grace.
        let result = try offstage(["launch", stateLab] + socket)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "foreground: \(stateLab); \(slow)=active \(stateLab)=launching\n")
    }

    /// Status says what the system waits for, which is why commands wait or
    /// queue: during a hang it looked like a settled system.
    @Test func statusSaysWhatTheSystemWaitsFor() async throws {
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .milliseconds(100))
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        let blocking = "com.offstage.tests.BlockingApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        #expect(try await test.ok(["command": "status"])["waitingFor"] == .null)
        try await test.ok(["command": "launch", "app": .string(blocking)])
        try await test.ok(["command": "home"])  // past the grace, BlockingApp still in applicationDidEnterBackground:
        let status = try offstage(["status"] + socket)
        #expect(status.stdout.contains("\nwaiting for: \(blocking) to answer applicationDidEnterBackground:\n"), "\(status.stdout)")
        let json = try JSONValue(parsing: try offstage(["status", "--json"] + socket).stdout)
        #expect(json["waitingFor"] == ["app": .string(blocking), "callback": "applicationDidEnterBackground:"])
    }

    /// Each progress line shows the time its step is issued at; an
    /// `advance` also says where it ends (it was shown at its end, 5 s).
    @Test func runProgressShowsEachStepAtItsIssueTime() throws {
        let file = try temporaryDirectory() + "/advance.yaml"
        try """
            apps: []
            steps:
              - at: 4s
                do: advance 1s
              - do: home
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try offstage(["run", file])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "  [1/2] 4 s: advance 1s (to 5 s)\n  [2/2] 5 s: home\nPASS advance.yaml: no expectations to check\n")
        #expect(run.stdout.hasPrefix("scenario: advance.yaml (2 steps, profile ios7)\n"), "\(run.stdout)")
        // With --json the header joins them on standard error (a passing run said nothing there),
        // and standard output is the timeline's objects only.
        let json = try offstage(["run", file, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderr == "scenario: advance.yaml (2 steps, profile ios7)\n" + run.stderr)
        let objects = json.stdout.split(separator: "\n").map { try? JSONValue(parsing: String($0)) }
        #expect(!objects.isEmpty && objects.allSatisfy { $0?["seq"] != nil }, "\(json.stdout)")
    }

    /// Scenarios may run to 36,500 days: times of 7 digits and more shifted
    /// the app column of their lines (`    26      StateLab` above
    /// `8640000      StateLab`), in `run` and in `events`.
    @Test func theTimeColumnStaysAlignedPastSixDigits() async throws {
        let file = try temporaryDirectory() + "/long.yaml"
        try """
            apps: [\(Paths.sample("StateLab"))]
            steps:
              - do: launch \(stateLab)
              - at: 100d
                do: home
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try offstage(["run", file, "--quiet", "--record", "/dev/stdout"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("8640000") && appColumns(run.stdout).count == 1, "\(run.stdout)")

        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let socket = ["--socket", test.directory + "/control.sock"]
        _ = try await test.launchStateLab()
        try await test.ok(["command": "clock", "action": "advance", "seconds": 3_153_600_000])
        try await test.ok(["command": "home"])
        let events = try offstage(["events"] + socket)
        #expect(events.stdout.contains("3153600000") && appColumns(events.stdout).count == 1, "\(events.stdout)")
        await test.stop()
    }

    @Test func runRecordsAndChecksAGoldenTimeline() throws {
        let golden = try temporaryDirectory() + "/golden.txt"
        let scenario = Paths.sample("scenarios/statelab-sms-reply.yaml")
        var result = try offstage(["run", scenario, "--quiet", "--record", golden])
        #expect(result.status == 0)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 0)
        // CRLF endings (an editor's or git's doing) compare as LF ones; the
        // whole file used to come out as one differing line.
        var text = try String(contentsOfFile: golden, encoding: .utf8)
        try text.replacingOccurrences(of: "\n", with: "\r\n").write(toFile: golden, atomically: true, encoding: .utf8)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 0, "\(result.stderr)")
        // So does a byte order mark at its start (another editor's doing): line 1 differed, invisibly.
        try ("\u{FEFF}" + text).write(toFile: golden, atomically: true, encoding: .utf8)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 0, "\(result.stderr)")
        // Blank lines after the last (an editor's) are no events; one failed the check.
        try (text + "\n  \n").write(toFile: golden, atomically: true, encoding: .utf8)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 0, "\(result.stderr)")
        text = text.replacingOccurrences(of: "applicationWillResignActive:", with: "applicationWillResignActiveX:")
        try text.write(toFile: golden, atomically: true, encoding: .utf8)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 1)
        #expect(result.stderr.contains("timeline differs"))
        // A golden file with a line more than the run: the run's end is named.
        #expect(try offstage(["run", scenario, "--quiet", "--record", golden]).status == 0)
        text = try String(contentsOfFile: golden, encoding: .utf8)
        try (text + "     99  StateLab  applicationWillTerminate:\n").write(toFile: golden, atomically: true, encoding: .utf8)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 1)
        #expect(result.stderr.contains("+ (this run's timeline ends here, after "), "\(result.stderr)")
        // Spacing only (a golden file from before the time column was aligned): re-record, it says.
        #expect(try offstage(["run", scenario, "--quiet", "--record", golden]).status == 0)
        text = try String(contentsOfFile: golden, encoding: .utf8)
        try text.replacingOccurrences(of: "  StateLab  ", with: " StateLab ").write(toFile: golden, atomically: true, encoding: .utf8)
        result = try offstage(["run", scenario, "--quiet", "--check", golden])
        #expect(result.status == 1)
        #expect(result.stderr.contains("the lines differ only in spacing: re-record"), "\(result.stderr)")
    }

    /// One-character names trapped in Foundation (`run s`, `--record G`);
    /// `--record` replaced a symbolic link with a plain file and reset the
    /// file's mode; a path ending in "/" or empty failed only after the run;
    /// `--check` from a pipe was "not UTF-8 text".
    @Test func goldenFilesAndScenariosByAnyName() throws {
        let directory = try temporaryDirectory()
        try FileManager.default.copyItem(atPath: Paths.sample("StateLab"), toPath: directory + "/StateLab")
        try "apps: [StateLab]\nsteps:\n  - do: launch com.offstage.samples.StateLab\n"
            .write(toFile: directory + "/s", atomically: true, encoding: .utf8)
        var result = try runOffstage(["run", "s", "--quiet", "--record", "G"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let golden = try String(contentsOfFile: directory + "/G", encoding: .utf8)
        #expect(golden.contains("[launch]"))
        // Through a link: the target is written, the link and the mode stay.
        try FileManager.default.createDirectory(atPath: directory + "/goldens", withIntermediateDirectories: false)
        try "old\n".write(toFile: directory + "/goldens/launch.txt", atomically: true, encoding: .utf8)
        #expect(chmod(directory + "/goldens/launch.txt", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: directory + "/launch.txt", withDestinationPath: "goldens/launch.txt")
        result = try runOffstage(["run", "s", "--quiet", "--record", "launch.txt"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileKind(atPath: directory + "/launch.txt", followingLinks: false) == .symbolicLink)
        #expect(try String(contentsOfFile: directory + "/goldens/launch.txt", encoding: .utf8) == golden)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: directory + "/goldens/launch.txt")[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        // A link to a file not there yet makes it; a pipe nobody reads is said.
        try FileManager.default.createSymbolicLink(atPath: directory + "/new.txt", withDestinationPath: "goldens/new.txt")
        result = try runOffstage(["run", "s", "--quiet", "--record", "new.txt"], in: directory)
        #expect(result.status == 0 && FileKind(atPath: directory + "/new.txt", followingLinks: false) == .symbolicLink)
        #expect(try String(contentsOfFile: directory + "/goldens/new.txt", encoding: .utf8) == golden)
        // Standard output, a pipe here: its /proc link read by hand named no file.
        result = try runOffstage(["run", "s", "--quiet", "--record", "/dev/stdout"], in: directory)
        #expect(result.status == 0 && result.stdout == golden, "\(result.stderr)")
        #expect(mkfifo(directory + "/fifo", 0o600) == 0)
        result = try runOffstage(["run", "s", "--quiet", "--record", "fifo"], in: directory)
        #expect(result.status == 1 && result.stderr == "offstage: error: cannot write fifo: no process reads the pipe\n", "\(result.stderr)")
        // Refused before the run.
        // (An empty one is a usage error: see emptyPathsAreRefused.)
        for (path, reason) in [("afile/", #"it ends in "/", as a directory does"#)] {
            result = try runOffstage(["run", "s", "--quiet", "--record", path], in: directory)
            #expect(result.status == 1 && result.stderr == "offstage: error: cannot write \(path): \(reason)\n", "\(result.stderr)")
        }
        result = try runOffstage(["run", "s", "--quiet", "--check", "/dev/stdin"], in: directory, input: Array(golden.utf8))
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func recordingOverTheFileBeingCheckedIsRefused() throws {
        let directory = try temporaryDirectory()
        let scenario = Paths.sample("scenarios/statelab-launch.yaml")
        try "not a timeline\n".write(toFile: directory + "/golden.txt", atomically: true, encoding: .utf8)
        let result = try offstage(["run", scenario, "--quiet", "--record", directory + "/golden.txt", "--check", directory + "/./golden.txt"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--record and --check name the same file"), "\(result.stderr)")
        #expect(try String(contentsOfFile: directory + "/golden.txt", encoding: .utf8) == "not a timeline\n")
    }

    /// `-` reads the scenario from standard input (a generated one, say);
    /// it was "no such file", and /dev/stdin "cannot read the file".
    @Test func aScenarioIsReadFromStandardInput() throws {
        // Unchanged: its `../StateLab` is relative to the working directory.
        let yaml = try String(contentsOfFile: Paths.sample("scenarios/statelab-launch.yaml"), encoding: .utf8)
        // A command that exits unread must fail the test, not kill its process.
        signal(SIGPIPE, SIG_IGN)
        for name in ["-", "/dev/stdin"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Paths.products + "/offstage")
            process.arguments = ["run", name]
            process.currentDirectoryURL = URL(fileURLWithPath: Paths.sample("scenarios"))
            let input = Pipe()
            let out = Pipe()
            let err = Pipe()
            process.standardInput = input
            process.standardOutput = out
            process.standardError = err
            try process.run()
            try input.fileHandleForWriting.write(contentsOf: Data(yaml.utf8))
            try input.fileHandleForWriting.close()
            let output = drain([out.fileHandleForReading, err.fileHandleForReading], of: process, within: commandLimit)
            process.waitUntilExit()
            let stderr = String(decoding: output[1], as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(name): \(stderr)")
            #expect(stderr.contains("PASS"), "\(name): \(stderr)")
            #expect(String(decoding: output[0], as: UTF8.self).contains("applicationDidBecomeActive:"))
        }
    }

    @Test func recordingOverTheScenarioIsRefused() throws {
        let directory = try temporaryDirectory()
        let scenario = directory + "/launch.yaml"
        let text = try String(contentsOfFile: Paths.sample("scenarios/statelab-launch.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "../StateLab", with: Paths.sample("StateLab"))
        try text.write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try offstage(["run", scenario, "--quiet", "--record", directory + "/../" + (directory as NSString).lastPathComponent + "/launch.yaml"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--record names the scenario file itself"), "\(result.stderr)")
        #expect(try String(contentsOfFile: scenario, encoding: .utf8) == text)
    }

    @Test func unusableGoldenPathsFailBeforeTheScenarioRuns() throws {
        let directory = try temporaryDirectory()
        let scenario = Paths.sample("scenarios/statelab-launch.yaml")
        let cases: [([String], String)] = [
            (["--record", directory + "/missing/golden.txt"], "cannot write \(directory)/missing/golden.txt: there is no directory \(directory)/missing"),
            (["--record", directory], "cannot write \(directory): it is a directory"),
            (["--check", directory + "/missing.txt"], "cannot read golden file \(directory)/missing.txt: No such file or directory"),
            (["--check", directory], "cannot read golden file \(directory): it is a directory"),
        ]
        for (options, message) in cases {
            let result = try offstage(["run", scenario] + options)
            #expect(result.status == 1)
            #expect(result.stderr == "offstage: error: \(message)\n")
            // Nothing ran: no scenario line, no timeline.
            #expect(result.stdout.isEmpty, "\(options): \(result.stdout)")
        }
    }

    @Test func twoAppsSharingALastPartAreToldApartInTheTimeline() throws {
        let directory = try temporaryDirectory()
        // A second app named StateLab under another id (the same executable).
        try FileManager.default.createDirectory(atPath: directory + "/Other", withIntermediateDirectories: true)
        try String(contentsOfFile: Paths.sample("StateLab/Info.plist"), encoding: .utf8)
            .replacingOccurrences(of: "com.offstage.samples.StateLab", with: "org.other.StateLab")
            .write(toFile: directory + "/Other/Info.plist", atomically: true, encoding: .utf8)
        func scenario(_ name: String, first: String, second: String) throws -> String {
            let path = directory + "/\(name).yaml"
            try """
                apps: [\(Paths.sample("StateLab")), Other]
                steps:
                  - at: 0s
                    do: launch \(first)
                  - at: 5s
                    do: launch \(second)
                """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let golden = directory + "/golden.txt"
        let ours = try scenario("ours-first", first: "com.offstage.samples.StateLab", second: "org.other.StateLab")
        let theirs = try scenario("theirs-first", first: "org.other.StateLab", second: "com.offstage.samples.StateLab")
        #expect(try offstage(["run", ours, "--quiet", "--record", golden]).status == 0)
        let text = try String(contentsOfFile: golden, encoding: .utf8)
        #expect(text.contains("  com.offstage.samples.StateLab  application:didFinishLaunchingWithOptions:"), "\(text)")
        #expect(text.contains("  org.other.StateLab  -> active"), "\(text)")
        let swapped = try offstage(["run", theirs, "--quiet", "--check", golden])
        #expect(swapped.status == 1)
        #expect(swapped.stderr.contains("timeline differs"))
    }

    @Test func aScenarioThatDoesNotParseIsOneLine() throws {
        let file = try temporaryDirectory() + "/broken.yaml"
        try "apps: [x]\nsteps:\n  - at: later\n    do: home\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try offstage(["run", file])
        #expect(result.status == 1)
        #expect(result.stderr == "offstage: error: \(file):3: expected a duration for at, such as 10s, 5m or 1h30m (at most 36500d)\n")
    }

    /// The header, printed once the apps are installed, still heads a run
    /// that goes on to its steps, once.
    @Test func aRunStartsWithItsHeader() throws {
        let result = try offstage(["run", Paths.sample("scenarios/statelab-launch.yaml")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("scenario: "), "\(result.stdout)")
        #expect(result.stdout.components(separatedBy: "scenario: ").count == 2)
    }

    /// An app that cannot be installed, or a step naming no app of the
    /// scenario's, is found after parsing: the `scenario:` header was printed
    /// before its error, two lines for one mistake.
    @Test func aScenarioWhoseAppsCannotBeInstalledIsOneLine() throws {
        let directory = try temporaryDirectory()
        for (name, yaml, why) in [
            ("missing", "apps:\n  - /nonexistent/NoSuchApp\n", "2: cannot install the app: /nonexistent/NoSuchApp: no such file or directory"),
            ("unknown", "apps: [\(Paths.sample("StateLab"))]\nsteps:\n  - do: launch com.example.Nobody\n",
             "3: com.example.Nobody is not one of the scenario's apps (com.offstage.samples.StateLab)"),
        ] {
            let file = directory + "/\(name).yaml"
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try offstage(["run", file])
            #expect(result.status == 1)
            #expect(result.stdout == "", "\(name)")
            #expect(result.stderr == "offstage: error: \(file):\(why)\n")
        }
    }

    /// A missing file, a directory and a file that is not text each say
    /// so (all three were "cannot read the file").
    @Test func aScenarioPathThatIsNoScenarioFileSaysWhy() throws {
        let directory = try temporaryDirectory()
        let binary = directory + "/binary.yaml"
        try Data([0xff, 0xfe, 0x00, 0x80]).write(to: URL(fileURLWithPath: binary))
        // Latin-1 in a comment on line 3: the line was not named.
        let latin1 = directory + "/latin1.yaml"
        try Data("apps: [a]\r\nsteps: []\r\n# caf".utf8 + [0xE9] + Data("\n".utf8)).write(to: URL(fileURLWithPath: latin1))
        let tooLong = directory + "/" + String(repeating: "x", count: 300) + ".yaml"
        for (path, why) in [
            (directory + "/missing.yaml", " no such file"), (directory, " a directory, not a scenario file"),
            (binary, "1: not UTF-8 text (byte 0xFF)"), (latin1, "3: not UTF-8 text (byte 0xE9)"),
            (tooLong, " cannot reach the file (File name too long)"),
        ] {
            let result = try offstage(["run", path])
            #expect(result.status == 1)
            #expect(result.stderr == "offstage: error: \(path):\(why)\n")
        }
    }

    @Test func daemonShutsDownGracefullyOnSIGTERM() async throws {
        let directory = try temporaryDirectory()
        let socket = directory + "/control.sock"
        let running = try RunningOffstage(["daemon", "--socket", socket, "--data", directory + "/data"])
        let daemon = running.process
        // Await the daemon's log line saying it listens, then start an app.
        #expect(running.awaitLine(containing: "offstage daemon running", onStandardError: true))
        #expect(try offstage(["install", Paths.sample("StateLab"), "--socket", socket]).status == 0)
        #expect(try offstage(["launch", stateLab, "--socket", socket]).status == 0)
        let status = try JSONValue(parsing: try offstage(["status", "--json", "--socket", socket]).stdout)
        let pid = try #require(status["apps"]?.arrayValue?.first?["pid"]?.intValue)

        daemon.terminate()  // SIGTERM
        daemon.waitUntilExit()
        #expect(daemon.terminationReason == .exit)
        #expect(daemon.terminationStatus == 0)
        #expect(kill(Int32(pid), 0) == -1)
        #expect(!FileManager.default.fileExists(atPath: socket))
        let log = try String(contentsOfFile: directory + "/data/events.jsonl", encoding: .utf8)
        #expect(log.split(separator: "\n").last?.contains("daemonStopped") == true)
    }

    /// `offstage daemon` on `directory`'s data and socket, once it runs
    /// (run through `launcher`, such as `nohup`, when given); the socket
    /// options for the commands.
    func startedDaemon(in directory: String, through launcher: String? = nil) throws -> (daemon: RunningOffstage, socket: [String]) {
        let socket = ["--socket", directory + "/control.sock"]
        let running = try RunningOffstage(["daemon", "--data", directory + "/data"] + socket, through: launcher)
        #expect(running.awaitLine(containing: "offstage daemon running", onStandardError: true))
        return (running, socket)
    }

    /// Stops a daemon of ``startedDaemon(in:)`` with SIGTERM (which kills its
    /// apps) and checks it exits cleanly, killing it past the command limit.
    func stop(_ daemon: RunningOffstage) {
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(daemon.finish().status == 0)
    }

    /// An app directory in `directory` whose executable is `script` (any
    /// language may be an app); its path.
    /// A daemon (`offstage daemon`, in `directory`) that has spawned an app
    /// that never says hello, `com.example.Sleepy`: its launch waits for
    /// the 20 s limit. The caller stops the daemon and finishes `launch`.
    func launchingSleepyApp(in directory: String) throws -> (daemon: RunningOffstage, launch: RunningOffstage, socket: [String]) {
        let app = try scriptApp("com.example.Sleepy", in: directory, script: "#!/bin/sh\nexec sleep 60\n")
        let (running, socket) = try startedDaemon(in: directory)
        #expect(try offstage(["install", app] + socket).status == 0)
        let follower = try RunningOffstage(["events", "--follow"] + socket)
        let launch = try RunningOffstage(["launch", "com.example.Sleepy"] + socket)
        #expect(follower.awaitLine(containing: "[spawn]"))
        return (running, launch, socket)
    }

    /// Between its spawn and its launch callbacks an app is still
    /// `notRunning`, as on iOS, but it has a process: `status` says it is
    /// launching rather than showing a pid for an app that does not run.
    @Test func anAppThatIsStillLaunchingIsShownSo() throws {
        let directory = try temporaryDirectory()
        let (running, launch, socket) = try launchingSleepyApp(in: directory)
        defer { if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL) } }
        let text = try offstage(["status"] + socket).stdout
        #expect(text.contains("  com.example.Sleepy  notRunning (launching)  pid "), "\(text)")
        let status = try JSONValue(parsing: try offstage(["status", "--json"] + socket).stdout)
        let entry = try #require(status["apps"]?.arrayValue?.first)
        #expect(entry["state"] == "notRunning" && entry["launching"] == true && entry["pid"]?.intValue != nil)
        // Stopping the daemon kills the app, and the launch fails.
        stop(running)
        #expect(launch.finish().status != 0)
    }

    /// Another process that read an app's token (from /proc/PID/environ)
    /// and claimed the app's pid took over its launch: it got the app's
    /// welcome and callbacks, and the app itself was then refused. The
    /// kernel's word on the peer (SO_PEERCRED) is checked too.
    @Test func aHelloFromAnotherProcessClaimingTheAppsPidIsRefused() throws {
        let directory = try temporaryDirectory()
        let (running, launch, socket) = try launchingSleepyApp(in: directory)
        defer { if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL) } }
        let status = try JSONValue(parsing: try offstage(["status", "--json"] + socket).stdout)
        let pid = try #require(status["apps"]?.arrayValue?.first?["pid"]?.intValue)
        let environment = try String(contentsOfFile: "/proc/\(pid)/environ", encoding: .utf8).split(separator: "\0")
        let token = try #require(environment.first { $0.hasPrefix(AppEnvironment.token + "=") }?.dropFirst(AppEnvironment.token.count + 1))
        let thief = try LineSocket(connectingTo: directory + "/apps.sock")
        thief.deadline = .now + .seconds(10)
        try thief.send(["type": "hello", "token": .string(String(token)), "pid": JSONValue(pid), "version": 1])
        let reply = try #require(try thief.receive())
        #expect(reply["type"] != "welcome", "\(reply)")
        let events = try offstage(["events", "--json"] + socket).stdout
        let violation = try #require(events.split(separator: "\n").first { $0.contains("protocolViolation") })
        #expect(violation.contains("hello with the token of another process") && violation.contains("\"peerPid\":\(getpid())"), "\(violation)")
        stop(running)
        #expect(launch.finish().status != 0)
    }

    /// A launched app whose first line is not its launch's hello broke the
    /// protocol, and the connection is known to be its own (the kernel names
    /// the peer): the violation was logged with no app (`events --app` did
    /// not show it), the app was not killed, and `launch` said only "it
    /// exited". A hello with its own token claiming another pid was logged
    /// as a theft of that token, of which the app was the victim, and it
    /// lived on until its launch watchdog. An app of another protocol
    /// version is killed too. `said` is how `launch`'s reason starts.
    @Test(arguments: [
        (#"{"type": "hello", "token": os.environ["OFFSTAGE_TOKEN"], "pid": os.getpid(), "version": "1"}"#,
         "unreadable message: hello needs token, pid and version) and was killed; its log: "),
        (#"{"type": "hello", "token": "forged", "pid": os.getpid(), "version": 1}"#, "hello with an unknown token) and was killed; its log: "),
        (#"{"type": "ack", "id": 1}"#, "first message must be hello) and was killed; its log: "),
        (#"{"type": "hello", "token": os.environ["OFFSTAGE_TOKEN"], "pid": os.getpid() + 1, "version": 1}"#, "hello claiming pid "),
        (#"{"type": "hello", "token": os.environ["OFFSTAGE_TOKEN"], "pid": os.getpid(), "version": 2}"#,
         "unsupported protocol version) and was killed; its log: "),
    ])
    func aLaunchWhoseFirstLineIsNotItsHelloIsKilledAndSaysWhy(first: String, said: String) throws {
        let directory = try temporaryDirectory()
        // It waits for the daemon to hang up, then sleeps: only a kill ends it soon.
        let app = try scriptApp(
            "com.example.BadHello", in: directory,
            script: """
            #!/usr/bin/env python3
            import json, os, socket, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(os.environ["OFFSTAGE_SOCKET"])
            s.sendall((json.dumps(\(first)) + "\\n").encode())
            while s.recv(4096):
                pass
            time.sleep(60)
            """)
        let (running, socket) = try startedDaemon(in: directory)
        defer { stop(running) }
        #expect(try offstage(["install", app] + socket).status == 0)
        let launch = try offstage(["launch", "com.example.BadHello"] + socket)
        #expect(launch.status == 1)
        #expect(
            launch.stderr.hasPrefix("offstage: error: com.example.BadHello did not launch: it broke the protocol (\(said)"), "\(launch.stderr)")
        #expect(launch.stderr.contains(") and was killed; its log: "), "\(launch.stderr)")
        let events = try offstage(["events", "--app", "com.example.BadHello", "--json"] + socket).stdout
        #expect(events.contains("protocolViolation"), "\(events)")
    }

    /// An app that dies at launch said why in its log, and `launch` quotes
    /// its last line: a script whose interpreter is missing was only "it
    /// exited with status 127". Only this launch's output counts: a second
    /// launch that says nothing does not quote the first one's line.
    @Test func aLaunchThatDiesQuotesTheLastLineOfItsLog() throws {
        let directory = try temporaryDirectory()
        let missing = try scriptApp("com.example.NoInterpreter", in: directory, script: "#!/nonexistent/python3\nprint(1)\n")
        let raising = try scriptApp(
            "com.example.Raising", in: directory,
            script: """
            #!/usr/bin/env python3
            import os
            marker = os.environ["HOME"] + "/ran"
            if not os.path.exists(marker):
                open(marker, "w").close()
                raise RuntimeError("no config at launch \\x1b[31m")
            os._exit(3)
            """)
        let (running, socket) = try startedDaemon(in: directory)
        defer { stop(running) }
        for app in [missing, raising] { #expect(try offstage(["install", app] + socket).status == 0) }
        let noInterpreter = try offstage(["launch", "com.example.NoInterpreter"] + socket)
        #expect(noInterpreter.status == 1)
        // setpriv's line, or (without setpriv) the spawn's own error.
        #expect(noInterpreter.stderr.contains("/NoInterpreter/run: No such file or directory"), "\(noInterpreter.stderr)")
        let first = try offstage(["launch", "com.example.Raising"] + socket)
        #expect(first.status == 1)
        #expect(
            first.stderr.hasPrefix("offstage: error: com.example.Raising did not launch: it exited with status 1; its log: ")
                && first.stderr.hasSuffix(", which ends: RuntimeError: no config at launch \\x1B[31m\n"), "\(first.stderr)")
        let second = try offstage(["launch", "com.example.Raising"] + socket)
        #expect(second.stderr == "offstage: error: com.example.Raising did not launch: it exited with status 3; its log: \(directory)/data/logs/com.example.Raising.log\n")
    }

    /// A daemon killed outright (SIGKILL: no cleanup) takes an app stuck in
    /// a callback with it. A frozen app dies with its orphaned process
    /// group and a waiting one reads the hang-up of its socket, but this
    /// one reads nothing: it lived on for good (so did one of an `offstage
    /// run` killed with SIGKILL), until the next daemon on the same data.
    @Test func anAppStuckInACallbackDiesWithADaemonKilledOutright() throws {
        let directory = try temporaryDirectory()
        let (running, socket) = try startedDaemon(in: directory)
        defer { if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL) } }
        let blocking = "com.offstage.tests.BlockingApp"
        #expect(try offstage(["install", Paths.sample("misbehaving/BlockingApp")] + socket).status == 0)
        #expect(try offstage(["launch", blocking] + socket).status == 0)
        let status = try JSONValue(parsing: try offstage(["status", "--json"] + socket).stdout)
        let pid = Int32(try #require(status["apps"]?.arrayValue?.first?["pid"]?.intValue))
        let exit = offstage_pidfd_open(pid)
        try #require(exit >= 0)
        defer { close(exit) }
        // Should the test fail, the app does not outlive it (and a pid
        // reused once it is gone is not hit).
        defer { if !awaitReadable(exit, within: .zero) { kill(-pid, SIGKILL) } }
        let follower = try RunningOffstage(["events", "--follow", "--app", blocking] + socket)
        // Not awaited: `home` answers once the system has settled, when the
        // watchdog has killed the app 5 s on.
        let home = try RunningOffstage(["home"] + socket)
        // Written to the app, which blocks in it.
        #expect(follower.awaitLine(containing: "applicationDidEnterBackground:"))
        kill(running.process.processIdentifier, SIGKILL)
        // Only the daemon's death can end it: BlockingApp sleeps for an hour,
        // and its watchdog died with the daemon.
        #expect(awaitReadable(exit, within: .seconds(15)), "the app \(pid) outlived its daemon")
        #expect(home.finish().status != 0)
    }
}

/// The test playing a daemon: the next command's connection on
/// `listener` (of ``listeningSocket(at:)``), whose reads give up after 30 s
/// (a command that never asks fails the test, not hangs it).
func acceptedCommand(on listener: Int32) throws -> LineSocket {
    try #require(awaitReadable(listener, within: .seconds(30)), "the command did not connect")
    let fd = accept(listener, nil, nil)
    try #require(fd >= 0, "accept: \(String(cString: strerror(errno)))")
    let connection = LineSocket(fd: fd)
    connection.deadline = .now + .seconds(30)
    return connection
}

/// A Unix socket listening at `path` (its connections wait to be accepted).
func listeningSocket(at path: String) throws -> Int32 {
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard listener >= 0, bound == 0, listen(listener, 4) == 0 else {
        close(listener)
        throw POSIXError(.EADDRINUSE)
    }
    return listener
}
