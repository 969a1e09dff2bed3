/// Serializes ``JSONValue`` to compact JSON text with sorted object keys.
extension JSONValue {
    /// Compact JSON with sorted keys (no newline).
    public var jsonText: String {
        var out = [UInt8]()
        out.reserveCapacity(128)
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON encoding of this value to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): Self.writeNumber(n, into: &out)
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            if members.count == 1, let (key, value) = members.first {
                // Most details have one member (or none): nothing to sort.
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            } else if members.count > 1 {
                for (i, (key, value)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    Self.writeString(key, into: &out)
                    out.append(UInt8(ascii: ":"))
                    value.write(into: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a number as the writer encodes it (integral values without a fraction).
    public static func writeNumber(_ n: Double, into out: inout [UInt8]) {
        if !n.isFinite {
            // JSON has no infinities; the protocol writes them as null.
            out.append(contentsOf: "null".utf8)
        } else if n == n.rounded(), abs(n) < 1e15 {
            writeInteger(Int(n), into: &out)
        } else {
            out.append(contentsOf: n.description.utf8)
        }
    }

    /// Appends an integer's decimal digits (what ``writeNumber(_:into:)``
    /// writes for an integral value), without making a string first.
    public static func writeInteger(_ n: Int, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = n.magnitude
        // 20 digits hold any 64-bit magnitude; written backwards, then appended.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends a string literal, escaped.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: their bytes are appended in one go.
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            out.append(contentsOf: bytes)
            return true
        }
        if plain == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
