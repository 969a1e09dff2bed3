import OffstageCore

/// Writes fixes as one GPX 1.1 track (`trk`/`trkseg`/`trkpt` with `ele` and
/// `time`), streaming: ``header``, one ``point(_:)`` per fix, ``footer``.
///
/// GPX 1.1 has no speed or course (1.0 had them), so a fix's speed (m/s)
/// and course (degrees) go in Garmin's TrackPointExtension v2, which
/// several GPX tools read, and which ``GPXFixReader`` reads back.
public enum GPXFixWriter {
    /// The namespace of Garmin's TrackPointExtension v2.
    public static let trackPointExtension = "http://www.garmin.com/xmlschemas/TrackPointExtension/v2"

    /// The document start, up to the open `trkseg`.
    public static func header(name: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="offstage" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="\(trackPointExtension)">
          <trk>
            <name>\(escape(name))</name>
            <trkseg>

        """
    }

    /// One `trkpt` element.
    public static func point(_ fix: LocationFix) -> String {
        var s = "      <trkpt lat=\"\(NMEAFixWriter.decimal(fix.latitude, 9))\" lon=\"\(NMEAFixWriter.decimal(fix.longitude, 9))\">"
        if let ele = fix.altitude { s += "<ele>\(NMEAFixWriter.decimal(ele, 2))</ele>" }
        s += "<time>\(LocationTimeFormat.iso8601(fix.time))</time>"
        if fix.speed != nil || fix.course != nil {
            s += "<extensions><gpxtpx:TrackPointExtension>"
            if let speed = fix.speed { s += "<gpxtpx:speed>\(NMEAFixWriter.decimal(speed, 3))</gpxtpx:speed>" }
            if let course = fix.course { s += "<gpxtpx:course>\(courseText(course))</gpxtpx:course>" }
            s += "</gpxtpx:TrackPointExtension></extensions>"
        }
        return s + "</trkpt>\n"
    }

    /// A course to the hundredth of a degree, 0 ≤ course < 360 (as GPX's
    /// schema has it): 360 (or 359.996, rounded) is north, 0.
    public static func courseText(_ course: Double) -> String {
        let hundredths = (course * 100).rounded().truncatingRemainder(dividingBy: 36_000)
        return NMEAFixWriter.decimal(hundredths / 100, 2)
    }

    /// The document end.
    public static let footer = "    </trkseg>\n  </trk>\n</gpx>\n"

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
