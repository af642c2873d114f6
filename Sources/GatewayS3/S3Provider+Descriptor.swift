import Foundation
public import GatewayCore
import GatewayState
import GatewayTransport

extension S3Provider {
    /// The `s3` type for config files.
    public static let descriptor = ProviderDescriptor(
        type: S3Provider.type,
        summary: "An S3 bucket (AWS, MinIO, Ceph RGW, Garage, Backblaze B2, Wasabi, Cloudflare R2, and other S3-compatible services).",
        keys: [
            ConfigKey("bucket", .string, required: true, summary: "the bucket"),
            ConfigKey("endpoint", .string, summary: "the service URL, http:// or https:// (default: AWS, https://s3.REGION.amazonaws.com)"),
            ConfigKey("region", .string, default: "us-east-1", summary: "the region requests are signed for"),
            ConfigKey("prefix", .string, summary: "a key prefix the remote is rooted at (a folder in the bucket)"),
            ConfigKey("path_style", .boolean,
                      summary: "address the bucket as ENDPOINT/BUCKET (true) or BUCKET.ENDPOINT (false); default: true with an endpoint, false on AWS (true there for bucket names with dots)"),
            ConfigKey("access_key_id", .string, secret: true,
                      summary: "the access key id; without it (and secret_access_key) the standard sources are used: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, then the profile in ~/.aws/credentials"),
            ConfigKey("secret_access_key", .string, secret: true, summary: "the secret access key"),
            ConfigKey("session_token", .string, secret: true, summary: "a temporary credential's session token"),
            ConfigKey("profile", .string, summary: "the profile of the shared credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials) to use; default AWS_PROFILE, else default"),
            ConfigKey("storage_class", .string, summary: "storage class of new objects (STANDARD, STANDARD_IA, GLACIER_IR, ...); default: the bucket's"),
            ConfigKey("part_size", .integer, default: String(8 << 20),
                      summary: "bytes per part of a multipart upload, 5 MiB to 5 GiB; files up to this size go in one PUT (raised for files that would need more than 10,000 parts)"),
            ConfigKey("upload_concurrency", .integer, default: "4",
                      summary: "parts of one file uploaded at once; memory per upload is part_size × (upload_concurrency + 1)"),
            ConfigKey("directory_markers", .boolean, default: "true",
                      summary: "store an empty object FOLDER/ for each folder made, so empty folders are kept; false stores nothing (empty folders are then not kept)"),
            ConfigKey("payload_signing", .string, default: "auto",
                      summary: "sign request bodies (their SHA-256): auto (over plain HTTP; over HTTPS bodies carry Content-MD5 instead), always, never"),
        ] + HTTPClientConfiguration.configKeys(defaultConnections: 8)
          + TrashSettings.configKeys(folderSummary: "the trash folder (a key prefix), relative to the remote's root; hidden from copies and syncs"),
        validate: validate,
        make: { remote, context in
            let region = remote.string("region") ?? "us-east-1"
            let bucket = remote.string("bucket") ?? ""
            let endpointText = remote.string("endpoint")
            let endpoint = endpointText.flatMap(URL.init(string:)) ?? URL(string: "https://s3.\(region).amazonaws.com")!
            let pathStyle = remote.boolean("path_style") ?? (endpointText != nil || bucket.contains("."))
            let credentials = try resolveCredentials(remote, environment: context.environment)
            let http = HTTPClientConfiguration(remote: remote, baseURL: endpoint, context: context, defaultConnections: 8)
            let configuration = S3Configuration(
                endpoint: endpoint, region: region, bucket: bucket, prefix: remote.string("prefix") ?? "", pathStyle: pathStyle,
                credentials: credentials, storageClass: remote.string("storage_class"), partSize: remote.integer("part_size") ?? (8 << 20),
                uploadConcurrency: remote.integer("upload_concurrency") ?? 4, directoryMarkers: remote.boolean("directory_markers") ?? true,
                payloadSigning: S3Configuration.PayloadSigning(rawValue: remote.string("payload_signing") ?? "auto") ?? .auto, http: http)
            if let links = context.links {
                return S3ProviderWithLinks(
                    links: PublicLinks(configuration: links, remote: remote.name, stateDirectory: context.stateDirectory, environment: context.environment),
                    configuration: configuration, trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
            }
            return S3ProviderWithPresignedLinks(configuration: configuration, trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
        }
    )

    /// The configured key pair, else AWS's standard sources.
    static func resolveCredentials(_ remote: RemoteConfiguration, environment: [String: String]) throws -> S3Credentials {
        if let key = try remote.secret("access_key_id", environment: environment) {
            let secret = try remote.requiredSecret("secret_access_key", environment: environment)
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: try remote.secret("session_token", environment: environment))
        }
        do {
            if let found = try S3Credentials.standard(environment: environment, profile: remote.string("profile")) { return found }
        } catch let error as S3CredentialsError {
            throw ConfigError(source: remote.source, remote: remote.name, key: "profile", message: error.description)
        }
        throw ConfigError(source: remote.source, remote: remote.name, key: "access_key_id",
                          message: "no S3 credentials: set access_key_id and secret_access_key (or their _env/_command forms), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials")
    }

    private static func validate(_ remote: RemoteConfiguration) -> [ProviderDescriptor.Problem] {
        var problems = TrashSettings.problems(remote)
        if let bucket = remote.string("bucket") {
            let allowed = bucket.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F || ($0 >= 0x41 && $0 <= 0x5A) }
            if !(1...255).contains(bucket.utf8.count) || !allowed {
                problems.append(.init(key: "bucket", message: "key \"bucket\" must be a bucket name: letters, digits, '.', '-' and '_'"))
            }
        }
        if let text = remote.string("endpoint") {
            if let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil {
                if url.user != nil || url.password != nil {
                    problems.append(.init(key: "endpoint", message: "key \"endpoint\" must not contain credentials; use access_key_id and secret_access_key"))
                }
                if url.query != nil { problems.append(.init(key: "endpoint", message: "key \"endpoint\" must not have a query")) }
            } else {
                problems.append(.init(key: "endpoint", message: "key \"endpoint\" must be an http:// or https:// URL with a host"))
            }
        }
        if let region = remote.string("region"), region.isEmpty || region.contains("/") || region.contains(" ") {
            problems.append(.init(key: "region", message: "key \"region\" must be a region name such as us-east-1"))
        }
        if let prefix = remote.string("prefix") {
            let parts = prefix.split(separator: "/", omittingEmptySubsequences: false).dropFirst(prefix.hasPrefix("/") ? 1 : 0)
            let inner = prefix.hasSuffix("/") ? parts.dropLast() : parts[...]
            if inner.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) && !prefix.isEmpty && prefix != "/" {
                problems.append(.init(key: "prefix", message: "key \"prefix\" must be a folder path: no empty, '.' or '..' components"))
            }
        }
        if let mode = remote.string("payload_signing"), S3Configuration.PayloadSigning(rawValue: mode) == nil {
            let names = S3Configuration.PayloadSigning.allCases.map(\.rawValue)
            problems.append(.init(key: "payload_signing", message: "key \"payload_signing\" must be one of \(names.joined(separator: ", "))\(Suggestion.didYouMean(mode, in: names))"))
        }
        problems += [remote.rangeProblem("upload_concurrency", 1...64),
                     remote.rangeProblem("part_size", S3Limits.minimumPartSize...S3Limits.maximumPartSize, unit: " bytes")].compactMap { $0 }
        problems += HTTPClientConfiguration.problems(remote)
        let hasKey = remote.values.keys.contains { $0.hasPrefix("access_key_id") }
        let hasSecret = remote.values.keys.contains { $0.hasPrefix("secret_access_key") }
        if hasKey != hasSecret {
            problems.append(.init(key: hasKey ? "secret_access_key" : "access_key_id",
                                  message: "access_key_id and secret_access_key go together: set both, or neither to use the standard AWS sources"))
        }
        if hasKey, remote.string("profile") != nil {
            problems.append(.init(key: "profile", message: "use either access_key_id/secret_access_key or profile, not both"))
        }
        return problems
    }
}
