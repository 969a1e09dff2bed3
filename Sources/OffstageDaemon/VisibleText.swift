/// `text` as it may be shown on a terminal: each control character (C0,
/// DEL, C1) as `\xHH`, and a backslash doubled so that an escape cannot be
/// mistaken for one written so. What a message quotes of a file (a
/// fixture's bytes, an app's log) cannot drive the terminal of whoever
/// reads it: a fixture's terminal escape cleared the screen.
public func visibleText(_ text: String) -> String {
    func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
    guard text.unicodeScalars.contains(where: { isControl($0) || $0 == "\\" }) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        if scalar == "\\" {
            result += "\\\\"
        } else if isControl(scalar) {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            result += "\\x" + (hex.count < 2 ? "0" + hex : hex)
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// `items` joined with commas, the first `shown` of them and a count of
/// the rest: a status line listed all of an app's 30,000 task ids (200 KB).
public func shortList(_ items: [String], shown: Int = 5) -> String {
    guard items.count > shown + 1 else { return items.joined(separator: ", ") }
    return items.prefix(shown).joined(separator: ", ") + " and \(items.count - shown) more"
}
