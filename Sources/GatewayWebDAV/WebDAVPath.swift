import Foundation
import GatewayCore

/// Turns remote paths into request URLs and `href`s back into remote paths.
struct WebDAVPath: Sendable {
    /// The server URL the remote is rooted at, ending with `/`.
    let baseURL: URL
    /// The base URL's path, decoded, without a trailing slash (`""` for the server root).
    let basePath: String
    /// ``basePath`` and a slash: what every href inside the remote starts with.
    let basePrefix: String

    init(baseURL: URL) {
        var text = baseURL.absoluteString
        if !text.hasSuffix("/") { text += "/" }
        self.baseURL = URL(string: text) ?? baseURL
        let encodedPath = URLComponents(url: self.baseURL, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        let decoded = encodedPath.removingPercentEncoding ?? encodedPath
        basePath = decoded.hasSuffix("/") ? String(decoded.dropLast()) : decoded
        basePrefix = basePath + "/"
    }

    /// The percent-encoded path below the base for a normalized remote path (`/a b/c` gives `a%20b/c`):
    /// in each segment, RFC 3986's unreserved characters and `=` stay and every other UTF-8 byte
    /// becomes `%XX` (upper-case hex). (`=` is allowed in a path, and Xandikos stores a folder's
    /// `Destination` without decoding it: the trash's names escape with `=`, so they arrive whole.)
    /// Byte by byte: Foundation's `addingPercentEncoding` (through CFString) was 6 % of the
    /// client's CPU time in a small-file upload, which builds two URLs per file.
    static func encode(_ remotePath: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(remotePath.utf8.count + 16)
        for (index, segment) in RemotePath.components(of: remotePath).enumerated() {
            if index > 0 { encoded.append(UInt8(ascii: "/")) }
            for byte in segment.utf8 {
                if isUnreserved(byte) || byte == UInt8(ascii: "=") {
                    encoded.append(byte)
                } else {
                    encoded.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The request URL of a remote path; folders get a trailing slash when `folder` is set.
    func url(_ remotePath: String, folder: Bool = false) -> URL {
        let encoded = Self.encode(remotePath)
        var text = baseURL.absoluteString + encoded
        if folder, !encoded.isEmpty { text += "/" }
        return URL(string: text)!
    }

    /// The remote path an `href` names (absolute URL, absolute path, or relative to `requestPath`),
    /// or `nil` when it lies outside the remote.
    func remotePath(fromHref href: String, requestPath: String) -> String? {
        let trimmed = DAVText.trimmed(href)
        var encodedPath: String
        if DAVText.hasScheme(trimmed) {
            guard let components = URLComponents(string: trimmed) else { return nil }
            encodedPath = components.percentEncodedPath
        } else if trimmed.hasPrefix("/") {
            encodedPath = trimmed
        } else {
            let base = basePath + (requestPath == "/" ? "" : requestPath)
            encodedPath = (base.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? base) + "/" + trimmed
        }
        if let query = encodedPath.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            encodedPath = String(encodedPath[..<query])
        }
        let decoded = DAVText.percentDecoded(Substring(encodedPath)) ?? encodedPath
        let relative: String
        if basePath.isEmpty {
            relative = decoded
        } else if decoded == basePath || decoded == basePrefix {
            relative = "/"
        } else if decoded.utf8.starts(with: basePrefix.utf8) {
            // By bytes: the prefix is dropped without walking characters.
            relative = String(Substring(decoded.utf8.dropFirst(basePath.utf8.count)))
        } else {
            return nil
        }
        return try? RemotePath.normalize(relative)
    }
}
