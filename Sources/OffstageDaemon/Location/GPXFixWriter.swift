import OffstageCore

/// Writes fixes as one GPX 1.1 track (`trk`/`trkseg`/`trkpt` with `ele` and
/// `time`), streaming: ``header``, one ``point(_:)`` per fix, ``footer``.
public enum GPXFixWriter {
    /// The document start, up to the open `trkseg`.
    public static func header(name: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="offstage" xmlns="http://www.topografix.com/GPX/1/1">
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
        return s + "</trkpt>\n"
    }

    /// The document end.
    public static let footer = "    </trkseg>\n  </trk>\n</gpx>\n"

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
