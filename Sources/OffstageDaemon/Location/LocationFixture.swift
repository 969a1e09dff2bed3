#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import OffstageCore

/// The fixture formats Offstage reads and writes.
public enum LocationFixtureFormat: String, Sendable, Hashable, CaseIterable {
    /// GPX 1.1 (`.gpx`).
    case gpx
    /// NMEA 0183 (`.nmea`, `.nmea0183`, `.log`).
    case nmea
    /// gpsd JSON lines (`.json`, `.jsonl`, `.gpsd`).
    case gpsdJSON = "json"

    /// The format a file name's extension names, if any.
    public init?(pathExtension path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "gpx": self = .gpx
        case "nmea", "nmea0183", "log": self = .nmea
        case "json", "jsonl", "gpsd", "ndjson": self = .gpsdJSON
        default: return nil
        }
    }

    /// The format of an existing file: by extension, else by its first
    /// non-blank byte (`<` GPX, `$`/`!` NMEA, `{` JSON).
    public static func detect(path: String) throws -> LocationFixtureFormat {
        if let format = LocationFixtureFormat(pathExtension: path) { return format }
        guard let file = fopen(path, "r") else { throw LocationFixtureError.cannotOpen(path) }
        defer { fclose(file) }
        var c = fgetc(file)
        var count = 0
        while c != EOF, count < 4096, c == 32 || c == 9 || c == 10 || c == 13 || c == 0xEF || c == 0xBB || c == 0xBF {
            c = fgetc(file)
            count += 1
        }
        switch c {
        case 60: return .gpx
        case 36, 33: return .nmea
        case 123: return .gpsdJSON
        default:
            throw LocationFixtureError(.unknownFormat, LocationFixtureIssue(
                file: path, line: 0, message: "unknown fixture format (expected GPX, NMEA or gpsd JSON)"))
        }
    }
}

extension LocationFixtureError {
    /// `FILE: cannot open: REASON`, the reason the system's for the call
    /// that just failed (`Permission denied`, `Not a directory`).
    static func cannotOpen(_ path: String) -> LocationFixtureError {
        LocationFixtureError(.unreadable, LocationFixtureIssue(file: path, line: 0, message: "cannot open: \(String(cString: strerror(errno)))"))
    }

    /// Throws ``cannotOpen(_:)`` unless `path` can be opened for reading
    /// (it said "no such readable file", whatever the reason).
    static func requireReadable(_ path: String) throws(LocationFixtureError) {
        guard access(path, R_OK) == 0 else { throw cannotOpen(path) }
    }
}

/// Reads any fixture file, streaming.
///
/// ```swift
/// let summary = try LocationFixtureReader(path: "drive.gpx").read { fix in
///     engine.process(fix)
/// }
/// ```
public struct LocationFixtureReader: Sendable {
    /// The file's path.
    public let path: String
    /// Its format (detected when not given).
    public let format: LocationFixtureFormat
    /// Options, including the bad-input policy.
    public let options: LocationFixtureReadOptions

    /// - Throws: ``LocationFixtureError`` if the format cannot be detected.
    public init(path: String, format: LocationFixtureFormat? = nil, options: LocationFixtureReadOptions = .init()) throws {
        self.path = path
        let kind = FileKind(atPath: path)
        if kind == .directory {
            throw LocationFixtureError(.unreadable, LocationFixtureIssue(file: path, line: 0, message: "is a directory"))
        }
        // Guessing the format reads the start of the file, which a pipe
        // cannot give back: those lines would be lost.
        if kind == .other, format == nil, LocationFixtureFormat(pathExtension: path) == nil {
            throw LocationFixtureError(.unknownFormat, LocationFixtureIssue(
                file: path, line: 0, message: "not a regular file (a pipe or a device): its format must be given (--format gpx, nmea or json)"))
        }
        self.format = try format ?? LocationFixtureFormat.detect(path: path)
        self.options = options
    }

    /// Streams the fixes to `body`, in order; see each format's reader for
    /// what counts as bad input.
    public func read(_ body: (LocationFix) throws -> Void) throws -> LocationReadSummary {
        switch format {
        case .gpx: return try GPXFixReader(path: path, options: options).read(body)
        case .nmea: return try NMEAFixReader(path: path, options: options).read(body)
        case .gpsdJSON: return try GPSDJSONFixReader(path: path, options: options).read(body)
        }
    }

    /// Counts the fixes without keeping them (a first pass for progress).
    public func count() throws -> Int {
        try read { _ in }.fixes
    }
}

/// Writes fixes to a file in any fixture format, streaming.
public final class LocationFixtureFileWriter {
    /// The output format.
    public let format: LocationFixtureFormat
    /// The path errors name.
    private let path: String
    private var file: UnsafeMutablePointer<FILE>?

    /// Creates (or truncates) the file and writes the format's header.
    /// - Parameter writingTo: where the bytes go, if not `path` (a
    ///   temporary file renamed to `path` at the end); errors name `path`.
    public init(path: String, format: LocationFixtureFormat? = nil, name: String = "offstage", writingTo: String? = nil) throws {
        guard let format = format ?? LocationFixtureFormat(pathExtension: path) else {
            throw LocationFixtureError(.unknownFormat, LocationFixtureIssue(
                file: path, line: 0, message: "cannot tell the output format from the name (use .gpx, .nmea or .json)"))
        }
        self.format = format
        self.path = path
        // Standard output is written where it points, not reopened: opened
        // anew, a file it appends to (`>> log`) was truncated, and a socket
        // cannot be opened at all.
        let target = writingTo ?? path
        guard let f = target == "/dev/stdout" ? fdopen(dup(STDOUT_FILENO), "w") : fopen(target, "w") else {
            throw LocationFixtureError(.unwritable, LocationFixtureIssue(
                file: path, line: 0, message: "cannot create: \(String(cString: strerror(errno)))"))
        }
        file = f
        if format == .gpx { try put(GPXFixWriter.header(name: name)) }
    }

    deinit {
        if let file { fclose(file) }
    }

    /// Appends one fix.
    public func write(_ fix: LocationFix) throws {
        switch format {
        case .gpx: try put(GPXFixWriter.point(fix))
        case .nmea:
            if let problem = NMEAFixWriter.problem(writing: fix) {
                throw LocationFixtureError(.unwritable, LocationFixtureIssue(
                    file: path, line: 0,
                    message: "cannot write the fix at \(LocationTimeFormat.iso8601(fix.time)): \(problem) (GPX and gpsd JSON hold any year)"))
            }
            try put(NMEAFixWriter.sentences(for: fix))
        case .gpsdJSON: try put(GPSDJSONFixWriter.line(for: fix))
        }
    }

    /// Writes the footer and closes the file.
    public func finish() throws {
        if format == .gpx { try put(GPXFixWriter.footer) }
        guard let f = file else { return }
        file = nil
        if fclose(f) != 0 {
            throw LocationFixtureError(.unwritable, LocationFixtureIssue(file: path, line: 0, message: "write failed"))
        }
    }

    private func put(_ s: String) throws {
        guard let file, fputs(s, file) >= 0 else {
            throw LocationFixtureError(.unwritable, LocationFixtureIssue(
                file: path, line: 0, message: "write failed: \(String(cString: strerror(errno)))"))
        }
    }
}

/// `offstage gps convert`: any fixture format to any other.
public enum LocationFixtureConverter {
    /// Converts `input` to `output` (formats from the names unless given).
    public static func convert(
        input: String, output: String, inputFormat: LocationFixtureFormat? = nil,
        outputFormat: LocationFixtureFormat? = nil, options: LocationFixtureReadOptions = .init()
    ) throws -> LocationReadSummary {
        let reader = try LocationFixtureReader(path: input, format: inputFormat, options: options)
        let name = input.split(separator: "/").last.map(String.init) ?? input
        // Before the output is made: a link or a pipe would be written to.
        try LocationFixtureError.requireReadable(input)
        if isSameFile(input, output) {
            throw LocationFixtureError(.unwritable, LocationFixtureIssue(
                file: output, line: 0, message: "this is the input file too; write the conversion to another file"))
        }
        // A new file, or an existing regular one, is written beside itself
        // and renamed into place only when complete (with the old file's
        // permissions), so a failed conversion leaves it as it was. Anything
        // else (a symbolic link, /dev/stdout, a pipe) is written to directly,
        // and holds what was written before a failure.
        let replaceable = (FileKind(atPath: output, followingLinks: false) ?? .regular) == .regular
        func convert(into partial: String?) throws -> LocationReadSummary {
            let writer = try LocationFixtureFileWriter(path: output, format: outputFormat, name: name, writingTo: partial)
            do {
                let summary = try reader.read { try writer.write($0) }
                try writer.finish()
                guard summary.fixes > 0 else {
                    let outcome = partial == nil ? "\(output) got no fix" : "\(output) not written"
                    // whyNoFixes quotes an issue, visible already.
                    throw LocationFixtureError(.noFixes, LocationFixtureIssue(
                        file: input, line: 0, visibleMessage: "no fixes\(summary.whyNoFixes); \(visibleText(outcome))"))
                }
                return summary
            } catch {
                try? writer.finish()
                throw error
            }
        }
        guard replaceable else { return try convert(into: nil) }
        do {
            return try writeByRename(output) { try convert(into: $0) }
        } catch let error as POSIXError {
            throw LocationFixtureError(.unwritable, LocationFixtureIssue(
                file: output, line: 0, message: "cannot write: \(String(cString: strerror(error.code.rawValue)))"))
        }
    }
}
