/// The version of the app protocol described in `docs/protocol.md`.
public let offstageProtocolVersion = 1

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
