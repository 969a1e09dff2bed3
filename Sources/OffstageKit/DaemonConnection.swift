import Foundation
import OffstageProtocol

/// The app's connection to the daemon.
///
/// Any thread may send a request and wait for its reply; the main loop waits
/// for callbacks. Whichever thread is waiting reads the socket on behalf of
/// all (leader/follower), so a reply reaches a background thread even while
/// the main thread runs a long handler, and no extra thread hop sits on the
/// callback path.
final class DaemonConnection: @unchecked Sendable {
    // Invariant: every mutable property below is guarded by `condition`,
    // except `socket`'s read side, owned by the thread that set `reading`,
    // and its write side, guarded by `writeLock`.
    private let socket: LineSocket
    private let condition = NSCondition()
    private let writeLock = NSLock()
    private var reading = false
    private var closed = false
    private var callbacks: [CallbackMessage] = []
    private var replies: [Int: DaemonMessage] = [:]
    /// Run by the reading thread when a reply arrives, before it reads on.
    private var replyHooks: [Int: (JSONValue) -> Void] = [:]
    private var nextRequestID = 1

    init(socket: LineSocket) {
        self.socket = socket
    }

    func send(_ message: AppMessage) {
        let bytes: [UInt8]
        if case .ack(let id) = message {
            bytes = AppMessage.ackLine(id: id)
        } else {
            bytes = LineFraming.encode(message.json)
        }
        writeLock.lock()
        defer { writeLock.unlock() }
        do {
            try socket.send(bytes)
        } catch let error as SystemCallError where error.isHangUp {
            // The daemon is gone: an app ends with it, as when it reads the
            // end of the stream (a write used to die of SIGPIPE here).
            exit(0)
        } catch {
            fatalError("offstage: lost the daemon connection: \(error)")
        }
    }

    /// Waits for the next callback; `nil` when the daemon closed the connection.
    func nextCallback() -> CallbackMessage? {
        wait { connection in
            connection.callbacks.isEmpty ? nil : connection.callbacks.removeFirst()
        }
    }

    /// Sends a request and waits for its reply.
    ///
    /// - Parameter onReply: runs on the thread that reads the reply, before
    ///   that thread reads the next message: state a later callback depends
    ///   on (a timer's body) is in place before the callback can be handled.
    func request(
        _ method: RequestMethod, _ params: JSONValue = .emptyObject, onReply: ((JSONValue) -> Void)? = nil
    ) throws -> JSONValue {
        condition.lock()
        let id = nextRequestID
        nextRequestID += 1
        if let onReply { replyHooks[id] = onReply }
        condition.unlock()
        send(.request(id: id, method: method.rawValue, params: params))
        let reply = wait { connection in connection.replies.removeValue(forKey: id) }
        switch reply {
        case .reply(_, let result): return result
        case .failure(_, let code, let message): throw DaemonRequestError(code: code, message: message)
        default: throw DaemonRequestError(code: "disconnected", message: "the daemon closed the connection")
        }
    }

    /// Waits until `take` finds something, reading the socket when no other
    /// thread is; returns `nil` once the connection is closed.
    private func wait<T>(_ take: (DaemonConnection) -> T?) -> T? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = take(self) { return found }
            if closed { return nil }
            if reading {
                condition.wait()
                continue
            }
            reading = true
            condition.unlock()
            let message = readOne()
            condition.lock()
            reading = false
            switch message {
            case .callback(let callback)?: callbacks.append(callback)
            case .reply(let id, let result)?:
                replyHooks.removeValue(forKey: id)?(result)
                replies[id] = message
            case .failure(let id, _, _)?:
                replyHooks[id] = nil
                replies[id] = message
            case .welcome?: break
            case nil: closed = true
            }
            condition.broadcast()
        }
    }

    private func readOne() -> DaemonMessage? {
        do {
            guard let line = try socket.readLine() else { return nil }
            return try DaemonMessage(line: Array(line))
        } catch {
            write("offstage: bad message from the daemon: \(error)\n", to: .standardError)
            return nil
        }
    }

    /// Reads the `welcome` that answers `hello`.
    func readWelcome() throws -> DaemonMessage {
        guard let json = try socket.receive() else {
            throw DaemonRequestError(code: "rejected", message: "the daemon closed the connection after hello")
        }
        let message = try DaemonMessage(json: json)
        if case .failure(_, let code, let text) = message { throw DaemonRequestError(code: code, message: text) }
        return message
    }
}

/// The daemon refused a request.
public struct DaemonRequestError: Error, CustomStringConvertible {
    public var code: String
    public var message: String
    public var description: String { "\(code): \(message)" }
}
