/// UTC civil time conversions for the fixture formats (no Foundation date
/// formatters: fast, and the same on every platform).
public enum LocationTimeFormat {
    /// `seconds` to the millisecond, as fixtures keep times.
    public static func toMillisecond(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The number of days in a month (1–12) of the proleptic Gregorian calendar.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Why a date with a month of 1–12 and a day of 1–31 does not exist
    /// ("February 2023 has 28 days"), or nil if it does.
    /// ``daysFromCivil(year:month:day:)`` would roll such a date over into
    /// the next month.
    public static func nonexistence(year: Int, month: Int, day: Int) -> String? {
        let length = daysInMonth(year: year, month: month)
        guard day > length else { return nil }
        let names = ["January", "February", "March", "April", "May", "June", "July",
            "August", "September", "October", "November", "December"]
        return "\(names[month - 1]) \(year) has \(length) days"
    }

    /// Why the `YYYY-MM-DD` a text starts with does not exist, as in
    /// `2024-02-30 does not exist (February 2024 has 29 days)`; nil if it
    /// exists or is not such a date. Explains why ``parseISO8601(_:)``
    /// refused a time that is well-formed.
    public static func nonexistentDay(_ text: some StringProtocol) -> String? {
        let day = text.prefix(10)
        let parts = day.split(separator: "-", omittingEmptySubsequences: false)
        guard day.count == 10, parts.count == 3, parts.map(\.count) == [4, 2, 2],
            parts.allSatisfy({ DecimalText.isDigits($0) }),
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            (1...12).contains(m), (1...31).contains(d),
            let why = nonexistence(year: y, month: m, day: d)
        else { return nil }
        return "\(day) does not exist (\(why))"
    }

    /// A fixture's message for a time ``parseISO8601(_:)`` refused:
    /// `bad <time> "2024-02-30T08:00:00Z": 2024-02-30 does not exist
    /// (February 2024 has 29 days)`, or else the form expected (the quoted
    /// text alone did not say what was wrong with it).
    /// - Parameter label: what the time is called in the format (`<time>`, `time`).
    public static func badTime(_ text: String, label: String) -> String {
        "bad \(label) \"\(text)\": " + (nonexistentDay(text) ?? "expected YYYY-MM-DDThh:mm:ss[.sss][Z|±hh:mm]")
    }

    /// The date of a day count since 1970-01-01.
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Broken-down UTC time of seconds since the epoch, with milliseconds.
    public static func components(_ time: Double) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int) {
        let totalMs = Int((time * 1000).rounded())
        var days = totalMs / 86_400_000
        var msOfDay = totalMs % 86_400_000
        if msOfDay < 0 {
            msOfDay += 86_400_000
            days -= 1
        }
        let (y, mo, d) = civilFromDays(days)
        return (y, mo, d, msOfDay / 3_600_000, msOfDay / 60_000 % 60, msOfDay / 1000 % 60, msOfDay % 1000)
    }

    /// `2024-05-01T08:00:00.000Z`.
    public static func iso8601(_ time: Double) -> String {
        let c = components(time)
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2)).\(pad(c.millisecond, 3))Z"
    }

    /// Parses ISO 8601 / RFC 3339 date-times as GPX and gpsd write them:
    /// `YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm|±hhmm]`. No zone is UTC (GPX's
    /// times are UTC). Returns nil if malformed, if the day does not exist
    /// (2024-02-30 is not 2024-03-01), or for an offset of 24 h or more.
    /// A leap second (`23:59:60` UTC) falls on `23:59:59.999`
    /// (``leapSecond``), not on midnight, whose own time it would take.
    public static func parseISO8601(_ text: some StringProtocol) -> Double? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 19, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116 || b[10] == 32,
            b[13] == 58, b[16] == 58,
            let year = num(0, 4), let month = num(5, 2), let day = num(8, 2),
            let hour = num(11, 2), let minute = num(14, 2), let second = num(17, 2),
            (1...12).contains(month), (1...31).contains(day), day <= daysInMonth(year: year, month: month),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offset = 0
        if i < b.count, b[i] == 90 || b[i] == 122 {
            i += 1
        } else if i < b.count, b[i] == 43 || b[i] == 45 {
            let colon = i + 3 < b.count && b[i + 3] == 58
            guard let oh = num(i + 1, 2), let om = num(i + (colon ? 4 : 3), 2), oh < 24, om < 60 else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == 43 ? 1 : -1)
            i += colon ? 6 : 5
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let minutes = days * 1440 + hour * 60 + minute - offset / 60
        guard second == 60 else { return Double(minutes * 60 + second) + fraction }
        // Only the last minute of a UTC day has a 61st second.
        guard (minutes % 1440 + 1440) % 1440 == 1439 else { return nil }
        return Double(minutes * 60) + leapSecond
    }

    /// Where a leap second (`60` and any fraction) goes in its minute: the
    /// last millisecond, after every ordinary time a fixture can hold
    /// (times are kept to the millisecond) and before the next minute. A
    /// second fix within the same leap second is time standing still.
    static let leapSecond = 59.999

    static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
