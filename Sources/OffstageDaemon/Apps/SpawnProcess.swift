import CLinuxProcess
import OffstageProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a child with `posix_spawn`: stdin from `/dev/null` (or
/// `standardInput`), stdout and
/// stderr appended to `outputPath`, no other descriptor (a daemon's socket
/// or a library's, opened without close-on-exec, would otherwise live on in
/// every app, gpsd and sound server it starts), a clean signal mask and
/// default signal dispositions (a child of a Swift program otherwise inherits blocked
/// signals, and ignores SIGTERM if the parent ignores it).
///
/// - Parameters:
///   - environment: `nil` inherits the daemon's environment.
///   - ownProcessGroup: put the child in a new process group, so a ^C at the
///     daemon's terminal reaches the daemon only.
///   - standardInput: a descriptor to give the child as its stdin.
/// - Returns: the child's pid; the caller reaps it.
/// - Throws: ``SpawnError``: the output could not be opened, or `posix_spawn` failed.
func spawnProcess(
    executable: String, arguments: [String], environment: [String: String]?, outputPath: String,
    ownProcessGroup: Bool, standardInput: Int32? = nil
) throws(SpawnError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // Opened here, not by the child: a log the child could not open failed
    // posix_spawn with that errno, blamed on the executable.
    let opened = open(outputPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard opened >= 0 else { throw .output(path: outputPath, errno: errno) }
    // Both the output and the stdin given are copied above 2 first: in a
    // daemon started with its stdio closed either may be 0, 1 or 2, and one
    // dup2 onto those would overwrite the other.
    let output = aboveStandardDescriptors(opened)
    if output != opened { close(opened) }
    defer { close(output) }
    let input = standardInput.map(aboveStandardDescriptors)
    defer { if let input, input != standardInput { close(input) } }
    posix_spawn_file_actions_adddup2(&actions, output, 1)
    posix_spawn_file_actions_adddup2(&actions, output, 2)
    if let input {
        posix_spawn_file_actions_adddup2(&actions, input, 0)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    _ = offstage_spawn_close_from(&actions, 3)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var all = sigset_t()
    sigfillset(&all)
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
    if ownProcessGroup {
        posix_spawnattr_setpgroup(&attributes, 0)
        flags |= POSIX_SPAWN_SETPGROUP
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))

    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp ?? [] { free(pointer) }
    }
    var pid: pid_t = 0
    let result: Int32
    if let envp {
        result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    } else {
        result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    }
    guard result == 0 else { throw .spawn(executable: executable, errno: result) }
    return pid
}

/// `descriptor` if it is above 2, else a close-on-exec copy above 2 (or
/// the descriptor itself if no copy can be made); the caller closes a copy.
private func aboveStandardDescriptors(_ descriptor: Int32) -> Int32 {
    guard descriptor <= 2 else { return descriptor }
    let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
    return copy >= 0 ? copy : descriptor
}

/// Why ``spawnProcess(executable:arguments:environment:outputPath:ownProcessGroup:standardInput:)``
/// started nothing: a log that cannot be opened is told apart from the
/// program (it was reported as the executable's failure).
enum SpawnError: Error, CustomStringConvertible {
    case output(path: String, errno: Int32)
    case spawn(executable: String, errno: Int32)

    var errno: Int32 {
        switch self {
        case .output(_, let errno), .spawn(_, let errno): errno
        }
    }

    var description: String {
        switch self {
        case .output(let path, let errno): "open \(path): \(String(cString: strerror(errno)))"
        case .spawn(let executable, let errno): "posix_spawn \(executable): \(String(cString: strerror(errno)))"
        }
    }
}
