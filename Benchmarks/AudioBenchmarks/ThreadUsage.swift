import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time and context switches of each of this process's threads, from
/// each thread's CPU clock and `/proc/self/task/TID/status` (this kernel
/// has no schedstat). A voluntary switch is a thread going to sleep, so it
/// counts the wake-ups that follow.
struct ThreadUsage {
    struct Thread {
        var name: String
        var cpu: Duration
        var sleeps: Int
        var preempted: Int
    }

    var threads: [Int32: Thread] = [:]

    static func now() -> ThreadUsage {
        var usage = ThreadUsage()
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for entry in tasks {
            guard let tid = Int32(entry) else { continue }
            let base = "/proc/self/task/\(entry)/"
            guard let status = try? String(contentsOfFile: base + "status", encoding: .utf8) else { continue }
            var name = "?"
            var sleeps = 0
            var preempted = 0
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "Name": name = parts[1]
                case "voluntary_ctxt_switches": sleeps = Int(parts[1]) ?? 0
                case "nonvoluntary_ctxt_switches": preempted = Int(parts[1]) ?? 0
                default: break
                }
            }
            // The kernel's per-thread CPU clock: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
            let clock = clockid_t((~tid) << 3 | 6)
            var time = timespec()
            guard clock_gettime(clock, &time) == 0 else { continue }
            usage.threads[tid] = Thread(name: name, cpu: .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec), sleeps: sleeps, preempted: preempted)
        }
        return usage
    }

    /// What each thread used since `earlier`, summed by thread name,
    /// busiest first (threads that have exited since are not seen).
    func since(_ earlier: ThreadUsage) -> [Thread] {
        var byName: [String: Thread] = [:]
        for (tid, thread) in threads {
            let before = earlier.threads[tid]
            let cpu = thread.cpu - (before?.cpu ?? .zero)
            let sleeps = thread.sleeps - (before?.sleeps ?? 0)
            let preempted = thread.preempted - (before?.preempted ?? 0)
            guard cpu > .zero || sleeps > 0 else { continue }
            var sum = byName[thread.name] ?? Thread(name: thread.name, cpu: .zero, sleeps: 0, preempted: 0)
            sum.cpu += cpu
            sum.sleeps += sleeps
            sum.preempted += preempted
            byName[thread.name] = sum
        }
        return byName.values.sorted { $0.cpu > $1.cpu }
    }
}
