import Foundation

/// A read-only WebDAV stand-in (PROPFIND, GET, HEAD, OPTIONS) over an in-memory tree, whose answer
/// to `PROPFIND Depth: infinity` is chosen: the whole tree, a 403 as RFC 4918 §9.1 allows, or a
/// 207 cut at a number of levels with no sign of it (as some servers in their default
/// configuration do: `Depth: infinity` taken as `1`). Files can be added and removed between
/// requests, as changes made on the server. Paths are under `/dav/`. With `syncCollectionLimit`
/// it also answers RFC 6578 `sync-collection` reports, every one as a first sync (a token is
/// answered as unknown), cut after that many members with the `507` for the folder itself that
/// RFC 6578 §3.6 prescribes.
public final class DepthDAVServer: Sendable {
    /// How `Depth: infinity` is answered.
    public enum InfiniteDepth: Sendable {
        /// Every level.
        case full
        /// `403` with `DAV:propfind-finite-depth`.
        case refused
        /// A 207 with this many levels below the folder asked for (`1`: its members only).
        case levels(Int)
    }

    private let http: ScriptedHTTPServer
    /// Items by path without the leading slash (`a/b.txt`); `nil` content for a folder.
    private let tree: Locked<[String: [UInt8]?]>

    public var port: Int { http.port }
    /// The WebDAV base URL (`http://127.0.0.1:PORT/dav/`).
    public var url: String { "http://127.0.0.1:\(port)/dav/" }
    /// Every request received, in order.
    public var requests: [ScriptedRequest] { http.requests }
    /// The `Depth` headers of the PROPFINDs received, in order.
    public var propfindDepths: [String] { requests.filter { $0.method == "PROPFIND" }.map { $0.headers["depth"] ?? "infinity" } }

    /// `files` maps paths (`tree/a/b.txt`) to contents; their folders are made too, and `folders`
    /// adds empty ones.
    public init(_ infiniteDepth: InfiniteDepth, files: [String: String], folders: [String] = [],
                syncCollectionLimit: Int? = nil) throws {
        var items: [String: [UInt8]?] = ["": nil]
        for folder in folders { Self.addFolders(folder, to: &items) }
        for (path, content) in files {
            Self.addFolders(TrashbinDAVServer.parent(of: path), to: &items)
            items[path] = Array(content.utf8)
        }
        let tree = Locked(items)
        self.tree = tree
        http = try ScriptedHTTPServer { request in
            Self.answer(request, infiniteDepth: infiniteDepth, syncCollectionLimit: syncCollectionLimit, tree: tree.value)
        }
    }

    public func stop() { http.stop() }

    /// Adds or replaces a file (and its folders), as a change made on the server.
    public func put(_ path: String, _ content: String) {
        tree.mutate {
            Self.addFolders(TrashbinDAVServer.parent(of: path), to: &$0)
            $0[path] = Array(content.utf8)
        }
    }

    private static func addFolders(_ path: String, to items: inout [String: [UInt8]?]) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += prefix.isEmpty ? String(component) : "/" + component
            if items[prefix] == nil { items[prefix] = .some(nil) }
        }
    }

    private static func answer(_ request: ScriptedRequest, infiniteDepth: InfiniteDepth, syncCollectionLimit: Int?,
                               tree: [String: [UInt8]?]) -> ScriptedReply {
        guard request.path == "/dav" || request.path.hasPrefix("/dav/") else { return .http("404 Not Found") }
        let key = TrashbinDAVServer.key(String(request.path.dropFirst("/dav".count)))
        guard let item = tree[key] else { return .http("404 Not Found") }
        switch request.method {
        case "OPTIONS":
            return .http("200 OK", headers: [("DAV", "1"), ("Allow", "OPTIONS, GET, HEAD, PROPFIND")])
        case "GET", "HEAD":
            guard let content = item else { return .http("405 Method Not Allowed") }
            return .http("200 OK", headers: [("ETag", etag(content)), ("Last-Modified", "Mon, 23 Nov 2026 10:00:00 GMT")],
                         body: request.method == "HEAD" ? [] : content)
        case "PROPFIND":
            let depth: Int
            switch request.headers["depth"] ?? "infinity" {
            case "0": depth = 0
            case "1": depth = 1
            default:
                switch infiniteDepth {
                case .full: depth = .max
                case .levels(let levels): depth = levels
                case .refused:
                    return .http("403 Forbidden", headers: [("Content-Type", "application/xml; charset=utf-8")],
                                 body: "<?xml version=\"1.0\"?><D:error xmlns:D=\"DAV:\"><D:propfind-finite-depth/></D:error>")
                }
            }
            let below = key.isEmpty ? 0 : key.split(separator: "/").count
            // Parents before children, as servers send them.
            let members = tree.keys.filter { path in
                guard path == key || key.isEmpty || path.hasPrefix(key + "/") else { return false }
                return path.split(separator: "/").count - below <= depth
            }.sorted()
            return .multistatus(members.map { response($0, content: tree[$0]!) }.joined())
        case "REPORT" where syncCollectionLimit != nil && item == nil:
            let body = String(decoding: request.body, as: UTF8.self)
            guard body.contains("sync-collection") else { return .http("403 Forbidden") }
            if body.contains("<D:sync-token>") {
                return .http("403 Forbidden", headers: [("Content-Type", "application/xml; charset=utf-8")],
                             body: "<?xml version=\"1.0\"?><D:error xmlns:D=\"DAV:\"><D:valid-sync-token/></D:error>")
            }
            let members = tree.keys.filter { $0 != key && TrashbinDAVServer.parent(of: $0) == key }.sorted()
            let sent = members.prefix(syncCollectionLimit!)
            var answer = sent.map { response($0, content: tree[$0]!) }.joined()
            if sent.count < members.count {
                answer += "<D:response><D:href>\(TrashbinDAVServer.href("/dav", key, folder: true))</D:href>"
                    + "<D:status>HTTP/1.1 507 Insufficient Storage</D:status></D:response>"
            }
            return .multistatus(answer + "<D:sync-token>http://127.0.0.1/sync/\(sent.count)</D:sync-token>")
        default:
            return .http("405 Method Not Allowed")
        }
    }

    private static func etag(_ content: [UInt8]) -> String {
        "\"\(content.count)-\(content.reduce(0) { ($0 &* 31) &+ Int($1) })\""
    }

    private static func response(_ path: String, content: [UInt8]?) -> String {
        let href = TrashbinDAVServer.href("/dav", path, folder: content == nil)
        let properties = content.map { "<D:resourcetype/><D:getcontentlength>\($0.count)</D:getcontentlength><D:getetag>\(etag($0))</D:getetag>" }
            ?? "<D:resourcetype><D:collection/></D:resourcetype>"
        return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop>\(properties)"
            + "<D:getlastmodified>Mon, 23 Nov 2026 10:00:00 GMT</D:getlastmodified></D:prop>"
            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    }
}
