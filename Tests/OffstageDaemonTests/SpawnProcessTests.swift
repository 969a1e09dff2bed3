import CLinuxProcess
import Foundation
import Testing
@testable import OffstageDaemon
import OffstageProtocol

#if canImport(Glibc)
    import Glibc
#endif

struct SpawnProcessTests {
    /// A descriptor the daemon opened without close-on-exec (as a C library
    /// might) does not reach the children it starts.
    @Test func childrenInheritOnlyTheirStandardDescriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(fcntl(ends[1], F_GETFD) & FD_CLOEXEC == 0)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString).txt").path
        defer { unlink(output) }
        let pid = try spawnProcess(
            executable: "/bin/sh",
            arguments: ["-c", "if [ -e /proc/self/fd/\(ends[1]) ]; then echo inherited; else echo closed; fi"],
            environment: nil, outputPath: output, ownProcessGroup: false)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        #expect(status == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "closed\n")
    }

    /// A process an app started is killed with it (the app leads its own
    /// process group), not left running under init.
    @Test func processesAnAppStartedDieWithIt() throws {
        let directory = try temporaryDirectory()
        let fifo = directory + "/child.pid"
        try #require(mkfifo(fifo, 0o600) == 0)
        let host = AppProcessHost(dataDirectory: directory + "/data")
        let exited = DispatchSemaphore(value: 0)
        let pid = try host.spawn(
            executable: "/bin/sh", arguments: ["-c", "sleep 1000 & echo $! > \(fifo); wait"], bundleID: "t",
            environment: [:], onExit: { _ in exited.signal() })
        // The script writes the child's pid into the FIFO.
        let child = try #require(Int32(try readFIFO(fifo).trimmingCharacters(in: .whitespacesAndNewlines)))
        let childExit = offstage_pidfd_open(child)
        #expect(childExit >= 0)
        defer { close(childExit) }
        host.terminate(pid)
        #expect(exited.wait(timeout: .now() + 10) == .success)
        #expect(awaitReadable(childExit, within: .seconds(10)), "the app's child \(child) outlived it")
        if kill(child, 0) == 0 { kill(child, SIGKILL) }
    }

    /// A helper server that ignores SIGTERM is killed once the grace has
    /// passed, and reaped.
    @Test func stoppingAServerThatIgnoresSIGTERMKillsItAfterTheGrace() throws {
        let directory = try temporaryDirectory()
        let fifo = directory + "/ready"
        try #require(mkfifo(fifo, 0o600) == 0)
        let server = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "trap '' TERM; echo ready > \(fifo); exec sleep 1000"],
            logPath: directory + "/server.log")
        // The script writes to the FIFO once it ignores SIGTERM.
        #expect(try readFIFO(fifo) == "ready\n")
        let start = ContinuousClock.now
        server.stop(grace: .milliseconds(300))
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(kill(server.pid, 0) == -1 && errno == ESRCH)
    }

    /// A server that ends on SIGTERM is reaped as soon as it has ended,
    /// not at the end of the grace.
    @Test func stoppingAServerWaitsOnlyUntilItHasEnded() throws {
        let directory = try temporaryDirectory()
        let server = try ChildProcess(
            executable: "/bin/sleep", arguments: ["1000"], logPath: directory + "/server.log")
        let start = ContinuousClock.now
        server.stop(grace: .seconds(60))
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(kill(server.pid, 0) == -1 && errno == ESRCH)
    }
}

/// What a script writes into the FIFO at `path` until it closes it; an
/// error after 10 s without it (a script that failed before writing).
private func readFIFO(_ path: String) throws -> String {
    // Non-blocking, the open does not wait for a writer; poll does.
    let reader = open(path, O_RDONLY | O_NONBLOCK)
    guard reader >= 0 else { throw DaemonError(.storage, "cannot open \(path)") }
    defer { close(reader) }
    let deadline = ContinuousClock.now + .seconds(10)
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64)
    while true {
        guard awaitReadable(reader, within: max(.zero, deadline - ContinuousClock.now)) else {
            throw DaemonError(.invalidState, "nothing written to \(path) within 10 s")
        }
        let count = read(reader, &chunk, chunk.count)
        if count > 0 {
            bytes += chunk[..<count]
        } else if count == 0 {
            // The writer closed it: POLLHUP with nothing left.
            return String(decoding: bytes, as: UTF8.self)
        } else if errno != EAGAIN && errno != EINTR {
            throw DaemonError(.invalidState, "cannot read \(path)")
        }
    }
}
