import CLinuxProcess
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the round-trip and wake benchmarks run their processes.
///
/// On a virtual machine a wake-up sent to another, idle CPU can cost tens of
/// microseconds (the idle vCPU has to be scheduled by the host), while one on
/// the same CPU costs a context switch; which one a run gets is the
/// scheduler's choice, made anew for every wake-up. Left free, a figure and
/// its baseline can land on different sides of that line. Pinned, each
/// measured pair (engine and app; ping-pong parent and child) runs under the
/// same conditions as the other:
///
/// - `free`: no pinning (what an app sees by default);
/// - `same`: everything on CPU 0 (this process, so the driver and the
///   daemon's loop thread, and BenchApp and the ping-pong child), so every
///   wake-up is a context switch and a figure is the CPU time on its path;
/// - `split`: each measured pair is split, so every wake-up within it crosses
///   CPUs: this process on CPU 0, BenchApp and the ping-pong child on CPU 1.
///
/// (Keeping the driver off the engine's CPU in `same`, on CPU 1 with the
/// ping-pong pair, measured a slower round trip, 48–65 µs against 33 µs,
/// for reasons not understood; so `same` keeps it simple.)
///
/// Only the benchmark does this, to its own processes: the daemon never
/// changes an app's CPU affinity.
enum Placement: String, CaseIterable {
    case free, same, split

    /// Environment variables that tell a peer which CPU to pin itself to.
    static let appCPUVariable = "OFFSTAGE_BENCH_APP_CPU"
    static let childCPUVariable = "OFFSTAGE_BENCH_CHILD_CPU"

    var label: String {
        switch self {
        case .free: return "free"
        case .same: return "same CPU"
        case .split: return "split CPUs"
        }
    }

    /// (driver and the rest of this process, engine loop thread, BenchApp, ping-pong child)
    private var cpus: (driver: Int, engine: Int, app: Int, child: Int)? {
        switch self {
        case .free: return nil
        case .same: return (0, 0, 0, 0)
        case .split: return (0, 0, 1, 1)
        }
    }

    /// Pins every thread of this process where the driver belongs, and
    /// arranges for peers spawned from now on to pin themselves.
    func apply() throws {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        guard let cpus else {
            try Self.pinProcess(to: Array(0..<online))
            unsetenv(Self.appCPUVariable)
            unsetenv(Self.childCPUVariable)
            return
        }
        guard online >= 2 else { throw BenchError("the \(rawValue) placement needs two CPUs") }
        try Self.pinProcess(to: [cpus.driver])
        setenv(Self.appCPUVariable, String(cpus.app), 1)
        setenv(Self.childCPUVariable, String(cpus.child), 1)
    }

    /// Pins the engine's loop thread (started after ``apply()``).
    func pinEngine(thread: pid_t) throws {
        guard let cpus else { return }
        try Self.pin(thread: thread, to: [cpus.engine])
    }

    /// In a peer, at start: pins this process (still single-threaded) where
    /// the driver asked.
    static func pinPeerIfAsked(isApp: Bool) {
        guard let text = getenv(isApp ? appCPUVariable : childCPUVariable), let cpu = Int(String(cString: text))
        else { return }
        _ = try? pin(thread: 0, to: [cpu])
    }

    private static func pinProcess(to cpus: [Int]) throws {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        for task in tasks {
            guard let tid = pid_t(task) else { continue }
            try pin(thread: tid, to: cpus)
        }
    }

    private static func pin(thread: pid_t, to cpus: [Int]) throws {
        var mask = [UInt8](repeating: 0, count: 128)
        for cpu in cpus { mask[cpu / 8] |= UInt8(1 << (cpu % 8)) }
        guard offstage_set_affinity(thread, mask.count, mask) == 0 else {
            throw BenchError("sched_setaffinity(\(thread)): \(String(cString: strerror(errno)))")
        }
    }
}
