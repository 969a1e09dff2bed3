#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

import OffstageProtocol

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

    /// Runs a system call through ``syscall(_:_:)`` (which retries `EINTR`)
    /// and reports a failure as a location error.
    @discardableResult
    static func check<T: FixedWidthInteger>(_ operation: String, _ call: () -> T) throws -> T {
        do {
            return try syscall(operation, call)
        } catch {
            throw LocationSystemError(operation, errno: error.errno)
        }
    }
}
