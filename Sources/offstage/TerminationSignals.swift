import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP for commands that own something outside the
/// process (a private gpsd or PulseAudio, a scenario's apps, a half-written
/// file): the process dies of the signal as it would have, but only after
/// the cleanups registered with ``onTermination(_:)`` have run (a cleanup
/// may also end the process itself, with its own exit status).
///
/// The signals are caught with a plain `sigaction` handler that only
/// writes the signal's number to a pipe; a thread of ours reads it and
/// does the work. Dispatch signal sources are not used: on Linux they read
/// a `signalfd`, which sees a signal only if every thread blocks it, and
/// the threads Swift and Foundation start do not — so under load a
/// SIGTERM went to a thread that ignored it, and the command neither
/// cleaned up nor died.
///
/// A signal the process ignores at start (`nohup`, a background job's
/// SIGINT) stays ignored.
enum TerminationSignals {
    static let numbers = [SIGINT, SIGTERM, SIGHUP]

    /// The pipe's write end, for the handler (`write` is async-signal-safe).
    nonisolated(unsafe) fileprivate static var pipeWriteEnd: Int32 = -1

    private struct State {
        var installed = false
        var cleanups: [Int: @Sendable (Int32) -> Void] = [:]
        var nextToken = 0
        /// ``holding(_:)`` sections running: a signal waits for them.
        var holds = 0
        var released: DispatchSemaphore?
        var terminating = false
    }

    private static let state = Mutex(State())

    /// Runs `cleanup` (on a thread of its own, given the signal's number)
    /// if a termination signal ends the process before ``remove(_:)`` is
    /// called with the returned token. Cleanups run newest first.
    @discardableResult
    static func onTermination(_ cleanup: @escaping @Sendable (Int32) -> Void) -> Int {
        installIfNeeded()
        return state.withLock { s in
            s.nextToken += 1
            s.cleanups[s.nextToken] = cleanup
            return s.nextToken
        }
    }

    /// Whether a termination signal has arrived and the cleanups are
    /// running: what they stop may be seen to stop meanwhile, and is not
    /// an error to report.
    static var isTerminating: Bool { state.withLock { $0.terminating } }

    /// Whether a termination signal arrives within `limit`: for a child
    /// that exited when this process may be about to learn why (a ^C or a
    /// `timeout` signals the whole process group, and the child can end
    /// before this process has run its handler).
    static func terminationArrives(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !isTerminating, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return isTerminating
    }

    /// Forgets a cleanup (the command undid the thing itself).
    static func remove(_ token: Int) {
        _ = state.withLock { $0.cleanups.removeValue(forKey: token) }
    }

    /// Runs `body` with termination put off until it returns: a signal
    /// arriving meanwhile is acted on afterwards, so that what `body`
    /// starts and registers a cleanup for (a server waited for until it
    /// answers) cannot be left behind.
    static func holding<T>(_ body: () throws -> T) rethrows -> T {
        installIfNeeded()
        state.withLock { $0.holds += 1 }
        defer {
            let semaphore = state.withLock { s -> DispatchSemaphore? in
                s.holds -= 1
                guard s.holds == 0 else { return nil }
                defer { s.released = nil }
                return s.released
            }
            semaphore?.signal()
        }
        return try body()
    }

    private static func installIfNeeded() {
        let first = state.withLock { s in
            defer { s.installed = true }
            return !s.installed
        }
        guard first else { return }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The reader blocks; only the handler's end must never block.
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        pipeWriteEnd = ends[1]
        let reader = ends[0]
        let thread = Thread { readSignals(from: reader) }
        thread.name = "offstage-signals"
        thread.start()
        for number in numbers {
            if isIgnored(number) { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignal
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }

    private static func readSignals(from reader: Int32) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in numbers { sigaddset(&mask, number) }
        // This thread dies of the signal at the end, so it must not block it.
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        while true {
            var byte: UInt8 = 0
            let count = read(reader, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return }
            let number = Int32(byte)
            // What is being started now gets its cleanup registered first.
            let held = state.withLock { s -> DispatchSemaphore? in
                guard s.holds > 0 else { return nil }
                let semaphore = s.released ?? DispatchSemaphore(value: 0)
                s.released = semaphore
                return semaphore
            }
            held?.wait()
            let cleanups = state.withLock { s in
                defer { s.cleanups = [:] }
                s.terminating = true
                return s.cleanups.sorted { $0.key > $1.key }.map(\.value)
            }
            for cleanup in cleanups { cleanup(number) }
            // No fflush(nil) here: it locks every stdio stream, and a thread
            // blocked reading one (a conversion's FIFO input) holds its lock.
            signal(number, SIG_DFL)
            raise(number)
            _exit(128 + number)
        }
    }
}

/// Whether the signal is ignored (as `nohup` leaves SIGHUP for its command).
func isIgnored(_ number: Int32) -> Bool {
    var old = sigaction()
    sigaction(number, nil, &old)
    return unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
}

/// Waits forever: the process ends elsewhere (a termination's cleanup exits).
func neverReturning() async {
    await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
}

private func forwardSignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(TerminationSignals.pipeWriteEnd, &byte, 1)
    errno = saved
}
