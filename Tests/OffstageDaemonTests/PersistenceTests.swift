import CLinuxProcess
import Foundation
import GRDB
import Testing
@testable import OffstageDaemon
import OffstageCore
import OffstageProtocol

#if canImport(Glibc)
    import Glibc
#endif

@Suite("A daemon restart loses nothing", .serialized)
struct PersistenceTests {
    @Test func appsAndEventsSurviveARestart() async throws {
        let first = try await TestDaemon.start()
        let pid = try await first.launchStateLab()
        let lastSeq = try await first.daemon.engine.submit { $0.log.lastSeq }.get()
        await first.stop()
        #expect(kill(pid, 0) == -1)

        let second = try await TestDaemon.start(directory: first.directory)
        defer { Task { await second.stop() } }
        let apps = try await second.ok(["command": "apps"])
        #expect(apps.arrayValue?.map { $0["bundleID"] } == [.string(stateLab)])
        #expect(apps.arrayValue?.first?["state"] == "notRunning")
        // The first daemon's events are read back: `events` goes on across the restart.
        let events = try await second.events()
        #expect(events.map(\.seq) == Array(1...(lastSeq + 3)))
        let started = try #require(events.last)
        #expect(started.name == "daemonStarted")
        // The first daemon's last words: StateLab stopped with it, then daemonStopped.
        #expect(events[lastSeq].app == stateLab && events[lastSeq].name == "notRunning")
        #expect(events[lastSeq].detail == ["from": "active", "reason": "daemonStopped"])
        #expect(events[lastSeq + 1].name == "daemonStopped")
        let file = try String(contentsOfFile: first.directory + "/data/events.jsonl", encoding: .utf8)
        let lines = file.split(separator: "\n").map { try? Event(json: JSONValue(parsing: String($0))) }
        #expect(lines.allSatisfy { $0 != nil })
        #expect(lines.compactMap { $0?.seq } == Array(1...(lastSeq + 3)))
        try await second.ok(["command": "launch", "app": .string(stateLab)])
        await second.stop()
    }

    /// The event log moved away (rotated, removed): the next daemon handed
    /// out seq 1 again; it goes on from the seq the store recorded.
    @Test func aLogMovedAwayDoesNotMakeSeqsBeHandedOutAgain() async throws {
        let first = try await TestDaemon.start()
        _ = try await first.launchStateLab()
        await first.stop()
        let stoppedAt = try #require(try String(contentsOfFile: first.directory + "/data/events.jsonl", encoding: .utf8)
            .split(separator: "\n").last.map { try Event(json: JSONValue(parsing: String($0))).seq })
        #expect(rename(first.directory + "/data/events.jsonl", first.directory + "/data/events.jsonl.1") == 0)
        let second = try await TestDaemon.start(directory: first.directory)
        defer { Task { await second.stop() } }
        #expect(try await second.events().map(\.seq) == [stoppedAt + 1])
        await second.stop()
    }

    /// `events --after N` below the window a restarted daemon read back
    /// (the log's last 4 MiB) says the events it skips are in the log: they
    /// were skipped without a word.
    @Test func eventsAfterASeqNoLongerKeptSaySo() async throws {
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        var log = ""
        for seq in 1...70_000 {
            log += Event(seq: seq, time: 0, app: nil, kind: .system, name: "tick", detail: .emptyObject).json.jsonText + "\n"
        }
        try log.write(toFile: directory + "/data/events.jsonl", atomically: true, encoding: .utf8)
        let test = try await TestDaemon.start(directory: directory)
        defer { Task { await test.stop() } }
        let first = try #require(try await test.events().first?.seq)
        #expect(first > 11)
        let run = try runOffstage(["events", "--after", "10", "--socket", directory + "/control.sock"])
        #expect(run.status == 0)
        #expect(run.stderr == "offstage: warning: events 11 to \(first - 1) are no longer in the daemon's memory; the data directory's events.jsonl has them (unless it was moved or removed since)\n")
        // --seq shows the numbers --after takes (the text lines had none).
        let tail = try runOffstage(["events", "--after", "69998", "--seq", "--socket", directory + "/control.sock"])
        #expect(tail.status == 0)
        #expect(tail.stdout.hasPrefix(" 69999       0      system  [tick]\n 70000  "), "\(tail.stdout)")
        let seqs = tail.stdout.split(separator: "\n").map { Int($0.split(separator: " ").first ?? "") }
        #expect(seqs.count > 2 && seqs == (69999..<69999 + seqs.count).map { $0 }, "\(tail.stdout)")
        let both = try runOffstage(["events", "--seq", "--json", "--socket", directory + "/control.sock"])
        #expect(both.status == 64)
        #expect(both.stderr == "offstage: error: --seq numbers text lines; --json lines have their seq already (see offstage events --help)\n")
        await test.stop()
    }

    /// The seq is recorded at each spawn too: a daemon that crashed left
    /// only its start's record, and a log moved away after the crash let the
    /// next one hand out the seqs since again.
    @Test func theSeqIsRecordedAtEachSpawn() async throws {
        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        let atStart = try await test.daemon.engine.submit { try $0.store.lastSeq() }.get()
        _ = try await test.launchStateLab()
        let atSpawn = try await test.daemon.engine.submit { try $0.store.lastSeq() }.get()
        #expect(atSpawn > atStart)
        await test.stop()
    }

    /// A store cut to nothing is refused: SQLite took it for a new one, and
    /// every installed app was forgotten without a word. A failed store
    /// write is an error event (a process not recorded would not be reaped
    /// after a crash of the daemon); the launch that met it warns.
    @Test func anEmptyStoreIsRefusedAndAFailedStoreWriteIsAnEvent() async throws {
        let first = try await TestDaemon.start()
        try await first.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        await first.stop()
        let store = first.directory + "/data/offstage.sqlite"
        for suffix in ["-wal", "-shm"] { unlink(store + suffix) }
        #expect(truncate(store, 0) == 0)
        let error = await #expect(throws: DaemonError.self) { _ = try await TestDaemon.start(directory: first.directory) }
        #expect(error?.message == "the store \(store) is empty (cut short?): opened, it would forget every installed app; move it away to start afresh")

        let test = try await TestDaemon.start()
        defer { Task { await test.stop() } }
        try await test.ok(["command": "install", "path": .string(Paths.sample("StateLab"))])
        // The store's database closes under the daemon: every write fails from now on.
        try await test.daemon.engine.submit { try $0.store.database.close() }.get()
        let launched = try await test.ok(["command": "launch", "app": .string(stateLab)])
        let errors = launched["errors"]?.arrayValue ?? []
        #expect(errors.map { $0["name"] } == ["storeWriteFailed"], "\(launched)")
        #expect(errors.first?["detail"]?["reason"]?.stringValue?.hasPrefix("store write failed: ") == true)
        await test.stop()
    }

    @Test func anOrphanLeftByADeadDaemonIsKilledAtStart() async throws {
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        let exited = DispatchSemaphore(value: 0)
        do {
            let store = try AppStore(path: directory + "/data/offstage.sqlite")
            // A live process recorded as an app: the next daemon on this data must kill it.
            let host = AppProcessHost(dataDirectory: directory + "/data")
            let pid = try host.spawn(
                executable: "/bin/sleep", arguments: ["60"], bundleID: "orphan", environment: [:],
                onExit: { _ in exited.signal() })
            try store.recordProcess(RecordedProcess(
                bundleID: "orphan", pid: pid, startTicks: try #require(AppProcessHost.startTicks(of: pid)),
                bootID: AppProcessHost.bootID, token: "t0k3n"))
        }
        let test = try await TestDaemon.start(directory: directory)
        defer { Task { await test.stop() } }
        let events = try await test.events()
        // After the new daemon's start: the orphan killed, and its app no longer running.
        #expect(events.suffix(3).map(\.name) == ["daemonStarted", "orphanKilled", "notRunning"])
        #expect(events.last?.app == "orphan" && events.last?.kind == .state)
        #expect(events.last?.detail == ["reason": "daemonDied"])
        // Killed for real: the sleep (60 s) exits now.
        #expect(exited.wait(timeout: .now() + 5) == .success)
        await test.stop()
    }

    /// A process group an app leads, its leader gone and a process it
    /// started left: what a SIGKILL of the daemon leaves (the app dies of
    /// `--pdeathsig`, the processes it started do not). The leader runs
    /// with `OFFSTAGE_TOKEN=token` (none when nil), which the process left
    /// inherits. Returns the leader's pid and start time, and the process
    /// left behind.
    func leaderlessGroup(in directory: String, token: String?) throws -> (leader: pid_t, ticks: UInt64, left: pid_t) {
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        let output = directory + "/leader.out"
        var environment = ProcessInfo.processInfo.environment
        environment[AppEnvironment.token] = token
        // The leader starts a sleep, says its pid and stops itself, to be killed alone.
        let leader = try spawnProcess(
            executable: "/bin/sh", arguments: ["-c", "sleep 60 & echo $!; kill -STOP $$"], environment: environment,
            outputPath: output, ownProcessGroup: true)
        try #require(AppProcessHost.waitStopped(leader))
        let ticks = try #require(AppProcessHost.startTicks(of: leader))
        let left = try #require(pid_t(try String(contentsOfFile: output, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(leader, SIGKILL) == 0)
        while waitpid(leader, nil, 0) == -1 && errno == EINTR {}
        return (leader, ticks, left)
    }

    /// Records `pid` as app `orphan` of this boot, launched with `token`.
    func recordOrphan(in directory: String, pid: pid_t, ticks: UInt64, token: String, bootID: String? = AppProcessHost.bootID) throws {
        let store = try AppStore(path: directory + "/data/offstage.sqlite")
        try store.recordProcess(RecordedProcess(bundleID: "orphan", pid: pid, startTicks: ticks, bootID: bootID, token: token))
    }

    /// A store as an older daemon left it (schema v2), recording `processes`.
    func writeOlderStore(at path: String, processes: [(bundleID: String, pid: pid_t, ticks: UInt64)]) throws {
        let database = try DatabaseQueue(path: path)
        try AppStore.migrator.migrate(database, upTo: "v2")
        try database.write { db in
            for process in processes {
                try db.execute(
                    sql: "INSERT INTO process (bundleID, pid, startTicks) VALUES (?, ?, ?)",
                    arguments: [process.bundleID, Int(process.pid), Int64(process.ticks)])
            }
        }
    }

    /// Processes an app started outlive a SIGKILL of the daemon (the app
    /// dies of `--pdeathsig`; they do not): the next daemon kills the
    /// group the app led, whose processes carry the launch's token. Only
    /// the recorded app pid was looked at, and it was gone.
    @Test func processesADeadAppLeftInItsGroupAreKilledAtStart() async throws {
        let directory = try temporaryDirectory()
        let (leader, ticks, left) = try leaderlessGroup(in: directory, token: "t0k3n")
        try recordOrphan(in: directory, pid: leader, ticks: ticks, token: "t0k3n")
        let exit = offstage_pidfd_open(left)
        try #require(exit >= 0)
        defer { close(exit) }
        defer { kill(left, SIGKILL) }
        let test = try await TestDaemon.start(directory: directory)
        defer { Task { await test.stop() } }
        // Killed for real: the sleep (60 s) exits now.
        #expect(awaitReadable(exit, within: .seconds(5)))
        let events = try await test.events()
        #expect(events.suffix(3).map(\.name) == ["daemonStarted", "orphanKilled", "notRunning"])
        let killed = try #require(events.first { $0.name == "orphanKilled" })
        #expect(killed.app == "orphan" && killed.detail == ["pid": JSONValue(Int(leader)), "processes": [JSONValue(Int(left))]])
        #expect(events.last?.detail == ["reason": "daemonDied"])
        await test.stop()
    }

    /// A process a dead daemon's app started outside its group (`setsid`),
    /// left in the app's cgroup: the next daemon's sweep kills it, and the
    /// app's `orphanKilled` names it, as for what is left in its group (the
    /// kill said nothing). In a cgroup parent of the test's own, which no
    /// other test's daemon sweeps.
    @Test func aProcessLeftInADeadDaemonsAppCgroupIsKilledAndLogged() async throws {
        let own = try #require(AppCgroups.ownCgroupDirectory(), "no cgroup2 mount")
        let parent = own + "/orphan-test.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try #require(mkdir(parent, 0o755) == 0, "cannot make a cgroup in \(own)")
        defer { _ = AppCgroups.empty(parent, until: .now + .seconds(5)) }
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        // The app: exited (killed with its daemon), its pid and start time recorded.
        let app = try spawnProcess(
            executable: "/bin/sleep", arguments: ["600"], environment: nil, outputPath: "/dev/null", ownProcessGroup: true)
        let ticks = try #require(AppProcessHost.startTicks(of: app))
        #expect(kill(app, SIGKILL) == 0)
        while waitpid(app, nil, 0) == -1 && errno == EINTR {}
        try recordOrphan(in: directory, pid: app, ticks: ticks, token: "t0k3n")
        // What it left: a process in a group of its own, in the app's cgroup of a dead daemon.
        let cgroup = parent + "/offstage.\(app).1.1/\(app).1"
        try #require(mkdir(parent + "/offstage.\(app).1.1", 0o755) == 0 && mkdir(cgroup, 0o755) == 0)
        let left = try spawnProcess(
            executable: "/bin/sleep", arguments: ["600"], environment: nil, outputPath: "/dev/null", ownProcessGroup: true)
        defer { kill(left, SIGKILL); waitpid(left, nil, 0) }
        let exit = offstage_pidfd_open(left)
        try #require(exit >= 0)
        defer { close(exit) }
        try #require(AppCgroups.write("\(left)", to: cgroup + "/cgroup.procs"))
        let test = try await TestDaemon.start(directory: directory, cgroupParent: parent)
        defer { Task { await test.stop() } }
        #expect(awaitReadable(exit, within: .seconds(10)))
        let events = try await test.events()
        #expect(events.suffix(3).map(\.name) == ["daemonStarted", "orphanKilled", "notRunning"])
        let killed = try #require(events.first { $0.name == "orphanKilled" })
        #expect(killed.app == "orphan" && killed.detail == ["pid": JSONValue(Int(app)), "processes": [JSONValue(Int(left))]])
        await test.stop()
    }

    /// A leaderless group with the recorded pgid, whose processes started
    /// after the app, is not signalled when nothing shows it is the app's:
    /// - the app's group emptied and its pid was reused by a process that
    ///   made a group of its own and left it leaderless: none of its
    ///   processes carries the launch's token (it was killed: the start
    ///   times could not tell);
    /// - the record is from another boot (the machine restarted since):
    ///   start times count from the boot, and a group with its pid now is
    ///   another's, even one whose processes carry its token.
    @Test(arguments: [(groupToken: "another", recordedBoot: AppProcessHost.bootID), ("t0k3n", "another-boot")])
    func aLeaderlessGroupNotShownToBeTheAppsIsNotSignalled(groupToken: String, recordedBoot: String?) async throws {
        let directory = try temporaryDirectory()
        let (leader, ticks, left) = try leaderlessGroup(in: directory, token: groupToken)
        try recordOrphan(in: directory, pid: leader, ticks: ticks, token: "t0k3n", bootID: recordedBoot)
        defer { kill(left, SIGKILL) }
        let test = try await TestDaemon.start(directory: directory)
        defer { Task { await test.stop() } }
        // The orphans are reaped in the daemon's start, before it returns.
        #expect(kill(left, 0) == 0 && AppProcessHost.state(of: left) != "Z")
        let events = try await test.events()
        #expect(events.suffix(2).map(\.name) == ["daemonStarted", "notRunning"])
        await test.stop()
    }

    /// A store an older daemon left (schema v2: its records have no boot
    /// and no token) is read as before: a recorded pid that is still the
    /// app is killed, and no group is, since nothing shows it is the app's.
    @Test func anOlderDaemonsRecordsKillTheirPidsButNoGroup() async throws {
        let directory = try temporaryDirectory()
        let (leader, ticks, left) = try leaderlessGroup(in: directory, token: "t0k3n")
        defer { kill(left, SIGKILL) }
        let exited = DispatchSemaphore(value: 0)
        let host = AppProcessHost(dataDirectory: directory + "/data")
        let alive = try host.spawn(
            executable: "/bin/sleep", arguments: ["60"], bundleID: "alive", environment: [:], onExit: { _ in exited.signal() })
        let aliveTicks = try #require(AppProcessHost.startTicks(of: alive))
        try writeOlderStore(
            at: directory + "/data/offstage.sqlite", processes: [("alive", alive, aliveTicks), ("orphan", leader, ticks)])
        let test = try await TestDaemon.start(directory: directory)
        defer { Task { await test.stop() } }
        #expect(exited.wait(timeout: .now() + 5) == .success)
        #expect(kill(left, 0) == 0 && AppProcessHost.state(of: left) != "Z")
        let events = try await test.events()
        // The records are taken in no set order.
        let lines = events.suffix(4).map { "\($0.app ?? "-") \($0.name)" }
        #expect(lines.first == "- daemonStarted")
        #expect(Set(lines.dropFirst()) == ["alive orphanKilled", "alive notRunning", "orphan notRunning"])
        await test.stop()
    }

    @Test func aDeadOrphanNobodyReapedIsNotKilledAgain() async throws {
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        // A recorded app process that has exited but was never reaped (its
        // daemon died, and the init of a container may not reap): a zombie.
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for pointer in argv { free(pointer) } }
        try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        defer { waitpid(pid, nil, 0) }
        var info = siginfo_t()
        try #require(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0)  // exited, not reaped
        try #require(AppProcessHost.state(of: pid) == "Z")
        do {
            let store = try AppStore(path: directory + "/data/offstage.sqlite")
            try store.recordProcess(RecordedProcess(
                bundleID: "orphan", pid: pid, startTicks: try #require(AppProcessHost.startTicks(of: pid)),
                bootID: AppProcessHost.bootID, token: "t0k3n"))
        }
        let test = try await TestDaemon.start(directory: directory)
        defer { Task { await test.stop() } }
        let events = try await test.events()
        #expect(events.suffix(2).map(\.name) == ["daemonStarted", "notRunning"])
        #expect(events.last?.app == "orphan" && events.last?.detail == ["reason": "daemonDied"])
        await test.stop()
    }
}
