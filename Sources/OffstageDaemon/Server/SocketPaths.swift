import Foundation
import OffstageProtocol
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Default locations of the daemon's sockets and data.
public enum DefaultPaths {
    /// `$XDG_RUNTIME_DIR/offstage/control.sock`, or `/tmp/offstage-UID/control.sock`.
    public static var controlSocket: String {
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/offstage/control.sock"
        }
        return "/tmp/offstage-\(getuid())/control.sock"
    }

    /// `$XDG_DATA_HOME/offstage`, or `~/.local/share/offstage`.
    public static var dataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/offstage" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share/offstage"
    }

    /// The app socket that goes with a control socket, beside it:
    /// `…/control.sock` → `…/apps.sock`, and any other `…/NAME.sock` (or
    /// `…/NAME`) → `…/NAME.apps.sock`, so that daemons whose control
    /// sockets share a directory do not share an app socket.
    public static func appSocket(forControlSocket path: String) -> String {
        let directory = parentPath(of: path)
        let name = (path as NSString).lastPathComponent
        guard name != "control.sock" else { return directory + "/apps.sock" }
        let stem = name.hasSuffix(".sock") ? String(name.dropLast(5)) : name
        return directory + "/" + stem + ".apps.sock"
    }
}

enum SocketPreparation {
    /// The longest socket path the daemon binds: SwiftNIO refuses 104 bytes
    /// and more (`unixDomainSocketPathTooLong`), below the kernel's 107.
    static let maximumPathBytes = 103

    /// Whether the daemon can bind a socket at `path`.
    static func fits(_ path: String) -> Bool { path.utf8.count <= maximumPathBytes }

    /// Creates the socket's directory (0700) and removes a stale socket file
    /// (never a file of another kind).
    /// - Throws: ``DaemonError`` when a daemon already listens there or the path is unusable.
    static func prepare(_ path: String) throws {
        guard fits(path) else {
            throw DaemonError(.badRequest, "socket path too long for a Unix socket (max \(maximumPathBytes) bytes): \(path)")
        }
        let directory = parentPath(of: path)
        if FileKind(atPath: directory) != .directory {
            // A directory we create is ours: 0700. An existing one (say /tmp)
            // is left as it is; the socket itself is 0600.
            try makeDirectory(directory, for: "socket directory", permissions: 0o700)
            chmod(directory, 0o700)
        }
        if let kind = FileKind(atPath: path, followingLinks: false) {
            // Only a socket is taken over: anything else there is someone's file.
            guard kind == .socket else {
                throw DaemonError(.badRequest, "\(path) exists and is not a socket; choose another --socket path")
            }
            if (try? LineSocket(connectingTo: path)) != nil {
                throw alreadyRunning(path)
            }
            unlink(path)
        }
    }
}

extension SocketPreparation {
    /// A bind that failed because another daemon bound the path first (two
    /// started at once both found it free) says so, as ``prepare(_:)`` does.
    static func explained(_ error: any Error, binding path: String) -> any Error {
        guard let error = error as? IOError, error.errnoCode == EADDRINUSE else { return error }
        return alreadyRunning(path)
    }

    private static func alreadyRunning(_ path: String) -> DaemonError {
        DaemonError(.alreadyRunning, "a daemon is already running on \(path)")
    }
}
