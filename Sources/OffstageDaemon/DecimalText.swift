/// Numbers as people and file formats write them (GPS fixtures, `audio play --start`, `device battery`).
public enum DecimalText {
    /// Whether `text` is ASCII digits and nothing else (no sign: `Int`
    /// and ``decimal(_:)`` take one, and `-10003.000` was a time of day).
    public static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// A decimal number: an optional sign, digits with an optional
    /// fraction, an optional exponent; nil for anything else. Swift's
    /// `Double(_:)` also takes hexadecimal (`0x10` is 16), `inf` and
    /// `nan`, which no GPX, NMEA or gpsd writer means: a latitude of
    /// `0x10` became 16°.
    public static func decimal(_ text: some StringProtocol) -> Double? {
        // One pass over the bytes, on the readers' hot path.
        var digits = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits = true
            case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): continue
            default: return nil
            }
        }
        return digits ? Double(text) : nil
    }
}
