import Foundation
import Testing
@testable import OffstageDaemon
import OffstageCore

@Suite struct EventTests {
    @Test func directWriterMatchesTheJSONValue() {
        for app in [nil, "com.example.App"] as [String?] {
            let event = Event(seq: 7, time: 1.25, app: app, kind: .callback, name: "a\"b", detail: ["x": [1, 2]])
            var bytes: [UInt8] = []
            event.write(into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == event.json.jsonText)
        }
    }

    @Test func appsSharingALastPartAreNamedInFull() {
        let naming = AppNaming(bundleIDs: ["com.offstage.samples.StateLab", "org.other.StateLab", "com.example.Maps"])
        #expect(naming.name(of: "com.offstage.samples.StateLab") == "com.offstage.samples.StateLab")
        #expect(naming.name(of: "org.other.StateLab") == "org.other.StateLab")
        #expect(naming.name(of: "com.example.Maps") == "Maps")
        let event = Event(seq: 1, time: 2, app: "org.other.StateLab", kind: .state, name: "active", detail: .emptyObject)
        #expect(event.humanLine(naming: naming) == "     2      org.other.StateLab  -> active")
        #expect(event.humanLine == "     2      StateLab  -> active")
    }

    @Test func eventsAfterASeqAreFoundWithoutAScan() throws {
        let log = try EventLog(path: nil)
        for i in 0..<10 { log.append(LogEntry(kind: .system, app: i % 2 == 0 ? "a" : "b", name: "e\(i)"), time: 0) }
        #expect(log.events(after: 7).map(\.seq) == [8, 9, 10])
        #expect(log.events(after: 0, app: "a").map(\.name) == ["e0", "e2", "e4", "e6", "e8"])
        #expect(log.events(after: 10).isEmpty)
    }

    @Test func aFailingWriteIsLoggedOnceAndKeepsTheEventsForLater() throws {
        // /dev/full: every write fails with ENOSPC, as on a full disk.
        let log = try EventLog(path: "/dev/full")
        log.append(LogEntry(kind: .system, app: nil, name: "first"), time: 1)
        log.flush()
        log.append(LogEntry(kind: .system, app: nil, name: "second"), time: 2)
        log.flush()
        #expect(log.events.map(\.name) == ["first", "eventLogWriteFailed", "second"])
        #expect(log.events[1].kind == .error)
        #expect(log.events[1].detail["reason"]?.stringValue == String(cString: strerror(ENOSPC)))
        #expect(log.pendingBytes > 0)
    }

    /// A log that cannot be opened is refused: its events were lost in
    /// silence, and the next daemon handed their seqs out again. The store's
    /// record of the seq reached is continued past a log moved away.
    @Test func anUnopenableLogIsRefusedAndTheSeqContinuesPastTheStoresRecord() throws {
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/events.jsonl", withIntermediateDirectories: false)
        let error = #expect(throws: DaemonError.self) { _ = try EventLog(path: directory + "/events.jsonl") }
        #expect(error?.message == "cannot open the event log \(directory)/events.jsonl: \(String(cString: strerror(EISDIR)))")
        let fresh = try EventLog(path: directory + "/new.jsonl", continuing: 41)
        #expect(fresh.append(LogEntry(kind: .system, app: nil, name: "next"), time: 0).seq == 42)
    }

    @Test func aReopenedLogReadsBackItsEventsAndSkipsACutLine() throws {
        let path = try temporaryDirectory() + "/events.jsonl"
        do {
            let log = try EventLog(path: path)
            for i in 1...3 { log.append(LogEntry(kind: .system, app: nil, name: "e\(i)"), time: Double(i)) }
            log.flush()
        }
        // A crash in the middle of a write.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"seq\":4,\"ti".utf8))
        try handle.close()
        do {
            let reopened = try EventLog(path: path)
            #expect(reopened.events.map(\.name) == ["e1", "e2", "e3"])
            #expect(reopened.lastSeq == 3)
            // The cut line was ended: the next event is a line of its own.
            reopened.append(LogEntry(kind: .system, app: nil, name: "e4"), time: 4)
            reopened.flush()
        }
        #expect(try EventLog(path: path).events.map(\.name) == ["e1", "e2", "e3", "e4"])
        // Read from inside the file: a first, partial line is left out; one that starts there is kept.
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let firstLine = Event(seq: 1, time: 1, app: nil, kind: .system, name: "e1", detail: .emptyObject).json.jsonText.utf8.count + 1
        #expect(EventLog.tail(of: path, bytes: size - firstLine / 2, limit: 10).map(\.name) == ["e2", "e3", "e4"])
        #expect(EventLog.tail(of: path, bytes: size - firstLine, limit: 10).map(\.name) == ["e2", "e3", "e4"])
        #expect(EventLog.tail(of: path, bytes: size - firstLine + 1, limit: 10).map(\.name) == ["e2", "e3", "e4"])
        #expect(EventLog.tail(of: path, bytes: size, limit: 2).map(\.name) == ["e3", "e4"])
    }
}
