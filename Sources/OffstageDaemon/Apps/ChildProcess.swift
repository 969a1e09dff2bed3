#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import OffstageProtocol
import Synchronization

/// A helper server (gpsd, PulseAudio) started with `posix_spawn`, with a clean signal mask
/// and default signal handlers (a child of a Swift program otherwise
/// inherits blocked signals and ignores SIGTERM), output to a log file.
final class ChildProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    private let exited = Mutex(false)

    /// Spawns `executable` with `arguments`, stdin from /dev/null and
    /// stdout/stderr appended to `logPath`.
    /// - Parameter environment: `nil` inherits this process's environment.
    init(executable: String, arguments: [String], environment: [String: String]? = nil, logPath: String)
        throws(SystemCallError)
    {
        pid = try spawnProcess(
            executable: executable, arguments: arguments, environment: environment, outputPath: logPath,
            ownProcessGroup: false)
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

    /// Blocks until the child has exited, without reaping it (``isRunning``
    /// and ``stop(signal:grace:)`` still can).
    /// - Returns: how it ended ("exit status 1", "killed by signal 9"), or
    ///   nil if it was reaped already.
    @discardableResult
    func waitUntilExited() -> String? {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno != EINTR { return nil }
        }
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? "exit status \(status)" : "killed by signal \(status)"
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
