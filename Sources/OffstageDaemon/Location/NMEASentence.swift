/// One checked NMEA 0183 sentence: `$ttSSS,f1,f2,...*hh`.
struct NMEASentence {
    /// Talker (`GP`, `GN`, `GL`, ...).
    let talker: Substring
    /// Sentence type (`GGA`, `RMC`, ...).
    let type: Substring
    /// Fields after the address.
    let fields: [Substring]

    /// Why a line is not a valid sentence.
    enum Problem: Error, Equatable {
        case notASentence
        case missingChecksum
        case badChecksum(expected: String, found: String)
        /// A right checksum with more after it.
        case textAfterChecksum(String)
    }

    /// Parses and verifies a line.
    init(line: String) throws(Problem) {
        guard let first = line.first, first == "$" || first == "!" else { throw .notASentence }
        guard let star = line.lastIndex(of: "*") else { throw .missingChecksum }
        let body = line[line.index(after: line.startIndex)..<star]
        let given = line[line.index(after: star)...]
        let computed = NMEASentence.checksum(body)
        // Cut within the checksum: `…*` or `…*6` is a truncated line, not a wrong sum.
        guard given.count >= 2 else { throw .missingChecksum }
        if given.count > 2, let sum = UInt8(given.prefix(2), radix: 16), sum == computed {
            throw .textAfterChecksum(String(given.dropFirst(2)))
        }
        guard given.count == 2, let value = UInt8(given, radix: 16) else {
            throw .badChecksum(expected: NMEASentence.hex(computed), found: String(given))
        }
        guard value == computed else {
            throw .badChecksum(expected: NMEASentence.hex(computed), found: String(given))
        }
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
        let address = parts[0]
        if address.count == 5, address.first != "P" {
            talker = address.prefix(2)
            type = address.suffix(3)
        } else {
            talker = ""
            type = address
        }
        fields = Array(parts.dropFirst())
    }

    /// XOR of the bytes between `$` and `*`.
    static func checksum(_ body: some StringProtocol) -> UInt8 {
        body.utf8.reduce(0, ^)
    }

    static func hex(_ value: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(value >> 4)], digits[Int(value & 15)]])
    }

    /// Field `i`, or an empty substring if the sentence is shorter.
    subscript(_ i: Int) -> Substring { i < fields.count ? fields[i] : "" }

    /// Whether `text` is digits with at most one decimal point after
    /// exactly `whole` of them: `hhmmss.sss` has 6, `ddmm.mmmm` 4 and
    /// `dddmm.mmmm` 5 (`806.0` is no latitude: read as `ddmm` it was
    /// 80° 6', where gpsd reads 8° 6').
    static func isFixedPoint(_ text: Substring, whole: Int) -> Bool {
        // One pass over the bytes: three fields of every sentence.
        var index = 0
        for byte in text.utf8 {
            if index == whole {
                guard byte == UInt8(ascii: ".") else { return false }
            } else if !(0x30...0x39).contains(byte) {
                return false
            }
            index += 1
        }
        return index >= whole
    }

    /// `hhmmss[.sss]` as seconds of the day; a leap second (`235960`,
    /// the only time with a 61st second) goes before midnight
    /// (``LocationTimeFormat/leapSecond``), not onto it.
    static func timeOfDay(_ field: Substring) -> Double? {
        guard isFixedPoint(field, whole: 6), let hh = Int(field.prefix(2)), let mm = Int(field.dropFirst(2).prefix(2)),
            let ss = DecimalText.decimal(field.dropFirst(4)), hh < 24, mm < 60, ss < 61
        else { return nil }
        guard ss >= 60 else { return Double(hh * 3600 + mm * 60) + ss }
        guard hh == 23, mm == 59 else { return nil }
        return Double(hh * 3600 + mm * 60) + LocationTimeFormat.leapSecond
    }

    /// `ddmmyy` as a civil date (years 80–99 are 19xx, else 20xx); the day
    /// is 1–31 whatever the month, see ``LocationTimeFormat/nonexistence(year:month:day:)``.
    static func date(_ field: Substring) -> (year: Int, month: Int, day: Int)? {
        guard field.count == 6, DecimalText.isDigits(field), let dd = Int(field.prefix(2)), let mo = Int(field.dropFirst(2).prefix(2)),
            let yy = Int(field.suffix(2)), (1...31).contains(dd), (1...12).contains(mo)
        else { return nil }
        // NMEAFixWriter.years: the two digits of 1980 and on, up to 2079.
        let first = NMEAFixWriter.years.lowerBound
        return (yy >= first % 100 ? first - first % 100 + yy : first - first % 100 + 100 + yy, mo, dd)
    }

    /// `ddmm.mmmm` + hemisphere as signed degrees.
    static func angle(_ field: Substring, _ hemisphere: Substring, degreeDigits: Int) -> Double? {
        guard isFixedPoint(field, whole: degreeDigits + 2), let degrees = DecimalText.decimal(field.prefix(degreeDigits)),
            let minutes = DecimalText.decimal(field.dropFirst(degreeDigits)), minutes < 60
        else { return nil }
        let value = degrees + minutes / 60
        switch hemisphere {
        case "N", "E": return value
        case "S", "W": return -value
        default: return nil
        }
    }
}
