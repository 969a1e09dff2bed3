import CLinuxProcess
import Foundation
import OffstageCore
import OffstageProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Runs app processes: spawns them with the socket and token in their
/// environment and their output in their log, freezes, thaws and kills them
/// with real signals, notices their exit, reads their memory from `/proc`,
/// and gives each app a container directory.
public struct AppProcessHost: Sendable {
    public let dataDirectory: String
    /// Where each app process gets a cgroup of its own, which takes every
    /// process it started when it is killed or ends (nil: its process group only).
    public let cgroups: AppCgroups?

    public init(dataDirectory: String, cgroups: AppCgroups? = nil) {
        self.dataDirectory = dataDirectory
        self.cgroups = cgroups
    }

    /// The app's container: `Documents`, `Library/Preferences`, `Library/Caches`, `tmp`.
    public func containerPath(for bundleID: String) -> String { dataDirectory + "/containers/" + bundleID }

    /// The file the app's stdout and stderr are appended to.
    public func logPath(for bundleID: String) -> String { dataDirectory + "/logs/" + bundleID + ".log" }

    /// The size of the app's log (0 while it has none).
    public func logSize(for bundleID: String) -> Int { fileSize(atPath: logPath(for: bundleID)) ?? 0 }

    /// The last line the app wrote to its log from `offset` on, looked for
    /// in the last 64 KiB and cut to 300 characters, its control characters
    /// shown as `\xHH`; nil if it wrote none. Swift's runtime error line
    /// (`Fatal error: …`) is taken over the backtrace its runtime prints
    /// after it, which ended in "Backtrace took 0.01s".
    /// What an app that died at launch said last (a missing interpreter,
    /// an uncaught exception) says why.
    public func lastLogLine(for bundleID: String, since offset: Int) -> String? {
        guard let data = fileTail(atPath: logPath(for: bundleID), count: 65_536, from: offset)?.bytes else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
        guard let last = lines.last(where: { $0.contains("Fatal error: ") }) ?? lines.last(where: { !$0.allSatisfy(\.isWhitespace) })
        else { return nil }
        // Cut, then shown on a terminal: an app's colours or binary output must not drive it.
        let line = last.trimmingCharacters(in: .whitespaces)
        return visibleText(String(line.prefix(300))) + (line.count > 300 ? "…" : "")
    }

    /// Creates the container directories (idempotent).
    public func prepareContainer(for bundleID: String) throws {
        let root = containerPath(for: bundleID)
        for sub in ["Documents", "Library/Preferences", "Library/Caches", "tmp"] {
            try makeDirectory(root + "/" + sub, for: "app container directory")
        }
        try makeDirectory(dataDirectory + "/logs", for: "app log directory")
    }

    /// Starts `executable` for `bundleID`. `onExit` is called once, from a
    /// dedicated thread, when the process ends (the thread waits on a pidfd,
    /// so freezing and thawing the app never wakes it).
    /// - Parameter diesWithThisThread: the app is killed (SIGKILL) when the
    ///   calling thread ends, however the daemon dies: `setpriv` sets
    ///   `PR_SET_PDEATHSIG` and executes the app (about 1 ms more per
    ///   launch). A frozen app dies anyway when its process group is
    ///   orphaned, and one waiting for callbacks reads the hang-up of its
    ///   socket, but one stuck in a callback would live on for good after a
    ///   SIGKILL of the daemon or of `offstage run`. Only for a thread that
    ///   lives as long as the daemon (its event loop's): the signal follows
    ///   the spawning thread, not the process.
    /// - Returns: the process id.
    /// - Throws: ``DaemonError`` with code `.launchFailed`.
    public func spawn(
        executable: String, arguments: [String] = [], bundleID: String, environment extra: [String: String],
        diesWithThisThread: Bool = false, onExit: @escaping @Sendable (ExitStatus) -> Void
    ) throws -> Int32 {
        try prepareContainer(for: bundleID)
        let container = containerPath(for: bundleID)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = container
        environment["TMPDIR"] = container + "/tmp"
        environment[AppEnvironment.container] = container
        environment[AppEnvironment.bundleID] = bundleID
        for (key, value) in extra { environment[key] = value }

        var program = executable
        var argv = arguments
        if diesWithThisThread, Self.appsDieWithTheDaemon {
            // Through setpriv an executable that cannot run would be an exit
            // (127) with the reason in the app's log only.
            guard access(executable, X_OK) == 0 else {
                throw DaemonError(.launchFailed, "cannot start \(executable): \(String(cString: strerror(errno)))")
            }
            program = Self.setpriv
            argv = ["--pdeathsig", "KILL", "--", executable] + arguments
        }
        let pid: pid_t
        do {
            pid = try spawnProcess(
                executable: program, arguments: argv, environment: environment,
                outputPath: logPath(for: bundleID), ownProcessGroup: true)
        } catch .output(let path, let errno) {
            throw DaemonError(.launchFailed, "cannot open the app's log \(path): \(String(cString: strerror(errno)))")
        } catch {
            throw DaemonError(.launchFailed, "cannot start \(executable): \(String(cString: strerror(error.errno)))")
        }
        let child = pid
        let cgroups = self.cgroups
        cgroups?.place(child)
        // Waiting in waitpid would wake this thread, for nothing, each time the
        // app is frozen or thawed (a parent's waiters are woken on every stop
        // and continue of a child, even with SA_NOCLDSTOP), on the resumed
        // app's own time. A pidfd becomes readable only when the app exits.
        let exitDescriptor = offstage_pidfd_open(child)
        let thread = Thread {
            if exitDescriptor >= 0 {
                _ = awaitReadable(exitDescriptor, within: nil)
                close(exitDescriptor)
            } else {
                // No pidfd: its exit seen, not reaped (woken for nothing by each stop and continue).
                var info = siginfo_t()
                while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            }
            // Processes the app started die with it, as on iOS. Not yet
            // reaped, the app holds its pid (the group's id) for this.
            _ = kill(-child, SIGKILL)
            // Those that left its group too: its cgroup is emptied and removed.
            cgroups?.release(child)
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            let signal = status & 0x7f
            onExit(signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal))
        }
        thread.name = "offstage-wait-\(child)"
        thread.start()
        return pid
    }

    /// util-linux's, in every Debian (and in `scripts/packages-trunk.txt`).
    public static let setpriv = "/usr/bin/setpriv"

    /// Whether `setpriv` is there to tie apps to the daemon (`offstage
    /// daemon` warns at its start when it is not: apps are then spawned
    /// plainly).
    public static let appsDieWithTheDaemon = access(setpriv, X_OK) == 0

    /// The warning when `setpriv` is missing, for what `killed` names (a
    /// daemon, a run) killed with SIGKILL.
    public static func setprivMissing(_ killed: String) -> String {
        "\(setpriv) is missing (util-linux): apps are spawned without it, and one stuck in a callback would outlive \(killed) killed with SIGKILL"
    }

    // An app leads its own process group (spawned with POSIX_SPAWN_SETPGROUP),
    // so these signal the group: processes the app started are frozen,
    // thawed and killed with it, as an iOS app's whole sandbox is.

    /// Freezes the app and the processes it started (SIGSTOP), also those
    /// that left its group where it has a cgroup.
    public func freeze(_ pid: Int32) {
        Self.signalGroup(pid, SIGSTOP)
        cgroups?.stopOutside(pid)
    }

    /// Thaws the app and the processes it started (SIGCONT).
    public func thaw(_ pid: Int32) {
        Self.signalGroup(pid, SIGCONT)
        cgroups?.continueOutside(pid)
    }

    /// Kills the app and the processes it started (SIGKILL); frozen ones
    /// die too, and so do those that left its group, where it has a cgroup.
    public func terminate(_ pid: Int32) {
        cgroups?.kill(pid)
        Self.signalGroup(pid, SIGKILL)
    }

    /// Kills process group `group` (SIGKILL), and nothing else: the
    /// processes an app started, left in the group it led after the app
    /// itself died.
    /// - Returns: whether the signal was sent (the group may have emptied since).
    @discardableResult
    public func terminateGroup(_ group: Int32) -> Bool { kill(-group, SIGKILL) == 0 }

    /// The live processes in each of `groups` (`/proc/PID/stat` field 5),
    /// in pid order, from one reading of `/proc`; a group with none is left
    /// out. Zombies are not counted: they are dead, and a group of only
    /// zombies has nothing to kill.
    public static func processGroups(_ groups: Set<Int32>) -> [Int32: [Int32]] {
        guard !groups.isEmpty, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [:] }
        var members: [Int32: [Int32]] = [:]
        for entry in entries {
            // fields[0] is the state (field 3): the group (field 5) is at index 2.
            guard let pid = Int32(entry), let fields = statFields(of: pid), fields.count > 2,
                let group = Int32(fields[2]), groups.contains(group), !isDead(fields[0].first ?? "?")
            else { continue }
            members[group, default: []].append(pid)
        }
        return members.mapValues { $0.sorted() }
    }

    /// Whether the process's environment (`/proc/PID/environ`: the one it
    /// was given at its `exec`, as those bytes are now; a program that
    /// rewrites its title overwrites them) holds exactly the entry `entry`
    /// (`NAME=value`).
    /// False when it cannot be read: another user's process, or one gone.
    public static func environment(of pid: Int32, contains entry: String) -> Bool {
        guard let data = readWhole("/proc/\(pid)/environ") else { return false }
        let wanted = Array(entry.utf8)
        return data.split(separator: 0, omittingEmptySubsequences: true).contains { $0.elementsEqual(wanted) }
    }

    /// This boot's id (`/proc/sys/kernel/random/boot_id`): start times count
    /// from the boot, so a process recorded in another boot is long gone,
    /// whatever runs under its pid now. Nil when it cannot be read.
    public static let bootID: String? = {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }()

    /// A zombie (`Z`) or a process being torn down (`X`): dead, not to be killed again.
    public static func isDead(_ state: Character) -> Bool { state == "Z" || state == "X" }

    /// Signals the group `pid` leads, or `pid` alone if it leads none (a
    /// process recorded by an older daemon).
    private static func signalGroup(_ pid: Int32, _ signal: Int32) {
        if kill(-pid, signal) != 0 { _ = kill(pid, signal) }
    }

    /// The app's resident memory in bytes: its process's, and where it has
    /// a cgroup, that of every process it started, added up (shared pages
    /// count once per process). Nil once the app's process is gone.
    public func appResidentBytes(of pid: Int32) -> Int? {
        guard let own = Self.residentBytes(of: pid) else { return nil }
        return (cgroups?.processes(pid) ?? []).reduce(own) { total, other in
            other == pid ? total : total + (Self.residentBytes(of: other) ?? 0)
        }
    }

    /// Resident memory in bytes, from `/proc/PID/statm`.
    public static func residentBytes(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The process's state letter (`R`, `S`, `T`, `Z`, …, `/proc/PID/stat`
    /// field 3); nil once it is gone.
    public static func state(of pid: Int32) -> Character? {
        statFields(of: pid)?.first?.first
    }

    /// Blocks until `pid`, a child of this process, is stopped by a signal
    /// (true) or has exited (false), in `waitid`: no polling. `WNOWAIT`
    /// leaves the report (a SIGCONT clears it) and the exit to whoever
    /// reaps the child. For tests and benchmarks, which run the daemon in
    /// their own process.
    public static func waitStopped(_ pid: Int32) -> Bool {
        var info = siginfo_t()
        var result: Int32
        repeat { result = waitid(P_PID, id_t(pid), &info, WSTOPPED | WEXITED | WNOWAIT) } while result == -1
            && errno == EINTR
        return result == 0 && info.si_code == CLD_STOPPED
    }

    /// The process's start time in clock ticks since boot (`/proc/PID/stat` field 22).
    public static func startTicks(of pid: Int32) -> UInt64? {
        // fields[0] is the state (field 3), so field 22 is at index 19.
        guard let fields = statFields(of: pid), fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// The fields of `/proc/PID/stat` after the command name (which may
    /// hold spaces and parentheses), from the state (field 3) on.
    private static func statFields(of pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}
