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

    /// The environment variable that tells a peer (BenchApp, a ping-pong
    /// child) which CPU to pin itself to.
    static let peerCPUVariable = "OFFSTAGE_BENCH_PEER_CPU"

    var label: String {
        switch self {
        case .free: return "free"
        case .same: return "same CPU"
        case .split: return "split CPUs"
        }
    }

    /// (this process: the driver and the daemon's loop thread, which its
    /// threads start; the peers: BenchApp and the ping-pong child)
    private var cpus: (process: Int, peers: Int)? {
        switch self {
        case .free: return nil
        case .same: return (0, 0)
        case .split: return (0, 1)
        }
    }

    /// Pins every thread of this process (threads started later inherit
    /// it), and arranges for peers spawned from now on to pin themselves.
    func apply() throws {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        guard let cpus else {
            try Self.pinProcess(to: Array(0..<online))
            unsetenv(Self.peerCPUVariable)
            return
        }
        guard max(cpus.process, cpus.peers) < online else {
            throw BenchError("the \(rawValue) placement needs two CPUs")
        }
        try Self.pinProcess(to: [cpus.process])
        setenv(Self.peerCPUVariable, String(cpus.peers), 1)
    }

    /// In a peer, at start: pins this process (still single-threaded) where
    /// the driver asked.
    static func pinPeerIfAsked() {
        guard let text = getenv(peerCPUVariable), let cpu = Int(String(cString: text))
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
