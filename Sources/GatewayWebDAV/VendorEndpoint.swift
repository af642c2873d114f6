import Foundation
import GatewayCore

/// Where a Nextcloud or ownCloud remote lives on its server, read from the remote's URL: one of the
/// server's WebDAV endpoints, `…/remote.php/dav/files/USER/…` or `…/remote.php/webdav/…`. The
/// server's other APIs (OCS shares, the trash bin) name items by their path in the user's files.
struct VendorEndpoint: Sendable {
    /// The remote's URL.
    let baseURL: URL
    /// The URL path before `/remote.php` (percent-encoded; `""` for a server at the host's root).
    let serverPath: String
    /// The user in the URL (`dav/files/USER`), decoded; `nil` for `remote.php/webdav`.
    let user: String?
    /// The remote's root inside the user's files (`""` or `/Documents`), decoded.
    let filesRoot: String

    /// `nil` when `baseURL` is not a Nextcloud or ownCloud WebDAV endpoint.
    init?(baseURL: URL) {
        guard let components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return nil }
        let path = components.percentEncodedPath
        guard let marker = path.range(of: "/remote.php/") else { return nil }
        let rest = path[marker.upperBound...].split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let inFiles: ArraySlice<String>
        if rest.count >= 3, rest[0] == "dav", rest[1] == "files" {
            guard let user = rest[2].removingPercentEncoding, !user.isEmpty else { return nil }
            self.user = user
            inFiles = rest.dropFirst(3)
        } else if rest.first == "webdav" {
            self.user = nil
            inFiles = rest.dropFirst(1)
        } else {
            return nil
        }
        var root = ""
        for segment in inFiles {
            guard let decoded = segment.removingPercentEncoding else { return nil }
            root += "/" + decoded
        }
        self.baseURL = baseURL
        self.serverPath = String(path[..<marker.lowerBound])
        self.filesRoot = root
    }

    /// The URL of `percentEncodedPath` (starting with `/`) below the server's root, on the remote's
    /// origin, without query.
    func url(_ percentEncodedPath: String) -> URL? {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return nil }
        components.percentEncodedPath = serverPath + percentEncodedPath
        components.query = nil
        return components.url
    }

    /// The path in the user's files of the remote's `path`.
    func filesPath(_ path: String) -> String { path == "/" ? (filesRoot.isEmpty ? "/" : filesRoot) : filesRoot + path }

    /// The remote's path for a path in the user's files (with or without its leading `/`), or
    /// `nil` when it lies outside the remote's root.
    func remotePath(fromFilesPath files: String) -> String? {
        let absolute = files.hasPrefix("/") ? files : "/" + files
        guard let normalized = try? RemotePath.normalize(absolute) else { return nil }
        if filesRoot.isEmpty { return normalized }
        if normalized == filesRoot { return "/" }
        guard normalized.hasPrefix(filesRoot + "/") else { return nil }
        return String(normalized.dropFirst(filesRoot.count))
    }
}
