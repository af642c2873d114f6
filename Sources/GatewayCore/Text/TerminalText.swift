/// Makes text from servers and users safe to print on a terminal.
///
/// Names and server messages are data: a name holding `ESC [2J` or an OSC sequence must not clear
/// or retitle the user's terminal, and one holding CR or LF must not fake another output line.
/// ``escaped(_:)`` writes every control character as a visible escape, as GNU `ls -b` does.
public enum TerminalText {
    /// `text` with C0 controls, DEL and C1 controls (U+0080–U+009F, which some terminals also
    /// obey) written as `\n`, `\t`, `\r`, `\e`, `\a`, `\b`, `\f`, `\v` or `\xHH` / `\u{HHHH}`, and a
    /// backslash doubled (only when something else was escaped, so plain names stay as they are).
    public static func escaped(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C: result += "\\\\"
            case 0x07: result += "\\a"
            case 0x08: result += "\\b"
            case 0x09: result += "\\t"
            case 0x0A: result += "\\n"
            case 0x0B: result += "\\v"
            case 0x0C: result += "\\f"
            case 0x0D: result += "\\r"
            case 0x1B: result += "\\e"
            case 0x00...0x1F, 0x7F: result += "\\x" + hex(scalar.value, width: 2)
            case 0x80...0x9F: result += "\\u{" + hex(scalar.value, width: 4) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `text` holds a character ``escaped(_:)`` would rewrite (a control character).
    public static func needsEscaping(_ text: String) -> Bool {
        for byte in text.utf8 where byte < 0x20 || byte == 0x7F || byte == 0xC2 {
            // 0xC2 starts U+0080–U+00BF in UTF-8: check the scalars only then.
            if byte != 0xC2 { return true }
            return text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || $0.value < 0x20 || $0.value == 0x7F }
        }
        return false
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
