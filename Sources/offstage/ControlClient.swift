import ArgumentParser
import Foundation
import OffstageCore
import OffstageDaemon
import OffstageProtocol

/// Options every command that talks to the daemon takes.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's control socket.", valueName: "path"))
    var socket: String = defaultControlSocket

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long to wait for the daemon's reply, such as 30s or 10m; 0 waits for good.", valueName: "duration"))
    var timeout: String = "2m"

    /// `--timeout` as given, with its unit: seconds given as a bare number
    /// (`0.5`) said "within 0.5".
    var timeoutText: String {
        let text = timeout.trimmingCharacters(in: .whitespaces)
        return text.allSatisfy { $0.isNumber || $0 == "." } ? text + "s" : text
    }

    /// `--timeout`, checked by ``validate()``; nil waits for good.
    var replyLimit: Duration? {
        guard let limit = parseDuration(timeout), limit > .zero else { return nil }
        return limit
    }

    func validate() throws {
        try refuseEmptySocketPath(socket)
        try requireUTF8(socket, "--socket")
        guard parseDuration(timeout) != nil else {
            throw ValidationError("--timeout must be a duration such as 30s, 10m or 0 (not \(timeout))")
        }
    }

    /// Sends one command and returns its result, or exits with one line on stderr.
    func send(_ request: JSONValue) throws -> JSONValue {
        let client = try connect()
        try send(request, on: client)
        // As the daemon tells them: these answer at once, never behind an app.
        let command = request["command"]?.stringValue ?? ""
        let readOnly = ["status", "apps", "events"].contains(command) || (command == "clock" && request["action"]?.stringValue != "advance")
        return try result(of: receiveReply(on: client, waitsForApps: !readOnly))
    }

    /// Sends a request on `client`, or one line and exit 1 when the daemon
    /// has gone meanwhile (stopping, it resets connections it has not read).
    func send(_ request: JSONValue, on client: LineSocket) throws {
        do {
            try client.send(request)
        } catch let error as SystemCallError where error.isHangUp {
            fail("the daemon closed the connection before taking the command")
        }
    }

    /// For a look-up a command can do without: the result, or nil when the
    /// daemon cannot be reached, goes away or refuses (where ``send(_:)``
    /// would end the command).
    func lookUp(_ request: JSONValue) -> JSONValue? {
        guard let client = try? open() else { return nil }
        guard (try? client.send(request)) != nil, let reply = try? client.receive(), reply["ok"]?.boolValue == true else { return nil }
        return reply["result"]
    }

    /// A connection whose reply may be up to 64 MiB (a long `events`) and
    /// take up to `--timeout` from now, in all.
    private func open() throws(SystemCallError) -> LineSocket {
        let client = try LineSocket(connectingTo: socket, maxLine: 64 << 20)
        client.deadline = replyLimit.map { .now + $0 }
        return client
    }

    /// Connects; reading the reply may take up to `--timeout` from now, in all.
    func connect() throws -> LineSocket {
        do {
            return try open()
        } catch where error.errno == ENOENT || error.errno == ECONNREFUSED {
            // Starting a daemon there would be refused too: say what the path is.
            if let kind = FileKind(atPath: socket), kind != .socket {
                let what = kind == .directory ? "a directory" : kind == .regular ? "a regular file" : "a pipe or a device"
                fail("\(socket) is \(what), not a daemon's control socket (--socket names one)")
            }
            let start = socket == defaultControlSocket ? "offstage daemon" : "offstage daemon --socket \(socket)"
            // The data directory of the daemon that was there is not known
            // here: started without its --data, one found no apps installed.
            fail("no daemon is running on \(socket) (start one with `\(start)`, and `--data DIR` unless its data is in \(DefaultPaths.dataDirectory))")
        } catch {
            fail("cannot reach the daemon on \(socket): \(error)")
        }
    }

    /// The reply to a command sent on `client`, or one line and exit 1 when
    /// the daemon closes the connection or stays silent past `--timeout`.
    /// - Parameter waitsForApps: the command may wait for a hung app (a
    ///   read-only one, as `status`, does not: the message leaves that out).
    func receiveReply(on client: LineSocket, waitsForApps: Bool = true) throws -> JSONValue {
        do {
            guard let reply = try client.receive() else { fail("the daemon closed the connection without replying") }
            return reply
        } catch let error as SystemCallError where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            let waiting = waitsForApps ? ", or waiting for an app that has not answered (the command is then dropped, unless it had begun)" : ""
            fail("no reply from the daemon on \(socket) within \(timeoutText): it may be stopped or hung\(waiting); --timeout waits longer, 0 for good")
        } catch let error as SystemCallError where error.isHangUp {
            // A daemon stopping resets connections with unread data; it was
            // a raw "Error: read: Connection reset by peer".
            fail("the daemon closed the connection without replying")
        }
    }

    func result(of reply: JSONValue) throws -> JSONValue {
        guard reply["ok"]?.boolValue == true else {
            fail(reply["error"]?.stringValue ?? "the daemon refused the command")
        }
        let result = reply["result"] ?? .null
        for error in result["errors"]?.arrayValue ?? [] {
            if let event = try? Event(json: error) {
                FileHandle.standardError.write(Data("offstage: warning: \(event.humanLine.trimmingCharacters(in: .whitespaces))\n".utf8))
            }
        }
        // Still waiting: queued behind an app that has not answered.
        if let pending = result["pending"]?.stringValue {
            FileHandle.standardError.write(Data("offstage: warning: \(pending)\n".utf8))
        }
        return result
    }
}

/// `--socket ""`: the daemon took it for the current directory.
func refuseEmptySocketPath(_ socket: String) throws {
    if socket.isEmpty { throw ValidationError("--socket needs a path, not an empty one") }
}

/// Prints `offstage: error: message` on stderr and exits with status 1.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("offstage: error: \(message)\n".utf8))
    exit(1)
}

/// Prints a JSON value on one line.
func printJSON(_ value: JSONValue) {
    printLine(value.jsonText)
}

/// Writes a line to stdout at once (no buffering: `events --follow` is read live).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
