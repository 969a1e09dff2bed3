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
}
