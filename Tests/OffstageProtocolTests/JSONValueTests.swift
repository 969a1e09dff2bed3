import Testing
import OffstageProtocol

@Suite struct JSONValueTests {
    @Test func roundTripsWithSortedKeys() throws {
        let value: JSONValue = ["b": [1, 2.5, "x\n\"y\""], "a": nil, "c": ["t": true]]
        #expect(value.jsonText == #"{"a":null,"b":[1,2.5,"x\n\"y\""],"c":{"t":true}}"#)
        #expect(try JSONValue(parsing: value.jsonText) == value)
    }

    @Test func parsesEscapesAndUnicode() throws {
        let value = try JSONValue(parsing: #"  {"s": "\u00e9\ud83d\ude00\t", "n": -1.5e2}  "#)
        #expect(value["s"] == "é😀\t")
        #expect(value["n"] == -150)
    }

    @Test(arguments: ["", "{", #"{"a":}"#, "[1,]", "tru", #""abc"#, "{} x", "01x"])
    func rejectsMalformedInput(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    /// Bytes that are not UTF-8 were replaced with U+FFFD, in silence.
    @Test func rejectsStringsThatAreNotUTF8() throws {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), n = UInt8(ascii: "n")
        let cases: [[UInt8]] = [
            [quote, 0x61, 0xFF, quote],  // a byte no UTF-8 has
            [quote, 0xC3, quote],  // a sequence cut short
            [quote, 0xED, 0xA0, 0x80, quote],  // a surrogate encoded
            [quote, backslash, n, 0xC0, 0xAF, quote],  // overlong, after an escape (the slow path)
        ]
        for bytes in cases {
            let error = try #require(throws: JSONParseError.self) { try JSONValue(parsing: [0x5B] + bytes + [0x5D]) }
            #expect(error.offset == 1 && error.reason == "string is not valid UTF-8", "\(bytes)")
        }
        #expect(try JSONValue(parsing: [quote, 0xC3, 0xA9, backslash, n, 0xF0, 0x9F, 0x98, 0x80, quote]) == "é\n😀")
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
    }

    @Test func writesNumbersStringsAndObjectsInTheirCanonicalForm() {
        let numbers: [(Double, String)] = [
            (0, "0"), (-0.0, "0"), (7, "7"), (-42, "-42"), (1e14 + 1, "100000000000001"), (1e15, "1000000000000000.0"),
            (0.5, "0.5"), (-36813.25, "-36813.25"),
        ]
        for (number, text) in numbers { #expect(JSONValue.number(number).jsonText == text) }
        for integer in [0, 9, 10, -1, Int.max, Int.min] {
            var out: [UInt8] = []
            JSONValue.writeInteger(integer, into: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(integer))
        }
        // Plain strings take the bulk path; any byte that needs an escape, the escaping one.
        let strings: [(String, String)] = [
            ("com.example.App", #""com.example.App""#), ("é😀", #""é😀""#), ("a\"b", #""a\"b""#),
            ("back\\slash", #""back\\slash""#), ("bell\u{07}", #""bell\u0007""#), ("", #""""#),
        ]
        for (string, text) in strings { #expect(JSONValue.string(string).jsonText == text) }
        #expect(JSONValue.object([:]).jsonText == "{}")
        #expect(JSONValue.object(["only": 1]).jsonText == #"{"only":1}"#)
        #expect(JSONValue.object(["z": 1, "a": 2, "m": 3]).jsonText == #"{"a":2,"m":3,"z":1}"#)
    }

    @Test func infinityIsWrittenAsNull() {
        #expect(JSONValue.number(.infinity).jsonText == "null")
    }

    @Test func messagesRoundTrip() throws {
        let messages: [DaemonMessage] = [
            .callback(CallbackMessage(id: 7, name: "applicationDidEnterBackground:", state: .background, time: 12.5)),
            .reply(id: 3, result: ["task": 1]),
            .failure(id: 4, code: "invalidTask", message: "no task"),
            .welcome(bundleID: "a.b", container: "/tmp/c", clock: "virtual", time: 0),
        ]
        for message in messages {
            #expect(try DaemonMessage(json: JSONValue(parsing: message.json.jsonText)) == message)
        }
        let appMessages: [AppMessage] = [
            .hello(token: "t", pid: 42, version: 1), .ack(id: 9),
            .request(id: 1, method: "beginBackgroundTask", params: [:]),
        ]
        for message in appMessages {
            #expect(try AppMessage(json: JSONValue(parsing: message.json.jsonText)) == message)
        }
        #expect(throws: ProtocolError.self) { try AppMessage(json: ["type": "bogus"]) }
    }
}

@Suite struct FastPathTests {
    @Test func callbackLineIsWhatTheGeneralEncoderWrites() {
        let message = CallbackMessage(
            id: 42, name: "applicationDidEnterBackground:", state: .background, time: 12.5,
            detail: ["a": [1, "x\"y"], "b": nil])
        #expect(message.encodedLine() == LineFraming.encode(DaemonMessage.callback(message).json))
    }

    @Test func canonicalAcksTakeTheFastPathAndOthersTheFullParse() throws {
        #expect(try AppMessage(line: Array(#"{"id":17,"type":"ack"}"#.utf8)) == .ack(id: 17))
        #expect(try AppMessage(line: Array(#"{"type":"ack","id":18}"#.utf8)) == .ack(id: 18))
        #expect(try AppMessage(line: Array(#" {"id":19,"type":"ack"} "#.utf8)) == .ack(id: 19))
        #expect(throws: (any Error).self) { try AppMessage(line: Array(#"{"id":1x,"type":"ack"}"#.utf8)) }
        #expect(throws: (any Error).self) { try AppMessage(line: Array(#"{"id":,"type":"ack"}"#.utf8)) }
        #expect(AppMessage.ackLine(id: 5) == LineFraming.encode(AppMessage.ack(id: 5).json))
        let ack = AppMessage.ack(id: 123_456)
        #expect(try AppMessage(line: LineFraming.encode(ack.json).dropLast()) == ack)
    }

    @Test func callbackLinesDecodeAsTheGeneralDecoderDoes() throws {
        let messages = [
            CallbackMessage(id: 7, name: "applicationWillResignActive:", state: .active, time: 12.345678),
            CallbackMessage(
                id: 42, name: "x\"y\u{e9}", state: .background, time: 0,
                detail: ["a": [1, "x\"y"], "b": nil, "c": ["d": 2.5]]),
        ]
        for message in messages {
            let line = Array(message.encodedLine().dropLast())
            #expect(try DaemonMessage(line: line) == .callback(message))
            #expect(try DaemonMessage(line: line) == DaemonMessage(json: JSONValue(parsing: line)))
        }
        let reordered = Array(#"{"type":"callback","id":3,"name":"n","state":"inactive","time":1,"detail":{}}"#.utf8)
        #expect(try DaemonMessage(line: reordered) == .callback(CallbackMessage(id: 3, name: "n", state: .inactive, time: 1)))
        let spaced = Array(#"{"detail":{},"id":3,"name":"n","state":"inactive","time":1,"type":"callback"} "#.utf8)
        #expect(try DaemonMessage(line: spaced) == .callback(CallbackMessage(id: 3, name: "n", state: .inactive, time: 1)))
        for bad in [
            #"{"detail":{},"id":3.5,"name":"n","state":"inactive","time":1,"type":"callback"}"#,
            #"{"detail":{},"id":3,"name":"n","state":"asleep","time":1,"type":"callback"}"#,
            #"{"detail":{},"id":3,"name":"n","state":"inactive","time":"1","type":"callback"}"#,
            #"{"detail":{,"id":3,"name":"n","state":"inactive","time":1,"type":"callback"}"#,
        ] {
            #expect(throws: (any Error).self) { try DaemonMessage(line: Array(bad.utf8)) }
        }
        let welcome = DaemonMessage.welcome(bundleID: "b", container: "/c", clock: "real", time: 2)
        #expect(try DaemonMessage(line: Array(welcome.json.jsonText.utf8)) == welcome)
    }
}
