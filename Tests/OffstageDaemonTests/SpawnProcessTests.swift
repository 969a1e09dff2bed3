import CLinuxProcess
import Foundation
import Testing
@testable import OffstageDaemon

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
        #expect(mkfifo(fifo, 0o600) == 0)
        let host = AppProcessHost(dataDirectory: directory + "/data")
        let exited = DispatchSemaphore(value: 0)
        let pid = try host.spawn(
            executable: "/bin/sh", arguments: ["-c", "sleep 1000 & echo $! > \(fifo); wait"], bundleID: "t",
            environment: [:], onExit: { _ in exited.signal() })
        // Opening the FIFO waits for the script to write the child's pid.
        let reader = open(fifo, O_RDONLY)
        #expect(reader >= 0)
        var bytes = [UInt8](repeating: 0, count: 64)
        var count = 0
        while count < bytes.count, case let n = read(reader, &bytes[count], bytes.count - count), n > 0 { count += n }
        close(reader)
        let text = String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let child = try #require(Int32(text))
        let childExit = offstage_pidfd_open(child)
        #expect(childExit >= 0)
        defer { close(childExit) }
        host.terminate(pid)
        #expect(exited.wait(timeout: .now() + 10) == .success)
        var ended = pollfd(fd: childExit, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ended, 1, 10_000) == 1, "the app's child \(child) outlived it")
        if kill(child, 0) == 0 { kill(child, SIGKILL) }
    }

    /// A helper server that ignores SIGTERM is killed once the grace has
    /// passed, and reaped.
    @Test func stoppingAServerThatIgnoresSIGTERMKillsItAfterTheGrace() throws {
        let directory = try temporaryDirectory()
        let fifo = directory + "/ready"
        #expect(mkfifo(fifo, 0o600) == 0)
        let server = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "trap '' TERM; echo ready > \(fifo); exec sleep 1000"],
            logPath: directory + "/server.log")
        // Opening the FIFO waits until the script ignores SIGTERM.
        let reader = open(fifo, O_RDONLY)
        #expect(reader >= 0)
        var byte: UInt8 = 0
        #expect(read(reader, &byte, 1) == 1)
        close(reader)
        let start = ContinuousClock.now
        server.stop(grace: .milliseconds(300))
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(!server.isRunning)
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
        #expect(!server.isRunning)
        #expect(kill(server.pid, 0) == -1 && errno == ESRCH)
    }
}
