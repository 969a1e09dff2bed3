import OffstageCore

/// Writes fixes as NMEA 0183: one `RMC` then one `GGA` per fix (talker
/// `GP`), with times to the millisecond, the date, and correct checksums.
/// The HDOP is the horizontal accuracy over ``metresPerHDOP`` (at least
/// 0.5), or empty when the fix has no accuracy. A fix with an accuracy
/// starts with a `GSA` that carries its HDOP too: gpsd (3.22) works out an
/// epoch's `eph` before it reads the epoch's `GGA`, so with the HDOP in the
/// `GGA` only, each fix reached watchers with the accuracy of the fix
/// before it. ``NMEAFixReader`` leaves `GSA` out (it has no time).
/// `RMC` comes first: its date and time start the epoch, for gpsd as for
/// ``NMEAFixReader`` (a dateless `GGA` first would join a fix a day
/// earlier at the same time of day). gpsd reports an epoch at each
/// sentence until it has learnt which sentence ends one, then once, at
/// that sentence; ``primer`` makes it learn afresh on a device it has
/// seen before.
public enum NMEAFixWriter {
    /// What to write to a device once gpsd has activated it, before the
    /// first fix: an `RMC` without a time, which gpsd takes for a break in
    /// its cycles and reports (mode 1, no fix). gpsd 3.22 keeps a device
    /// slot's "I know where epochs end" across a removal and a new `+PATH`
    /// while forgetting which sentence it was, so on a reused slot it
    /// reported nothing until an epoch ended twice: a feed after a feed
    /// lost its first fix, and a `gps fix` never arrived.
    public static let primer = framed("GPRMC,,V,,,,,,,,,,N")

    /// Horizontal accuracy (metres) taken to equal one unit of HDOP.
    public static let metresPerHDOP = 5.0

    /// The years a two-digit NMEA year stands for, as ``NMEAFixReader``
    /// reads them (80–99 are 19xx, the others 20xx).
    public static let years = 1980...2079

    /// Why the fix cannot be written as NMEA, if it cannot: its year would
    /// come back as another century's (1969 as 2069).
    /// Checked against ``writableTimes`` first (once per fix fed or
    /// written: the year is broken out only for the message).
    public static func problem(writing fix: LocationFix) -> String? {
        // As written: to the millisecond (23:59:59.9996 of 2079's last day is 2080).
        guard !writableTimes.contains(LocationTimeFormat.toMillisecond(fix.time)) else { return nil }
        return "NMEA's two-digit year holds \(years.lowerBound) to \(years.upperBound), not \(LocationTimeFormat.components(fix.time).year)"
    }

    /// The times within ``years``, in seconds since the Unix epoch.
    static let writableTimes: Range<Double> =
        Double(LocationTimeFormat.daysFromCivil(year: years.lowerBound, month: 1, day: 1) * 86_400)
        ..< Double(LocationTimeFormat.daysFromCivil(year: years.upperBound + 1, month: 1, day: 1) * 86_400)

    /// The sentences for a fix (`GSA` when it has an accuracy, `RMC`,
    /// `GGA`), each ending in CR LF.
    public static func sentences(for fix: LocationFix) -> String {
        let c = LocationTimeFormat.components(fix.time)
        let p = LocationTimeFormat.pad
        let time = "\(p(c.hour, 2))\(p(c.minute, 2))\(p(c.second, 2)).\(p(c.millisecond, 3))"
        let date = "\(p(c.day, 2))\(p(c.month, 2))\(p(c.year % 100, 2))"
        let lat = angle(fix.latitude, degreeDigits: 2, positive: "N", negative: "S")
        let lon = angle(fix.longitude, degreeDigits: 3, positive: "E", negative: "W")
        let speed = fix.speed.map { decimal($0 * 3600 / 1852, 3) } ?? ""
        let course = fix.course.map { decimal($0, 2) } ?? ""
        let rmc = "GPRMC,\(time),A,\(lat),\(lon),\(speed),\(course),\(date),,,A"
        // No accuracy, no HDOP (an empty field): a made-up one came back
        // from the reader, and from gpsd, as an accuracy.
        let hdop = fix.horizontalAccuracy.map { decimal(max(0.5, $0 / metresPerHDOP), 1) } ?? ""
        let alt = fix.altitude.map { decimal($0, 2) } ?? ""
        let gga = "GPGGA,\(time),\(lat),\(lon),1,08,\(hdop),\(alt),\(alt.isEmpty ? "" : "M"),0.0,M,,"
        // No satellites named in GGA's count of 8 are made up beyond it; the
        // mode is 3D when the fix has an altitude, as gpsd then reports it.
        let gsa = hdop.isEmpty ? "" : framed("GPGSA,A,\(alt.isEmpty ? 2 : 3),01,02,03,04,05,06,07,08,,,,,,\(hdop),")
        return gsa + framed(rmc) + framed(gga)
    }

    /// `$body*hh\r\n`.
    static func framed(_ body: String) -> String {
        "$\(body)*\(NMEASentence.hex(NMEASentence.checksum(body)))\r\n"
    }

    /// `ddmm.mmmmmm,H` with 6 decimals of minutes (about 2 mm).
    static func angle(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> String {
        let micro = Int((abs(value) * 60_000_000).rounded())  // millionths of a minute
        let degrees = micro / 60_000_000
        let minutes = micro % 60_000_000
        let whole = minutes / 1_000_000
        let frac = minutes % 1_000_000
        let p = LocationTimeFormat.pad
        return "\(p(degrees, degreeDigits))\(p(whole, 2)).\(p(frac, 6)),\(value < 0 ? negative : positive)"
    }

    /// A fixed-point decimal string with `places` decimals (no Foundation formatter).
    public static func decimal(_ value: Double, _ places: Int) -> String {
        var scale = 1
        for _ in 0..<places { scale *= 10 }
        let n = Int((abs(value) * Double(scale)).rounded())
        let sign = value < 0 && n != 0 ? "-" : ""
        if places == 0 { return sign + String(n) }
        return "\(sign)\(n / scale).\(LocationTimeFormat.pad(n % scale, places))"
    }
}
