#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxProcess
import OffstageCore
import OffstageProtocol
import Synchronization

/// A helper server (gpsd, PulseAudio) started with `posix_spawn`, with a clean signal mask
/// and default signal handlers (a child of a Swift program otherwise
/// inherits blocked signals and ignores SIGTERM), output to a log file.
///
/// It does not outlive this process: a guard (a shell waiting on a socket
/// only this process holds) sends it SIGTERM if this process dies without
/// stopping it, killed with SIGKILL or crashed. A server left behind would
/// hold its port or socket (a stale gpsd on 2947 misleads `gps watch`).
final class ChildProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    private let exited = Mutex(false)
    private let guardian: ParentDeathGuard?

    /// Spawns `executable` with `arguments`, stdin from /dev/null and
    /// stdout/stderr appended to `logPath`.
    /// - Parameter environment: `nil` inherits this process's environment.
    init(executable: String, arguments: [String], environment: [String: String]? = nil, logPath: String)
        throws(SpawnError)
    {
        pid = try spawnProcess(
            executable: executable, arguments: arguments, environment: environment, outputPath: logPath,
            ownProcessGroup: false)
        guardian = ParentDeathGuard(terminating: pid, logPath: logPath)
    }

    /// Whether the child is still running (reaps it if it exited).
    var isRunning: Bool {
        exited.withLock { done in
            if done { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { reaped(&done) }
            return !done
        }
    }

    /// Marks the child reaped and dismisses its guard: its pid may now be
    /// reused, and must not be signalled any more.
    private func reaped(_ done: inout Bool) {
        done = true
        guardian?.dismiss()
    }

    /// Blocks until the child has exited, without reaping it (``isRunning``
    /// and ``stop(signal:grace:)`` still can).
    /// - Returns: how it ended, or nil if it was reaped already.
    @discardableResult
    func waitUntilExited() -> ExitStatus? {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno != EINTR { return nil }
        }
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? .exited(status) : .signaled(status)
    }

    /// Sends a signal and waits for the child to exit; escalates to
    /// SIGKILL after `grace`. The wait sleeps on a pidfd, which becomes
    /// readable when the child exits (without one, on a kernel before 5.3
    /// or out of descriptors, it checks every 2 ms).
    func stop(signal: Int32 = SIGTERM, grace: Duration = .seconds(5)) {
        guard isRunning else { return }
        // Opened before the signal: not yet reaped, the pid is still the child's.
        let exitDescriptor = offstage_pidfd_open(pid)
        defer { if exitDescriptor >= 0 { close(exitDescriptor) } }
        Glibc.kill(pid, signal)
        let ended: Bool
        if exitDescriptor >= 0 {
            ended = awaitReadable(exitDescriptor, within: grace)
        } else {
            let deadline = ContinuousClock.now + grace
            while isRunning, ContinuousClock.now < deadline { usleep(2_000) }
            ended = !isRunning
        }
        if !ended { Glibc.kill(pid, SIGKILL) }
        exited.withLock { done in
            guard !done else { return }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            reaped(&done)
        }
    }
}

/// Sends SIGTERM to a process when this one dies without dismissing the
/// guard first: `/bin/sh` reads a socket whose other end only this process
/// holds (close-on-exec), and reaches its end of stream when this process
/// is gone, however it died. Dismissed, it is told so in a line and exits
/// without a signal. It ignores ^C and hang-ups at the terminal, which
/// this process handles.
final class ParentDeathGuard: Sendable {
    private let pid: pid_t
    private let descriptor: Mutex<Int32?>

    static let script = #"trap '' INT HUP; read -r _ || kill -TERM "$1" 2>/dev/null"#

    /// Starts a guard of `target`, its output appended to `logPath`; nil if
    /// it cannot start (the server is then only stopped by this process).
    init?(terminating target: pid_t, logPath: String) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            return nil
        }
        defer { close(ends[1]) }
        guard
            let pid = try? spawnProcess(
                executable: "/bin/sh", arguments: ["-c", Self.script, "offstage-guard", String(target)],
                environment: nil, outputPath: logPath, ownProcessGroup: false, standardInput: ends[1])
        else {
            close(ends[0])
            return nil
        }
        self.pid = pid
        descriptor = Mutex(ends[0])
    }

    /// Tells the guard to exit without a signal, and reaps it.
    func dismiss() {
        guard let fd = descriptor.withLock({ $0.take() }) else { return }
        _ = send(fd, "\n", 1, Int32(MSG_NOSIGNAL))
        close(fd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }

    deinit { dismiss() }
}
