import CPulse

/// A libpulse threaded main loop and the state it guards.
///
/// libpulse's own lock is the synchronisation: its callbacks run on the
/// loop's thread with the lock held, and every other thread takes it
/// (``withLock(_:)``) before touching the connection. That is why this one
/// type is `@unchecked Sendable`: the compiler cannot see that lock.
final class PulseLock: @unchecked Sendable {
    let mainloop: OpaquePointer
    private let connection: PulseConnection

    init(mainloop: OpaquePointer, connection: PulseConnection) {
        self.mainloop = mainloop
        self.connection = connection
    }

    /// Runs `body` with the loop's lock held. Not for the loop's own thread
    /// (its callbacks already hold the lock).
    func withLock<R, E: Error>(_ body: (PulseConnection) throws(E) -> R) throws(E) -> R {
        precondition(pa_threaded_mainloop_in_thread(mainloop) == 0, "PulseLock.withLock called on the loop thread")
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return try body(connection)
    }

    /// Waits (with the lock held, inside ``withLock(_:)``) until the loop
    /// thread signals.
    func wait() { pa_threaded_mainloop_wait(mainloop) }
}
