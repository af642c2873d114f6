public import Foundation
import Crypto
import Synchronization

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`), written from AWS's specification and checked
/// against its published test suite: the canonical request, the string to sign, the signing key
/// derived for one day, region and service, and the `Authorization` header or presigned query.
///
/// The signer knows nothing of HTTP transport: the caller gives the request's method, its path and
/// query exactly as they go on the wire, and the headers it will send, and adds what the signer
/// returns. (Debian's libcurl 7.88 has `CURLOPT_AWS_SIGV4`, with bugs in its canonical query and
/// path; it is not used.)
public struct SigV4Signer: Sendable {
    /// The access key id (`AKIA…`), sent in the clear as part of the credential scope.
    public var accessKeyID: String
    /// The secret key: never sent, only used to derive signing keys.
    public var secretAccessKey: String
    /// A temporary credential's session token, sent as `X-Amz-Security-Token` (and signed).
    public var sessionToken: String?
    /// The region (`us-east-1`, or what an S3-compatible server expects).
    public var region: String
    /// The service (`s3`).
    public var service: String
    /// The last signing key derived and what it was derived from (shared by copies of the signer;
    /// looked up by all of its inputs, so a changed property derives a new one).
    private let keys = KeptKey()

    /// How the request's path becomes the canonical URI.
    public enum PathCanonicalization: Sendable {
        /// As sent (already encoded once), with no normalization: what S3 expects (`a//b` and `a/./b`
        /// are keys of their own).
        case s3
        /// Dot segments and repeated slashes removed, then every segment encoded again: what every
        /// other AWS service expects (and the generic test suite uses).
        case normalized
    }

    /// A request as the signer sees it.
    public struct Request: Sendable {
        /// `GET`, `PUT`, ...
        public var method: String
        /// The path as it goes on the wire (`/bucket/a%20b.txt`).
        public var path: String
        /// The query as it goes on the wire, without `?` (`list-type=2&prefix=a%2F`); empty for none.
        public var query: String
        /// The headers to sign, `Host` included, with their values as sent.
        public var headers: [(name: String, value: String)]
        /// The hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
        public var payloadHash: String

        /// Creates a request.
        public init(method: String, path: String, query: String, headers: [(name: String, value: String)], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    /// The payload hash of a body that is not signed (streamed over TLS).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of an empty body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// Creates a signer.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String, service: String = "s3") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
    }

    // MARK: The pieces

    /// The canonical request and its signed-header list (`host;x-amz-date`).
    public func canonicalRequest(_ request: Request, path style: PathCanonicalization = .s3) -> (text: String, signedHeaders: String) {
        var grouped: [String: [String]] = [:]
        for header in request.headers {
            grouped[header.name.lowercased(), default: []].append(Self.trimmedValue(header.value))
        }
        let names = grouped.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(grouped[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [
            request.method,
            Self.canonicalURI(request.path, style: style),
            Self.canonicalQuery(request.query),
            canonicalHeaders,
            signedHeaders,
            request.payloadHash,
        ].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// The string to sign for a canonical request made at `timestamp` (`20150830T123600Z`).
    public func stringToSign(canonicalRequest: String, timestamp: String) -> String {
        let digest = SHA256.hash(data: Data(canonicalRequest.utf8))
        return ["AWS4-HMAC-SHA256", timestamp, scope(day: String(timestamp.prefix(8))), Self.hex(digest)].joined(separator: "\n")
    }

    /// `YYYYMMDD/region/service/aws4_request`.
    public func scope(day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    /// The hex signature of a string to sign, with the key derived for `day` (`YYYYMMDD`).
    public func signature(of stringToSign: String, day: String) -> String {
        Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(day: day)))
    }

    /// The key derived for `day`, region and service (four HMACs, the same all day: kept).
    func signingKey(day: String) -> SymmetricKey {
        let inputs = [secretAccessKey, day, region, service]
        if let kept = keys.state.withLock({ $0?.inputs == inputs ? $0?.key : nil }) { return kept }
        var key = SymmetricKey(data: Data(("AWS4" + secretAccessKey).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        keys.state.withLock { $0 = (inputs, key) }
        return key
    }

    /// The `Authorization` header's value for `request` (which must already hold `x-amz-date`, or
    /// the `Date` the server checks) at `timestamp`.
    public func authorization(for request: Request, timestamp: String, path style: PathCanonicalization = .s3) -> String {
        let (canonical, signedHeaders) = canonicalRequest(request, path: style)
        let day = String(timestamp.prefix(8))
        let signature = signature(of: stringToSign(canonicalRequest: canonical, timestamp: timestamp), day: day)
        return "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope(day: day)), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    // MARK: Whole requests

    /// The headers to add to a request to S3: `x-amz-date`, `x-amz-content-sha256`,
    /// `x-amz-security-token` (with a session token) and `Authorization`. `headers` are the others
    /// the request sends and signs (at least `Host`).
    public func signedHeaders(method: String, path: String, query: String, headers: [(name: String, value: String)],
                              payloadHash: String, date: Date) -> [(name: String, value: String)] {
        let timestamp = Self.timestamp(date)
        var added: [(name: String, value: String)] = [("x-amz-date", timestamp), ("x-amz-content-sha256", payloadHash)]
        if let sessionToken { added.append(("x-amz-security-token", sessionToken)) }
        let request = Request(method: method, path: path, query: query, headers: headers + added, payloadHash: payloadHash)
        added.append(("Authorization", authorization(for: request, timestamp: timestamp)))
        return added
    }

    /// A presigned query (AWS's "query string authentication"): the query to send instead of
    /// `query`, valid for `expires` seconds (1 to 604,800, seven days) from `date`, signing only the
    /// `Host` header, for a body that is not signed.
    public func presignedQuery(method: String, path: String, query: String, host: String, expires: Int, date: Date) -> String {
        let timestamp = Self.timestamp(date)
        var parameters = [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "X-Amz-Credential=" + S3URIEncoding.encode("\(accessKeyID)/\(scope(day: String(timestamp.prefix(8))))"),
            "X-Amz-Date=" + timestamp,
            "X-Amz-Expires=\(min(max(expires, 1), 604_800))",
            "X-Amz-SignedHeaders=host",
        ]
        if let sessionToken { parameters.append("X-Amz-Security-Token=" + S3URIEncoding.encode(sessionToken)) }
        let full = ([query].filter { !$0.isEmpty } + parameters).joined(separator: "&")
        let request = Request(method: method, path: path, query: full, headers: [("host", host)], payloadHash: Self.unsignedPayload)
        let (canonical, _) = canonicalRequest(request)
        let signature = signature(of: stringToSign(canonicalRequest: canonical, timestamp: timestamp), day: String(timestamp.prefix(8)))
        return full + "&X-Amz-Signature=" + signature
    }

    // MARK: Rules

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    public static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// Lower-case hex of a digest.
    public static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        for byte in digest {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The hex SHA-256 of `data`.
    public static func payloadHash(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

    /// A header value trimmed, with runs of spaces inside made one.
    static func trimmedValue(_ value: String) -> String {
        // Nearly every value has nothing to trim: no space or tab at either end (nor a byte of a
        // multi-byte character, which might be a wide space), no tab, no two spaces in a row.
        let bytes = value.utf8
        if let first = bytes.first, let last = bytes.last, first < 0x80, last < 0x80, first != 0x20, last != 0x20 {
            var previous: UInt8 = 0
            var plain = true
            for byte in bytes {
                if byte == 0x09 || (byte == 0x20 && previous == 0x20) { plain = false; break }
                previous = byte
            }
            if plain { return value }
        }
        var result = ""
        var lastWasSpace = false
        for character in value.trimmingCharacters(in: .whitespaces) {
            if character == " " || character == "\t" {
                if !lastWasSpace { result.append(" ") }
                lastWasSpace = true
            } else {
                result.append(character)
                lastWasSpace = false
            }
        }
        return result
    }

    /// The canonical URI of a path as sent.
    static func canonicalURI(_ path: String, style: PathCanonicalization) -> String {
        let path = path.isEmpty ? "/" : path
        switch style {
        case .s3:
            return path
        case .normalized:
            var segments: [Substring] = []
            for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
                if segment == "." { continue }
                if segment == ".." { if !segments.isEmpty { segments.removeLast() }; continue }
                segments.append(segment)
            }
            let trailing = path.hasSuffix("/") && !segments.isEmpty ? "/" : ""
            return "/" + segments.map { S3URIEncoding.encode($0) }.joined(separator: "/") + trailing
        }
    }

    /// The canonical query: each name and value decoded and encoded again, sorted by name, then value.
    static func canonicalQuery(_ query: String) -> String {
        guard !query.isEmpty else { return "" }
        var pairs: [(String, String)] = []
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = S3URIEncoding.decode(parts[0]) ?? String(parts[0])
            let value = parts.count > 1 ? (S3URIEncoding.decode(parts[1]) ?? String(parts[1])) : ""
            pairs.append((S3URIEncoding.encode(name), S3URIEncoding.encode(value)))
        }
        pairs.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }
}

/// A signer's last derived signing key, shared by the signer's copies.
private final class KeptKey: Sendable {
    let state = Mutex<(inputs: [String], key: SymmetricKey)?>(nil)
}
