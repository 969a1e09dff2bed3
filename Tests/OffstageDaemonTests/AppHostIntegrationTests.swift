import CLinuxProcess
import Foundation
import Synchronization
import Testing
@testable import OffstageDaemon
import OffstageCore

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon with real app processes on the real clock.
@Suite("Daemon with real processes", .serialized)
struct AppHostIntegrationTests {
    @Test func launchHomeAndReturnKeepTheSameProcessRunningThroughItsTask() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let pid = try await test.launchStateLab()
        #expect(kill(pid, 0) == 0)
        #expect(try await test.callbacks(stateLab) == [
            "application:willFinishLaunchingWithOptions:", "application:didFinishLaunchingWithOptions:",
            "applicationDidBecomeActive:",
        ])
        try await test.ok(["command": "home"])
        // StateLab holds a 25 s background task: it runs in the background.
        #expect(processState(pid) != "T")
        let status = try await test.ok(["command": "status"])
        #expect(status["apps"]?.arrayValue?.first?["state"] == "background")
        #expect(status["apps"]?.arrayValue?.first?["backgroundTasks"] == [1])
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        #expect(try await test.callbacks(stateLab).suffix(2) == ["applicationWillEnterForeground:", "applicationDidBecomeActive:"])
        #expect(try await test.pid(stateLab) == pid)
        await test.stop()
        #expect(kill(pid, 0) == -1)
    }

    @Test func suspendedAppIsStoppedBySIGSTOPAndKilledSilentlyFromTheSwitcher() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let pid = try await test.launchStateLab()
        try await test.ok(["command": "home"])
        try await test.ok(["command": "clock", "action": "advance", "seconds": 30])
        #expect(await awaitStopped(pid))
        let before = try await test.callbacks(stateLab).count
        try await test.ok(["command": "switcher", "action": "kill", "app": .string(stateLab)])
        #expect(try await test.callbacks(stateLab).count == before)
        // The process is really gone: await the daemon's reaping of it.
        try await test.daemon.processGone(stateLab)
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
        await test.stop()
    }

    /// ZeroTimerApp schedules a timer for 0 s through OffstageKit as it
    /// becomes active: it fires at once, at virtual time 0, and its body runs.
    @Test func aTimerForZeroSecondsFiresOnTheVirtualClockWithoutAnAdvance() async throws {
        // A generous hang grace: the settling below must not give up on a loaded machine.
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .seconds(10))
        defer { Task { await test.stop() } }
        let app = "com.offstage.tests.ZeroTimerApp"
        try await test.ok(["command": "install", "path": .string(Paths.repository + "/Tests/Apps/ZeroTimerApp")])
        try await test.ok(["command": "launch", "app": .string(app)])
        let callbacks = try await test.awaitEvents(kind: .callback, count: 4)
        #expect(callbacks.map(\.name) == [
            "application:willFinishLaunchingWithOptions:", "application:didFinishLaunchingWithOptions:", "applicationDidBecomeActive:", "timerFired",
        ])
        let fired = try #require(callbacks.last)
        #expect(fired.time == 0)
        let timer = try #require(fired.detail["timer"]?.intValue)
        // A clock command settles first: it runs once the app has acknowledged
        // the timer, so its body has run (a read-only one such as status does not wait).
        try await test.ok(["command": "clock", "action": "advance", "seconds": 0])
        let log = try String(contentsOfFile: test.directory + "/data/logs/\(app).log", encoding: .utf8)
        #expect(log.contains("scheduled timer \(timer)"))
        #expect(log.contains("timer fired"))
        await test.stop()
    }

    @Test func defaultsSurviveAKillAndRelaunch() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        _ = try await test.launchStateLab()
        try await test.ok(["command": "home"])
        let defaults = test.directory + "/data/containers/\(stateLab)/Library/Preferences/defaults.json"
        let saved = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: defaults))))
        #expect(saved["index"] == 1)
        try await test.ok(["command": "switcher", "action": "kill", "app": .string(stateLab)])
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        let log = try String(contentsOfFile: test.directory + "/data/logs/\(stateLab).log", encoding: .utf8)
        #expect(log.contains("VC: restored index 1"))
        await test.stop()
    }

    @Test func crashAtLaunchFailsTheLaunchAndTheDaemonKeepsGoing() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/CrashAtLaunchApp"))])
        let message = try await test.refused(["command": "launch", "app": "com.offstage.tests.CrashAtLaunchApp"])
        #expect(message.contains("did not launch: it crashed (signal"))
        #expect(message.contains("CrashAtLaunchApp.log"))
        // Its runtime's error line, not the end of the backtrace after it ("Backtrace took 0.01s").
        #expect(message.contains("Fatal error: CrashAtLaunchApp crashes at launch on purpose"), "\(message)")
        let errors = try await test.events(kind: .error)
        #expect(errors.map(\.name) == ["crashed"])
        // Still serving.
        _ = try await test.launchStateLab()
        await test.stop()
    }

    /// A background launch whose app crashes in its launch callbacks fails
    /// as `launch` does: it was answered `ok`. An app that ends on purpose
    /// once launched (it exits on suspend, and a zero wake window suspends
    /// it as soon as its callbacks are done) came up: that one succeeds.
    @Test func aBackgroundLaunchThatCrashesFailsAndOneThatEndsOnPurposeDoesNot() async throws {
        var policy = LifecyclePolicy.default
        policy.wakeWindow = .zero
        let test = try await TestDaemon.start(policy: policy)
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/CrashAtLaunchApp"))])
        let message = try await test.refused(["command": "launchInBackground", "app": "com.offstage.tests.CrashAtLaunchApp"])
        #expect(message.hasPrefix("com.offstage.tests.CrashAtLaunchApp did not launch: it crashed (signal"), "\(message)")
        #expect(message.contains("Fatal error: CrashAtLaunchApp crashes at launch on purpose"), "\(message)")

        let app = try scriptApp("com.example.ExitsOnSuspend", in: test.directory, script: pythonAckingApp())
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>CFBundleIdentifier</key><string>com.example.ExitsOnSuspend</string>\
            <key>CFBundleExecutable</key><string>run</string><key>UIApplicationExitsOnSuspend</key><true/></dict></plist>
            """.write(toFile: app + "/Info.plist", atomically: true, encoding: .utf8)
        try await test.ok(["command": "install", "path": .string(app)])
        try await test.ok(["command": "launchInBackground", "app": "com.example.ExitsOnSuspend"])
        #expect(try await test.callbacks("com.example.ExitsOnSuspend") == [
            "application:willFinishLaunchingWithOptions:", "application:didFinishLaunchingWithOptions:", "applicationWillTerminate:",
        ])
        #expect(try await test.daemon.engine.submit { $0.board.state(of: "com.example.ExitsOnSuspend") }.get() == .notRunning)
    }

    /// An app that never says hello is named by a sentence, as other
    /// causes are: it was `launchTimeout {"code":"0x8badf00d","limit":20}`.
    /// In virtual time, the watchdog fires once the app has written its
    /// line (it says so through a FIFO), however long `/bin/sh` took to
    /// start: on a 0.3 s real-time limit, a loaded machine's shell had not
    /// always written it.
    @Test func aLaunchThatNeverSaysHelloSaysSo() async throws {
        // Virtual time: the launch waits this long in real time for the
        // hello, and its watchdog fires at this virtual time.
        var policy = LifecyclePolicy.default
        policy.launchLimit = .seconds(60)
        let test = try await TestDaemon.start(clock: .virtual, policy: policy)
        defer { Task { await test.stop() } }
        let written = test.directory + "/written"
        try #require(mkfifo(written, 0o600) == 0)
        // Opened first, so the app's `echo >` does not wait for a reader; nonblocking, so this does not wait for a writer.
        let reader = open(written, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(reader >= 0)
        defer { close(reader) }
        let app = try scriptApp(
            "com.example.Silent", in: test.directory, script: "#!/bin/sh\necho waiting\necho written > '\(written)'\nexec sleep 60\n")
        try await test.ok(["command": "install", "path": .string(app)])
        async let launched = test.refused(["command": "launch", "app": "com.example.Silent"])
        try #require(awaitReadable(reader, within: .seconds(30)))
        // The clock reaches the launch's watchdog (as `clock advance` would, without waiting for the launch first).
        try await test.daemon.engine.submit { engine in
            engine.clock.set(engine.now + .seconds(60))
            engine.perform(engine.board.advance(to: engine.now))
        }.get()
        let message = try await launched
        #expect(
            message == "com.example.Silent did not launch: it never said hello, and the watchdog killed it after 60 s (0x8badf00d); "
                + "its log: \(test.directory)/data/logs/com.example.Silent.log, which ends: waiting")
        await test.stop()
    }

    @Test func blockingAppIsKilledByTheWatchdogInRealTime() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "launch", "app": "com.offstage.tests.BlockingApp"])
        let result = try await test.ok(["command": "home"])
        let errors = try #require(result["errors"]?.arrayValue)
        #expect(errors.first?["name"] == "watchdogTimeout")
        #expect(errors.first?["detail"]?["code"] == "0x8badf00d")
        let status = try await test.ok(["command": "status"])
        #expect(status["apps"]?.arrayValue?.first?["state"] == "notRunning")
        await test.stop()
    }

    /// A real-clock daemon with BlockingApp and StateLab installed, BlockingApp
    /// launched, and `home` (sent as `request`) waiting for BlockingApp's
    /// 500 ms watchdog in `applicationDidEnterBackground:`, where it hangs.
    func homeBehindBlockingApp(_ request: JSONValue) async throws -> (TestDaemon, Task<JSONValue, any Error>) {
        var policy = LifecyclePolicy.default
        policy.didEnterBackgroundLimit = .milliseconds(500)
        let test = try await TestDaemon.start(policy: policy)
        let blocking = "com.offstage.tests.BlockingApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await test.ok(["command": "launch", "app": .string(blocking)])
        let callbacks = try await test.callbacks(blocking).count
        let home = Task { try await test.ok(request) }
        // Back once BlockingApp hangs in applicationDidEnterBackground:.
        _ = try await test.awaitEvents(kind: .callback, count: callbacks + 1)
        return (test, home)
    }

    /// A command's status (what the CLI prints) is the state it left, not a
    /// later command's: `home` waits for BlockingApp's watchdog while a
    /// `launch` is issued, and replies with the home screen in front and
    /// BlockingApp stopped. The CLI asked `status` after the reply, by
    /// which time the queued launch had run ("foreground: StateLab").
    @Test func aCommandsStatusIsTheStateItLeftNotALaterCommands() async throws {
        let (test, home) = try await homeBehindBlockingApp(["command": "home", "withStatus": true])
        defer { Task { await test.stop() } }
        let launch = try await test.ok(["command": "launch", "app": .string(stateLab), "withStatus": true])
        let homeResult = try await home.value
        #expect(homeResult["status"]?["foreground"] == .null)
        #expect(homeResult["stopped"] == ["com.offstage.tests.BlockingApp"])
        #expect(launch["status"]?["foreground"] == .string(stateLab))
        #expect(launch["stopped"] == [])
        // Without withStatus a reply is as it was.
        #expect(try await test.ok(["command": "home"])["status"] == nil)
    }

    /// A command whose client leaves (Ctrl-C, `--timeout`) while it waits
    /// for its turn behind a hung app is dropped: the CLI had said there was
    /// no reply, and the launch still happened once the watchdog fired.
    @Test func aCommandWhoseClientLeftBeforeItsTurnIsDropped() async throws {
        let (test, home) = try await homeBehindBlockingApp(["command": "home"])
        defer { Task { await test.stop() } }
        // Sent while home waits for the watchdog, and given up on.
        do {
            let client = try LineSocket(connectingTo: test.directory + "/control.sock")
            try client.send(["command": "launch", "app": .string(stateLab)])
        }  // closed here
        _ = try await home.value
        // Home's reply came after the watchdog; a command after it runs, so the dropped one's turn has passed.
        try await test.ok(["command": "lock"])
        let all = try await test.events()
        #expect(all.filter { $0.app == stateLab }.map(\.name) == ["installed", "commandDropped"])
        #expect(all.first { $0.name == "commandDropped" }?.detail["command"] == "launch")
        #expect(try await test.pid(stateLab) == nil)
    }

    /// Replies on one connection come in the order of its requests: a
    /// `status` sent after a `launch` that waits behind a hung app answered
    /// first, describing the state before that launch.
    @Test func repliesOnOneConnectionComeInTheOrderOfItsRequests() async throws {
        let (test, home) = try await homeBehindBlockingApp(["command": "home"])
        defer { Task { await test.stop() } }
        let client = try LineSocket(connectingTo: test.directory + "/control.sock")
        client.deadline = .now + .seconds(30)
        try client.send(["command": "launch", "app": .string(stateLab), "id": 1])
        try client.send(["command": "status", "id": 2])
        _ = try await home.value
        let first = try #require(try client.receive())
        let second = try #require(try client.receive())
        #expect(first["id"] == 1 && first["ok"] == true, "\(first.jsonText)")
        #expect(second["id"] == 2, "\(second.jsonText)")
        #expect(second["result"]?["foreground"] == .string(stateLab), "\(second.jsonText)")
    }

    /// A client that shuts down its writing side after its request (`nc -N`)
    /// has not left: its command, queued behind a hung app, runs in its turn
    /// and the reply reaches it. End of input used to close the connection,
    /// and the command was dropped as if the client had gone.
    /// Its last line needs no newline: the end of its input ends it. A
    /// blank line asks nothing (it was answered with an error).
    @Test(arguments: ["\n", "", "\n\n"])
    func aCommandWhoseClientHalfClosedIsRunAndAnswered(lineEnd: String) async throws {
        let (test, home) = try await homeBehindBlockingApp(["command": "home"])
        defer { Task { await test.stop() } }
        let client = try LineSocket(connectingTo: test.directory + "/control.sock")
        client.deadline = .now + .seconds(30)
        let request: JSONValue = ["command": "launch", "app": .string(stateLab)]
        try client.send(Array((request.jsonText + lineEnd).utf8))
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        _ = try await home.value
        let reply = try #require(try client.receive())
        #expect(reply["ok"] == true, "\(reply.jsonText)")
        // Every request answered, the daemon hangs up on a client with no more to send.
        #expect(try client.readLine() == nil)
        let all = try await test.events()
        #expect(!all.contains { $0.name == "commandDropped" })
        #expect(try await test.pid(stateLab) != nil)
    }

    /// Installs and launches app `id`, which starts a `sleep` in a session
    /// of its own (`setsid`: out of its process group) before its hello;
    /// `afterAck` is one Python statement run after each ack. Returns the
    /// daemon's cgroups (required: the point of these tests) and the
    /// sleep's pid.
    func launchEscaper(_ id: String, on test: TestDaemon, afterAck: String = "pass", nested: Bool = false) async throws -> (AppCgroups, pid_t) {
        let cgroups = try #require(
            try await test.daemon.engine.submit { $0.host.cgroups }.get(),
            "the daemon could not make a cgroup (cgroup2 mounted, writable, with cgroup.kill: kernel 5.14+)")
        let directory = try temporaryDirectory()
        let marker = directory + "/escaped"
        let app = try scriptApp(
            id, in: directory,
            script: pythonAckingApp(
                beforeHello: #"import subprocess; p = subprocess.Popen(["sleep", "600"], start_new_session=True); \#(nested ? moveIntoSubCgroup : "") open("\#(marker)", "w").write(str(p.pid))"#,
                afterAck: afterAck))
        try await test.ok(["command": "install", "path": .string(app)])
        try await test.ok(["command": "launch", "app": .string(id)])
        return (cgroups, try #require(pid_t(try String(contentsOfFile: marker, encoding: .utf8))))
    }

    /// An app that starts a process in a session of its own (`setsid`),
    /// out of the app's process group: signals to the group missed it, and
    /// it outlived the app. In the app's cgroup it dies with the app,
    /// whether the app is killed or ends by itself.
    @Test(arguments: ["switcher kill", "app exits"])
    func aProcessThatLeftItsAppsGroupDiesWithTheApp(how: String) async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let id = "com.example.Escaper"
        let (cgroups, escaped) = try await launchEscaper(
            id, on: test, afterAck: how == "app exits" ? #"if message["name"] == "applicationWillResignActive:": os._exit(0)"# : "pass")
        let appPID = try #require(try await test.pid(id))
        let exit = offstage_pidfd_open(escaped)
        try #require(exit >= 0)
        defer { close(exit) }
        defer { kill(escaped, SIGKILL) }
        // Out of the app's group and session, in the app's cgroup.
        #expect(getpgid(escaped) != appPID && getsid(escaped) == escaped)
        #expect(cgroups.processes(appPID).contains(escaped))
        if how == "switcher kill" {
            try await test.ok(["command": "switcher", "action": "kill", "app": .string(id)])
        } else {
            try await test.ok(["command": "home"])
        }
        #expect(awaitReadable(exit, within: .seconds(10)), "the process the app started outlived it")
        try await test.daemon.processGone(id)
        // The app's cgroup is gone with it, and the daemon's with the daemon.
        #expect(access(cgroups.directory + "/\(appPID)", F_OK) != 0)
        await test.stop()
        #expect(access(cgroups.directory, F_OK) != 0)
    }

    /// Python moving process `p` into a cgroup `sub` made in the app's own.
    let moveIntoSubCgroup = #"c = open("/proc/self/cgroup").read().split("0::")[1].split("\n")[0]; m = [l.split()[4] for l in open("/proc/self/mountinfo") if " - cgroup2 " in l][0]; os.mkdir(m + c + "/sub"); open(m + c + "/sub/cgroup.procs", "w").write(str(p.pid));"#

    /// A process the app started out of its group is frozen and thawed
    /// with the app: it ran on while the app was suspended. Also one in a
    /// cgroup the app made below its own (it was missed).
    @Test(arguments: [false, true])
    func aProcessThatLeftItsAppsGroupIsFrozenAndThawedWithTheApp(nested: Bool) async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let id = "com.example.Escaper"
        let (cgroups, escaped) = try await launchEscaper(id, on: test, nested: nested)
        let appPID = try #require(try await test.pid(id))
        #expect(cgroups.processes(appPID).contains(escaped))
        defer { kill(escaped, SIGKILL) }
        try #require(getsid(escaped) == escaped)
        /// Stopped, or its SIGSTOP sent and not yet taken (`ShdPnd`, bit 19 - 1).
        func stopped() throws -> Bool {
            let status = try String(contentsOfFile: "/proc/\(escaped)/status", encoding: .utf8)
            let field = { (name: String) in
                status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
            }
            let pending = field("ShdPnd").flatMap { UInt64($0, radix: 16) } ?? 0
            return field("State")?.hasPrefix("T") == true || pending & (1 << 18) != 0
        }
        #expect(try !stopped())
        try await test.ok(["command": "home"])  // suspended at once: no background task
        #expect(try await test.events(kind: .state, app: id).last?.name == "suspended")
        #expect(try stopped())
        // A SIGCONT wakes a stopped process as it is sent.
        try await test.ok(["command": "launch", "app": .string(id)])
        #expect(try !stopped())
    }

    /// An app's resident memory, which memory pressure ranks apps by, is
    /// that of all its processes: a helper holding 64 MiB counted for
    /// nothing, and the app was ranked by its own few megabytes.
    @Test func anAppsResidentMemoryCountsTheProcessesItStarted() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        _ = try #require(
            try await test.daemon.engine.submit { $0.host.cgroups }.get(),
            "the daemon could not make a cgroup (cgroup2 mounted, writable, with cgroup.kill: kernel 5.14+)")
        let directory = try temporaryDirectory()
        let id = "com.example.Helper"
        // The helper fills 64 MiB, then says so on its output, which the app waits for before its hello.
        let helper = #"import sys, time; b = b'x' * (64 << 20); print('ready', flush=True); time.sleep(600)"#
        let app = try scriptApp(
            id, in: directory,
            script: pythonAckingApp(
                beforeHello: #"import subprocess, sys; p = subprocess.Popen([sys.executable, "-c", "\#(helper)"], stdout=subprocess.PIPE); p.stdout.readline()"#))
        try await test.ok(["command": "install", "path": .string(app)])
        try await test.ok(["command": "launch", "app": .string(id)])
        let status = try await test.ok(["command": "status"])
        let entry = try #require(status["apps"]?.arrayValue?.first { $0["bundleID"] == .string(id) })
        let resident = try #require(entry["residentBytes"]?.intValue)
        #expect(resident > 64 << 20, "\(resident) bytes")
        try await test.ok(["command": "switcher", "action": "kill", "app": .string(id)])
        try await test.daemon.processGone(id)
    }

    /// A daemon killed outright leaves its cgroups, and in them the
    /// processes its apps started that left their groups (the apps die
    /// with it): the next daemon's start kills them and removes the
    /// cgroups. One whose lock is held (a daemon running in another pid
    /// namespace: its pid names nothing here) is left alone. In a parent
    /// of the test's own, so no other test's daemon sweeps it meanwhile.
    @Test func cgroupsLeftByADeadDaemonAreEmptiedAndALockedOneIsLeft() throws {
        let own = try #require(AppCgroups.ownCgroupDirectory(), "no cgroup2 mount")
        let parent = own + "/sweep-test.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try #require(mkdir(parent, 0o755) == 0, "cannot make a cgroup in \(own)")
        defer { rmdir(parent) }
        // A pid no longer running, as a dead daemon's.
        var dead: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for pointer in argv { free(pointer) } }
        try #require(posix_spawn(&dead, "/bin/true", nil, nil, argv, environ) == 0)
        while waitpid(dead, nil, 0) == -1 && errno == EINTR {}
        // A daemon killed and not yet reaped (a zombie): its pid and start time still match.
        var zombie: pid_t = 0
        try #require(posix_spawn(&zombie, "/bin/true", nil, nil, argv, environ) == 0)
        defer { waitpid(zombie, nil, 0) }
        var exited = siginfo_t()
        try #require(waitid(P_PID, id_t(zombie), &exited, WEXITED | WNOWAIT) == 0)
        let zombieTicks = try #require(AppProcessHost.startTicks(of: zombie))
        let names = ["offstage.\(dead).1.1", "offstage.\(dead).1.2", "offstage.\(zombie).\(zombieTicks).1"]
        var leftovers: [(directory: String, pid: pid_t, exit: Int32)] = []
        // Whatever is left, killed and removed (the parent last, by the defer above).
        defer {
            for leftover in leftovers {
                _ = AppCgroups.empty(leftover.directory, until: .now + .seconds(5))
                waitpid(leftover.pid, nil, 0)
                close(leftover.exit)
            }
        }
        for name in names {
            let directory = parent + "/" + name
            try #require(mkdir(directory, 0o755) == 0 && mkdir(directory + "/4242.1", 0o755) == 0)
            let pid = try spawnProcess(
                executable: "/bin/sleep", arguments: ["600"], environment: nil, outputPath: "/dev/null", ownProcessGroup: true)
            let exit = offstage_pidfd_open(pid)
            leftovers.append((directory, pid, exit))
            try #require(exit >= 0)
            guard AppCgroups.write("\(pid)", to: directory + "/4242.1/cgroup.procs") else {
                kill(pid, SIGKILL)
                Issue.record("cannot move a process into \(directory)/4242.1")
                return
            }
        }
        // The second is held, as its running daemon holds it.
        let lock = open(leftovers[1].directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
        defer { close(lock) }
        AppCgroups.sweep(parent)
        for leftover in [leftovers[0], leftovers[2]] {
            #expect(awaitReadable(leftover.exit, within: .seconds(10)), "the process left in \(leftover.directory) lives on")
            #expect(access(leftover.directory, F_OK) != 0)
        }
        #expect(!awaitReadable(leftovers[1].exit, within: .zero), "a running daemon's app was killed")
        #expect(access(leftovers[1].directory + "/4242.1", F_OK) == 0)
    }

    @Test func aHungAppsGraceIsGivenOncePerWaitInVirtualTime() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let blocking = "com.offstage.tests.BlockingApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "launch", "app": .string(blocking)])
        // BlockingApp never acknowledges applicationDidEnterBackground:.
        try await test.ok(["command": "home"])
        // Each advance stops at the end and waits for the system to settle:
        // the hung callback, whose grace has run out already.
        for _ in 0..<3 { try await test.ok(["command": "clock", "action": "advance", "seconds": 1]) }
        let expired = try await test.events(kind: .system).filter { $0.name == "hangGraceExpired" }
        #expect(expired.count == 1)
        #expect(expired.first?.app == blocking)
        #expect(expired.first?.detail["callback"] == "applicationDidEnterBackground:")
        #expect(expired.first?.detail["grace"] == 0.3)
        // The watchdog still fires at its virtual deadline, 5 s after home.
        let result = try await test.ok(["command": "clock", "action": "advance", "seconds": 3])
        let errors = try #require(result["errors"]?.arrayValue)
        #expect(errors.first?["name"] == "watchdogTimeout")
        #expect(errors.first?["time"] == 5)
        await test.stop()
    }

    @Test func aWaitAnsweredWithinItsGraceLeavesTheNextWaitAWholeGrace() async throws {
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .seconds(1))
        defer { Task { await test.stop() } }
        let slow = "com.offstage.tests.SlowResignApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/SlowResignApp"))])
        try await test.ok(["command": "launch", "app": .string(slow)])
        // When each event is logged, on the engine's loop.
        let arrivals = Mutex<[(name: String, at: ContinuousClock.Instant)]>([])
        try await test.daemon.engine.submit { engine in
            _ = engine.log.subscribe { event in arrivals.withLock { $0.append((event.name, .now)) } }
        }.get()
        // applicationWillResignActive: is answered after 0.5 s, then
        // applicationDidEnterBackground: hangs: `home` settles when that
        // wait's own grace has run out.
        try await test.ok(["command": "home"])
        let expired = try await test.events(kind: .system).filter { $0.name == "hangGraceExpired" }
        #expect(expired.map { $0.detail["callback"] } == ["applicationDidEnterBackground:"])
        let logged = arrivals.withLock { $0 }
        let delivered = try #require(logged.first { $0.name == "applicationDidEnterBackground:" })
        let gaveUp = try #require(logged.first { $0.name == "hangGraceExpired" })
        // Counted from the slow answer's start, the grace ran out 0.5 s after
        // the hang began; counted from the hang's own start (just after its
        // callback was logged) it cannot run out before 1 s. The 50 ms spare
        // is for the two clocks (NIO's deadlines, the test's ContinuousClock).
        #expect(gaveUp.at - delivered.at > .milliseconds(950))
        await test.stop()
    }

    /// A command that settles past the hang grace, an app still in its
    /// callback, says so, as a command queued behind one does: it replied
    /// as if all had gone through (here `home`, the app hung in
    /// `applicationDidEnterBackground:`). A later command the hang has
    /// nothing to do with says nothing of it.
    @Test func aCommandSettledPastTheHangGraceSaysWhoHasNotAnswered() async throws {
        // A grace longer than the 0.5 s applicationWillResignActive: takes.
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .seconds(1))
        defer { Task { await test.stop() } }
        let slow = "com.offstage.tests.SlowResignApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/SlowResignApp"))])
        let launched = try await test.ok(["command": "launch", "app": .string(slow)])
        #expect(launched["pending"] == nil)
        // applicationDidEnterBackground: hangs.
        let home = try await test.ok(["command": "home"])
        #expect(home["pending"] == .string("\(slow) has not answered applicationDidEnterBackground: (past the hang grace, the clock runs on without it)"))
        #expect(home["queued"] == nil)
        #expect(try await test.ok(["command": "status"])["pending"] == nil)
        await test.stop()
    }

    /// A launch whose app says hello and then hangs in its launch callbacks
    /// settles after the hang grace: the settling watched the hello's wait,
    /// whose grace is the launch limit, and saw the hang only when that ran
    /// out (20 s of real time for each such scenario step; here the limit
    /// is an hour, which the time limit would catch).
    @Test(.timeLimit(.minutes(1))) func aLaunchThatHangsAfterHelloSettlesAfterTheHangGrace() async throws {
        var policy = LifecyclePolicy.default
        policy.launchLimit = .seconds(3600)
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .milliseconds(300), policy: policy)
        defer { Task { await test.stop() } }
        let app = try scriptApp(
            "com.example.HangsAtLaunch", in: test.directory,
            script: """
            #!/usr/bin/env python3
            import json, os, socket, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(os.environ["OFFSTAGE_SOCKET"])
            s.sendall((json.dumps({"type": "hello", "token": os.environ["OFFSTAGE_TOKEN"], "pid": os.getpid(), "version": 1}) + "\\n").encode())
            s.makefile().readline()
            time.sleep(3600)
            """)
        try await test.ok(["command": "install", "path": .string(app)])
        let launched = try await test.ok(["command": "launch", "app": "com.example.HangsAtLaunch"])
        #expect(launched["pending"] == "com.example.HangsAtLaunch has not answered application:willFinishLaunchingWithOptions: (past the hang grace, the clock runs on without it)")
        await test.stop()
    }

    @Test func aCommandWaitingOnAHungAppFailsWhenTheDaemonStopsInVirtualTime() async throws {
        // A grace longer than the test: `home` waits on the hung callback until the daemon stops.
        let test = try await TestDaemon.start(clock: .virtual, hangGrace: .seconds(120))
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/BlockingApp"))])
        try await test.ok(["command": "launch", "app": "com.offstage.tests.BlockingApp"])
        let delivered = try await test.events(kind: .callback).count
        let daemon = test.daemon
        let home = Task { try await daemon.control(["command": "home"]) }
        // applicationWillResignActive: (answered), then applicationDidEnterBackground: (never).
        _ = try await test.awaitEvents(kind: .callback, count: delivered + 2)
        await test.stop()
        // Before, the failed wait counted as settled and `home` reported success.
        let outcome = await home.result
        #expect(throws: DaemonError(.invalidState, "the daemon is stopping")) { try outcome.get() }
    }

    /// Largest first is the core's rule (PolicyTests); here: only suspended
    /// apps die, and what is freed is their resident memory read from /proc.
    @Test func memoryPressureKillsOnlySuspendedAppsAndFreesTheirResidentMemory() async throws {
        let test = try await TestDaemon.start(clock: .virtual)
        defer { Task { await test.stop() } }
        let endless = "com.offstage.tests.EndlessTaskApp"
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        try await test.ok(["command": "install", "path": .string(Paths.sample("misbehaving/EndlessTaskApp"))])
        try await test.ok(["command": "launch", "app": .string(stateLab)])
        try await test.ok(["command": "launch", "app": .string(endless)])
        try await test.ok(["command": "home"])
        // StateLab's 25 s task ends and it is suspended; EndlessTaskApp's task keeps it running.
        try await test.ok(["command": "clock", "action": "advance", "seconds": 30])
        func state(_ status: JSONValue, _ id: String) -> JSONValue? {
            status["apps"]?.arrayValue?.first { $0["bundleID"] == .string(id) }?["state"]
        }
        var status = try await test.ok(["command": "status"])
        #expect(state(status, stateLab) == "suspended" && state(status, endless) == "background")
        let pid = try #require(try await test.pid(stateLab))
        #expect(await awaitStopped(pid))
        // Frozen, its resident memory stands still: the daemon must read the same.
        let statm = try String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8).split(separator: " ")
        let resident = try #require(Int(statm[1])) * Int(sysconf(Int32(_SC_PAGESIZE)))
        try await test.ok(["command": "memory", "action": "pressure"])
        status = try await test.ok(["command": "status"])
        #expect(state(status, stateLab) == "notRunning" && state(status, endless) == "background")
        let pressure = try #require(try await test.events(kind: .system).last { $0.name == "memoryPressure" })
        #expect(pressure.detail["killed"] == [.string(stateLab)])
        #expect(pressure.detail["freed"]?.intValue == resident)
        #expect(resident > 1_000_000)
        await test.stop()
    }
}
