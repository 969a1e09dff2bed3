import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A temporary directory of this process's own (a private PulseAudio's or
/// gpsd's, a scenario run's), locked while it is in use, and the sweep of
/// those that processes killed outright (SIGKILL) could not remove.
///
/// The lock is an `flock` on `.owner` inside it: the kernel drops it when
/// its holder dies, however it dies, and it holds across PID namespaces
/// sharing `/tmp`, which a PID in the name would not. The directory is made
/// under a `.new` name, locked, then renamed into place, so a sweep never
/// finds one under its final name unlocked while it is being made (a
/// `.new` one is taken only when a minute old and unlocked). A sweep only takes
/// directories of this user (in a shared `/tmp`, a tree someone else made
/// is not removed with our rights).
public final class OwnedTemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL
    public var path: String { url.path }
    private let lock: Int32

    static let lockName = ".owner"

    /// Removes the unlocked directories of earlier owners with this
    /// prefix, then makes and locks a new one.
    /// - Parameters:
    ///   - prefix: the name's start, such as `offstage-pulse`; the name is
    ///     `PREFIX-UUID`.
    ///   - parent: where (default: the temporary directory, `TMPDIR`).
    ///   - permissions: the directory's mode.
    public init(prefix: String, in parent: URL = FileManager.default.temporaryDirectory, permissions: mode_t = 0o700) throws(Failure) {
        Self.sweep(prefix: prefix, in: parent)
        let name = "\(prefix)-\(UUID().uuidString)"
        let making = parent.appendingPathComponent(name + ".new").path
        let final = parent.appendingPathComponent(name)
        guard mkdir(making, permissions) == 0 else { throw Self.failure(final.path) }
        chmod(making, permissions)  // whatever the umask
        let fd = open(making + "/" + Self.lockName, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0, rename(making, final.path) == 0 else {
            let error = Self.failure(final.path)
            if fd >= 0 { close(fd) }
            try? FileManager.default.removeItem(atPath: making)
            throw error
        }
        url = final
        lock = fd
    }

    deinit { close(lock) }

    /// Removes the directory and everything in it (its owner is done).
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Keeps the directory for good (a failed run's logs, for the user to
    /// read): without its lock file, no sweep takes it.
    public func keep() {
        unlink(path + "/" + Self.lockName)
    }

    /// Removes `PREFIX-*` directories in `parent` that are this user's and
    /// whose lock nobody holds: their owner died without removing them.
    /// Directories without a lock file (kept, or made before locks) are
    /// left alone. A `.new` one is being made, for the microseconds between
    /// its `mkdir` and its rename, without a lock at first: it is taken
    /// only once it is older than ``abandonedAfter`` and not locked (its
    /// maker was killed while making it).
    public static func sweep(prefix: String, in parent: URL = FileManager.default.temporaryDirectory) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.path) else { return }
        for name in names where name.hasPrefix(prefix + "-") {
            let path = parent.appendingPathComponent(name).path
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { continue }
            let making = name.hasSuffix(".new")
            if making, time(nil) - info.st_mtim.tv_sec <= abandonedAfter { continue }
            let lockPath = path + "/" + lockName
            let fd = open(lockPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            let noLockFile = fd < 0 && errno == ENOENT  // read at once: nothing in between sets it
            // An old `.new` without a lock file: its maker died before making one.
            if making, noLockFile {
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Seconds after which a `.new` directory nobody locks is taken as
    /// abandoned (making one takes microseconds).
    static let abandonedAfter = 60

    /// Why a directory could not be made.
    public struct Failure: Error, CustomStringConvertible {
        /// The directory it would have been.
        public let path: String
        /// The system's reason (`Permission denied`).
        public let reason: String
        public var description: String { "cannot create \(path): \(reason)" }
    }

    private static func failure(_ path: String) -> Failure {
        Failure(path: path, reason: String(cString: strerror(errno)))
    }
}
