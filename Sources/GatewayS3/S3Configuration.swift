public import Foundation
public import GatewayTransport
import GatewayS3Protocol

/// How an ``S3Provider`` reaches its bucket.
public struct S3Configuration: Sendable {
    /// Whether request bodies are signed (their SHA-256 in the signature) or sent as `UNSIGNED-PAYLOAD`.
    public enum PayloadSigning: String, Sendable, CaseIterable {
        /// Unsigned over TLS (which protects the body already), signed over plain HTTP.
        case auto
        /// Always signed.
        case always
        /// Never signed (a server that checks must accept `UNSIGNED-PAYLOAD`).
        case never
    }

    /// The service's URL (`https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:9000`), no bucket in it.
    public var endpoint: URL
    /// The signing region.
    public var region: String
    /// The bucket.
    public var bucket: String
    /// The key prefix the remote is rooted at: empty, or ending in `/`.
    public var prefix: String
    /// `https://endpoint/bucket/key` (true) or `https://bucket.endpoint/key` (false).
    public var pathStyle: Bool
    /// The credentials requests are signed with.
    public var credentials: S3Credentials
    /// `x-amz-storage-class` for new objects; `nil` leaves the server's default.
    public var storageClass: String?
    /// The size of one part of a multipart upload (and the most bytes a single `PUT` holds).
    public var partSize: Int
    /// Parts uploaded at once per file: memory is at most `partSize × (uploadConcurrency + 1)` per upload.
    public var uploadConcurrency: Int
    /// Whether `createFolder` stores a directory marker (an empty object named `folder/`).
    public var directoryMarkers: Bool
    /// Body signing (``PayloadSigning``).
    public var payloadSigning: PayloadSigning
    /// The HTTP client's settings (its base URL is the bucket's).
    public var http: HTTPClientConfiguration
    /// Objects larger than this are copied in parts (`UploadPartCopy`), not by one `CopyObject`:
    /// S3's limit (5 GiB); lower in tests.
    var copyCutoff: Int64 = S3Limits.maximumCopySize
    /// The size of one part of such a copy (1 GiB; grown for objects that would need more than 10,000).
    var copyPartSize: Int64 = 1 << 30

    /// Creates a configuration; `http.baseURL` is replaced by the bucket's URL.
    public init(endpoint: URL, region: String, bucket: String, prefix: String = "", pathStyle: Bool, credentials: S3Credentials,
                storageClass: String? = nil, partSize: Int = 8 << 20, uploadConcurrency: Int = 4, directoryMarkers: Bool = true,
                payloadSigning: PayloadSigning = .auto, http: HTTPClientConfiguration) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.prefix = Self.normalizedPrefix(prefix)
        self.pathStyle = pathStyle
        self.credentials = credentials
        self.storageClass = storageClass
        self.partSize = min(max(partSize, S3Limits.minimumPartSize), S3Limits.maximumPartSize)
        self.uploadConcurrency = min(max(uploadConcurrency, 1), 64)
        self.directoryMarkers = directoryMarkers
        self.payloadSigning = payloadSigning
        self.http = http
        self.http.baseURL = Self.bucketURL(endpoint: endpoint, bucket: bucket, pathStyle: pathStyle)
    }

    /// `a/b` or `/a/b/` gives `a/b/`; empty stays empty.
    static func normalizedPrefix(_ prefix: String) -> String {
        let parts = prefix.split(separator: "/", omittingEmptySubsequences: true)
        return parts.isEmpty ? "" : parts.joined(separator: "/") + "/"
    }

    /// The bucket's URL, with a trailing slash.
    static func bucketURL(endpoint: URL, bucket: String, pathStyle: Bool) -> URL {
        let scheme = endpoint.scheme ?? "https"
        let host = endpoint.host ?? ""
        let port = endpoint.port.map { ":\($0)" } ?? ""
        var base = endpoint.path
        while base.hasSuffix("/") { base.removeLast() }
        if pathStyle {
            return URL(string: "\(scheme)://\(host)\(port)\(base)/\(S3URIEncoding.encode(bucket))/")!
        }
        return URL(string: "\(scheme)://\(bucket).\(host)\(port)\(base)/")!
    }

    /// Whether bodies are signed on this endpoint.
    var signsPayloads: Bool {
        switch payloadSigning {
        case .always: true
        case .never: false
        case .auto: endpoint.scheme?.lowercased() != "https"
        }
    }
}

/// S3's fixed limits.
public enum S3Limits {
    /// The smallest part but the last (5 MiB).
    public static let minimumPartSize = 5 << 20
    /// The largest part (5 GiB).
    public static let maximumPartSize = 5 << 30
    /// The most parts of one upload.
    public static let maximumParts = 10_000
    /// The largest object `CopyObject` copies in one request (5 GiB).
    public static let maximumCopySize: Int64 = 5 << 30
    /// The most memory the parts of one upload in flight may hold (1 GiB): fewer parts go at once
    /// than `upload_concurrency` says where parts are large (a part is read whole to be hashed).
    public static let partMemoryBudget = 1 << 30
}
