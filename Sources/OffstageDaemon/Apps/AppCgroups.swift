import CLinuxProcess
import Foundation
import OffstageProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Each app process in a cgroup (v2) of its own, where the daemon can make
/// them: killing an app kills every process it started, as an iOS app's
/// sandbox goes whole. Its process group already takes the processes it
/// started, but one that left the group (`setsid`, a daemonizing double
/// fork) lived on after the app was killed, and after the daemon. A cgroup
/// holds every descendant, wherever it went, and `cgroup.kill` ends them at
/// once. Freezing stays with signals: `SIGSTOP` to the group, and to each
/// process of the cgroup outside it (``stopOutside(_:)``), found when the
/// app is frozen, so that a thaw reads nothing.
///
/// Where: a directory `offstage.PID.TICKS.N` (the daemon's pid and start
/// time, a count within its process) in the daemon's own cgroup, which the
/// daemon holds an exclusive `flock` on while it runs, and in it one per app
/// process (`PID.N`), made when the app is spawned and removed once it has
/// ended and its processes with it. Where no cgroup can be made (no cgroup2
/// mount, no write access, a kernel before 5.14 without `cgroup.kill`)
/// ``make()`` gives nil and apps are held by their process group only;
/// once a process cannot be moved into one (the daemon may not write its
/// own cgroup's `cgroup.procs`, which a move needs, or a threaded cgroup),
/// no later app is tried either.
///
/// A process spawned is moved in right after `posix_spawn` returns: one it
/// starts in its first microseconds, before it is moved, stays outside.
public final class AppCgroups: Sendable {
    /// This daemon's directory, in the cgroup2 file system.
    public let directory: String
    /// What the sweep before it was made killed: the processes left in each
    /// dead daemon's app cgroups, by the app's pid (the name of its cgroup).
    public let swept: [Int32: [Int32]]
    /// The directory, open and locked (`flock`) while the daemon runs: a
    /// sweep skips a directory whose lock it cannot take, whatever the pid
    /// in its name (a daemon in another pid namespace).
    private let lock: Int32
    /// What the daemon's apps have, in one lock: the freeze of an app (on
    /// the engine's loop) and its end (on its wait thread) may meet.
    private let state = Mutex(Placement())
    /// Moving a process in has failed: the others are not tried.
    private let unusable = Atomic<Bool>(false)
    private let count = Atomic<Int>(0)

    private static let made = Atomic<Int>(0)

    struct Placement {
        /// The cgroup of each app process placed, by pid, until it is removed.
        var placed: [Int32: String] = [:]
        /// The processes of each app's cgroup outside its group stopped
        /// with the app, by app pid, to be continued with it.
        var stopped: [Int32: [Stopped]] = [:]
    }

    /// A process stopped with its app: through a pidfd where one could be
    /// opened (a pid could be another process's by the thaw), by its pid
    /// past ``pidfdsPerApp`` or where pidfds are refused.
    struct Stopped {
        var pid: Int32
        var pidfd: Int32?

        func signal(_ signal: Int32) -> Bool {
            if let pidfd { return offstage_pidfd_send_signal(pidfd, signal) == 0 }
            return Glibc.kill(pid, signal) == 0
        }

        func close() {
            if let pidfd { _ = Glibc.close(pidfd) }
        }
    }

    /// Pidfds kept for one frozen app at most: an app with thousands of
    /// processes outside its group must not use up the daemon's descriptors.
    static let pidfdsPerApp = 64

    init(directory: String, lock: Int32, swept: [Int32: [Int32]] = [:]) {
        self.directory = directory
        self.lock = lock
        self.swept = swept
    }

    deinit {
        remove()
        close(lock)
    }

    /// Removes this daemon's directory, once its apps have ended (one
    /// still being reaped leaves it to the next daemon's sweep).
    public func remove() {
        rmdir(directory)
    }

    /// A directory for this daemon's apps in its own cgroup; nil where none
    /// can be made. First removes those of daemons that have ended
    /// (killed, so never removed), killing what is still in them: the
    /// processes their apps started, which should have ended with them.
    /// - Parameter parent: the cgroup to make it in (nil: the daemon's own).
    public static func make(in parent: String? = nil) -> AppCgroups? {
        guard let own = parent ?? ownCgroupDirectory(), let ticks = AppProcessHost.startTicks(of: getpid()) else { return nil }
        let swept = sweep(own)
        // A sweep in another pid namespace may take a directory between its
        // mkdir and its lock (its name's pid names nothing there): another is made.
        for _ in 0..<3 {
            let number = made.add(1, ordering: .relaxed).newValue
            let directory = own + "/offstage.\(getpid()).\(ticks).\(number)"
            guard mkdir(directory, 0o755) == 0 else { return nil }
            let lock = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard lock >= 0 else { continue }  // removed by such a sweep already
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
                close(lock)  // that sweep holds it, and removes it
                continue
            }
            guard access(directory + "/cgroup.kill", W_OK) == 0 else {
                close(lock)
                rmdir(directory)
                return nil
            }
            return AppCgroups(directory: directory, lock: lock, swept: swept)
        }
        return nil
    }

    /// Moves `pid`, just spawned, into a cgroup of its own.
    /// - Returns: whether it is in one.
    @discardableResult
    public func place(_ pid: Int32) -> Bool {
        guard !unusable.load(ordering: .relaxed) else { return false }
        let path = directory + "/\(pid).\(count.add(1, ordering: .relaxed).newValue)"
        guard mkdir(path, 0o755) == 0 else { return false }
        guard Self.write("\(pid)", to: path + "/cgroup.procs") else {
            if errno == EBUSY || errno == EACCES || errno == EPERM || errno == EOPNOTSUPP {
                unusable.store(true, ordering: .relaxed)
            }
            rmdir(path)
            return false
        }
        state.withLock { $0.placed[pid] = path }
        return true
    }

    /// Kills every process in `pid`'s cgroup (the app and all it started);
    /// false when it has none.
    @discardableResult
    public func kill(_ pid: Int32) -> Bool {
        guard let path = state.withLock({ $0.placed[pid] }) else { return false }
        return Self.write("1", to: path + "/cgroup.kill")
    }

    /// Stops (`SIGSTOP`) the processes in `pid`'s cgroup that are out of
    /// its process group, which the caller stops with a signal of its own;
    /// ``continueOutside(_:)`` continues them. Each is signalled once its
    /// pidfd is open and `cgroup.procs`, read again, still lists it: a pid
    /// reused between the two reads is another process's, not in the cgroup.
    public func stopOutside(_ pid: Int32) {
        guard let path = state.withLock({ $0.placed[pid] }) else { return }
        let outside = Self.processes(in: path).filter { $0 != pid && getpgid($0) != pid }
        guard !outside.isEmpty else { return }
        var candidates: [Stopped] = []
        for process in outside {
            let descriptor = candidates.count < Self.pidfdsPerApp ? offstage_pidfd_open(process) : -1
            candidates.append(Stopped(pid: process, pidfd: descriptor >= 0 ? descriptor : nil))
        }
        let still = Set(Self.processes(in: path))
        var stopped: [Stopped] = []
        for candidate in candidates {
            if still.contains(candidate.pid), candidate.signal(SIGSTOP) {
                stopped.append(candidate)
            } else {
                candidate.close()
            }
        }
        guard !stopped.isEmpty else { return }
        // Stored only while the app is placed: its end (release) may have come meanwhile.
        let kept = state.withLock { state -> Bool in
            guard state.placed[pid] == path else { return false }
            state.stopped[pid, default: []] += stopped
            return true
        }
        if !kept { for process in stopped { process.close() } }
    }

    /// Continues (`SIGCONT`) what ``stopOutside(_:)`` stopped for `pid`.
    public func continueOutside(_ pid: Int32) {
        guard let stopped = state.withLock({ $0.stopped.removeValue(forKey: pid) }) else { return }
        for process in stopped {
            _ = process.signal(SIGCONT)
            process.close()
        }
    }

    /// After `pid` has ended (and before it is reaped, so that its pid is
    /// no other's meanwhile): kills what it left in its cgroup, waits for
    /// that to end (at most `limit`) and removes the cgroup.
    public func release(_ pid: Int32, within limit: Duration = .seconds(2)) {
        let (path, stopped) = state.withLock { state in
            (state.placed.removeValue(forKey: pid), state.stopped.removeValue(forKey: pid) ?? [])
        }
        for process in stopped { process.close() }
        guard let path else { return }
        _ = Self.empty(path, until: .now + limit)
    }

    /// The processes in `pid`'s cgroup, in pid order (empty when it has none).
    public func processes(_ pid: Int32) -> [Int32] {
        guard let path = state.withLock({ $0.placed[pid] }) else { return [] }
        return Self.processes(in: path)
    }

    // MARK: The file system

    /// The daemon's own cgroup as a directory: the cgroup2 mount
    /// (`/proc/self/mountinfo`) and the path `/proc/self/cgroup` gives
    /// (`0::/…`). Nil where there is none, or the mount is of another
    /// cgroup's subtree than the path is relative to.
    static func ownCgroupDirectory() -> String? {
        guard let cgroups = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
            let line = cgroups.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
            let mounts = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
        else { return nil }
        let path = String(line.dropFirst(3))
        for mount in mounts.split(separator: "\n") {
            // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS…] - FSTYPE SOURCE SUPER
            let halves = mount.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].split(separator: " ").first == "cgroup2" else { continue }
            let fields = halves[0].split(separator: " ")
            guard fields.count >= 5, fields[3] == "/" else { continue }
            let point = unescapeMountField(fields[4])
            let directory = path == "/" ? point : point + path
            var info = stat()
            guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            return directory
        }
        return nil
    }

    /// mountinfo writes a space, tab, newline and backslash in a path as `\ooo`.
    private static func unescapeMountField(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var rest = Array(field.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "\\"), rest.count >= 3, let value = UInt8(String(decoding: rest.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                rest = rest.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Removes the directories in `parent` of daemons no longer running,
    /// killing what is left in them; gives up on the rest at `deadline`.
    /// A directory is a dead daemon's when it is this user's, its lock can
    /// be taken (a running daemon holds it, in whatever pid namespace), and
    /// its name's pid is not its daemon's (one just made, not yet locked).
    /// - Returns: the processes killed, by app pid.
    @discardableResult
    static func sweep(_ parent: String, until deadline: ContinuousClock.Instant = .now + .seconds(2)) -> [Int32: [Int32]] {
        var killed: [Int32: [Int32]] = [:]
        for directory in subdirectories(of: parent) where ContinuousClock.now < deadline {
            guard let entry = directory.split(separator: "/").last, entry.hasPrefix("offstage.") else { continue }
            let parts = entry.split(separator: ".")
            guard parts.count == 4, let pid = Int32(parts[1]), let ticks = UInt64(parts[2]), Int(parts[3]) != nil else { continue }
            // Its daemon runs (a zombie, killed and not yet reaped, does not).
            if AppProcessHost.startTicks(of: pid) == ticks, let state = AppProcessHost.state(of: pid), !AppProcessHost.isDead(state) {
                continue
            }
            var info = stat()
            guard stat(directory, &info) == 0, info.st_uid == geteuid() else { continue }
            let lock = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard lock >= 0 else { continue }
            defer { close(lock) }
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            for app in subdirectories(of: directory) {
                // Named `PID.N` after the app process.
                guard let name = app.split(separator: "/").last, let pid = name.split(separator: ".").first.flatMap({ Int32($0) })
                else { continue }
                let left = processes(in: app)
                if !left.isEmpty { killed[pid, default: []] += left }
            }
            _ = empty(directory, until: deadline)
        }
        return killed
    }

    /// Kills everything in the cgroup at `path` and below, waits for it to
    /// be empty (`populated 0` in `cgroup.events`, awaited, not polled) at
    /// most until `deadline`, and removes it with the cgroups made below it,
    /// deepest first. Whether it was removed.
    @discardableResult
    static func empty(_ path: String, until deadline: ContinuousClock.Instant) -> Bool {
        if rmdir(path) == 0 { return true }
        _ = write("1", to: path + "/cgroup.kill")
        let events = open(path + "/cgroup.events", O_RDONLY | O_CLOEXEC)
        if events >= 0 {
            defer { close(events) }
            // A change of the file wakes a poll for POLLPRI; each read is from the start.
            while isPopulated(events), awaitReadable(events, within: deadline - .now, events: Int32(POLLPRI)) {}
        }
        return removeTree(path, until: deadline)
    }

    /// Removes the empty cgroup at `path` and those below it, deepest
    /// first. Just emptied, a cgroup can refuse for a moment (`EBUSY`):
    /// tried again each millisecond until `deadline`.
    private static func removeTree(_ path: String, until deadline: ContinuousClock.Instant) -> Bool {
        for below in subdirectories(of: path) { _ = removeTree(below, until: deadline) }
        while rmdir(path) != 0 {
            guard errno == EBUSY, ContinuousClock.now < deadline else { return false }
            var none = pollfd(fd: -1, events: 0, revents: 0)
            _ = poll(&none, 0, 1)
        }
        return true
    }

    /// Whether `cgroup.events` (open at `descriptor`) says `populated 1`.
    private static func isPopulated(_ descriptor: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else { return false }
        return String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").contains("populated 1")
    }

    /// The processes in the cgroup at `path` and in those made below it
    /// (an app's helper may move itself into one of its own), in pid order.
    static func processes(in path: String) -> [Int32] {
        var found: [Int32] = []
        if let text = try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8) {
            found = text.split(separator: "\n").compactMap { Int32($0) }
        }
        for below in subdirectories(of: path) { found += processes(in: below) }
        return found.sorted()
    }

    /// The cgroups made in the one at `path` (one `getdents`, no `stat`:
    /// read on every freeze).
    static func subdirectories(of path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var found: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { found.append(path + "/" + name) }
        }
        return found
    }

    /// Writes `text` to a cgroup file in one call; false (with `errno`) when refused.
    static func write(_ text: String, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer {
            let saved = errno
            close(descriptor)
            errno = saved
        }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) } == bytes.count
    }
}
