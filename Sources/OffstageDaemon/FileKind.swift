import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What kind of file a path names, from `stat` (or `lstat`): the checks
/// before reading, replacing or taking over a path.
public enum FileKind: Sendable, Equatable {
    case regular, directory, socket, symbolicLink
    /// A pipe or a device.
    case other

    /// The kind of `path`, or nil when nothing is there (or it cannot be
    /// reached). With `followingLinks: false` a symbolic link is itself.
    public init?(atPath path: String, followingLinks: Bool = true) {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFSOCK: self = .socket
        case S_IFLNK: self = .symbolicLink
        default: self = .other
        }
    }
}

/// The size of the file at `path` in bytes, following links; nil when
/// nothing is there.
public func fileSize(atPath path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
}

/// Whether the open file `descriptor` is still the one `path` names: a
/// lock taken on a file its holder removed meanwhile is no lock, since the
/// next opener of the name gets another file.
public func isStill(_ descriptor: Int32, namedBy path: String) -> Bool {
    var opened = stat()
    var named = stat()
    return fstat(descriptor, &opened) == 0 && stat(path, &named) == 0
        && opened.st_ino == named.st_ino && opened.st_dev == named.st_dev
}

/// The last `count` bytes of the file at `path`, none before `offset`,
/// and whether they start a line (they start the file, or the byte before
/// them is a newline); nil when the file cannot be read.
func fileTail(atPath path: String, count: Int, from offset: Int = 0) -> (bytes: Data, startsLine: Bool)? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    guard let size = try? handle.seekToEnd() else { return nil }
    let start = max(UInt64(max(offset, 0)), size > UInt64(count) ? size - UInt64(count) : 0)
    guard start < size else { return (Data(), true) }
    // One byte more, before the start, tells whether a line starts there.
    guard (try? handle.seek(toOffset: start > 0 ? start - 1 : 0)) != nil, var data = try? handle.readToEnd() else { return nil }
    var startsLine = true
    if start > 0, let before = data.first {
        startsLine = before == UInt8(ascii: "\n")
        data = data.dropFirst()
    }
    return (data, startsLine)
}

/// The directory part of a path, as `NSString.deletingLastPathComponent`
/// gives it (`a/b` → `a`, `/a` → `/`, `a` → empty; doubled slashes inside
/// are kept), which traps on a one-character path in
/// swift-corelibs-foundation (`offstage run s`).
public func parentPath(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    var parent = trimmed[..<slash]
    while parent.count > 1, parent.hasSuffix("/") { parent.removeLast() }
    return parent.isEmpty ? "/" : String(parent)
}

/// Whether both paths name one existing regular file (links, `./` and hard
/// links included). A terminal or a pipe is not one file read and written:
/// `- -` on a terminal has stdin and stdout on the same device.
public func isSameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    guard stat(a, &first) == 0, stat(b, &second) == 0, first.st_mode & S_IFMT == S_IFREG else { return false }
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino
}

/// A whole file, or a stream to its end (a pipe or a device has no size
/// to read up to); nil when it cannot be opened.
public func readWhole(_ path: String) -> Data? {
    FileHandle(forReadingAtPath: path).flatMap { try? $0.readToEnd() ?? Data() }
}

/// Writes the regular file at `path` (or a new one) by way of a hidden
/// partial file beside it (``partialPath(for:)``), which `write` fills and
/// which is renamed into place, with the old file's mode, only when
/// `write` returns: a failure leaves the old file as it was.
public func writeByRename<T>(_ path: String, _ write: (_ partial: String) throws -> T) throws -> T {
    var existing = stat()
    let exists = stat(path, &existing) == 0
    let partial = partialPath(for: path)
    do {
        let result = try write(partial)
        if exists { chmod(partial, existing.st_mode & 0o7777) }
        guard rename(partial, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return result
    } catch {
        unlink(partial)
        throw error
    }
}

/// Where ``writeByRename(_:_:)`` writes `path` before the rename: a hidden
/// file beside it, named for this process.
public func partialPath(for path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "./.\(path).\(getpid()).partial" }
    return "\(path[..<slash])/.\(path[path.index(after: slash)...]).\(getpid()).partial"
}
