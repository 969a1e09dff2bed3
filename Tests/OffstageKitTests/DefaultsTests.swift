import Foundation
import OffstageProtocol
import Testing

@testable import OffstageKit

@Suite("Defaults store")
final class DefaultsTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "offstage-defaults-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    var fileURL: URL { URL(fileURLWithPath: directory + "/Library/Preferences/defaults.json") }

    /// A file that does not parse (here a byte that is not UTF-8, which the
    /// parser now refuses) was taken for an empty store, and the next `set`
    /// wrote over it, every key lost.
    @Test func anUnreadableFileIsKeptAsideNotOverwritten() throws {
        try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        let damaged = Array(#"{"city":"Montr"#.utf8) + [0xE9] + Array(#"al","index":3}"#.utf8)
        try Data(damaged).write(to: fileURL)
        let defaults = Defaults(fileURL: fileURL)
        #expect(defaults.integer(forKey: "index") == 0)
        defaults.set(4, forKey: "index")
        #expect(try Data(contentsOf: URL(fileURLWithPath: fileURL.path + ".bad")) == Data(damaged))
        #expect(try JSONValue(parsing: Array(try Data(contentsOf: fileURL))) == ["index": 4])
    }

    @Test func aValueSetIsReadBackByANewStore() throws {
        let defaults = Defaults(fileURL: fileURL)
        defaults.set(7, forKey: "index")
        defaults.set("north", forKey: "heading")
        defaults.set(8, forKey: "index")
        defaults.removeObject(forKey: "heading")

        let reopened = Defaults(fileURL: fileURL)
        #expect(reopened.integer(forKey: "index") == 8)
        #expect(reopened.string(forKey: "heading") == nil)
        let saved = try JSONValue(parsing: Array(try Data(contentsOf: fileURL)))
        #expect(saved == ["index": 8])
        // The file is replaced by a rename: no temporary file is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: fileURL.deletingLastPathComponent().path)
        #expect(left == ["defaults.json"])
        try FileManager.default.removeItem(atPath: directory)
    }

    @Test func aShorterStoreLeavesNoPaddingAndALargeOneIsReplacedWhole() throws {
        let defaults = Defaults(fileURL: fileURL)
        defaults.set(String(repeating: "x", count: 300), forKey: "long")
        defaults.removeObject(forKey: "long")
        defaults.set(1, forKey: "index")
        #expect(try String(contentsOf: fileURL, encoding: .utf8) == #"{"index":1}"#)

        let large = String(repeating: "y", count: Defaults.inPlaceLimit * 2)
        defaults.set(large, forKey: "large")
        defaults.set(2, forKey: "index")
        let reopened = Defaults(fileURL: fileURL)
        #expect(reopened.string(forKey: "large") == large)
        #expect(reopened.integer(forKey: "index") == 2)
        defaults.removeObject(forKey: "large")
        #expect(try String(contentsOf: fileURL, encoding: .utf8) == #"{"index":2}"#)
        let left = try FileManager.default.contentsOfDirectory(atPath: fileURL.deletingLastPathComponent().path)
        #expect(left == ["defaults.json"])
        try FileManager.default.removeItem(atPath: directory)
    }

    @Test func aKillBetweenTheWriteAndTheTruncateLeavesTheNewStore() throws {
        // What the file holds if the process dies after the padded write:
        // the new text, then spaces over the rest of the old one.
        let defaults = Defaults(fileURL: fileURL)
        defaults.set("a longer value than the next one", forKey: "name")
        let old = try Data(contentsOf: fileURL)
        let new = Array(#"{"name":"short"}"#.utf8)
        let torn = Defaults.image(of: new, over: old.count)
        #expect(torn.count == old.count)
        try Data(torn).write(to: fileURL)
        #expect(Defaults(fileURL: fileURL).string(forKey: "name") == "short")
        try FileManager.default.removeItem(atPath: directory)
    }

    @Test func aStoreThatCannotBeWrittenKeepsItsValuesInMemory() throws {
        // A regular file where the Preferences directory should be.
        try Data().write(to: URL(fileURLWithPath: directory + "/Library"))
        let defaults = Defaults(fileURL: fileURL)
        defaults.set(3, forKey: "index")
        #expect(defaults.integer(forKey: "index") == 3)
        #expect(!FileManager.default.fileExists(atPath: fileURL.path))
        try FileManager.default.removeItem(atPath: directory)
    }
}
