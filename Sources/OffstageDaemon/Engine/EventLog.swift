import Foundation
import OffstageCore

#if canImport(Glibc)
    import Glibc
#endif

/// The event log: the latest events in memory, every event appended to a
/// file (`events.jsonl` in the data directory) as it happens, and live
/// subscribers for `events --follow`.
///
/// Confined to the daemon's event loop.
public final class EventLog {
    public private(set) var events: [Event] = []
    public let capacity: Int
    private(set) var nextSeq: Int
    private let fd: Int32?
    private var subscribers: [Int: (Event) -> Void] = [:]
    /// Encoded events not yet written; ``flush()`` writes them in one call.
    private var pending: [UInt8] = []
    private var nextSubscriber = 1
    /// A write failed (a full disk) and no write has succeeded since: the
    /// failure has been logged once, as an `error` event.
    private var failing = false
    /// The last byte written is not a newline (the rest of its line is
    /// still pending).
    private var fileEndsMidLine = false
    /// Encoded bytes waiting for a flush (or for a failing disk).
    var pendingBytes: Int { pending.count }
    /// Unwritten bytes kept for the next flush, at most.
    static let maximumPending = 16 << 20

    /// - Parameters:
    ///   - path: file to append to (`nil`: memory only); its last `seq` is continued.
    ///   - capacity: how many events to keep in memory.
    ///   - continuing: a `seq` already handed out (the store's record): the
    ///     next is past it even when the file has less (moved away, removed).
    ///   The latest events of an existing file (those in its last
    ///   ``reloadedBytes``) are read back into memory, so `offstage events`
    ///   goes on across a daemon restart.
    /// - Throws: ``DaemonError`` `.storage` when the file cannot be opened
    ///   for appending (its events would be lost, and their seqs handed out
    ///   again by the next daemon).
    public init(path: String?, capacity: Int = 100_000, continuing: Int = 0) throws(DaemonError) {
        self.capacity = capacity
        if let path {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw DaemonError(.storage, "cannot open the event log \(path): \(String(cString: strerror(errno)))")
            }
            self.fd = fd
            // Only a regular file is read back (not a device such as /dev/full).
            let regular = FileKind(atPath: path) == .regular
            events = regular ? Self.tail(of: path, bytes: Self.reloadedBytes, limit: capacity) : []
            nextSeq = max(events.last?.seq ?? (regular ? Self.lastSeq(in: path) : nil) ?? 0, continuing) + 1
            // A line cut short by a crash is ended, so the next one is not glued to it.
            if regular, !Self.endsWithNewline(path) { _ = write(fd, "\n", 1) }
        } else {
            nextSeq = continuing + 1
            fd = nil
        }
    }

    deinit {
        flush()
        if let fd { close(fd) }
    }

    /// Writes the events appended since the last flush to the file. The
    /// engine flushes after every input it handles, so a crash loses at most
    /// the events of the input being handled.
    ///
    /// A failed write (a full disk) keeps what was not written for the next
    /// flush, which goes on where it stopped, so no line is cut or glued to
    /// another; past ``maximumPending`` that is dropped. The first failure
    /// is logged as an `eventLogWriteFailed` error event (in memory at once,
    /// in the file when writing works again).
    public func flush() {
        guard let fd, !pending.isEmpty else { return }
        var offset = 0
        var failure: Int32?
        pending.withUnsafeBytes { raw in
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                offset += written
            }
        }
        if offset > 0 { fileEndsMidLine = pending[offset - 1] != UInt8(ascii: "\n") }
        if offset == pending.count {
            pending.removeAll(keepingCapacity: true)
        } else {
            pending.removeFirst(offset)
        }
        guard let failure else {
            failing = false
            return
        }
        if pending.count > Self.maximumPending {
            // Dropped; the line the file ends in, if cut, is ended before the next.
            pending = fileEndsMidLine ? [UInt8(ascii: "\n")] : []
        }
        if !failing {
            failing = true
            append(
                LogEntry(kind: .error, app: nil, name: "eventLogWriteFailed", detail: ["reason": .string(String(cString: strerror(failure)))]),
                time: events.last?.time ?? 0)
        }
    }

    /// Appends an entry stamped with `seq` and `time`.
    @discardableResult
    public func append(_ entry: LogEntry, time: Double) -> Event {
        let event = Event(seq: nextSeq, time: time, app: entry.app, kind: entry.kind, name: entry.name, detail: entry.detail)
        nextSeq += 1
        events.append(event)
        if events.count > capacity + capacity / 4 { events.removeFirst(events.count - capacity) }
        if fd != nil {
            event.write(into: &pending)
            pending.append(UInt8(ascii: "\n"))
        }
        for subscriber in subscribers.values { subscriber(event) }
        return event
    }

    /// Events after `seq`, optionally for one app. Events are in `seq`
    /// order, so the start is found by binary search, not a scan.
    public func events(after seq: Int = 0, app: String? = nil) -> [Event] {
        let tail = events[firstIndex(after: seq)...]
        guard let app else { return Array(tail) }
        return tail.filter { $0.app == app }
    }

    /// The `error` events after `seq` (what a command caused, for its reply).
    public func errors(after seq: Int) -> [Event] {
        events[firstIndex(after: seq)...].filter { $0.kind == .error }
    }

    /// The index of the first event kept with a seq above `seq`.
    private func firstIndex(after seq: Int) -> Int {
        var low = 0
        var high = events.count
        while low < high {
            let middle = (low + high) / 2
            if events[middle].seq <= seq { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The largest seq a request may name: JSON numbers keep integers
    /// exactly up to 2^53 (2^63 - 1 came out as no number).
    public static let largestSeq = 1 << 53

    /// The seq of the latest event (0 when none).
    public var lastSeq: Int { nextSeq - 1 }

    /// Calls `body` for every new event until ``unsubscribe(_:)``.
    public func subscribe(_ body: @escaping (Event) -> Void) -> Int {
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = body
        return id
    }

    public func unsubscribe(_ id: Int) { subscribers[id] = nil }

    /// How much of an existing log a new daemon reads back: about 25,000
    /// events, parsed in a fraction of a second.
    static let reloadedBytes = 4 << 20

    /// The events in the last `bytes` of a log file, whole lines only,
    /// in order, at most the last `limit`; lines that do not parse (a line
    /// cut short by a crash) are left out.
    static func tail(of path: String, bytes: Int, limit: Int) -> [Event] {
        guard let (data, startsLine) = fileTail(atPath: path, count: bytes) else { return [] }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // Unless the byte before the start ends a line, the first one is a part.
        if !startsLine, !lines.isEmpty { lines.removeFirst() }
        var events: [Event] = []
        for line in lines.reversed() where events.count < limit {
            if let json = try? JSONValue(parsing: line), let event = try? Event(json: json) { events.append(event) }
        }
        return events.reversed()
    }

    /// Whether the file is empty or its last byte is a newline.
    static func endsWithNewline(_ path: String) -> Bool {
        guard let last = fileTail(atPath: path, count: 1)?.bytes else { return true }
        return last.isEmpty || last.last == UInt8(ascii: "\n")
    }

    static func lastSeq(in path: String) -> Int? {
        guard let data = fileTail(atPath: path, count: 65536)?.bytes else { return nil }
        for line in data.split(separator: UInt8(ascii: "\n")).reversed() {
            if let json = try? JSONValue(parsing: line), let seq = json["seq"]?.intValue { return seq }
        }
        return nil
    }
}
