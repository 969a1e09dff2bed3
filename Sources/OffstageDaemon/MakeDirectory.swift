import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Creates a directory and its missing parents (as `mkdir -p`), failing
/// with one readable line ("cannot create the data directory /dev/null/x:
/// /dev/null is not a directory") rather than Foundation's error dump.
/// - Parameters:
///   - what: what the directory is for, as the message names it.
///   - permissions: the mode of the directories created (existing ones are
///     left alone; the umask applies, as with `mkdir`).
func makeDirectory(_ path: String, for what: String, permissions: mode_t = 0o755) throws(DaemonError) {
    guard !path.isEmpty else { throw DaemonError(.storage, "the \(what) has an empty path") }
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, permissions) == 0 { continue }
        let error = errno
        var info = stat()
        if error == EEXIST, stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { continue }
        var link = stat()
        let dangling = error == EEXIST && lstat(prefix, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        let reason =
            dangling ? "\(prefix) is a symbolic link to nothing"
            : error == EEXIST ? "\(prefix) is not a directory" : String(cString: strerror(error))
        throw DaemonError(.storage, "cannot create the \(what) \(path): \(reason)")
    }
}
