import HeapModule

/// Identifies a scheduled timer, for cancellation.
public struct TimerID: Hashable, Sendable, Comparable {
    public let rawValue: UInt64
    public static func < (lhs: TimerID, rhs: TimerID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A discrete-event timer queue: a priority queue keyed by (deadline,
/// insertion order), so timers due at the same instant fire in the order they
/// were scheduled. Pure: the caller says what time it is.
public struct Scheduler<Payload: Sendable>: Sendable {
    struct Entry: Comparable, Sendable {
        var deadline: ClockTime
        var id: TimerID
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
        }
    }

    private var heap = Heap<Entry>()
    private var payloads: [TimerID: Payload] = [:]
    private var nextID: UInt64 = 1

    public init() {}

    /// Schedules `payload` to come due at `deadline`.
    @discardableResult
    public mutating func schedule(_ payload: Payload, at deadline: ClockTime) -> TimerID {
        let id = TimerID(rawValue: nextID)
        nextID += 1
        heap.insert(Entry(deadline: deadline, id: id))
        payloads[id] = payload
        return id
    }

    /// Cancels a timer; cancelling a fired or unknown timer does nothing.
    public mutating func cancel(_ id: TimerID) {
        payloads[id] = nil
    }

    /// The number of live timers.
    public var count: Int { payloads.count }

    /// The earliest deadline of a live timer.
    public mutating func nextDeadline() -> ClockTime? {
        dropCancelled()
        return heap.min?.deadline
    }

    /// Removes and returns the earliest timer due at or before `now`.
    public mutating func popDue(by now: ClockTime) -> (id: TimerID, deadline: ClockTime, payload: Payload)? {
        dropCancelled()
        guard let first = heap.min, first.deadline <= now else { return nil }
        heap.removeMin()
        let payload = payloads.removeValue(forKey: first.id)!
        return (first.id, first.deadline, payload)
    }

    private mutating func dropCancelled() {
        while let first = heap.min, payloads[first.id] == nil { heap.removeMin() }
    }
}
