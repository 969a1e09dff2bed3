import Foundation
import OffstageCore
import OffstageProtocol

/// Reads fixes from a gpsd JSON log, one object per line as `gpspipe -w`
/// writes it. `TPV` reports with `mode` 2 or 3 become fixes; other classes
/// (`VERSION`, `DEVICES`, `WATCH`, `SKY`, ...), `TPV`s without a fix
/// (`mode` 0 or 1) and those without a `time` (gpsd reports a position
/// before it knows the date) are ignored. gpsd may report an epoch twice as
/// it learns more of it (without altitude, then with it): the later report
/// stands, with what it lacks taken from the earlier one. A line that is
/// not JSON (a truncated line, say), or a `TPV` with a fix but no `lat` or
/// `lon`, is bad input. A fixture is one device's track: that of the first
/// accepted fix that names its device. Another named device's fixes are skipped,
/// told once per device (bad input at its first fix): read as one track,
/// two receivers' fixes of the same second were refused as not advancing,
/// one by one. A report that names no device is the track's.
public struct GPSDJSONFixReader: Sendable {
    /// The file's path.
    public let path: String
    /// Options, including the bad-input policy.
    public let options: LocationFixtureReadOptions

    public init(path: String, options: LocationFixtureReadOptions = .init()) {
        self.path = path
        self.options = options
    }

    /// Why Foundation refused `line`, told by the protocol's own parser,
    /// which says where it stopped and reads a number too large for a
    /// double (`1e999`, which Foundation refuses with the whole line) as an
    /// infinity: a line that stops at its end was cut; one that parses
    /// holds such a number; anything else is not JSON (`048.1`, `+48`,
    /// `NaN`: complete lines, which were "truncated?" too).
    static func whyNotJSON(_ line: String) -> String {
        let bytes = Array(line.utf8)
        do {
            func isFinite(_ value: JSONValue) -> Bool {
                switch value {
                case .number(let n): n.isFinite
                case .array(let items): items.allSatisfy(isFinite)
                case .object(let members): members.values.allSatisfy(isFinite)
                default: true
                }
            }
            return isFinite(try JSONValue(parsing: bytes)) ? "not valid JSON" : "a number out of range (larger than a double)"
        } catch let error as JSONParseError where error.offset >= bytes.count && bytes.first == UInt8(ascii: "{") {
            return "not a JSON object (truncated line?)"
        } catch {
            return "not valid JSON"
        }
    }

    /// Streams the file's fixes to `body`, in order.
    public func read(_ body: (LocationFix) throws -> Void) throws -> LocationReadSummary {
        var lines = try LocationLineReader(path: path)
        var checker = LocationFixChecker(file: path, format: .gpsdJSON, options: options)
        // The last fix read (and its device), held until a report of another
        // time comes.
        var held: (fix: LocationFix, line: Int, device: String?)?
        // The device of the first accepted fix that names one, and the other
        // devices already told of.
        var trackDevice: String?
        var otherDevices: Set<String> = []
        func deliverHeld() throws {
            guard let (fix, line, device) = held else { return }
            held = nil
            guard let accepted = try checker.accept(fix, line: line) else { return }
            if trackDevice == nil { trackDevice = device }
            try body(accepted)
        }
        /// Reports bad input after the fix held from the lines before it.
        func issue(line: Int, _ message: String) throws {
            try deliverHeld()
            try checker.issue(line: line, message)
        }
        while let line = try lines.next(readBefore: checker.summary) {
            let number = lines.lineNumber
            if line.isEmpty { continue }  // the reader trims trailing blanks
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: .fragmentsAllowed)
            guard let object = parsed as? [String: Any] else {
                try issue(line: number, parsed != nil ? "not a JSON object" : Self.whyNotJSON(line))
                continue
            }
            guard object["class"] as? String == "TPV" else {
                checker.ignore()
                continue
            }
            /// The first of `keys` whose value is neither a number nor null.
            func nonNumber(_ keys: [String]) -> String? {
                keys.first { object[$0] != nil && !(object[$0] is NSNumber) && !(object[$0] is NSNull) }
            }
            // A mode that is not a number ("3") was taken for no fix, in silence.
            if let bad = nonNumber(["mode"]) {
                try issue(line: number, "\(bad) is not a number (\(jsonText(object[bad]!)))")
                continue
            }
            let mode = (object["mode"] as? NSNumber)?.intValue ?? 0
            guard mode >= 2 else {
                checker.ignore()
                continue
            }
            if let bad = nonNumber(["lat", "lon", "alt", "altMSL", "speed", "track", "eph", "epx", "epy"]) {
                try issue(line: number, "\(bad) is not a number (\(jsonText(object[bad]!)))")
                continue
            }
            guard let lat = (object["lat"] as? NSNumber)?.doubleValue,
                let lon = (object["lon"] as? NSNumber)?.doubleValue
            else {
                try issue(line: number, "TPV with mode \(mode) but without lat/lon")
                continue
            }
            guard let timeText = object["time"] as? String else {
                checker.ignore()
                continue
            }
            guard let parsed = LocationTimeFormat.parseISO8601(timeText) else {
                try issue(line: number, LocationTimeFormat.badTime(timeText, label: "time"))
                continue
            }
            // To the millisecond, as the other readers keep times: fixes
            // 0.4 ms apart passed, and were written with one time, which
            // their own NMEA then refused (and gps feed blamed on gpsd).
            let time = LocationTimeFormat.toMillisecond(parsed)
            let device = object["device"] as? String
            // The epoch held is over: delivered (and its device made the
            // track's, if accepted) before this report is judged.
            if let earlier = held, earlier.fix.time != time { try deliverHeld() }
            if let track = trackDevice ?? held?.device, let device, device != track {
                if otherDevices.insert(device).inserted {
                    // The track's epoch held may go on after this report: it
                    // is delivered first only when the bad line stops the read.
                    if options.policy == .strict { try deliverHeld() }
                    try checker.issue(
                        line: number,
                        "a fix from device \"\(device)\", not the track's \"\(track)\": "
                            + "a fixture is one device's track, so this device's fixes are skipped (told once)")
                } else {
                    checker.ignore()
                }
                continue
            }
            func value(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }
            let accuracy = value("eph") ?? zip2(value("epx"), value("epy")).map { max($0, $1) }
            let fix = LocationFix(
                latitude: lat, longitude: lon, time: time,
                altitude: value("altMSL") ?? value("alt"), speed: value("speed"), course: value("track"),
                horizontalAccuracy: accuracy)
            if let earlier = held {  // of the same time
                held = (fix.filling(from: earlier.fix), number, earlier.device ?? device)
                checker.ignore()
                continue
            }
            held = (fix, number, device)
        }
        try deliverHeld()
        return checker.summary
    }

    /// A JSON value as it was written, for a message.
    private func jsonText(_ value: Any) -> String {
        if let text = value as? String { return "\"\(text)\"" }
        guard JSONSerialization.isValidJSONObject([value]),
            let data = try? JSONSerialization.data(withJSONObject: [value]),
            let text = String(data: data, encoding: .utf8)
        else { return "\(value)" }
        return String(text.dropFirst().dropLast())
    }

    private func zip2(_ a: Double?, _ b: Double?) -> (Double, Double)? {
        guard let a, let b else { return nil }
        return (a, b)
    }
}

/// Writes fixes as gpsd `TPV` JSON lines (readable by ``GPSDJSONFixReader``).
public enum GPSDJSONFixWriter {
    /// One `TPV` line, ending in `\n`.
    public static func line(for fix: LocationFix, device: String = "offstage") -> String {
        var s = "{\"class\":\"TPV\",\"device\":\"\(device)\",\"mode\":\(fix.altitude == nil ? 2 : 3)"
        s += ",\"time\":\"\(LocationTimeFormat.iso8601(fix.time))\""
        s += ",\"lat\":\(NMEAFixWriter.decimal(fix.latitude, 9)),\"lon\":\(NMEAFixWriter.decimal(fix.longitude, 9))"
        if let alt = fix.altitude { s += ",\"altMSL\":\(NMEAFixWriter.decimal(alt, 3))" }
        if let speed = fix.speed { s += ",\"speed\":\(NMEAFixWriter.decimal(speed, 3))" }
        if let track = fix.course { s += ",\"track\":\(NMEAFixWriter.decimal(track, 4))" }
        if let eph = fix.horizontalAccuracy { s += ",\"eph\":\(NMEAFixWriter.decimal(eph, 3))" }
        return s + "}\n"
    }
}

extension LocationFix {
    /// This fix, with the values it lacks taken from `earlier` (a report of
    /// the same epoch that knew them).
    func filling(from earlier: LocationFix) -> LocationFix {
        var fix = self
        fix.altitude = altitude ?? earlier.altitude
        fix.speed = speed ?? earlier.speed
        fix.course = course ?? earlier.course
        fix.horizontalAccuracy = horizontalAccuracy ?? earlier.horizontalAccuracy
        return fix
    }
}
