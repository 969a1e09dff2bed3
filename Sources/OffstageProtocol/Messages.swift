/// The version of the app protocol described in `docs/protocol.md`.
public let offstageProtocolVersion = 1

/// The release `offstage --version` prints.
public let offstageVersion = "0.1.0"

/// The longest line either side accepts; longer ones are a protocol violation.
public let maximumMessageBytes = 64 * 1024

/// A message that could not be decoded.
public struct ProtocolError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Messages an app sends to the daemon.
public enum AppMessage: Equatable, Sendable {
    /// First message on a connection: who the app claims to be.
    case hello(token: String, pid: Int32, version: Int)
    /// The handler of callback `id` returned.
    case ack(id: Int)
    /// A request; the daemon answers with a reply carrying the same `id`.
    case request(id: Int, method: String, params: JSONValue)
}

/// A callback the daemon delivers to an app; it must be acknowledged.
public struct CallbackMessage: Equatable, Sendable {
    public var id: Int
    public var name: String
    /// The app's `applicationState` while the handler runs.
    public var state: AppState
    /// The daemon's clock, in seconds since its epoch.
    public var time: Double
    public var detail: JSONValue

    public init(id: Int, name: String, state: AppState, time: Double, detail: JSONValue = .emptyObject) {
        self.id = id
        self.name = name
        self.state = state
        self.time = time
        self.detail = detail
    }
}

/// Messages the daemon sends to an app.
public enum DaemonMessage: Equatable, Sendable {
    case welcome(bundleID: String, container: String, clock: String, time: Double)
    case callback(CallbackMessage)
    case reply(id: Int, result: JSONValue)
    case failure(id: Int, code: String, message: String)
}

extension AppMessage {
    public var json: JSONValue {
        switch self {
        case .hello(let token, let pid, let version):
            return ["type": "hello", "token": .string(token), "pid": JSONValue(Int(pid)), "version": JSONValue(version)]
        case .ack(let id):
            return ["type": "ack", "id": JSONValue(id)]
        case .request(let id, let method, let params):
            return ["type": "request", "id": JSONValue(id), "method": .string(method), "params": params]
        }
    }

    /// Decodes one message from its JSON value.
    public init(json: JSONValue) throws {
        guard let type = json["type"]?.stringValue else { throw ProtocolError("message has no \"type\"") }
        switch type {
        case "hello":
            guard let token = json["token"]?.stringValue, let pid = json["pid"]?.intValue,
                let version = json["version"]?.intValue, let pid32 = Int32(exactly: pid)
            else { throw ProtocolError("hello needs token, pid and version") }
            self = .hello(token: token, pid: pid32, version: version)
        case "ack":
            guard let id = json["id"]?.intValue else { throw ProtocolError("ack needs an integer id") }
            self = .ack(id: id)
        case "request":
            guard let id = json["id"]?.intValue, let method = json["method"]?.stringValue else {
                throw ProtocolError("request needs an integer id and a method")
            }
            self = .request(id: id, method: method, params: json["params"] ?? .emptyObject)
        default:
            throw ProtocolError("unknown message type \"\(type)\"")
        }
    }
}

extension DaemonMessage {
    public var json: JSONValue {
        switch self {
        case .welcome(let bundleID, let container, let clock, let time):
            return [
                "type": "welcome", "bundleID": .string(bundleID), "container": .string(container),
                "clock": .string(clock), "time": JSONValue(time), "version": JSONValue(offstageProtocolVersion),
            ]
        case .callback(let c):
            return [
                "type": "callback", "id": JSONValue(c.id), "name": .string(c.name), "state": .string(c.state.rawValue),
                "time": JSONValue(c.time), "detail": c.detail,
            ]
        case .reply(let id, let result):
            return ["type": "reply", "id": JSONValue(id), "result": result]
        case .failure(let id, let code, let message):
            return ["type": "reply", "id": JSONValue(id), "error": ["code": .string(code), "message": .string(message)]]
        }
    }

    public init(json: JSONValue) throws {
        guard let type = json["type"]?.stringValue else { throw ProtocolError("message has no \"type\"") }
        switch type {
        case "welcome":
            guard let bundleID = json["bundleID"]?.stringValue, let container = json["container"]?.stringValue,
                let clock = json["clock"]?.stringValue, let time = json["time"]?.doubleValue
            else { throw ProtocolError("welcome needs bundleID, container, clock and time") }
            self = .welcome(bundleID: bundleID, container: container, clock: clock, time: time)
        case "callback":
            guard let id = json["id"]?.intValue, let name = json["name"]?.stringValue,
                let stateName = json["state"]?.stringValue, let state = AppState(rawValue: stateName),
                let time = json["time"]?.doubleValue
            else { throw ProtocolError("callback needs id, name, state and time") }
            self = .callback(CallbackMessage(id: id, name: name, state: state, time: time, detail: json["detail"] ?? .emptyObject))
        case "reply":
            guard let id = json["id"]?.intValue else { throw ProtocolError("reply needs an integer id") }
            if let error = json["error"] {
                self = .failure(
                    id: id, code: error["code"]?.stringValue ?? "error", message: error["message"]?.stringValue ?? "")
            } else {
                self = .reply(id: id, result: json["result"] ?? .null)
            }
        default:
            throw ProtocolError("unknown message type \"\(type)\"")
        }
    }
}

/// Newline-delimited framing shared by both sides.
public enum LineFraming {
    /// The bytes of `value` as one line, newline included.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(160)
        value.write(into: &out)
        out.append(UInt8(ascii: "\n"))
        return out
    }
}

// MARK: Fast paths
//
// The callback → ack round trip is the protocol's hot path: callbacks are
// encoded without building an intermediate object, and acks in the canonical
// form the SDK writes are decoded without a full parse. Both produce exactly
// what the general encoder and decoder would.

extension CallbackMessage {
    /// The message as one line (newline included), keys sorted as ``JSONValue`` writes them.
    public func encodedLine() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(96 + name.utf8.count)
        out.append(contentsOf: #"{"detail":"#.utf8)
        detail.write(into: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONValue.writeInteger(id, into: &out)
        out.append(contentsOf: #","name":"#.utf8)
        JSONValue.writeString(name, into: &out)
        out.append(contentsOf: #","state":"#.utf8)
        JSONValue.writeString(state.rawValue, into: &out)
        out.append(contentsOf: #","time":"#.utf8)
        JSONValue.writeNumber(time, into: &out)
        out.append(contentsOf: #","type":"callback"}"#.utf8)
        out.append(UInt8(ascii: "\n"))
        return out
    }
}

extension AppMessage {
    /// The canonical ack line, `{"id":N,"type":"ack"}` and a newline.
    public static func ackLine(id: Int) -> [UInt8] {
        var out = ackPrefix
        JSONValue.writeInteger(id, into: &out)
        out.append(contentsOf: ackSuffix)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    private static let ackPrefix = Array(#"{"id":"#.utf8)
    private static let ackSuffix = Array(#","type":"ack"}"#.utf8)

    /// Decodes one line (without its newline).
    /// - Throws: ``JSONParseError`` or ``ProtocolError``.
    public init<Bytes: Collection>(line: Bytes) throws where Bytes.Element == UInt8 {
        if let id = Self.canonicalAck(line) {
            self = .ack(id: id)
            return
        }
        try self.init(json: JSONValue(parsing: line))
    }

    /// Decodes one line held in contiguous memory (the daemon's hot path: a
    /// concrete type, so the ack check needs no generic dispatch).
    public init(bytes: UnsafeRawBufferPointer) throws {
        let line = bytes.bindMemory(to: UInt8.self)
        if let id = Self.canonicalAck(line) {
            self = .ack(id: id)
            return
        }
        try self.init(json: JSONValue(parsing: line))
    }

    /// The id of an ack written exactly as `{"id":N,"type":"ack"}`, else nil.
    static func canonicalAck<Bytes: Collection>(_ line: Bytes) -> Int? where Bytes.Element == UInt8 {
        let count = line.count
        let fixed = ackPrefix.count + ackSuffix.count
        guard count > fixed, count <= fixed + 18, line.starts(with: ackPrefix) else { return nil }
        var id = 0
        var index = line.index(line.startIndex, offsetBy: ackPrefix.count)
        let digitsEnd = line.index(line.startIndex, offsetBy: count - ackSuffix.count)
        while index != digitsEnd {
            let byte = line[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            id = id * 10 + Int(byte - UInt8(ascii: "0"))
            index = line.index(after: index)
        }
        guard line[digitsEnd...].elementsEqual(ackSuffix) else { return nil }
        return id
    }
}

extension DaemonMessage {
    /// Decodes one line (without its newline).
    ///
    /// A callback in the form ``CallbackMessage/encodedLine()`` writes is read
    /// field by field with the general parser's own primitives, without
    /// building the object around them; any other line goes through
    /// ``init(json:)``. Both give the same message.
    /// - Throws: ``JSONParseError`` or ``ProtocolError``.
    public init(line: [UInt8]) throws {
        if let callback = CallbackMessage(canonicalLine: line) {
            self = .callback(callback)
            return
        }
        try self.init(json: JSONValue(parsing: line))
    }
}

extension CallbackMessage {
    /// The callback in `line` when it is written exactly as ``encodedLine()``
    /// writes it (keys sorted, no spaces), else nil.
    init?(canonicalLine line: [UInt8]) {
        var parser = JSONByteParser(bytes: line, maxDepth: 64)
        guard parser.skip(#"{"detail":"#), let detail = try? parser.parseValue(depth: 1),
            parser.skip(#","id":"#), case .number(let idNumber)? = try? parser.parseValue(depth: 1), let id = Int(exactly: idNumber),
            parser.skip(#","name":"#), parser.index < line.count, line[parser.index] == UInt8(ascii: "\""),
            let name = try? parser.parseString(),
            parser.skip(#","state":"#), parser.index < line.count, line[parser.index] == UInt8(ascii: "\""),
            let stateName = try? parser.parseString(), let state = AppState(rawValue: stateName),
            parser.skip(#","time":"#), case .number(let time)? = try? parser.parseValue(depth: 1),
            parser.skip(#","type":"callback"}"#), parser.index == line.count
        else { return nil }
        self.init(id: id, name: name, state: state, time: time, detail: detail)
    }
}

extension JSONByteParser {
    /// Moves past `literal` when the bytes at the index are exactly it.
    mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
        if matches { index += count }
        return matches
    }
}
