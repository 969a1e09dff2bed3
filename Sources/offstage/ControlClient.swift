import ArgumentParser
import Foundation
import OffstageDaemon
import OffstageProtocol

/// Options every command that talks to the daemon takes.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's control socket.", valueName: "path"))
    var socket: String = ProcessInfo.processInfo.environment["OFFSTAGE_SOCKET_PATH"] ?? DefaultPaths.controlSocket

    /// Sends one command and returns its result, or exits with one line on stderr.
    func send(_ request: JSONValue) throws -> JSONValue {
        let client = try connect()
        try client.send(request)
        guard let reply = try client.receive() else { fail("the daemon closed the connection without replying") }
        return try result(of: reply)
    }

    func connect() throws -> LineSocket {
        do {
            return try LineSocket(connectingTo: socket, maxLine: 64 << 20)
        } catch where error.errno == ENOENT || error.errno == ECONNREFUSED {
            fail("no daemon is running on \(socket) (start one with `offstage daemon`)")
        } catch {
            fail("cannot reach the daemon on \(socket): \(error)")
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
        return result
    }
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
