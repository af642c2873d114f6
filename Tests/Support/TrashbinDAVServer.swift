import Foundation

/// A small stand-in for a Nextcloud or ownCloud server's WebDAV files and trash bin, following
/// their documented behaviour:
/// - files at `/remote.php/dav/files/USER/…` (PROPFIND Depth 0 and 1, Depth infinity refused
///   as Nextcloud does by default, GET, PUT, MKCOL, MOVE, DELETE), with ownCloud's `oc:fileid`;
/// - a `DELETE` moves the item into the user's trash bin (unless the trash bin app is "off"):
///   Nextcloud names it `NAME.dSECONDS` in `/remote.php/dav/trashbin/USER/trash/` and restores it
///   with a `MOVE` into `…/restore/` (to its original location; an occupied one gets
///   `NAME (restored)`, as Nextcloud does); an entry of the same name from the same second is
///   replaced, as Nextcloud's `move2trash` does; ownCloud lists it by file id in
///   `/remote.php/dav/trash-bin/USER/` and restores it with a `MOVE` to any path of the user's
///   files (`Overwrite: F` gives 412 over an existing item, a missing folder 409);
/// - trash bin entries carry `trashbin-original-location` (the path in the user's files, without
///   a leading `/`), the deletion time in Unix seconds and the original name, in Nextcloud's
///   (`http://nextcloud.org/ns`) or ownCloud's (`http://owncloud.org/ns`) namespace;
/// - a `DELETE` of a trash bin entry removes it for good; of the trash bin, empties it.
///
/// No Nextcloud or ownCloud can run in the test environment (PHP and a database), so the
/// provider's trash bin client is tested against this; docs/undo.md says so.
public final class TrashbinDAVServer: Sendable {
    public enum Dialect: Sendable { case nextcloud, owncloud }

    /// One file or folder.
    struct Node: Sendable {
        var isFolder: Bool
        var data: [UInt8] = []
        var id: Int
        var modified = Date()
    }

    /// An item in the trash bin: its tree (paths relative to the item, `""` for itself).
    struct Trashed: Sendable {
        var tree: [String: Node]
        var location: String
        var deleted: Int64
    }

    struct State: Sendable {
        var files: [String: Node] = ["": Node(isFolder: true, id: 1)]
        var trash: [String: Trashed] = [:]
        var nextID = 2
    }

    public let dialect: Dialect
    public let user: String
    public let password: String
    private let http: ScriptedHTTPServer
    private let state = Locked(State())

    public var port: Int { http.port }
    /// The WebDAV URL of the user's files (rooted at `root`).
    public func webDAVURL(root: String = "/") -> String { "http://127.0.0.1:\(port)/remote.php/dav/files/\(user)\(root)" }
    /// The requests received.
    public var requests: [ScriptedRequest] { http.requests }
    /// The trash bin's entries: name and original location (`Documents/a.txt`).
    public var trashbin: [(name: String, location: String)] {
        state.value.trash.map { ($0.key, $0.value.location) }.sorted { $0.name < $1.name }
    }
    /// Whether a path of the user's files (`/a/b.txt`) exists, and its content when a file.
    public func file(_ path: String) -> [UInt8]? { state.value.files[Self.key(path)].map(\.data) }
    public func exists(_ path: String) -> Bool { state.value.files[Self.key(path)] != nil }

    /// `trashbinEnabled: false` plays a server whose trash bin app is off: `DELETE` is final and
    /// the trash bin's URL answers 404.
    /// `trashbinFileIDs: false` leaves `oc:fileid` out of trash bin entries (Nextcloud documents
    /// only its three `nc:` properties there).
    public init(_ dialect: Dialect, user: String = "alice", password: String = "alice-Nc-Pa55word", trashbinEnabled: Bool = true,
                trashbinFileIDs: Bool = true) throws {
        self.dialect = dialect
        self.user = user
        self.password = password
        let state = state
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        http = try ScriptedHTTPServer { request in
            guard request.headers["authorization"] == expected else {
                return .http("401 Unauthorized", headers: [("WWW-Authenticate", "Basic realm=\"stand-in\"")])
            }
            return state.mutate {
                Self.answer(request, dialect: dialect, user: user, trashbinEnabled: trashbinEnabled, trashbinFileIDs: trashbinFileIDs, state: &$0)
            }
        }
    }

    public func stop() { http.stop() }

    /// Puts a file into the trash bin directly, as the web interface would: `location` without a leading `/`.
    public func plant(name: String, location: String, content: String, deleted: Int64) {
        state.mutate {
            $0.trash[name] = Trashed(tree: ["": Node(isFolder: false, data: Array(content.utf8), id: $0.nextID)], location: location, deleted: deleted)
            $0.nextID += 1
        }
    }

    // MARK: Answers

    static func key(_ path: String) -> String {
        path.split(separator: "/").joined(separator: "/")
    }

    private static func answer(_ request: ScriptedRequest, dialect: Dialect, user: String, trashbinEnabled: Bool, trashbinFileIDs: Bool,
                               state: inout State) -> ScriptedReply {
        let path = request.path
        let filesPrefix = "/remote.php/dav/files/\(user)"
        let trashPrefix = dialect == .nextcloud ? "/remote.php/dav/trashbin/\(user)/trash" : "/remote.php/dav/trash-bin/\(user)"
        let restorePrefix = "/remote.php/dav/trashbin/\(user)/restore/"
        if path == filesPrefix || path.hasPrefix(filesPrefix + "/") {
            return files(request, key: key(String(path.dropFirst(filesPrefix.count))), filesPrefix: filesPrefix, dialect: dialect,
                         trashbinEnabled: trashbinEnabled, state: &state)
        }
        guard trashbinEnabled, path == trashPrefix || path.hasPrefix(trashPrefix + "/") else { return .http("404 Not Found") }
        let name = key(String(path.dropFirst(trashPrefix.count)))
        switch request.method {
        case "PROPFIND":
            if name.isEmpty {
                var responses = response(href: trashPrefix + "/", node: Node(isFolder: true, id: 0), dialect: dialect)
                if request.headers["depth"] == "1" {
                    for (entry, item) in state.trash {
                        responses += response(href: trashPrefix + "/" + escape(entry), node: item.tree[""]!, dialect: dialect, trashed: item,
                                              fileID: trashbinFileIDs)
                    }
                }
                return .multistatus(responses, namespaces: true)
            }
            guard let item = state.trash[name] else { return .http("404 Not Found") }
            return .multistatus(response(href: trashPrefix + "/" + escape(name), node: item.tree[""]!, dialect: dialect, trashed: item,
                                         fileID: trashbinFileIDs), namespaces: true)
        case "DELETE":
            if name.isEmpty { state.trash = [:] } else if state.trash.removeValue(forKey: name) == nil { return .http("404 Not Found") }
            return .http("204 No Content")
        case "MOVE":
            guard let item = state.trash[name], let destination = request.headers["destination"].flatMap(URL.init(string:))?.path else {
                return .http("404 Not Found")
            }
            var target: String
            if dialect == .nextcloud {
                guard destination == restorePrefix + name else { return .http("403 Forbidden") }
                target = item.location
                if state.files[target] != nil {
                    // Nextcloud keeps both: the restored item gets another name.
                    target += " (restored)"
                }
                if state.files[parent(of: target)] == nil { target = key(last(of: target)) }  // a missing folder: to the root
            } else {
                guard destination.hasPrefix(filesPrefix + "/") else { return .http("403 Forbidden") }
                target = key(String(destination.dropFirst(filesPrefix.count)))
                if state.files[target] != nil { return .http("412 Precondition Failed") }
                if state.files[parent(of: target)]?.isFolder != true { return .http("409 Conflict") }
            }
            for (relative, node) in item.tree { state.files[relative.isEmpty ? target : target + "/" + relative] = node }
            state.trash[name] = nil
            return .http("201 Created")
        default:
            return .http("405 Method Not Allowed")
        }
    }

    private static func files(_ request: ScriptedRequest, key name: String, filesPrefix: String, dialect: Dialect,
                              trashbinEnabled: Bool, state: inout State) -> ScriptedReply {
        switch request.method {
        case "PROPFIND":
            // Nextcloud refuses Depth: infinity by default (403, Sabre's PropFind depth check).
            if request.headers["depth"] == nil || request.headers["depth"] == "infinity" { return .http("403 Forbidden") }
            guard let node = state.files[name] else { return .http("404 Not Found") }
            var responses = response(href: href(filesPrefix, name, folder: node.isFolder), node: node, dialect: dialect)
            if node.isFolder, request.headers["depth"] == "1" {
                for (child, item) in state.files where !child.isEmpty && parent(of: child) == name {
                    responses += response(href: href(filesPrefix, child, folder: item.isFolder), node: item, dialect: dialect)
                }
            }
            return .multistatus(responses, namespaces: true)
        case "GET", "HEAD":
            guard let node = state.files[name], !node.isFolder else { return .http("404 Not Found") }
            return .http("200 OK", headers: [("ETag", etag(node))], body: request.method == "HEAD" ? [] : node.data)
        case "PUT":
            guard state.files[parent(of: name)]?.isFolder == true else { return .http("409 Conflict") }
            if state.files[name]?.isFolder == true { return .http("405 Method Not Allowed") }
            let existed = state.files[name] != nil
            var node = Node(isFolder: false, data: request.body, id: state.files[name]?.id ?? state.nextID)
            if !existed { state.nextID += 1 }
            // Nextcloud and ownCloud take the file's time from X-OC-Mtime (Unix seconds) and say so.
            var extra: [(String, String)] = []
            if let seconds = request.headers["x-oc-mtime"].flatMap(Double.init) {
                node.modified = Date(timeIntervalSince1970: seconds)
                extra.append(("X-OC-MTime", "accepted"))
            }
            state.files[name] = node
            return .http(existed ? "204 No Content" : "201 Created", headers: [("ETag", etag(node))] + extra)
        case "PROPPATCH":
            // Sabre's DAV:lastmodified setter as Nextcloud and ownCloud have it: a Unix time.
            guard var node = state.files[name] else { return .http("404 Not Found") }
            let text = String(decoding: request.body, as: UTF8.self)
            guard let open = text.range(of: "lastmodified>"), let close = text.range(of: "</", range: open.upperBound..<text.endIndex),
                  let seconds = Double(text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)) else {
                return .http("400 Bad Request")
            }
            node.modified = Date(timeIntervalSince1970: seconds)
            state.files[name] = node
            return .multistatus("<D:response><D:href>\(href(filesPrefix, name, folder: node.isFolder))</D:href><D:propstat><D:prop><D:lastmodified/></D:prop>"
                                + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>", namespaces: true)
        case "MKCOL":
            guard state.files[name] == nil else { return .http("405 Method Not Allowed") }
            guard state.files[parent(of: name)]?.isFolder == true else { return .http("409 Conflict") }
            state.files[name] = Node(isFolder: true, id: state.nextID)
            state.nextID += 1
            return .http("201 Created")
        case "DELETE":
            guard !name.isEmpty, let node = state.files[name] else { return .http("404 Not Found") }
            if let wanted = request.headers["if-match"], wanted != etag(node) { return .http("412 Precondition Failed") }
            let tree = take(name, from: &state.files)
            if trashbinEnabled {
                // Nextcloud: an entry of the same name from the same second is replaced (its
                // move2trash unlinks it), whatever path it came from.
                let seconds = Int64(Date().timeIntervalSince1970)
                let entry = dialect == .nextcloud ? "\(last(of: name)).d\(seconds)" : String(tree[""]!.id)
                state.trash[entry] = Trashed(tree: tree, location: name, deleted: seconds)
            }
            return .http("204 No Content", headers: [("Date", httpDate(Date()))])
        case "MOVE":
            guard let destination = request.headers["destination"].flatMap(URL.init(string:))?.path,
                  destination.hasPrefix(filesPrefix + "/") else { return .http("400 Bad Request") }
            let target = key(String(destination.dropFirst(filesPrefix.count)))
            guard state.files[name] != nil else { return .http("404 Not Found") }
            guard state.files[parent(of: target)]?.isFolder == true else { return .http("409 Conflict") }
            let existed = state.files[target] != nil
            if existed {
                guard request.headers["overwrite"] != "F" else { return .http("412 Precondition Failed") }
                _ = take(target, from: &state.files)
            }
            for (relative, node) in take(name, from: &state.files) { state.files[relative.isEmpty ? target : target + "/" + relative] = node }
            return .http(existed ? "204 No Content" : "201 Created")
        default:
            return .http("405 Method Not Allowed")
        }
    }

    /// Removes `name` and everything below it; returns them by path relative to `name`.
    private static func take(_ name: String, from files: inout [String: Node]) -> [String: Node] {
        var tree: [String: Node] = [:]
        for (path, node) in files where path == name || path.hasPrefix(name + "/") {
            tree[path == name ? "" : String(path.dropFirst(name.count + 1))] = node
            files[path] = nil
        }
        return tree
    }

    static func parent(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return "" }
        return String(name[..<slash])
    }

    static func last(of name: String) -> String { name.split(separator: "/").last.map(String.init) ?? name }

    static func escape(_ name: String) -> String {
        name.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? String($0)
        }.joined(separator: "/")
    }

    static func href(_ prefix: String, _ name: String, folder: Bool) -> String {
        (name.isEmpty ? prefix : prefix + "/" + escape(name)) + (folder ? "/" : "")
    }

    static func etag(_ node: Node) -> String { "\"\(node.id)-\(node.data.count)-\(node.data.reduce(0) { ($0 &* 31) &+ Int($1) })\"" }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    private static func response(href: String, node: Node, dialect: Dialect, trashed: Trashed? = nil, fileID: Bool = true) -> String {
        var properties = node.isFolder ? "<D:resourcetype><D:collection/></D:resourcetype>"
            : "<D:resourcetype/><D:getcontentlength>\(node.data.count)</D:getcontentlength>"
        properties += "<D:getlastmodified>\(httpDate(node.modified))</D:getlastmodified><D:getetag>\(etag(node))</D:getetag>"
        if fileID { properties += "<oc:fileid>\(node.id)</oc:fileid>" }
        if let trashed {
            let prefix = dialect == .nextcloud ? "nc" : "oc"
            let nameProperty = dialect == .nextcloud ? "trashbin-filename" : "trashbin-original-filename"
            let timeProperty = dialect == .nextcloud ? "trashbin-deletion-time" : "trashbin-delete-timestamp"
            properties += "<\(prefix):\(nameProperty)>\(xml(last(of: trashed.location)))</\(prefix):\(nameProperty)>"
                + "<\(prefix):trashbin-original-location>\(xml(trashed.location))</\(prefix):trashbin-original-location>"
                + "<\(prefix):\(timeProperty)>\(trashed.deleted)</\(prefix):\(timeProperty)>"
        }
        return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop>\(properties)</D:prop>"
            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    }

    static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension ScriptedReply {
    /// A 207 whose root declares ownCloud's (`oc:`) and Nextcloud's (`nc:`) namespaces too, with
    /// the server's `Date`.
    static func multistatus(_ responses: String, namespaces: Bool) -> ScriptedReply {
        http("207 Multi-Status", headers: [("Content-Type", "application/xml; charset=utf-8"), ("Date", TrashbinDAVServer.httpDate(Date()))],
             body: "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:multistatus xmlns:D=\"DAV:\" xmlns:oc=\"http://owncloud.org/ns\" "
                + "xmlns:nc=\"http://nextcloud.org/ns\">\(responses)</D:multistatus>")
    }
}
