import Foundation

/// A small stand-in for Nextcloud's OCS Share API (`/ocs/v2.php/apps/files_sharing/api/v1/shares`),
/// following the documented requests and answers: Basic authentication, the `OCS-APIRequest:
/// true` header (without it Nextcloud answers 401, "CSRF check failed"), `format=json`, public
/// link shares (`shareType=3`) created with `POST` (form fields `path`, `shareType`,
/// `permissions`, `expireDate` as `YYYY-MM-DD`), listed with `GET ?path=`, deleted with `DELETE
/// …/shares/ID`; v2 answers carry the HTTP status in `ocs.meta.statuscode`, a missing file is 404.
///
/// No Nextcloud can be installed in the test environment (it needs PHP and a database), so the
/// provider's OCS client is tested against this; docs/links.md says so.
public final class OCSShareServer: Sendable {
    /// One share the server keeps.
    public struct Share: Sendable, Equatable {
        public var id: Int
        public var path: String
        public var shareType: Int
        public var permissions: Int
        public var expireDate: String?
        public var token: String
    }

    private let http: ScriptedHTTPServer
    private let state: Locked<(shares: [Share], nextID: Int)>
    public let user: String
    public let password: String
    /// The files (paths in the user's files) shares may be made of.
    public let files: Set<String>

    public var port: Int { http.port }
    /// The WebDAV URL a remote on this server would use, rooted at `root` in the user's files.
    public func webDAVURL(root: String = "/") -> String { "http://127.0.0.1:\(port)/remote.php/dav/files/\(user)\(root)" }
    /// The shares kept now.
    public var shares: [Share] { state.value.shares }
    /// The requests received.
    public var requests: [ScriptedRequest] { http.requests }

    public init(user: String = "alice", password: String = "alice-Nc-Pa55word", files: Set<String>, shares: [Share] = []) throws {
        let state = Locked((shares: shares, nextID: (shares.map(\.id).max() ?? 0) + 1))
        self.state = state
        self.user = user
        self.password = password
        self.files = files
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        http = try ScriptedHTTPServer { request in
            Self.answer(request, state: state, authorization: expected, files: files)
        }
    }

    public func stop() { http.stop() }

    static let endpoint = "/ocs/v2.php/apps/files_sharing/api/v1/shares"

    private static func answer(_ request: ScriptedRequest, state: Locked<(shares: [Share], nextID: Int)>, authorization: String,
                               files: Set<String>) -> ScriptedReply {
        guard request.headers["authorization"] == authorization else {
            return ocs(401, "Unauthorised", data: "[]", headers: [("WWW-Authenticate", "Basic realm=\"Nextcloud\"")])
        }
        guard request.headers["ocs-apirequest"]?.lowercased() == "true" else { return ocs(401, "CSRF check failed", data: "[]") }
        let target = URLComponents(string: request.target)
        let query = Dictionary((target?.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
        guard query["format"] == "json" else { return .http("400 Bad Request", body: "this stand-in answers format=json only") }
        let path = target?.percentEncodedPath ?? ""
        switch (request.method, path) {
        case ("POST", endpoint):
            guard request.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true else {
                return ocs(400, "Wrong content type", data: "[]")
            }
            var form: [String: String] = [:]
            for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
                form[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            guard let file = form["path"], files.contains(file) else { return ocs(404, "Wrong path, file/folder does not exist", data: "[]") }
            guard form["shareType"] == "3" else { return ocs(400, "Unknown share type", data: "[]") }
            let permissions = Int(form["permissions"] ?? "1") ?? 1
            if let date = form["expireDate"], date.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) == nil {
                return ocs(404, "Invalid date. Format must be YYYY-MM-DD", data: "[]")
            }
            let share = state.mutate { value -> Share in
                let share = Share(id: value.nextID, path: file, shareType: 3, permissions: permissions, expireDate: form["expireDate"],
                                  token: "Tok\(value.nextID)x\(UUID().uuidString.prefix(6))")
                value.nextID += 1
                value.shares.append(share)
                return share
            }
            return ocs(200, "OK", data: json(share, host: request.headers["host"] ?? "127.0.0.1"))
        case ("GET", endpoint):
            let wanted = query["path"]
            if let wanted, !files.contains(wanted) { return ocs(404, "Wrong path, file/folder does not exist", data: "[]") }
            let list = state.value.shares.filter { wanted == nil || $0.path == wanted }
            return ocs(200, "OK", data: "[" + list.map { json($0, host: request.headers["host"] ?? "127.0.0.1") }.joined(separator: ",") + "]")
        case ("DELETE", let text) where text.hasPrefix(endpoint + "/"):
            guard let id = Int(text.dropFirst(endpoint.count + 1)) else { return ocs(404, "Wrong share ID, share does not exist", data: "[]") }
            let removed = state.mutate { value -> Bool in
                let before = value.shares.count
                value.shares.removeAll { $0.id == id }
                return value.shares.count < before
            }
            return removed ? ocs(200, "OK", data: "[]") : ocs(404, "Wrong share ID, share does not exist", data: "[]")
        default:
            return ocs(404, "Invalid query", data: "[]")
        }
    }

    private static func json(_ share: Share, host: String) -> String {
        let expiration = share.expireDate.map { "\"\($0) 00:00:00\"" } ?? "null"
        // Nextcloud sends ids as numbers in v2 (older servers: strings); mixed here on purpose.
        let id = share.id % 2 == 0 ? "\"\(share.id)\"" : "\(share.id)"
        return #"{"id":\#(id),"share_type":\#(share.shareType),"uid_owner":"alice","permissions":\#(share.permissions),"#
            + #""path":"\#(share.path)","item_type":"file","expiration":\#(expiration),"token":"\#(share.token)","#
            + #""url":"http://\#(host)/s/\#(share.token)"}"#
    }

    private static func ocs(_ status: Int, _ message: String, data: String, headers: [(String, String)] = []) -> ScriptedReply {
        let reason = [200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"][status] ?? "Error"
        let body = #"{"ocs":{"meta":{"status":"\#(status == 200 ? "ok" : "failure")","statuscode":\#(status),"message":"\#(message)"},"data":\#(data)}}"#
        return .http("\(status) \(reason)", headers: headers + [("Content-Type", "application/json; charset=utf-8")], body: body)
    }
}
