import Foundation
import GatewayCore

/// Turns remote paths into request URLs and `href`s back into remote paths.
struct WebDAVPath: Sendable {
    /// The server URL the remote is rooted at, ending with `/`.
    let baseURL: URL
    /// The base URL's path, decoded, without a trailing slash (`""` for the server root).
    let basePath: String

    init(baseURL: URL) {
        var text = baseURL.absoluteString
        if !text.hasSuffix("/") { text += "/" }
        self.baseURL = URL(string: text) ?? baseURL
        let encodedPath = URLComponents(url: self.baseURL, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        let decoded = encodedPath.removingPercentEncoding ?? encodedPath
        basePath = decoded.hasSuffix("/") ? String(decoded.dropLast()) : decoded
    }

    /// Characters left as they are in a path segment: RFC 3986 unreserved. Everything else is encoded.
    private static let segmentAllowed: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return set
    }()

    /// The percent-encoded path below the base for a normalized remote path (`/a b/c` gives `a%20b/c`).
    static func encode(_ remotePath: String) -> String {
        RemotePath.components(of: remotePath)
            .map { $0.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? $0 }
            .joined(separator: "/")
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
        let trimmed = href.trimmingCharacters(in: .whitespacesAndNewlines)
        var encodedPath: String
        if trimmed.contains("://") {
            guard let components = URLComponents(string: trimmed) else { return nil }
            encodedPath = components.percentEncodedPath
        } else if trimmed.hasPrefix("/") {
            encodedPath = trimmed
        } else {
            let base = basePath + (requestPath == "/" ? "" : requestPath)
            encodedPath = (base.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? base) + "/" + trimmed
        }
        if let query = encodedPath.firstIndex(where: { $0 == "?" || $0 == "#" }) { encodedPath = String(encodedPath[..<query]) }
        let decoded = encodedPath.removingPercentEncoding ?? encodedPath
        let relative: Substring
        if basePath.isEmpty {
            relative = Substring(decoded)
        } else if decoded == basePath || decoded == basePath + "/" {
            relative = "/"
        } else if decoded.hasPrefix(basePath + "/") {
            relative = decoded.dropFirst(basePath.count)
        } else {
            return nil
        }
        return try? RemotePath.normalize(String(relative))
    }
}
