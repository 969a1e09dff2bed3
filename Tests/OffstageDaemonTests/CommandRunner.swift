import Foundation
import Testing

@testable import OffstageDaemon

/// What a run of the built `offstage` binary printed, and its exit status.
struct CommandRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the built `offstage` binary as a user would, to its end.
/// - Parameter environment: added to (or replacing in) this process's environment.
func runOffstage(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Paths.products + "/offstage")
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandRun(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

/// The built `offstage` binary running in the background, its output read
/// line by line as it comes.
final class RunningOffstage {
    let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private var buffered: [FileHandle: [UInt8]] = [:]

    /// - Parameter environment: added to (or replacing in) this process's environment.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Paths.products + "/offstage")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// Reads stdout (or stderr) until a line containing `text` arrives;
    /// false when the stream ends first, or nothing comes for `limit`.
    func awaitLine(containing text: String, onStandardError: Bool = false, within limit: Duration = .seconds(60)) -> Bool {
        while let line = nextLine(onStandardError: onStandardError, within: limit) {
            if line.contains(text) { return true }
        }
        return false
    }

    /// The next line of stdout (or stderr), waiting for it; nil when the
    /// stream ends first, or when no line is complete within `limit` (a
    /// hung command fails its test instead of hanging the run).
    func nextLine(onStandardError: Bool = false, within limit: Duration = .seconds(60)) -> String? {
        let handle = (onStandardError ? err : out).fileHandleForReading
        let deadline = ContinuousClock.now + limit
        while true {
            var bytes = buffered[handle] ?? []
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: bytes[..<newline], as: UTF8.self)
                bytes.removeSubrange(...newline)
                buffered[handle] = bytes
                return line
            }
            guard awaitReadable(handle.fileDescriptor, within: max(.zero, deadline - ContinuousClock.now)) else { return nil }
            let more = handle.availableData
            if more.isEmpty { return nil }
            buffered[handle] = bytes + more
        }
    }

    /// The process's children (gpsd, PulseAudio, apps), from `/proc`.
    var children: [Int32] {
        let pid = process.processIdentifier
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
    }

    /// The child whose command name (`/proc/PID/comm`) is `name`: a server,
    /// not the guard shell started beside it.
    func child(named name: String) -> Int32? {
        children.first { pid in
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    /// Sends `signal` and checks that the command died of it, having first
    /// stopped (and reaped) its `child` and emptied `scratch`, the TMPDIR
    /// it was given.
    func expectDiesOf(_ signal: Int32, stopping child: Int32, emptying scratch: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        kill(process.processIdentifier, signal)
        let (status, _) = finish()
        #expect(process.terminationReason == .uncaughtSignal, sourceLocation: sourceLocation)
        #expect(status == signal, sourceLocation: sourceLocation)
        #expect(kill(child, 0) == -1 && errno == ESRCH, "child \(child) outlived the command", sourceLocation: sourceLocation)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == [], sourceLocation: sourceLocation)
    }

    /// Waits for the end; its status and the rest of its stderr.
    func finish() -> (status: Int32, stderr: String) {
        let rest = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: (buffered[err.fileHandleForReading] ?? []) + rest, as: UTF8.self))
    }
}
