import NIOCore
import OffstageCore

/// Which clock the daemon runs on.
public enum ClockMode: String, Sendable, CaseIterable {
    /// The wall clock: deadlines fire on their own.
    case real
    /// Time moves only when told to (`clock advance`, the scenario runner).
    case virtual
}

/// The daemon's clock: real (monotonic, since the daemon started) or virtual.
struct DaemonClock {
    let mode: ClockMode
    private let start: NIODeadline
    private var virtualNow = ClockTime.zero

    init(mode: ClockMode) {
        self.mode = mode
        start = .now()
    }

    var now: ClockTime {
        switch mode {
        case .real: return ClockTime(nanoseconds: NIODeadline.now().uptimeNanoseconds.toInt64 - start.uptimeNanoseconds.toInt64)
        case .virtual: return virtualNow
        }
    }

    /// Sets virtual time (never backwards).
    mutating func set(_ time: ClockTime) {
        precondition(mode == .virtual)
        if time > virtualNow { virtualNow = time }
    }

    /// The real deadline of a clock time (real mode).
    func deadline(of time: ClockTime) -> NIODeadline {
        start + .nanoseconds(time.nanoseconds)
    }
}

extension UInt64 {
    fileprivate var toInt64: Int64 { Int64(truncatingIfNeeded: self) }
}
