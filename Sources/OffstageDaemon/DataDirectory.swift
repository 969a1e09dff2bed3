import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Creates a directory and its missing parents (as `mkdir -p`), failing
/// with one readable line ("cannot create the data directory /dev/null/x:
/// /dev/null is not a directory") rather than Foundation's error dump.
/// - Parameters:
///   - what: what the directory is for, as the message names it.
///   - permissions: the mode of the directories created (existing ones are
///     left alone; the umask applies, as with `mkdir`).
/// - Returns: the directories this call created, outermost first.
@discardableResult
func makeDirectory(_ path: String, for what: String, permissions: mode_t = 0o755) throws(DaemonError) -> [String] {
    guard !path.isEmpty else { throw DaemonError(.storage, "the \(what) has an empty path") }
    var prefix = path.hasPrefix("/") ? "" : "."
    var created: [String] = []
    for component in path.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, permissions) == 0 {
            created.append(prefix)
            continue
        }
        let error = errno
        if error == EEXIST, FileKind(atPath: prefix) == .directory { continue }
        let dangling = error == EEXIST && FileKind(atPath: prefix, followingLinks: false) == .symbolicLink
        let reason =
            dangling ? "\(prefix) is a symbolic link to nothing"
            : error == EEXIST ? "\(prefix) is not a directory" : String(cString: strerror(error))
        throw DaemonError(.storage, "cannot create the \(what) \(path): \(reason)")
    }
    return created
}

/// An exclusive lock on a data directory, held while a daemon runs: a
/// second daemon on the same data would take the first one's live apps
/// for orphans of a dead daemon and kill them, and both would append to
/// one event log with their own `seq`.
///
/// Against other processes it is a POSIX record lock (`fcntl(F_SETLK)`)
/// on `DIR/daemon.lock`, which belongs to this process and is not
/// inherited: a `flock` belongs to the open file, and a process another
/// thread was spawning at that moment shared it until its `exec` (or for
/// good, had it not exec'd), so a daemon stopped and started again in one
/// process (tests, the scenario runner) could find its own old lock still
/// held. Within this process, where record locks never conflict, a set of
/// the directories locked here does the same job.
final class DataDirectoryLock: Sendable {
    private static let lockedHere = Mutex<Set<String>>([])
    private let descriptor: Mutex<Int32?>
    private let key: String
    private let path: String
    /// The directories the lock created for the data directory, outermost first.
    private let created: [String]

    /// Creates the directory when it is missing, then locks it.
    /// - Throws: ``DaemonError`` `alreadyRunning` when another daemon holds it.
    init(directory: String) throws(DaemonError) {
        let created = try makeDirectory(directory, for: "data directory")
        let key = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        guard Self.lockedHere.withLock({ $0.insert(key).inserted }) else {
            throw DaemonError(.alreadyRunning, "another daemon is running on the data directory \(directory)")
        }
        let path = directory + "/daemon.lock"
        var fd: Int32 = -1
        // A daemon that gave the directory up (``abandon()``) removes the
        // lock file while it holds the lock: one locked meanwhile through
        // the old name is no lock, and is taken again under the new one.
        for attempt in 1...3 {
            // The one that gave it up may have removed the directory it made.
            if attempt > 1 { _ = try? makeDirectory(directory, for: "data directory") }
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                let error = errno
                _ = Self.lockedHere.withLock { $0.remove(key) }
                throw DaemonError(.storage, "cannot open \(path): \(String(cString: strerror(error)))")
            }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            guard fcntl(fd, F_SETLK, &lock) == 0 else {
                let error = errno
                close(fd)
                _ = Self.lockedHere.withLock { $0.remove(key) }
                if error == EACCES || error == EAGAIN {
                    throw DaemonError(.alreadyRunning, "another daemon is running on the data directory \(directory)")
                }
                throw DaemonError(.storage, "cannot lock \(path): \(String(cString: strerror(error)))")
            }
            if isStill(fd, namedBy: path) { break }
            close(fd)
            if attempt == 3 {
                _ = Self.lockedHere.withLock { $0.remove(key) }
                throw DaemonError(.alreadyRunning, "another daemon is starting on the data directory \(directory)")
            }
        }
        self.key = key
        self.path = path
        self.created = created
        descriptor = Mutex(fd)
    }

    /// Releases the lock of a daemon that did not start; when this lock
    /// made the data directory, it removes the lock file and then the
    /// directories it made, as far as they are empty: a refused daemon
    /// (say, its socket is taken) leaves no trace. Directories that
    /// existed, or hold anything, stay. The file goes while the lock is
    /// held, so that no daemon locks it meanwhile through its old name.
    func abandon() {
        if !created.isEmpty {
            unlink(path)
            for directory in created.reversed() where rmdir(directory) != 0 { break }
        }
        release()
    }
    /// Lets another daemon use the directory.
    func release() {
        let released = descriptor.withLock { fd -> Bool in
            guard let open = fd else { return false }
            close(open)
            fd = nil
            return true
        }
        if released { _ = Self.lockedHere.withLock { $0.remove(key) } }
    }

    deinit { release() }
}
