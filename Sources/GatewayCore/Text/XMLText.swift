/// Text for XML documents the gateway writes (WebDAV request bodies, `gateway serve`'s answers).
public enum XMLText {
    /// `text` as XML character data: `&`, `<`, `>`, `"` and `'` escaped. With
    /// `replacingInvalid`, characters XML 1.0 cannot carry (C0 controls but tab, LF and CR;
    /// U+FFFE, U+FFFF) become U+FFFD, so a name from a disk still makes a well-formed answer;
    /// without it they are kept (a request must name exactly what it names).
    public static func escaped(_ text: String, replacingInvalid: Bool = false) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            default:
                if replacingInvalid, scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    result += "\u{FFFD}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
