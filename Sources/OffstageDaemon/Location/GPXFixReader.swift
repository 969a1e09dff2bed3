import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import OffstageCore

/// Reads fixes from a GPX 1.1 (or 1.0) file through a streaming XML parser.
///
/// Track points (`trk`/`trkseg`/`trkpt`) carry their `time`, and may carry
/// `ele`, and a speed (m/s) and course (degrees) as GPX 1.0's `speed` and
/// `course` or inside `extensions` (see `Delegate.extensionValue`); routes
/// (`rte`/`rtept`) and waypoints (`wpt`) usually do not, so an untimed one
/// is timed by ``LocationFixtureReadOptions/routeSpeed`` from the previous
/// point (the first at ``LocationFixtureReadOptions/routeStartTime``), as
/// `simctl location` does. In a file (not a pipe) with a track, untimed route points and
/// waypoints are left out (counted as ignored): they are places (a
/// device's saved waypoints, a planned route), and no time given them
/// could fall in line with the track's. An untimed track point, a point without `lat`
/// or `lon`, or a bad `time` is bad input; a file that is not well-formed
/// XML stops the read at that line (after the fixes before it), whatever
/// the policy, because nothing after it can be trusted.
public struct GPXFixReader: Sendable {
    /// Which GPX point elements to read.
    public enum PointKind: String, Sendable, Hashable, CaseIterable {
        case track = "trkpt"
        case route = "rtept"
        case waypoint = "wpt"
    }

    /// The file's path.
    public let path: String
    /// Options, including the bad-input policy.
    public let options: LocationFixtureReadOptions
    /// Point kinds read (all by default).
    public var kinds: Set<PointKind> = Set(PointKind.allCases)

    public init(path: String, options: LocationFixtureReadOptions = .init()) {
        self.path = path
        self.options = options
    }

    /// Streams the file's fixes to `body`, in document order.
    public func read(_ body: (LocationFix) throws -> Void) throws -> LocationReadSummary {
        try LocationFixtureError.requireReadable(path)
        guard let stream = InputStream(fileAtPath: path) else { throw LocationFixtureError.cannotOpen(path) }
        // Only a track's presence matters here; a file that is not
        // well-formed is reported by the read itself. A pipe can be read
        // once only: its points are read in document order.
        let hasTrack = kinds.contains(.track) && kinds.count > 1 && FileKind(atPath: path) == .regular
            && Self.hasTrackPoint(path)
        return try withoutActuallyEscaping(body) { body in
            let parser = XMLParser(stream: stream)
            let delegate = Delegate(reader: self, body: body)
            delegate.leavesUntimedPointsOut = hasTrack
            parser.delegate = delegate
            delegate.parser = parser
            let ok = parser.parse()
            if let error = delegate.thrown { throw error }
            if !ok {
                let issue = LocationFixtureIssue(
                    file: path, line: parser.lineNumber,
                    // Foundation's error text here is "(null)" and its code names do not match libxml2's codes.
                    message: "not well-formed XML (at column \(parser.columnNumber))")
                throw LocationFixtureError(.badInput, issue, readBefore: delegate.checker.summary)
            }
            if !delegate.sawGPX {
                throw LocationFixtureError(.badInput, LocationFixtureIssue(file: path, line: 0, message: "no <gpx> element"))
            }
            return delegate.checker.summary
        }
    }

    /// Whether the file has a `<trkpt>` (read up to the first one).
    static func hasTrackPoint(_ path: String) -> Bool {
        guard let stream = InputStream(fileAtPath: path) else { return false }
        let parser = XMLParser(stream: stream)
        let finder = TrackPointFinder()
        parser.delegate = finder
        _ = parser.parse()
        return finder.found
    }

    private final class TrackPointFinder: NSObject, XMLParserDelegate {
        var found = false

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            guard Delegate.local(name) == PointKind.track.rawValue else { return }
            found = true
            parser.abortParsing()
        }
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        let reader: GPXFixReader
        let body: (LocationFix) throws -> Void
        weak var parser: XMLParser?
        var checker: LocationFixChecker
        var thrown: Error?
        var sawGPX = false
        var failed = false

        // The point being read.
        var kind: PointKind?
        var pointLine = 0
        var latitude: Double?
        var longitude: Double?
        var badAttribute: String?
        var fields: [String: String] = [:]
        /// Speed and course from the point's extensions (see ``extensionValue(_:at:)``).
        var extensionValues: [String: Double] = [:]
        var text = ""
        /// The local names of the elements open inside the point.
        var pathInPoint: [Substring] = []
        var previous: LocationFix?
        /// The file has a track: untimed route points and waypoints are left out.
        var leavesUntimedPointsOut = false

        init(reader: GPXFixReader, body: @escaping (LocationFix) throws -> Void) {
            self.reader = reader
            self.body = body
            checker = LocationFixChecker(file: reader.path, format: .gpx, options: reader.options)
        }

        /// A speed (m/s) or course (degrees) inside a point's extensions:
        /// a direct child of `<extensions>` (as gpxdata and OsmAnd write
        /// them) or of a `TrackPointExtension` in it (Garmin's v2, as
        /// ``GPXFixWriter`` writes them). Any namespace: writers differ.
        /// An extra, not the point's data: a value that is not a number, or
        /// out of range (CoreLocation's -1 for unknown), is left out, and
        /// the point stays good. Nil for anything else.
        static func extensionValue(_ text: String, at path: [Substring]) -> (name: String, value: Double)? {
            guard let name = path.last, name == "speed" || name == "course", path.first == "extensions",
                path.count == 2 || (path.count == 3 && path[1].hasSuffix("TrackPointExtension")),
                let value = motion(String(name), text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return nil }
            return (String(name), value)
        }

        /// A `speed` or `course` value (trimmed): a decimal number in its
        /// range, or nil (left out, the point staying good), in extensions
        /// as in GPX 1.0's own elements.
        static func motion(_ name: String, _ text: String) -> Double? {
            guard let value = DecimalText.decimal(text), value.isFinite else { return nil }
            return (name == "speed" ? LocationFix.speedRange : LocationFix.courseRange).contains(value) ? value : nil
        }

        static func local(_ name: String) -> Substring {
            name.split(separator: ":").last ?? Substring(name)
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            guard !failed else { return }
            let local = Self.local(name)
            if local == "gpx" { sawGPX = true }
            if kind != nil {
                pathInPoint.append(local)
                text = ""
                return
            }
            guard let k = PointKind(rawValue: String(local)), reader.kinds.contains(k) else { return }
            kind = k
            pointLine = parser.lineNumber
            pathInPoint = []
            fields = [:]
            extensionValues = [:]
            badAttribute = nil
            latitude = nil
            longitude = nil
            // XML Schema's decimals may have spaces around them.
            func decimal(_ s: String) -> Double? { DecimalText.decimal(s.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if let s = attributes["lat"] { latitude = decimal(s); if latitude == nil { badAttribute = "lat=\"\(s)\"" } }
            if let s = attributes["lon"] { longitude = decimal(s); if longitude == nil { badAttribute = "lon=\"\(s)\"" } }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if kind != nil { text += string }
        }

        /// `<time><![CDATA[2024-05-01T08:00:00Z]]></time>` is the same text
        /// (some exporters wrap every value); it was a bad time.
        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            if kind != nil { text += String(decoding: CDATABlock, as: UTF8.self) }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            // libxml2 recovers and closes open elements after an error: a
            // point cut short must not be delivered.
            failed = true
            kind = nil
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard !failed, let kind else { return }
            if !pathInPoint.isEmpty {
                if pathInPoint.count == 1 {
                    fields[String(Self.local(name))] = text.trimmingCharacters(in: .whitespacesAndNewlines)
                } else if let (name, value) = Self.extensionValue(text, at: pathInPoint), extensionValues[name] == nil {
                    extensionValues[name] = value
                }
                pathInPoint.removeLast()
                return
            }
            guard Self.local(name) == kind.rawValue else { return }
            self.kind = nil
            do {
                try finishPoint(kind)
            } catch {
                thrown = error
                parser.abortParsing()
            }
        }

        func finishPoint(_ kind: PointKind) throws {
            if let badAttribute {
                return try checker.issue(line: pointLine, "<\(kind.rawValue)> with a bad attribute \(badAttribute)")
            }
            guard let latitude, let longitude else {
                return try checker.issue(line: pointLine, "<\(kind.rawValue)> without lat/lon")
            }
            var time: Double
            if let t = fields["time"] {
                guard let parsed = LocationTimeFormat.parseISO8601(t) else {
                    return try checker.issue(line: pointLine, LocationTimeFormat.badTime(t, label: "<time>"))
                }
                time = parsed
            } else if kind == .track {
                return try checker.issue(line: pointLine, "<trkpt> without <time>")
            } else if leavesUntimedPointsOut {
                return checker.ignore()
            } else if let previous {
                let d = LocationGeodesy.distance(
                    previous.coordinate, LocationCoordinate(latitude: latitude, longitude: longitude))
                time = previous.time + max(d / reader.options.routeSpeed, 0.001)
            } else {
                time = reader.options.routeStartTime
            }
            time = LocationTimeFormat.toMillisecond(time)
            var altitude: Double?
            if let text = fields["ele"], !text.isEmpty {
                guard let value = DecimalText.decimal(text) else {
                    return try checker.issue(line: pointLine, "<ele> \"\(text)\" is not a number")
                }
                altitude = value
            }
            // GPX 1.0's own <speed> or <course>, as those in extensions: one
            // that is not a number or out of range is left out, and the
            // point stays good (a bad one dropped the point).
            let fix = LocationFix(
                latitude: latitude, longitude: longitude, time: time,
                altitude: altitude,
                // A point's own <speed> and <course> (GPX 1.0) win over its extensions'.
                speed: fields["speed"].flatMap { Self.motion("speed", $0) } ?? extensionValues["speed"],
                course: fields["course"].flatMap { Self.motion("course", $0) } ?? extensionValues["course"])
            if let accepted = try checker.accept(fix, line: pointLine) {
                previous = accepted
                try body(accepted)
            }
        }
    }
}
