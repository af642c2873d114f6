public import Foundation
public import GatewayCore
import GatewayState
import GatewayTransport
import GatewayS3Protocol
public import Logging
import Synchronization

/// A remote in an S3 bucket (AWS, MinIO, Ceph RGW, Garage, Backblaze B2, Wasabi, Cloudflare R2 and
/// other S3-compatible services), requests signed with AWS Signature Version 4 and sent through the
/// shared libcurl ``HTTPClient``.
///
/// Object storage has keys, not folders: a folder is a key prefix ending in `/`, listed with
/// `ListObjectsV2` and `delimiter=/`; `createFolder` stores a directory marker (an empty `folder/`
/// object) unless `directory_markers` is off, in which case empty folders are not kept.
///
/// Organised like every backend: this file (configuration, keys, signed requests, errors),
/// `+Listing` (ListObjectsV2 pages, HEAD, a flat recursive walk), `+Reading` (ranged GET pinned to
/// the ETag), `+Writing` (one PUT up to the part size, multipart above it), `+Operations` (CopyObject,
/// DeleteObject, markers), `+Hashing` (MD5 from stored metadata or a single-part ETag), `+Descriptor`
/// (config keys), `+Monitor`, `+Undo`, `+Media` and `+Sharing` (presigned URLs).
// Not final: `S3ProviderWithLinks` adds the gateway's link server when the configuration has
// `links`. Its state is immutable or behind locks, hence `@unchecked Sendable`.
public class S3Provider: FileProviderBasic, FileProviderOperations, FileProviderReadWrite, @unchecked Sendable {
    public static let type = "s3"

    public let name: String
    /// The bucket's URL with the prefix (`http://127.0.0.1:9000/bucket/prefix/`).
    public let baseURL: URL
    /// The settings in use.
    public let configuration: S3Configuration
    /// The `trash` and `trash_dir` keys.
    public let trashSettings: TrashSettings
    /// The folder of the local state store (change-monitor snapshots).
    public let stateDirectory: URL
    /// Identifies this remote's state: the bucket's URL, the prefix and the access key id, never a secret.
    public let monitorIdentity: String
    let client: HTTPClient
    let signer: SigV4Signer
    let logger: Logger
    /// `Host` as libcurl sends it (the port only when it is not the scheme's default).
    let hostHeader: String
    /// The bucket's path on the server (`/bucket` path-style, empty otherwise).
    let bucketPath: String
    /// The bucket URL's text up to the path (`http://127.0.0.1:9000`).
    let origin: String
    /// Names the bucket in the local state store (``UploadLedger``): `s3://BUCKET`, whatever the
    /// endpoint is called (an upload is only ever continued when the server lists it as open).
    var bucketIdentity: String { "s3://" + configuration.bucket }
    /// The directory marker this server keeps (``MarkerStyle``), learned from the first one stored.
    let markerStyle = Atomic<Int>(0)
    /// Whether the server takes `DeleteObjects`: 0 not known yet, 1 yes, 2 no (501).
    let batchDeletes = Atomic<Int>(0)
    /// The bucket's versioning (`GetBucketVersioning`): 0 not asked yet, 1 enabled, 2 suspended,
    /// 3 never turned on.
    let versioning = Atomic<Int>(0)
    /// Whether the server joins objects with `UploadPartCopy` (what a plan's ranges need): 0 not
    /// tried yet, 1 yes, 2 no.
    let partCopies = Atomic<Int>(0)

    /// Creates a provider. Nothing is sent until the first operation.
    public init(configuration: S3Configuration, trash: TrashSettings = TrashSettings(), stateDirectory: URL = StateLocation.directory(),
                logger: Logger = Logger(label: "gateway.s3")) {
        self.configuration = configuration
        self.name = configuration.http.remoteName
        let bucketURL = configuration.http.baseURL
        self.baseURL = URL(string: bucketURL.absoluteString + configuration.prefix.split(separator: "/").map { S3URIEncoding.encode($0) }.map { $0 + "/" }.joined())
            ?? bucketURL
        self.trashSettings = trash
        self.stateDirectory = stateDirectory
        self.monitorIdentity = "s3 \(bucketURL.absoluteString) prefix=\(configuration.prefix) key=\(configuration.credentials.accessKeyID)"
        self.logger = logger
        self.client = HTTPClient(configuration: configuration.http, logger: logger)
        self.signer = SigV4Signer(accessKeyID: configuration.credentials.accessKeyID, secretAccessKey: configuration.credentials.secretAccessKey,
                                  sessionToken: configuration.credentials.sessionToken, region: configuration.region)
        SecretRedaction.register(configuration.credentials.secretAccessKey)
        SecretRedaction.register(configuration.credentials.sessionToken)
        let scheme = bucketURL.scheme?.lowercased() ?? "https"
        let host = bucketURL.host ?? ""
        let defaultPort = scheme == "https" ? 443 : 80
        let port = bucketURL.port.flatMap { $0 == defaultPort ? nil : $0 }
        self.hostHeader = host + (port.map { ":\($0)" } ?? "")
        self.origin = "\(scheme)://\(host)\(bucketURL.port.map { ":\($0)" } ?? "")"
        var path = bucketURL.path
        while path.hasSuffix("/") { path.removeLast() }
        self.bucketPath = path
    }

    /// What S3 offers. Listings give each object's upload time, not a time a writer chose: the
    /// writer's time (``WriteOptions/modificationDate``) is kept in `x-amz-meta-mtime`, which only a
    /// `HEAD` of each object shows, as its source stamp. So neither times kept nor settable times are
    /// claimed, and ``FileProviderOperations/setModificationDate(_:path:)`` throws `unsupported`
    /// (changing metadata means copying the object onto itself): copies skip files not modified
    /// since their upload (or, looked up one by one, by the stamp). MD5 hashes come from stored metadata or a single-part ETag.
    public var capabilities: ProviderCapabilities {
        ProviderCapabilities(features: [.serverSideCopy, .serverSideMove, .rangedRead, .conditionalWrite],
                             hashAlgorithms: [.md5], modificationTimePrecision: .seconds(1))
    }

    public func url(of path: String) throws -> URL { try RemotePath.url(of: path, below: baseURL) }

    public func relativePathOf(url: URL) throws -> String { try RemotePath.path(of: url, below: baseURL) }

    // MARK: Keys

    /// The object key of a normalized remote path (the root is the prefix itself).
    func key(_ remote: String) -> String {
        remote == "/" ? configuration.prefix : configuration.prefix + remote.dropFirst()
    }

    /// What follows `prefix` in `key`, `nil` when `key` does not start with it. Keys are byte
    /// strings: compared by their UTF-8 bytes, never by Swift's Unicode equivalence (a composed
    /// and a decomposed `é` are two keys to the server).
    static func remainder(of key: String, after prefix: String) -> String? {
        guard key.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: key.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// Whether two keys are the same bytes.
    static func sameKey(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// The key prefix of a folder: its key and `/` (the root: the remote's prefix).
    func folderPrefix(_ remote: String) -> String {
        remote == "/" ? configuration.prefix : key(remote) + "/"
    }

    /// The remote path of a key below the remote's prefix, or `nil` for a key outside it or one no
    /// path can name (empty components, `.` or `..`: S3 allows them, a path does not).
    func remotePath(ofKey key: String) -> String? {
        guard let below = Self.remainder(of: key, after: configuration.prefix) else { return nil }
        var relative = Substring(below)
        if relative.hasSuffix("/") { relative = relative.dropLast() }
        guard !relative.isEmpty else { return "/" }
        for component in relative.split(separator: "/", omittingEmptySubsequences: false) {
            if component.isEmpty || component == "." || component == ".." { return nil }
        }
        return "/" + relative
    }

    // MARK: Requests

    /// A request's body: nothing, bytes at hand (signed when ``S3Configuration/signsPayloads``).
    enum Body {
        case none
        case data(Data)
        /// Bytes at hand sent through libcurl's read callback rather than copied into libcurl (a
        /// multipart upload's parts: megabytes each, several at once). Not resent by the client
        /// when a connection fails; the caller retries.
        case streamed(Data)
    }

    /// Builds a request to `key` (`nil`: the bucket itself) with `query` (names and values
    /// unencoded), signed as it is sent (``HTTPRequest/prepare``).
    func request(_ method: String, key: String?, query: [(String, String)] = [], headers: [(name: String, value: String)] = [],
                 body: Body = .none, path remote: String) -> HTTPRequest {
        let encodedPath = bucketPath + "/" + (key.map { S3URIEncoding.encode($0, keepingSlashes: true) } ?? "")
        let queryText = query.map { S3URIEncoding.encode($0.0) + "=" + S3URIEncoding.encode($0.1) }.joined(separator: "&")
        let url = URL(string: origin + encodedPath + (queryText.isEmpty ? "" : "?" + queryText))!
        var payloadHash = SigV4Signer.emptyPayloadHash
        var httpBody = HTTPRequest.Body.none
        var headers = headers
        switch body {
        case .none:
            break
        case .data(let data), .streamed(let data):
            // libcurl labels a body without a type as a form, and a server may read it as one.
            if !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
                headers.append((name: "Content-Type", value: "application/octet-stream"))
            }
            payloadHash = configuration.signsPayloads ? SigV4Signer.payloadHash(data) : SigV4Signer.unsignedPayload
            if case .streamed = body {
                // (libcurl sends Content-Length: the stream knows its length.)
                httpBody = .stream(ByteStream(data: data, chunkSize: 256 << 10))
            } else {
                httpBody = .data(data)
            }
        }
        var request = HTTPRequest(method: method, url: url, path: remote, headers: headers, body: httpBody)
        // Signed when it leaves (each attempt), not now: it may wait for a connection first.
        let (signer, hostHeader, unsigned, bodyHash) = (signer, hostHeader, headers, payloadHash)
        request.prepare = { request in
            request.headers = unsigned + signer.signedHeaders(method: method, path: encodedPath, query: queryText,
                                                              headers: [("host", hostHeader)] + unsigned, payloadHash: bodyHash, date: Date())
        }
        return request
    }

    /// Sends a request and collects its answer (at most `maxBodySize` bytes).
    func send(_ method: String, key: String?, query: [(String, String)] = [], headers: [(name: String, value: String)] = [],
              body: Body = .none, path remote: String, maxBodySize: Int = 1 << 20) async throws -> (HTTPResponseHead, Data) {
        try await client.send(request(method, key: key, query: query, headers: headers, body: body, path: remote), maxBodySize: maxBodySize)
    }

    /// Sends a request and collects an XML answer, checked to be 2xx and not an error document (S3
    /// answers some failures of `CopyObject` and `CompleteMultipartUpload` with 200 and an `Error`).
    func sendXML(_ method: String, key: String?, query: [(String, String)] = [], headers: [(name: String, value: String)] = [],
                 body: Body = .none, path remote: String) async throws -> S3XMLDocument {
        let (head, data) = try await send(method, key: key, query: query, headers: headers, body: body, path: remote, maxBodySize: 16 << 20)
        guard head.isSuccess else { throw failure(head, body: data, path: remote) }
        return try document(data, answering: method, path: remote)
    }

    /// The XML of a successful answer to `method`, refused when it is not XML or is an error
    /// document (which S3 may send with 200).
    func document(_ data: Data, answering method: String, path remote: String) throws -> S3XMLDocument {
        let document: S3XMLDocument
        do {
            document = try S3XMLDocument.parse(data)
        } catch {
            throw FileProviderError.malformedResponse(path: remote, detail: "invalid XML in the server's answer to \(method): \(error.description)")
        }
        if let error = S3ErrorBody(document) {
            throw FileProviderHTTPError(statusCode: Self.status(ofCode: error.code), path: remote,
                                        serverText: "\(error.code)\(error.message.map { ": \($0)" } ?? "")", method: method)
        }
        return document
    }

    // MARK: Errors

    /// The error of a failed answer, with S3's error code and message when the body has them.
    func failure(_ head: HTTPResponseHead, body: Data, path: String) -> any Error {
        let error = S3ErrorBody(body)
        if head.status == 412 || error?.code == "PreconditionFailed" {
            return FileProviderError.versionMismatch(path: path, expected: "", actual: nil)
        }
        let text = error.map { "\($0.code)\($0.message.map { ": \($0)" } ?? "")" }
        return FileProviderHTTPError(statusCode: head.status, path: path, serverText: text, retryAfter: head.retryAfter, method: head.method)
    }

    /// The HTTP status an error code stands for, for errors that came inside a 200 answer.
    static func status(ofCode code: String) -> Int {
        switch code {
        case "NoSuchKey", "NoSuchBucket", "NoSuchUpload": 404
        case "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId": 403
        case "PreconditionFailed": 412
        case "SlowDown", "ServiceUnavailable": 503
        case "InternalError": 500
        default: 400
        }
    }

    /// "Already exists", as every provider reports it.
    func existsError(_ path: String) -> CocoaError { CocoaError.posix(EEXIST, path: path, remote: name, writing: true) }

    /// "No such item", as every provider reports it.
    func notFound(_ path: String) -> CocoaError { CocoaError.posix(ENOENT, path: path, remote: name) }
}
