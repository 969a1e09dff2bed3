import CLinuxProcess
import Foundation
import Testing

@testable import OffstageDaemon
import OffstageProtocol

/// What a run of the built `offstage` binary printed, and its exit status.
struct CommandRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// How long a test lets a command run before it kills it: long enough for
/// every command the tests run on a loaded machine, short enough that a hung
/// one fails its test instead of holding the run until CI's limit, and
/// shorter than the suites' own time limits (2 minutes at least), which
/// record a failure but cannot unblock a waiting thread.
let commandLimit: Duration = .seconds(90)

/// Runs the built `offstage` binary as a user would, to its end (or until
/// `limit`, when it is killed and its status says SIGKILL).
/// - Parameters:
///   - environment: added to (or replacing in) this process's environment.
///   - directory: the command's working directory (this process's by default).
///   - input: its standard input, through a pipe (a small text: written at
///     once, then the pipe closed).
///   - executable: what runs (a shell that runs `offstage`: ``runInShell(_:_:in:)``).
func runOffstage(
    _ arguments: [String], environment: [String: String] = [:], in directory: String? = nil, input: [UInt8]? = nil,
    within limit: Duration = commandLimit, executable: String = Paths.products + "/offstage"
) throws -> CommandRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let stdin = input.map { _ in Pipe() }
    if let stdin { process.standardInput = stdin }
    try process.run()
    if let stdin, let input {
        try stdin.fileHandleForWriting.write(contentsOf: input)
        try stdin.fileHandleForWriting.close()
    }
    let output = drain([out.fileHandleForReading, err.fileHandleForReading], of: process, within: limit)
    process.waitUntilExit()
    return CommandRun(
        status: process.terminationStatus, stdout: String(decoding: output[0], as: UTF8.self),
        stderr: String(decoding: output[1], as: UTF8.self))
}

/// Runs `script` with `/bin/sh` in `dir`, `$0` the built `offstage` and
/// `$1`… the `arguments`, to its end: for arguments `Process` cannot pass
/// (it takes Strings only), such as file names that are not UTF-8.
func runInShell(_ script: String, _ arguments: String..., in dir: URL) throws -> CommandRun {
    try runOffstage(["-c", script, Paths.products + "/offstage"] + arguments, in: dir.path, executable: "/bin/sh")
}

/// Reads `handles` to their ends together (a command filling one pipe never
/// stalls while the other is read). Past `limit` it kills `process` with
/// SIGKILL if it still runs (noting that on the last handle's text), and
/// gives the pipes 10 s more (a server the command started may hold them).
func drain(_ handles: [FileHandle], of process: Process, within limit: Duration) -> [[UInt8]] {
    var output = Array(repeating: [UInt8](), count: handles.count)
    var open = Set(handles.indices)
    var deadline = ContinuousClock.now + limit
    var killed = false
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !open.isEmpty {
        var entries = open.sorted().map { pollfd(fd: handles[$0].fileDescriptor, events: Int16(POLLIN), revents: 0) }
        let left = max(.zero, deadline - ContinuousClock.now)
        let ready = poll(&entries, nfds_t(entries.count), Int32((left / .milliseconds(1)).rounded(.up)))
        if ready < 0 {
            if errno == EINTR { continue }
            output[handles.count - 1] += Array("\n[test: poll failed: \(String(cString: strerror(errno)))]\n".utf8)
            break
        }
        if ready == 0 {
            if killed { break }
            killed = true
            // Not yet reaped while it runs, so its pid is still its own.
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                output[handles.count - 1] += Array("\n[test: killed after \(limit)]\n".utf8)
            }
            deadline = ContinuousClock.now + .seconds(10)
            continue
        }
        for (index, entry) in zip(open.sorted(), entries) where entry.revents != 0 {
            let count = read(entry.fd, &buffer, buffer.count)
            if count > 0 { output[index] += buffer[..<count] } else if count == 0 || errno != EINTR { open.remove(index) }
        }
    }
    return output
}

/// The built `offstage` binary running in the background, its output read
/// line by line as it comes.
final class RunningOffstage {
    let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private var buffered: [FileHandle: [UInt8]] = [:]

    /// - Parameter environment: added to (or replacing in) this process's environment.
    /// - Parameter launcher: a program that runs the command (`nohup`).
    init(_ arguments: [String], environment: [String: String] = [:], through launcher: String? = nil) throws {
        let offstage = Paths.products + "/offstage"
        process.executableURL = URL(fileURLWithPath: launcher ?? offstage)
        process.arguments = launcher == nil ? arguments : [offstage] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// A test that stopped early (a failed `#require`) does not leave the
    /// command running: a feed or a server would run on for minutes.
    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Reads stdout (or stderr) until a line containing `text` arrives;
    /// false when the stream ends first, or it has not come within `limit`.
    func awaitLine(containing text: String, onStandardError: Bool = false, within limit: Duration = .seconds(60)) -> Bool {
        line(containing: text, onStandardError: onStandardError, within: limit) != nil
    }

    /// Reads stdout (or stderr) until a line containing `text` arrives, and
    /// returns it; nil as ``awaitLine(containing:onStandardError:within:)`` is false.
    func line(containing text: String, onStandardError: Bool = false, within limit: Duration = .seconds(60)) -> String? {
        let deadline = ContinuousClock.now + limit
        while let line = nextLine(onStandardError: onStandardError, within: max(.zero, deadline - ContinuousClock.now)) {
            if line.contains(text) { return line }
        }
        return nil
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

    /// Kills the command with SIGKILL, which gives it no chance to stop
    /// `child` (a server it started), and checks that the child's guard
    /// stops it: awaited on a pidfd, readable once the child exits, up to 10 s.
    func expectKilledOutrightStopping(_ child: Int32, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let exit = offstage_pidfd_open(child)
        try #require(exit >= 0, sourceLocation: sourceLocation)
        defer { close(exit) }
        kill(process.processIdentifier, SIGKILL)
        _ = finish()
        #expect(process.terminationReason == .uncaughtSignal, sourceLocation: sourceLocation)
        #expect(awaitReadable(exit, within: .seconds(10)), "\(name) \(child) outlived the killed command", sourceLocation: sourceLocation)
    }

    /// After ``expectKilledOutrightStopping(_:named:sourceLocation:)``: the
    /// killed command's one directory (`prefix-…`) is left in `scratch`
    /// (its TMPDIR), the next command's start (`startNext`, which returns
    /// it and its server) sweeps it, and the next one, ended with SIGTERM,
    /// leaves `scratch` empty.
    func expectLeftDirectorySwept(
        prefix: String, in scratch: URL, by startNext: () throws -> (command: RunningOffstage, server: Int32),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        #expect(left.count == 1 && left[0].hasPrefix(prefix + "-"), "\(left)", sourceLocation: sourceLocation)
        let (next, server) = try startNext()
        let now = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        #expect(now.count == 1 && !left.contains(now[0]), "the killed command's \(left) was kept: \(now)", sourceLocation: sourceLocation)
        try next.expectDiesOf(SIGTERM, stopping: server, emptying: scratch, sourceLocation: sourceLocation)
    }

    /// Waits for the end (killing the command past `limit`: its status
    /// then says SIGKILL); its status and the rest of its stderr.
    func finish(within limit: Duration = commandLimit) -> (status: Int32, stderr: String) {
        let rest = drain([out.fileHandleForReading, err.fileHandleForReading], of: process, within: limit)[1]
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: (buffered[err.fileHandleForReading] ?? []) + rest, as: UTF8.self))
    }
}
