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

    @Test func eventsAfterASeqAreFoundWithoutAScan() {
        let log = EventLog(path: nil)
        for i in 0..<10 { log.append(LogEntry(kind: .system, app: i % 2 == 0 ? "a" : "b", name: "e\(i)"), time: 0) }
        #expect(log.events(after: 7).map(\.seq) == [8, 9, 10])
        #expect(log.events(after: 0, app: "a").map(\.name) == ["e0", "e2", "e4", "e6", "e8"])
        #expect(log.events(after: 10).isEmpty)
    }
}
