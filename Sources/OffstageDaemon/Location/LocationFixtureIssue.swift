import OffstageCore

/// What a fixture reader does with bad input.
public enum LocationReadPolicy: String, Sendable, Hashable, CaseIterable {
    /// Skip the bad line or point, count it, keep the first issues (default).
    case skipAndCount = "skip"
    /// Stop at the first bad line or point with a ``LocationFixtureError``.
    case strict
}

/// One problem found in a fixture, with its place.
public struct LocationFixtureIssue: Sendable, Hashable, CustomStringConvertible {
    /// The file's path as given.
    public var file: String
    /// 1-based line number (0 when the problem is the file as a whole).
    public var line: Int
    /// What is wrong, in a few words (see ``init(file:line:message:)``).
    public private(set) var message: String

    /// - Parameter message: what is wrong; the control characters a
    ///   quoted piece of the fixture may hold (a terminal escape, a NUL) are
    ///   written as `\x1B`, so a message cannot drive the terminal.
    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = visibleText(message)
    }

    /// An issue whose message is made of text already made visible (one
    /// that quotes another issue): escaped again, a terminal escape read
    /// `\\x1B` and each backslash four.
    init(file: String, line: Int, visibleMessage: String) {
        self.file = file
        self.line = line
        self.message = visibleMessage
    }

    /// `file:line: message`, the form compilers use (`file: message` for
    /// the file as a whole).
    public var description: String {
        let file = visibleText(file)
        return line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)"
    }
}

/// A fixture could not be read: a file-level failure, or the first bad
/// line under the ``LocationReadPolicy/strict`` policy.
public struct LocationFixtureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable {
        /// The file cannot be opened or read.
        case unreadable
        /// The format cannot be told from the name or the content.
        case unknownFormat
        /// Bad input (strict policy).
        case badInput
        /// Writing the output failed, or would overwrite the input.
        case unwritable
        /// The input holds no fix (a conversion writes nothing).
        case noFixes
    }

    public var code: Code
    public var issue: LocationFixtureIssue
    /// What the read had found before it stopped here (a GPX file that
    /// turns out not well-formed): its bad lines are the warnings they
    /// would have been.
    public var readBefore = LocationReadSummary()

    public init(_ code: Code, _ issue: LocationFixtureIssue, readBefore: LocationReadSummary = .init()) {
        self.code = code
        self.issue = issue
        self.readBefore = readBefore
    }

    public var description: String { issue.description }
}

/// What a read produced.
public struct LocationReadSummary: Sendable, Hashable {
    /// Fixes delivered.
    public var fixes = 0
    /// Bad lines or points skipped.
    public var skipped = 0
    /// Well-formed lines ignored on purpose (other sentence types or
    /// classes, reports without a fix); see ``ignoredText``.
    public var ignored = 0
    /// The format read, which tells what ``ignored`` counts.
    public var format: LocationFixtureFormat?
    /// The first issues (at most ``LocationFixtureReadOptions/maximumIssuesKept``).
    public var issues: [LocationFixtureIssue] = []

    public init() {}

    /// Why a read gave no fix, for "no fixes…": the bad lines and the first
    /// of them, and what was ignored (" (2 bad lines, the first: FILE:3: …;
    /// 1 line ignored: …)"), or nothing.
    public var whyNoFixes: String {
        var reasons: [String] = []
        if skipped > 0 {
            let first = issues.first.map { ", the first: \($0)" } ?? ""
            reasons.append("\(skipped) bad \(skipped == 1 ? "line" : "lines")\(first)")
        }
        if let ignoredText { reasons.append(ignoredText) }
        return reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
    }

    /// What the read left out on purpose, and what that is in its format,
    /// for a summary line ("1 point ignored: untimed waypoints and route
    /// points beside a track"); nil when nothing was. The count alone was
    /// never shown: a waypoint was dropped without a word, and a log of
    /// numeric times (an older gpsd's) had "no fixes" and no reason.
    public var ignoredText: String? {
        guard ignored > 0 else { return nil }
        let (unit, what) =
            switch format {
            case .gpx: ("point", "untimed waypoints and route points beside a track")
            case .nmea: ("sentence", "other than GGA and RMC, or without a fix")
            case .gpsdJSON:
                ("line", "not a TPV with a fix and an ISO 8601 time, a repeated report of an epoch, or another device's fix")
            case nil: ("input", "no fix")
            }
        return "\(ignored) \(unit)\(ignored == 1 ? "" : "s") ignored: \(what)"
    }
}

/// Options of every fixture reader.
public struct LocationFixtureReadOptions: Sendable, Hashable {
    /// Bad-input policy.
    public var policy: LocationReadPolicy = .skipAndCount
    /// Speed (m/s) used to time GPX routes and waypoints, which carry no
    /// times; 20 m/s as `simctl location` uses.
    public var routeSpeed: Double = 20
    /// Time of the first untimed GPX point, seconds since the Unix epoch
    /// (default 2024-01-01T00:00:00Z: gpsd moves dates before 2017 on by
    /// 1024 weeks, taking them for a GPS week rollover, so 2000-01-01
    /// reached watchers as 2019-08-17).
    public var routeStartTime: Double = 1_704_067_200
    /// Midnight (seconds since the Unix epoch) of the date to assume for
    /// NMEA logs with `GGA` and no `RMC` (which carries the date).
    public var assumedNMEADate: Double?
    /// How many issues a summary keeps (all are counted).
    public var maximumIssuesKept = 100

    public init(policy: LocationReadPolicy = .skipAndCount) {
        self.policy = policy
    }
}

/// Shared bookkeeping of the readers: applies the policy, checks that each
/// fix has valid coordinates and that time never goes backwards or stands
/// still.
struct LocationFixChecker {
    let file: String
    let options: LocationFixtureReadOptions
    private(set) var summary = LocationReadSummary()
    private var lastTime: Double?

    init(file: String, format: LocationFixtureFormat, options: LocationFixtureReadOptions) {
        self.file = file
        self.options = options
        summary.format = format
    }

    /// Reports bad input: throws under the strict policy, else counts it.
    mutating func issue(line: Int, _ message: String) throws {
        let issue = LocationFixtureIssue(file: file, line: line, message: message)
        if options.policy == .strict { throw LocationFixtureError(.badInput, issue) }
        summary.skipped += 1
        if summary.issues.count < options.maximumIssuesKept { summary.issues.append(issue) }
    }

    /// Counts bad lines whose issues a summary would not keep anyway.
    mutating func skip(_ count: Int) { summary.skipped += count }

    /// Counts a well-formed input that carries no fix.
    mutating func ignore() { summary.ignored += 1 }

    /// Validates a fix; returns it if it should be delivered.
    mutating func accept(_ fix: LocationFix, line: Int) throws -> LocationFix? {
        guard fix.coordinate.isValid else {
            try issue(line: line, "coordinates out of range (\(LocationFix.plain(fix.latitude)), \(LocationFix.plain(fix.longitude)))")
            return nil
        }
        guard fix.time.isFinite else {
            try issue(line: line, "invalid time")
            return nil
        }
        if let problem = fix.implausibility {
            try issue(line: line, problem)
            return nil
        }
        if let lastTime, fix.time <= lastTime {
            // Equal to the millisecond: times a fraction of one apart read as equal.
            let what = fix.time < lastTime ? "time goes backwards" : "time does not advance (to the millisecond, as times are kept)"
            try issue(line: line, "\(what) (\(LocationTimeFormat.iso8601(fix.time)) after \(LocationTimeFormat.iso8601(lastTime)))")
            return nil
        }
        lastTime = fix.time
        summary.fixes += 1
        return fix
    }
}
