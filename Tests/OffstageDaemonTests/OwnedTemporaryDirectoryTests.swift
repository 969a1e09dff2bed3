import Foundation
import Testing

@testable import OffstageDaemon

/// The temporary directories a private server or run makes, and the sweep
/// of those whose owner was killed outright.
@Suite struct OwnedTemporaryDirectoryTests {
    @Test func aSweepTakesOnlyDirectoriesWhoseOwnerIsGone() throws {
        let parent = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        var gone: OwnedTemporaryDirectory? = try OwnedTemporaryDirectory(prefix: "x", in: parent)
        let gonePath = try #require(gone?.path)
        let alive = try OwnedTemporaryDirectory(prefix: "x", in: parent)
        var kept: OwnedTemporaryDirectory? = try OwnedTemporaryDirectory(prefix: "x", in: parent)
        let keptPath = try #require(kept?.path)
        kept?.keep()
        // One without a lock (made before locks, or by someone else), and one
        // still being made: its lock file is there, not yet locked.
        let unlocked = parent.appendingPathComponent("x-unlocked").path
        let making = parent.appendingPathComponent("x-making.new").path
        for path in [unlocked, making] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        try #require(FileManager.default.createFile(atPath: making + "/.owner", contents: nil))
        OwnedTemporaryDirectory.sweep(prefix: "x", in: parent)
        // Its owner still holds the lock: nothing is taken yet.
        #expect(FileManager.default.fileExists(atPath: gonePath))
        // The locks are dropped, as when their process dies.
        gone = nil
        kept = nil
        OwnedTemporaryDirectory.sweep(prefix: "x", in: parent)
        #expect(!FileManager.default.fileExists(atPath: gonePath))
        for path in [alive.path, keptPath, unlocked, making] {
            #expect(FileManager.default.fileExists(atPath: path), "\(path) was swept")
        }
    }

    /// A `.new` directory is one being made; one left by a maker killed
    /// while making it (with or without its lock file) is taken once it is
    /// old, unless someone still locks it. They were never taken.
    @Test func anAbandonedNewDirectoryIsTakenOnceOld() throws {
        let parent = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        func make(_ name: String, lockFile: Bool, age: Int) throws -> String {
            let path = parent.appendingPathComponent(name).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            if lockFile { try #require(FileManager.default.createFile(atPath: path + "/.owner", contents: nil)) }
            var times = [timeval(tv_sec: time(nil) - age, tv_usec: 0), timeval(tv_sec: time(nil) - age, tv_usec: 0)]
            try #require(utimes(path, &times) == 0)
            return path
        }
        let old = OwnedTemporaryDirectory.abandonedAfter + 5
        let bare = try make("z-bare.new", lockFile: false, age: old)
        let unlocked = try make("z-unlocked.new", lockFile: true, age: old)
        let locked = try make("z-locked.new", lockFile: true, age: old)
        let fresh = try make("z-fresh.new", lockFile: false, age: 0)
        let holder = open(locked + "/.owner", O_RDONLY | O_CLOEXEC)
        defer { close(holder) }
        try #require(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0)
        OwnedTemporaryDirectory.sweep(prefix: "z", in: parent)
        #expect(!FileManager.default.fileExists(atPath: bare))
        #expect(!FileManager.default.fileExists(atPath: unlocked))
        #expect(FileManager.default.fileExists(atPath: locked), "a locked one was swept")
        #expect(FileManager.default.fileExists(atPath: fresh), "one being made was swept")
    }

    @Test func aNewDirectorySweepsFirstAndIsPrivate() throws {
        let parent = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        var first: OwnedTemporaryDirectory? = try OwnedTemporaryDirectory(prefix: "y", in: parent)
        let firstPath = try #require(first?.path)
        first = nil
        let second = try OwnedTemporaryDirectory(prefix: "y", in: parent)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == [second.url.lastPathComponent])
        #expect(!FileManager.default.fileExists(atPath: firstPath))
        var info = stat()
        #expect(stat(second.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        // The mode asked for, whatever the umask takes away (022, 002 and
        // 077 all take something from 0777).
        let open = try OwnedTemporaryDirectory(prefix: "y", in: parent, permissions: 0o777)
        #expect(stat(open.path, &info) == 0 && info.st_mode & 0o777 == 0o777)
    }

    @Test func aParentThatIsNoDirectoryIsReportedWithThePath() throws {
        let error = #expect(throws: OwnedTemporaryDirectory.Failure.self) {
            try OwnedTemporaryDirectory(prefix: "z", in: URL(fileURLWithPath: "/dev/null"))
        }
        // The directory's own name, not the one it is made under.
        #expect(error?.description.hasPrefix("cannot create /dev/null/z-") == true, "\(String(describing: error))")
        #expect(
            error?.description.hasSuffix(": Not a directory") == true && error?.path.hasSuffix(".new") == false,
            "\(String(describing: error))")
    }
}

/// `parentPath(of:)` gives what `NSString.deletingLastPathComponent` does,
/// without its trap on a one-character path.
@Test(arguments: [
    ("a/b", "a"), ("/a", "/"), ("a", ""), ("s", ""), ("a/b/", "a"), ("/", "/"), ("a//b", "a"), ("/x/y/z", "/x/y"), ("", ""),
])
func parentPaths(path: String, parent: String) {
    #expect(parentPath(of: path) == parent)
}
