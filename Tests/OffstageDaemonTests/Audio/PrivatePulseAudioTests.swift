import Foundation
import OffstageCore
import Testing
@testable import OffstageDaemon

/// The private server's directory: what it leaves behind and what it refuses.
@Suite(.timeLimit(.minutes(1))) struct PrivatePulseAudioTests {
    @Test func aNamedDirectoryKeepsItsFilesAndTheLogButNotTheServersFiles() throws {
        let directory = try temporaryDirectory()
        let mine = directory + "/mine.txt"
        try "precious".write(toFile: mine, atomically: true, encoding: .utf8)
        // A directory of the user's that has the name of one the server uses.
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: false)
        try "mine too".write(toFile: directory + "/state/notes.txt", atomically: true, encoding: .utf8)
        chmod(directory + "/state", 0o755)
        do {
            let server = try PrivatePulseAudio(directory: URL(fileURLWithPath: directory), exitWhenIdle: .seconds(30))
            #expect(server.isAccepting)
            server.stop()
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(left == ["mine.txt", "pulseaudio.log", "state"])
        #expect(try String(contentsOfFile: mine, encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: directory + "/state/notes.txt", encoding: .utf8) == "mine too")
        // PulseAudio makes its state directory private; the user's gets its mode back.
        var info = stat()
        #expect(stat(directory + "/state", &info) == 0 && info.st_mode & 0o7777 == 0o755, "\(String(info.st_mode & 0o7777, radix: 8))")
    }

    /// A named directory keeps its log across runs: an error an earlier run
    /// logged is not this server's; one it logs itself is.
    @Test func theLastErrorIsOneThisRunLogged() throws {
        let directory = try temporaryDirectory()
        try "E: [pulseaudio] an earlier run's error\n".write(
            toFile: directory + "/pulseaudio.log", atomically: true, encoding: .utf8)
        let server = try PrivatePulseAudio(directory: URL(fileURLWithPath: directory), exitWhenIdle: .seconds(30))
        defer { server.stop() }
        #expect(server.lastLoggedError == nil)
        let pactl = Process()
        pactl.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        pactl.arguments = ["-s", server.serverAddress, "load-module", "module-offstage-no-such-module"]
        let out = Pipe()
        let err = Pipe()
        pactl.standardOutput = out
        pactl.standardError = err
        try pactl.run()
        // Bounded: the suite's time limit records a failure but cannot unblock a wait.
        _ = drain([out.fileHandleForReading, err.fileHandleForReading], of: pactl, within: .seconds(30))
        pactl.waitUntilExit()
        #expect(pactl.terminationReason == .exit && pactl.terminationStatus != 0)
        #expect(server.lastLoggedError?.contains("module-offstage-no-such-module") == true, "\(server.lastLoggedError ?? "none")")
    }

    @Test func aDirectoryInUseIsRefusedAndItsServerKeepsRunning() throws {
        let directory = URL(fileURLWithPath: try temporaryDirectory())
        let first = try PrivatePulseAudio(directory: directory, exitWhenIdle: .seconds(30))
        // The running server's command holds the directory's lock.
        let lock = open(directory.appendingPathComponent(PrivatePulseAudio.lockName).path, O_RDWR | O_CLOEXEC)
        let locked = lock >= 0 ? flock(lock, LOCK_EX | LOCK_NB) : 0
        let error = errno
        #expect(lock >= 0 && locked == -1 && error == EWOULDBLOCK)
        if lock >= 0 { close(lock) }
        #expect(throws: AudioError.self) { try PrivatePulseAudio(directory: directory, exitWhenIdle: .seconds(30)) }
        #expect(first.isAccepting)
        #expect(first.isRunning)
        first.stop()
    }

    /// Two commands started at once on one directory both found no server
    /// answering and both said they ran one. The lock a starting command
    /// holds (taken here by hand) refuses the second at once, and nothing
    /// of the holder's is touched.
    @Test func aDirectoryAnotherCommandIsStartingAServerInIsRefused() throws {
        let directory = try temporaryDirectory()
        let lock = open(directory + "/" + PrivatePulseAudio.lockName, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        try #require(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
        defer { close(lock) }
        let error = #expect(throws: AudioError.self) {
            try PrivatePulseAudio(directory: URL(fileURLWithPath: directory), exitWhenIdle: .seconds(30))
        }
        #expect(error?.message == "another offstage command is starting or running a sound server in \(directory) (it holds offstage.lock)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [PrivatePulseAudio.lockName])
    }

    /// A slip in a long path made every missing directory in it.
    @Test func aNamedDirectoryIsMadeOneLevelDeepOnly() throws {
        let base = try temporaryDirectory()
        let error = #expect(throws: AudioError.self) {
            try PrivatePulseAudio(directory: URL(fileURLWithPath: base + "/typo/pulse"), exitWhenIdle: .seconds(30))
        }
        #expect(error?.message == "cannot prepare \(base)/typo/pulse for PulseAudio: there is no directory \(base)/typo")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base) == [])
        let server = try PrivatePulseAudio(directory: URL(fileURLWithPath: base + "/pulse"), exitWhenIdle: .seconds(30))
        #expect(server.isAccepting)
        server.stop()
    }

    /// A startup script of the user's named `offstage.pa` was overwritten
    /// with the server's: it is refused, and kept. One that offstage wrote
    /// (left by a command killed outright) is written again.
    @Test func aStartupScriptOffstageDidNotWriteIsRefusedAndKept() throws {
        let directory = try temporaryDirectory()
        let script = directory + "/offstage.pa"
        try "load-module module-mine\n".write(toFile: script, atomically: true, encoding: .utf8)
        let error = #expect(throws: AudioError.self) {
            try PrivatePulseAudio(directory: URL(fileURLWithPath: directory), exitWhenIdle: .seconds(30))
        }
        #expect(error?.message == "\(script) exists and is not a startup script offstage wrote; name another directory")
        #expect(try String(contentsOfFile: script, encoding: .utf8) == "load-module module-mine\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["offstage.pa"])
        try PrivatePulseAudio.configuration(socket: directory + "/native", headphones: true)
            .write(toFile: script, atomically: true, encoding: .utf8)
        let server = try PrivatePulseAudio(directory: URL(fileURLWithPath: directory), exitWhenIdle: .seconds(30))
        #expect(server.isAccepting)
        server.stop()
    }

    /// A directory whose socket path is longer than a Unix socket takes
    /// (107 bytes) failed only after 10 s, the server never answering: it
    /// is refused at once, before the directory is made.
    @Test func aDirectoryTooLongForTheSocketIsRefusedAtOnce() throws {
        let base = try temporaryDirectory()
        /// A directory in `base` whose socket path is `length` bytes long.
        func directory(socketPathLength length: Int) -> String {
            base + "/" + String(repeating: "d", count: length - base.utf8.count - "/".count - "/native".count)
        }
        let long = directory(socketPathLength: 108)
        let began = ContinuousClock.now
        let error = #expect(throws: AudioError.self) {
            try PrivatePulseAudio(directory: URL(fileURLWithPath: long), exitWhenIdle: .seconds(30))
        }
        #expect(ContinuousClock.now - began < .seconds(5))
        #expect(
            error?.message
                == "cannot prepare \(long) for PulseAudio: its socket path, \(long)/native, is 108 bytes long; a Unix socket takes at most 107")
        #expect(try FileManager.default.contentsOfDirectory(atPath: base) == [])
        let server = try PrivatePulseAudio(directory: URL(fileURLWithPath: directory(socketPathLength: 107)), exitWhenIdle: .seconds(30))
        #expect(server.isAccepting)
        server.stop()
    }

    @Test func aFileNamedLikeTheSocketIsKept() throws {
        let directory = try temporaryDirectory()
        try "not a socket".write(toFile: directory + "/native", atomically: true, encoding: .utf8)
        #expect(throws: AudioError.self) { try PrivatePulseAudio(directory: URL(fileURLWithPath: directory), exitWhenIdle: .seconds(30)) }
        #expect(try String(contentsOfFile: directory + "/native", encoding: .utf8) == "not a socket")
    }

    /// A regular file named as the directory was refused in Foundation's words.
    @Test func aFileNamedAsTheDirectoryIsRefusedAndKept() throws {
        let file = try temporaryDirectory() + "/afile"
        try "mine".write(toFile: file, atomically: true, encoding: .utf8)
        let error = #expect(throws: AudioError.self) { try PrivatePulseAudio(directory: URL(fileURLWithPath: file), exitWhenIdle: .seconds(30)) }
        #expect(error?.message == "cannot prepare \(file) for PulseAudio: it is not a directory")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "mine")
    }

    @Test func aTemporaryDirectoryIsRemoved() throws {
        var directory: URL?
        do {
            let server = try PrivatePulseAudio(exitWhenIdle: .seconds(30))
            directory = server.directory
            #expect(FileManager.default.fileExists(atPath: server.directory.path))
            // Private: the server lets in any client that reaches its socket.
            var info = stat()
            #expect(stat(server.directory.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        }
        #expect(directory.map { FileManager.default.fileExists(atPath: $0.path) } == false)
    }
}
