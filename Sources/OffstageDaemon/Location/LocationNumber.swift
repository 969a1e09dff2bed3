/// Numbers as fixtures write them.
public enum LocationNumber {
    /// A decimal number: an optional sign, digits with an optional
    /// fraction, an optional exponent; nil for anything else. Swift's
    /// `Double(_:)` also takes hexadecimal (`0x10` is 16), `inf` and
    /// `nan`, which no GPX, NMEA or gpsd writer means: a latitude of
    /// `0x10` became 16°.
    public static func decimal(_ text: some StringProtocol) -> Double? {
        guard text.utf8.contains(where: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            text.utf8.allSatisfy({ allowed.contains($0) })
        else { return nil }
        return Double(text)
    }

    private static let allowed = Set("0123456789+-.eE".utf8)
}
