import Foundation
import GatewayCore
import GatewayServeRequests

/// Request paths to remote paths and back: the prefix, percent-decoding, and confinement to the
/// served folder (no `..`, no encoded `%2e%2e`, no NUL, nothing above the root).
struct ServePaths: Sendable {
    /// The served folder on the remote (normalized).
    let root: String
    /// The URL prefix (`/dav`), without a trailing slash; empty for none.
    let prefix: String

    init(root: String, basePath: String) throws {
        self.root = try RemotePath.normalize(root)
        var prefix = basePath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty, !prefix.hasPrefix("/") { prefix = "/" + prefix }
        self.prefix = prefix
    }

    /// The remote path a raw (percent-encoded) request path names, or `nil` when it is outside the
    /// prefix or not acceptable.
    func remote(forRequestPath raw: String) -> String? {
        var path = Substring(raw)
        // A fragment is never sent by a client; one in a request is refused, not cut off (a
        // DELETE of "folder/#x" must not remove "folder").
        guard !path.contains("#") else { return nil }
        if let query = path.firstIndex(of: "?") { path = path[..<query] }
        if !prefix.isEmpty {
            guard path.hasPrefix(prefix) else { return nil }
            path = path.dropFirst(prefix.count)
            guard path.isEmpty || path.hasPrefix("/") else { return nil }
        }
        var segments: [String] = []
        for encoded in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let segment = String(encoded).removingPercentEncoding, !segment.isEmpty,
                  !segment.contains("\u{0}"), !segment.contains("/"), segment != ".", segment != ".." else { return nil }
            segments.append(segment)
        }
        let joined = segments.isEmpty ? root : (root == "/" ? "" : root) + "/" + segments.joined(separator: "/")
        guard let normalized = try? RemotePath.normalize(joined),
              normalized == root || normalized.hasPrefix(root == "/" ? "/" : root + "/") else { return nil }
        return normalized
    }

    /// The remote path of a `Destination` header: an absolute URL (its path) or an absolute path.
    func remote(forDestination header: String) -> String? {
        if header.hasPrefix("/") { return remote(forRequestPath: header) }
        guard let components = URLComponents(string: header), components.scheme != nil else { return nil }
        return remote(forRequestPath: components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
    }

    /// The href of a remote path (below the root), percent-encoded, with a trailing slash for folders.
    func href(for remote: String, isFolder: Bool) -> String {
        let relative = RemotePath.relative(remote, to: root) ?? ""
        var href = prefix
        for segment in relative.split(separator: "/") {
            href += "/" + (String(segment).addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? "")
        }
        if isFolder || href.isEmpty { href += "/" }
        return href
    }

    private static let segmentCharacters: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._~!$&'()*+,;=:@")
        return set
    }()
}
