import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The calling thread's id, from `/proc/thread-self` (`PID/task/TID`); -1 if unknown.
func currentThreadID() -> Int32 {
    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    return target.split(separator: "/").last.flatMap { Int32($0) } ?? -1
}

/// A thread's scheduler accounting from `/proc/PID/task/TID/schedstat`:
/// nanoseconds on the CPU and nanoseconds runnable but waiting for one
/// (the run-queue delay other load on the machine adds).
struct SchedStat {
    var running: UInt64
    var waiting: UInt64

    init?(pid: Int32, tid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8) else {
            return nil
        }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let running = UInt64(fields[0]), let waiting = UInt64(fields[1]) else { return nil }
        self.running = running
        self.waiting = waiting
    }

    /// `CPU x µs + run-queue wait y µs per op` between two readings.
    static func describe(_ before: SchedStat?, _ after: SchedStat?, operations: Int) -> String {
        guard let before, let after, operations > 0 else { return "n/a" }
        let cpu = (after.running &- before.running) / UInt64(operations)
        let wait = (after.waiting &- before.waiting) / UInt64(operations)
        return "CPU \(formatNanos(cpu)) + run-queue wait \(formatNanos(wait))"
    }
}

/// The threads whose accounting the round-trip and wake notes print.
struct WatchedThreads {
    var threads: [(name: String, pid: Int32, tid: Int32)]

    func read() -> [SchedStat?] { threads.map { SchedStat(pid: $0.pid, tid: $0.tid) } }

    /// One line per thread: its CPU and run-queue wait per operation.
    func describe(from before: [SchedStat?], operations: Int, per what: String) -> String {
        let after = read()
        return threads.indices.map {
            "\(threads[$0].name) \(SchedStat.describe(before[$0], after[$0], operations: operations))"
        }.joined(separator: "; ") + " (per \(what))"
    }
}

extension DaemonHarness {
    /// The thread id of the engine's event loop.
    func engineThread() async throws -> Int32 {
        try await daemon.engine.submit { _ in currentThreadID() }.get()
    }
}
