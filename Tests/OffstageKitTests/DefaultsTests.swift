import Foundation
import OffstageProtocol
import Testing

@testable import OffstageKit

@Suite("Defaults store")
struct DefaultsTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "offstage-defaults-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var fileURL: URL { URL(fileURLWithPath: directory + "/Library/Preferences/defaults.json") }

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
