/// Hex escapes in UTF-8 text (`%2F` in URLs and `.trashinfo` paths, `=2F` in a network trash's
/// names), decoded by one piece of code for every format that has them.
package enum HexEscapes {
    /// Decodes every `<escape>XX` (hexadecimal, either case) in `text`.
    ///
    /// - Returns: `nil` for a broken escape, bytes that are not UTF-8, or (with `allowsNUL` false)
    ///   a NUL byte.
    package static func decode(_ text: Substring, escape: UInt8 = UInt8(ascii: "%"), allowsNUL: Bool = true) -> String? {
        guard text.utf8.contains(escape) else {
            return allowsNUL || !text.utf8.contains(0) ? String(text) : nil
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == escape else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        if !allowsNUL, bytes.contains(0) { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value of one hexadecimal digit (either case), `nil` for any other byte.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
