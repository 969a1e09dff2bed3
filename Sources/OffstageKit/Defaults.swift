import Foundation
import OffstageProtocol
import Synchronization

/// `NSUserDefaults` for Offstage apps: a small key-value store persisted in the
/// app's container (`Library/Preferences/defaults.json`), so state saved in
/// `applicationDidEnterBackground:` survives a kill and relaunch.
///
/// Every change is written to the file at once, in a way that leaves the
/// old or the new store in it whenever the process is killed, never half of
/// one (see ``save(_:to:)``). It is not forced to the disk (no `fsync`): a
/// killed process loses nothing that way, and a synced write costs about
/// 250 µs here, which dominated an app's trip to the background. Like
/// `NSUserDefaults`, it makes no promise about the machine losing power.
public final class Defaults: Sendable {
    /// The app's defaults, in its container. The container comes from the
    /// environment the daemon spawned the app with, so this works from the
    /// first line of the app, before `Application.main` has connected.
    public static let standard: Defaults = {
        guard let container = ProcessInfo.processInfo.environment[AppEnvironment.container] else {
            fatalError("Defaults.standard: \(AppEnvironment.container) is not set; run this app under the offstage daemon")
        }
        return Defaults(fileURL: URL(fileURLWithPath: container).appendingPathComponent("Library/Preferences/defaults.json"))
    }()

    let fileURL: URL
    private let values: Mutex<[String: JSONValue]?> = Mutex(nil)

    /// A store backed by `fileURL` (created on first write).
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    public func integer(forKey key: String) -> Int { value(forKey: key)?.intValue ?? 0 }
    public func double(forKey key: String) -> Double { value(forKey: key)?.doubleValue ?? 0 }
    public func bool(forKey key: String) -> Bool { value(forKey: key)?.boolValue ?? false }
    public func string(forKey key: String) -> String? { value(forKey: key)?.stringValue }

    public func set(_ value: Int, forKey key: String) { set(JSONValue(value), forKey: key) }
    public func set(_ value: Double, forKey key: String) { set(JSONValue(value), forKey: key) }
    public func set(_ value: Bool, forKey key: String) { set(JSONValue(value), forKey: key) }
    public func set(_ value: String, forKey key: String) { set(JSONValue(value), forKey: key) }

    public func removeObject(forKey key: String) { set(nil, forKey: key) }

    /// The stored value for `key`, if any.
    public func value(forKey key: String) -> JSONValue? {
        values.withLock { stored in
            loadIfNeeded(&stored)
            return stored?[key]
        }
    }

    /// Stores `value` (`nil` removes the key) and writes the file.
    public func set(_ value: JSONValue?, forKey key: String) {
        values.withLock { stored in
            loadIfNeeded(&stored)
            stored![key] = value
            persist(stored!)
        }
    }

    private func loadIfNeeded(_ stored: inout [String: JSONValue]?) {
        guard stored == nil else { return }
        stored = [:]
        guard let data = try? Data(contentsOf: fileURL) else { return }
        if let object = (try? JSONValue(parsing: Array(data)))?.objectValue {
            stored = object
            return
        }
        // Unreadable (damaged, hand-edited, not UTF-8): kept aside with a
        // word, not overwritten by the next `set` with every key lost.
        let aside = fileURL.path + ".bad"
        try? FileManager.default.removeItem(atPath: aside)
        let moved = (try? FileManager.default.moveItem(atPath: fileURL.path, toPath: aside)) != nil
        FileHandle.standardError.write(
            Data("offstage: warning: \(fileURL.path) is not a JSON object; starting empty\(moved ? ", the file kept as \(aside)" : "")\n".utf8))
    }

    private func persist(_ object: [String: JSONValue]) {
        do {
            try FileManager.default.createDirectory(
                at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            var bytes: [UInt8] = []
            JSONValue.object(object).write(into: &bytes)
            try Self.save(bytes, to: fileURL.path)
        } catch {
            write("offstage: cannot save defaults to \(fileURL.path): \(error)\n", to: .standardError)
        }
    }

    /// The largest file rewritten in place: one page, which a single `pwrite`
    /// puts in the page cache whole even if the process is killed meanwhile.
    static let inPlaceLimit = 4096

    /// Writes `bytes` (one JSON value) to `path` so that a kill at any point
    /// leaves either the old value or the new one.
    ///
    /// A small store (the old and new text both within ``inPlaceLimit``) is
    /// rewritten in place: one `pwrite` of the new text padded with spaces
    /// over the whole old text, then a `ftruncate` that drops the padding.
    /// Killed between the two, the file holds the new value and trailing
    /// whitespace, which is still valid JSON. A larger one is written to a
    /// temporary file and renamed over the old. The in-place path avoids what
    /// ext4 does for a file renamed over another or truncated to zero (it
    /// starts writing the new data out at once): about 8 µs against 130 µs.
    /// (Another process reading the file during the write itself may see a
    /// mix; only the app reads its defaults, between its own writes.)
    static func save(_ bytes: [UInt8], to path: String) throws {
        let fd = try syscall("open \(path)") { open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) }
        defer { close(fd) }
        var status = stat()
        try syscall("fstat \(path)") { fstat(fd, &status) }
        let oldSize = Int(status.st_size)
        guard bytes.count <= inPlaceLimit, oldSize <= inPlaceLimit else {
            try replace(path, with: bytes)
            return
        }
        let image = Self.image(of: bytes, over: oldSize)
        let written = try image.withUnsafeBytes { raw in
            try syscall("write \(path)") { pwrite(fd, raw.baseAddress!, raw.count, 0) }
        }
        guard written == image.count else {
            try replace(path, with: bytes)
            return
        }
        if oldSize > bytes.count {
            try syscall("ftruncate \(path)") { ftruncate(fd, off_t(bytes.count)) }
        }
    }

    /// What ``save(_:to:)`` writes over a file of `oldSize` bytes: `bytes`,
    /// padded with spaces to cover the old text.
    static func image(of bytes: [UInt8], over oldSize: Int) -> [UInt8] {
        guard oldSize > bytes.count else { return bytes }
        return bytes + repeatElement(UInt8(ascii: " "), count: oldSize - bytes.count)
    }

    /// Writes `bytes` to a temporary file beside `path` and renames it over `path`.
    static func replace(_ path: String, with bytes: [UInt8]) throws {
        let temporary = path + ".saving-\(getpid())"
        let fd = try syscall("open \(temporary)") { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        var offset = 0
        do {
            while offset < bytes.count {
                offset += try bytes.withUnsafeBytes { raw in
                    try syscall("write \(temporary)") { write(fd, raw.baseAddress! + offset, raw.count - offset) }
                }
            }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        do {
            try syscall("rename \(temporary)") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
