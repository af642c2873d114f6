import Foundation
import GatewayCore
import GatewayTransport

/// Nextcloud's and ownCloud's own public links: the OCS Share API
/// (`/ocs/v2.php/apps/files_sharing/api/v1/shares`), public link shares (`shareType=3`),
/// read-only, with an expiry date.
///
/// The API names items by their path in the user's files, so the remote's URL must be one of the
/// server's WebDAV endpoints: `…/remote.php/dav/files/USER/…` or `…/remote.php/webdav/…`; the part
/// before `/remote.php` is the server's root.
struct OCSShares: Sendable {
    /// The shares endpoint.
    let endpoint: URL
    /// The remote's root inside the user's files (`""` or `/Documents`), decoded.
    let filesRoot: String

    /// Public link shares.
    static let publicLinkType = 3
    /// Read only.
    static let readPermission = 1

    /// The endpoint for a remote rooted at `baseURL`; `nil` when the URL is not a Nextcloud or
    /// ownCloud WebDAV endpoint.
    init?(baseURL: URL) {
        guard let place = VendorEndpoint(baseURL: baseURL), let endpoint = place.url("/ocs/v2.php/apps/files_sharing/api/v1/shares") else {
            return nil
        }
        self.endpoint = endpoint
        self.filesRoot = place.filesRoot
    }

    /// The path the API knows a remote path by.
    func sharePath(_ path: String) -> String { path == "/" ? (filesRoot.isEmpty ? "/" : filesRoot) : filesRoot + path }

    /// Creates a read-only public link share of `path`, expiring on the day `expires` falls on (in
    /// UTC: the API takes a date), and returns its URL.
    func create(_ path: String, expires: Date?, client: HTTPClient) async throws -> URL {
        var form = [("path", sharePath(path)), ("shareType", String(Self.publicLinkType)), ("permissions", String(Self.readPermission))]
        if let expires { form.append(("expireDate", Self.day(expires))) }
        let body = form.map { "\($0.0)=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        let answer = try await request("POST", endpoint, path: path, body: Data(body.utf8),
                                       contentType: "application/x-www-form-urlencoded", client: client)
        guard case .object(let share) = answer, let text = share["url"]?.string, let url = URL(string: text),
              let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host != nil else {
            throw FileProviderError.malformedResponse(path: path, detail: "the server's share answer has no link URL")
        }
        return url
    }

    /// Deletes every public link share of `path`; returns how many there were.
    @discardableResult
    func revoke(_ path: String, client: HTTPClient) async throws -> Int {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "path", value: sharePath(path)), URLQueryItem(name: "reshares", value: "false")]
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let answer = try await request("GET", components.url!, path: path, body: nil, contentType: nil, client: client, missingIsEmpty: true)
        guard case .array(let shares) = answer else { return 0 }
        var removed = 0
        for case .object(let share) in shares where share["share_type"]?.integer == Self.publicLinkType {
            guard let id = share["id"]?.string ?? share["id"]?.integer.map(String.init),
                  !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { continue }
            _ = try await request("DELETE", endpoint.appendingPathComponent(id), path: path, body: nil, contentType: nil, client: client)
            removed += 1
        }
        return removed
    }

    /// One OCS call: the `ocs.data` of a successful answer.
    private func request(_ method: String, _ url: URL, path: String, body: Data?, contentType: String?, client: HTTPClient,
                         missingIsEmpty: Bool = false) async throws -> OCSValue {
        var headers: [(name: String, value: String)] = [("OCS-APIRequest", "true"), ("Accept", "application/json")]
        if let contentType { headers.append(("Content-Type", contentType)) }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = [components.percentEncodedQuery, "format=json"].compactMap { $0 }.joined(separator: "&")
        let request = HTTPRequest(method: method, url: components.url!, path: path, headers: headers, body: body.map { .data($0) } ?? .none)
        let (head, data) = try await client.send(request, maxBodySize: 4 << 20)
        let envelope = try? JSONDecoder().decode(OCSEnvelope.self, from: data)
        let code = envelope?.ocs.meta.statuscode
        if head.isSuccess, let envelope, code == 100 || code == 200 { return envelope.ocs.data ?? .null }
        if missingIsEmpty, head.status == 404 || code == 404 { return .array([]) }
        let message = envelope?.ocs.meta.message.map { TerminalText.escaped(String($0.prefix(200))) }
        if head.status == 404 || code == 404 {
            throw CocoaError.described(.fileNoSuchFile, path: path, remote: nil, reason: message ?? "the server has no such file to share")
        }
        if head.isSuccess {
            throw FileProviderHTTPError(statusCode: code ?? head.status, path: path, serverText: message ?? "the share API refused the request",
                                        retryAfter: nil, method: method)
        }
        throw FileProviderHTTPError(statusCode: head.status, path: path, serverText: message, retryAfter: head.retryAfter, method: method)
    }

    /// `YYYY-MM-DD` in UTC.
    static func day(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    /// `application/x-www-form-urlencoded` value encoding.
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~/")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

/// An OCS answer: `{"ocs": {"meta": {...}, "data": ...}}`.
struct OCSEnvelope: Decodable {
    struct Body: Decodable {
        struct Meta: Decodable {
            var status: String?
            var statuscode: Int?
            var message: String?
        }
        var meta: Meta
        var data: OCSValue?
    }
    var ocs: Body
}

/// A JSON value in an OCS answer (ids come as numbers or strings, depending on the server).
enum OCSValue: Decodable, Sendable {
    case object([String: OCSValue])
    case array([OCSValue])
    case text(String)
    case number(Double)
    case boolean(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .boolean(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .text(value) }
        else if let value = try? container.decode([OCSValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: OCSValue].self)) }
    }

    var string: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    var integer: Int? {
        switch self {
        case .number(let value) where value.isFinite && abs(value) < 1e15: return Int(value)
        case .text(let text): return Int(text)
        default: return nil
        }
    }
}
