/// An error the daemon reports to a user: one line, with a code for scripts.
public struct DaemonError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case badRequest
        case badPlist
        case badExecutable
        case unknownApp
        case appRunning
        case invalidState
        case launchFailed
        case alreadyRunning
        case notRunning
        case storage
        case scenario
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
