/// The kinds of entries in the event log.
public enum EventKind: String, Sendable, Codable, CaseIterable {
    case callback
    case state
    case system
    case error
}

/// An event the core asks the daemon to log; the log stamps `seq` and `time`.
public struct LogEntry: Equatable, Sendable {
    public var kind: EventKind
    public var app: String?
    public var name: String
    public var detail: JSONValue

    public init(kind: EventKind, app: String?, name: String, detail: JSONValue = .emptyObject) {
        self.kind = kind
        self.app = app
        self.name = name
        self.detail = detail
    }
}

/// How a process (an app, a helper server) ended.
public enum ExitStatus: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    /// "exit status 1", "killed by signal 9".
    public var description: String {
        switch self {
        case .exited(let code): return "exit status \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }

    public var json: JSONValue {
        switch self {
        case .exited(let code): return ["status": JSONValue(Int(code))]
        case .signaled(let signal): return ["signal": JSONValue(Int(signal))]
        }
    }
}

/// What the core asks the daemon to do. The daemon performs actions in order.
public enum SystemAction: Equatable, Sendable {
    /// Start the app's process for launch number `launch`; report `appConnected` or `spawnFailed`.
    case spawn(app: String, launch: Int)
    /// Send a callback; the app acknowledges it with `acknowledge(app:callback:at:)`.
    case deliver(app: String, CallbackMessage)
    /// Freeze the process (SIGSTOP or cgroup freezer).
    case freeze(app: String)
    /// Thaw the process (SIGCONT).
    case thaw(app: String)
    /// Kill the process (SIGKILL).
    case kill(app: String, launch: Int)
    /// Append to the event log.
    case log(LogEntry)
}

/// An error in a request to the core: one clear line for the user.
public struct LifecycleError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case unknownApp
        case invalidState
        case deviceLocked
        case noAlert
        case alertShown
        case switcherHidden
        case notRunning
        case invalidTask
        /// A `wake` with one of the system's own callbacks.
        case invalidCallback
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
