import Foundation
import GatewayCore

/// ETag comparison for the gateway's own version checks.
enum ETag {
    /// RFC 9110's weak comparison: equal opaque tags, whether or not either is marked weak
    /// (`W/`). Apache marks a file's ETag weak during the second it was written and strong after,
    /// for the same contents.
    static func sameVersion(_ a: String?, _ b: String?) -> Bool {
        guard let a, let b else { return a == b }
        return opaque(a) == opaque(b)
    }

    /// The weak comparison without quotes either, for a tag from one place (a GET's `ETag`) checked
    /// against one from another (a listing): WsgiDAV lists its ETags unquoted and sends them quoted.
    static func sameUnquoted(_ a: String, _ b: String) -> Bool {
        func bare(_ tag: String) -> Substring {
            let tag = opaque(tag)
            return tag.count >= 2 && tag.first == "\"" && tag.last == "\"" ? tag.dropFirst().dropLast() : tag
        }
        return bare(a) == bare(b)
    }

    /// The tag without its weak marker.
    private static func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag) }
}

/// ownCloud/Nextcloud content checksums: `oc:checksums` values and `OC-Checksum` headers, written
/// `TYPE:hex` (`SHA1:da39a3ee…`), several separated by spaces.
enum OwnCloudChecksums {
    /// The hashes the server can check and keep, in the order they are offered.
    static let supported: [HashAlgorithm] = [.sha1, .md5]

    /// Reads `SHA1:… MD5:… ADLER32:…`; unknown types and malformed digests are left out.
    static func parse(_ text: String) -> [HashAlgorithm: String] {
        var hashes: [HashAlgorithm: String] = [:]
        for token in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" || $0 == "," }) {
            guard let colon = token.firstIndex(of: ":"),
                  let algorithm = HashAlgorithm(checksumTypeName: String(token[..<colon])) else { continue }
            let digest = token[token.index(after: colon)...].lowercased()
            guard digest.count == algorithm.hexLength, digest.allSatisfy(\.isHexDigit) else { continue }
            hashes[algorithm] = digest
        }
        return hashes
    }

    /// The `OC-Checksum` header value for the first supported hash among `hashes`.
    static func header(for hashes: [HashAlgorithm: String]) -> String? {
        guard let algorithm = supported.first(where: { hashes[$0] != nil }), let digest = hashes[algorithm] else { return nil }
        return "\(algorithm.checksumTypeName):\(digest)"
    }
}

/// Byte-level text helpers for the per-entry work of a listing (Foundation's `trimmingCharacters`
/// and `removingPercentEncoding` bridge through `NSString`, and were most of a 10,000-entry
/// listing's client time).
enum DAVText {
    /// `text` without leading and trailing ASCII whitespace (space, tab, CR, LF).
    static func trimmed(_ text: String) -> String {
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last, isSpace(first) || isSpace(last) else { return text }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[start...end])
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// Whether `text` holds `://` (an absolute URL rather than a path).
    static func hasScheme(_ text: String) -> Bool {
        var colon = false
        var slashes = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "/") {
                if colon { slashes += 1; if slashes == 2 { return true } } else { return false }
            } else {
                colon = byte == UInt8(ascii: ":")
                slashes = 0
            }
        }
        return false
    }

    /// `text` with `%XX` sequences decoded; `nil` when a sequence is malformed or the result is not
    /// UTF-8 (as Foundation's `removingPercentEncoding`).
    static func percentDecoded(_ text: Substring) -> String? {
        HexEscapes.decode(text)
    }
}
