#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A child process started with `posix_spawn`, with a clean signal mask
/// and default signal handlers (a child of a Swift program otherwise
/// inherits blocked signals and ignores SIGTERM), output to a log file.
final class LocationChildProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    private let exited = Mutex(false)

    /// Spawns `executable` with `arguments`, stdin from /dev/null and
    /// stdout/stderr appended to `logPath`.
    init(executable: String, arguments: [String], logPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw LocationSystemError("spawn \(executable)", errno: rc) }
        pid = child
    }

    /// Whether the child is still running (reaps it if it exited).
    var isRunning: Bool {
        exited.withLock { done in
            if done { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { done = true }
            return !done
        }
    }

    /// Sends a signal and waits for the child to exit; escalates to
    /// SIGKILL after `grace`.
    func stop(signal: Int32 = SIGTERM, grace: Duration = .seconds(5)) {
        guard isRunning else { return }
        Glibc.kill(pid, signal)
        let deadline = ContinuousClock.now + grace
        while isRunning {
            if ContinuousClock.now > deadline {
                Glibc.kill(pid, SIGKILL)
                exited.withLock { done in
                    var status: Int32 = 0
                    _ = waitpid(pid, &status, 0)
                    done = true
                }
                return
            }
            usleep(2_000)
        }
    }
}
