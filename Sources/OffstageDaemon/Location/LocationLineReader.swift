#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a text file line by line through a small buffer (a big file is
/// never loaded whole). Lines come without their `\n` / `\r\n` (or lone
/// `\r`, see ``lineEnd(of:)``), trailing spaces and tabs, or the first
/// line's UTF-8 byte order mark.
struct LocationLineReader: ~Copyable {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>? = nil
    private var capacity = 0
    /// 1-based number of the last line returned.
    private(set) var lineNumber = 0
    /// The byte that ends a line (see ``lineEnd(of:)``).
    private let delimiter: Int32

    private let path: String

    init(path: String) throws(LocationFixtureError) {
        self.path = path
        guard let f = fopen(path, "r") else { throw LocationFixtureError.cannotOpen(path) }
        file = f
        delimiter = Self.lineEnd(of: f)
    }

    /// `\r` for a file whose lines end in lone CRs (classic Mac OS
    /// software; read by `\n`, the whole file was one line, told as a bad
    /// checksum): its first 4 KiB hold a CR and no LF. Else `\n` (a `\r\r\n`
    /// file too, as Windows text-mode writers leave: taken for CR lines,
    /// each of its lines counted twice). The file is then read from its
    /// start again; a pipe, which cannot go back, is read by `\n`.
    private static func lineEnd(of file: UnsafeMutablePointer<FILE>) -> Int32 {
        let lf: Int32 = 10
        guard fseek(file, 0, SEEK_CUR) == 0 else { return lf }
        var head = [UInt8](repeating: 0, count: 4096)
        let count = fread(&head, 1, head.count, file)
        // A failed read is the lines' to report, when they read again.
        clearerr(file)
        guard fseek(file, 0, SEEK_SET) == 0, head[..<count].contains(13), !head[..<count].contains(10) else { return lf }
        return 13
    }

    deinit {
        free(buffer)
        fclose(file)
    }

    /// The next line, or nil at the end of the file.
    /// - Throws: ``LocationFixtureError`` (`unreadable`) when a read fails:
    ///   it was taken for the end of the file, and the fixes after it were
    ///   lost without a word (a line too long for memory, an I/O error).
    ///   It carries `readBefore`, so the bad lines before it are still told.
    mutating func next(readBefore: @autoclosure () -> LocationReadSummary) throws(LocationFixtureError) -> String? {
        errno = 0
        let n = getdelim(&buffer, &capacity, delimiter, file)
        guard n >= 0, let buffer else {
            // Neither the end nor an error flagged: getdelim could not hold
            // the line (ENOMEM, EOVERFLOW), which flags nothing.
            guard ferror(file) != 0 || feof(file) == 0 else { return nil }
            let reason = String(cString: strerror(errno == 0 ? EIO : errno))
            throw LocationFixtureError(
                .unreadable, LocationFixtureIssue(file: path, line: lineNumber + 1, message: "cannot read the line: \(reason)"),
                readBefore: readBefore())
        }
        lineNumber += 1
        return buffer.withMemoryRebound(to: UInt8.self, capacity: n) { bytes in
            var start = 0
            if lineNumber == 1, n >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
            // A `\r\n` among lone CRs ends one line, not two.
            if delimiter == 13, start < n, bytes[start] == 10 { start += 1 }
            var end = n
            while end > start, bytes[end - 1] == 10 || bytes[end - 1] == 13 || bytes[end - 1] == 32 || bytes[end - 1] == 9 {
                end -= 1
            }
            return String(decoding: UnsafeBufferPointer(start: bytes + start, count: end - start), as: UTF8.self)
        }
    }
}
