#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call or service operation in the location adapters.
public struct LocationSystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, e.g. `posix_openpt` or `start gpsd`.
    public var operation: String
    /// The errno value, if any.
    public var errno: Int32?
    /// Extra detail.
    public var detail: String

    public init(_ operation: String, errno: Int32? = nil, detail: String = "") {
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    public var description: String {
        var s = operation
        if let errno { s += ": \(String(cString: strerror(errno)))" }
        if !detail.isEmpty { s += ": \(detail)" }
        return s
    }

    /// Runs a system call, retrying on `EINTR`, and turns -1 into an error.
    @discardableResult
    static func check<T: FixedWidthInteger>(_ operation: String, _ call: () -> T) throws -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = Glibc.errno
            if code == EINTR { continue }
            throw LocationSystemError(operation, errno: code)
        }
    }
}
