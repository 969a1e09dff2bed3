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
