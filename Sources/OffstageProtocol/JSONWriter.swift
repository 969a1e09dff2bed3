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
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
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
            out.append(contentsOf: String(Int64(n)).utf8)
        } else {
            out.append(contentsOf: "\(n)".utf8)
        }
    }

    /// Appends a string literal, escaped.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
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
