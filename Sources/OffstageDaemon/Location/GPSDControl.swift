#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import OffstageCore
import OffstageProtocol

/// Talks to a running gpsd: its control socket (`gpsd -F PATH`), to add
/// and remove devices, and its client port, to wait for a device.
public enum GPSDControl {
    /// Debian's default control socket.
    public static let defaultControlSocket = "/run/gpsd.sock"

    /// How long gpsd may take to answer a client (a watch, a device list)
    /// when it is busy: it answers nobody while it probes a device being
    /// added, about 3 s each, one at a time, so commands started together
    /// wait in turn. (A control request itself waits 30 s: it queues too.)
    public static let busyLimit: Duration = .seconds(15)

    /// Adds a device to a gpsd through its control socket (`+PATH`).
    public static func addDevice(_ path: String, controlSocket: String) throws {
        try command("+\(path)\n", controlSocket: controlSocket)
    }

    /// Removes a device from a gpsd through its control socket (`-PATH`).
    /// - Parameter limit: how long to wait for gpsd's answer (an undo
    ///   made with signals put off wants a short one).
    public static func removeDevice(_ path: String, controlSocket: String, within limit: Duration = answerLimit) throws {
        try command("-\(path)\n", controlSocket: controlSocket, within: limit)
    }

    /// How long a control command waits for gpsd's answer (see ``command``).
    public static let answerLimit: Duration = .seconds(30)

    private static func command(_ text: String, controlSocket: String, within limit: Duration = answerLimit) throws {
        let fd = try LocationSocket.connectUnix(path: controlSocket)
        defer { close(fd) }
        try LocationSocket.send(fd, text)
        // gpsd reads a control connection until end of file, and serves
        // nothing else meanwhile: end it here, on the socket itself, so
        // that a copy of the descriptor held elsewhere (a child spawned
        // by another thread) cannot keep gpsd waiting.
        shutdown(fd, Int32(SHUT_WR))
        var answer = ""
        // gpsd serves control connections one at a time, and an add with
        // -n probes the device for about 3 s before it answers: a command
        // queued behind a few others waits that long for each.
        _ = LocationSocket.readLines(fd, until: .now + limit) { line in
            answer = line
            return true
        }
        guard answer.hasPrefix("OK") else {
            throw LocationSystemError("gpsd control \(text.filter { $0 != "\n" })",
                detail: answer.isEmpty ? "no answer from \(controlSocket)" : answer)
        }
    }

    /// Waits until the gpsd at `port` on loopback lists `device` as
    /// activated (it then reads everything written to the device).
    /// - Returns: whether it did before the timeout.
    public static func waitForDevice(_ device: String, port: Int, timeout: Duration = busyLimit) -> Bool {
        waitForDevice(device, at: GPSDEndpoint(host: "127.0.0.1", port: port), timeout: timeout)
    }

    /// ``waitForDevice(_:port:timeout:)`` on a gpsd at `endpoint`.
    public static func waitForDevice(_ device: String, at endpoint: GPSDEndpoint, timeout: Duration = busyLimit) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            guard let fd = try? LocationSocket.connectTCP(host: endpoint.host, port: endpoint.port, timeout: min(.milliseconds(500), left)) else {
                Thread.sleepBriefly()
                continue
            }
            defer { close(fd) }
            guard (try? LocationSocket.send(fd, "?WATCH={\"enable\":true};\n")) != nil else { continue }
            let seen = LocationSocket.readLines(fd, until: min(deadline, .now + .milliseconds(500))) {
                reportsActivated(device, line: $0)
            }
            if seen { return true }
        }
        return false
    }
}

extension GPSDControl {
    /// Whether a line of gpsd's JSON reports `device` as activated: a
    /// `DEVICE` object for it, or a `DEVICES` list holding it, with an
    /// `activated` member (whatever the order of the members).
    static func reportsActivated(_ device: String, line: String) -> Bool {
        guard let json = try? JSONValue(parsing: line) else { return false }
        func isActive(_ object: JSONValue) -> Bool {
            object["path"]?.stringValue == device && object["activated"] != nil
        }
        switch json["class"]?.stringValue {
        case "DEVICE": return isActive(json)
        case "DEVICES": return json["devices"]?.arrayValue?.contains(where: isActive) ?? false
        default: return false
        }
    }
}

extension Thread {
    /// Yields the processor for a few milliseconds while polling a condition.
    static func sleepBriefly() { Thread.sleep(forTimeInterval: 0.01) }
}

extension GPSDControl {
    /// Whether something accepts connections on 127.0.0.1:port.
    public static func isListening(port: Int) -> Bool {
        LocationSocket.isListening(port: port)
    }

    /// Why nothing accepts a connection on `endpoint` (`Connection
    /// refused`; `no answer within 1 s`), or nil when something does.
    public static func connectionFailure(_ endpoint: GPSDEndpoint, within timeout: Duration = .seconds(1)) -> String? {
        do {
            close(try LocationSocket.connectTCP(host: endpoint.host, port: endpoint.port, timeout: timeout))
            return nil
        } catch {
            switch error.errno {
            case EINPROGRESS?: return "no answer within \(formatSeconds(timeout.seconds)) s"
            case let code?: return String(cString: strerror(code))
            case nil: return error.description
            }
        }
    }
}
