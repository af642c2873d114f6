import Foundation
@testable import GatewayS3
import StorageGateway
import Testing

/// The `s3` config keys, where credentials come from, and how keys map to paths.
@Suite("S3 configuration")
struct S3ConfigTests {
    func problems(_ remote: String) -> [String] {
        do {
            _ = try GatewayConfiguration.parse(data: Data(#"{"remotes": {"b": \#(remote)}}"#.utf8), source: "c.json", registry: Gateway.makeRegistry())
            return []
        } catch let error as ConfigError {
            return error.problems.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func validation() {
        #expect(problems(#"{"type": "s3", "bucket": "b"}"#).isEmpty)
        #expect(problems(#"{"type": "s3"}"#).first?.contains("bucket") == true)
        #expect(problems(#"{"type": "s3", "bucket": "a b"}"#).first?.contains("bucket name") == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "endpoint": "ftp://h"}"#).first?.contains("http:// or https://") == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "endpoint": "http://k:s@h"}"#).first?.contains("credentials") == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "payload_signing": "allways"}"#).first?.contains(#"did you mean "always""#) == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "part_size": 1000}"#).first?.contains("part_size") == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "access_key_id": "k"}"#).first?.contains("go together") == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "prefix": "a//b"}"#).first?.contains("prefix") == true)
        #expect(problems(#"{"type": "s3", "bucket": "b", "prefix": "/a/b/"}"#).isEmpty)
    }

    func provider(_ remote: String, environment: [String: String]) async throws -> S3Provider {
        let configuration = try GatewayConfiguration.parse(data: Data(#"{"remotes": {"b": \#(remote)}}"#.utf8), source: "c.json",
                                                           registry: Gateway.makeRegistry(), environment: environment)
        let resolver = RemoteResolver(configuration: configuration, registry: Gateway.makeRegistry(),
                                      context: ProviderContext(environment: environment),
                                      localFileSystem: { throw CocoaError(.featureUnsupported) })
        return try #require(try await resolver.provider(named: "b") as? S3Provider)
    }

    @Test func credentialSources() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("s3-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try Data("""
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = default-secret
        # a comment
        [profile work]
        aws_access_key_id=WORKKEY
        aws_secret_access_key=work-secret
        aws_session_token = work-token
        """.utf8).write(to: home.appendingPathComponent(".aws/credentials"))
        let base = #"{"type": "s3", "bucket": "b", "endpoint": "http://127.0.0.1:9"#
        // Keys in the config (the secret from the environment) come first.
        var made = try await provider(base + #"", "access_key_id": "CONFIGKEY", "secret_access_key_env": "S"}"#,
                                      environment: ["S": "config-secret", "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "x", "HOME": home.path])
        #expect(made.configuration.credentials == S3Credentials(accessKeyID: "CONFIGKEY", secretAccessKey: "config-secret"))
        // Then the environment, then the profile file.
        made = try await provider(base + #""}"#, environment: ["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "env-secret",
                                                                  "AWS_SESSION_TOKEN": "tok", "HOME": home.path])
        #expect(made.configuration.credentials == S3Credentials(accessKeyID: "ENVKEY", secretAccessKey: "env-secret", sessionToken: "tok"))
        made = try await provider(base + #""}"#, environment: ["HOME": home.path])
        #expect(made.configuration.credentials.accessKeyID == "DEFAULTKEY")
        made = try await provider(base + #"", "profile": "work"}"#, environment: ["HOME": home.path, "AWS_ACCESS_KEY_ID": "ignored", "AWS_SECRET_ACCESS_KEY": "x"])
        #expect(made.configuration.credentials == S3Credentials(accessKeyID: "WORKKEY", secretAccessKey: "work-secret", sessionToken: "work-token"))
        made = try await provider(base + #""}"#, environment: ["HOME": home.path, "AWS_PROFILE": "work"])
        #expect(made.configuration.credentials.accessKeyID == "WORKKEY")
        await #expect(throws: ConfigError.self) { _ = try await provider(base + #"", "profile": "nope"}"#, environment: ["HOME": home.path]) }
        await #expect(throws: ConfigError.self) { _ = try await provider(base + #""}"#, environment: ["HOME": "/nonexistent"]) }
    }

    @Test func addressing() async throws {
        let environment = ["AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S"]
        let aws = try await provider(#"{"type": "s3", "bucket": "photos", "region": "eu-west-1", "prefix": "2024/raw"}"#, environment: environment)
        #expect(aws.baseURL.absoluteString == "https://photos.s3.eu-west-1.amazonaws.com/2024/raw/")
        #expect(aws.key("/a b.jpg") == "2024/raw/a b.jpg")
        #expect(aws.remotePath(ofKey: "2024/raw/x/y.jpg") == "/x/y.jpg")
        #expect(aws.remotePath(ofKey: "2024/raw/x//y.jpg") == nil)
        #expect(aws.remotePath(ofKey: "other/y.jpg") == nil)
        let dotted = try await provider(#"{"type": "s3", "bucket": "my.bucket"}"#, environment: environment)
        #expect(dotted.baseURL.absoluteString == "https://s3.us-east-1.amazonaws.com/my.bucket/", "bucket names with dots are addressed by path")
        let minio = try await provider(#"{"type": "s3", "bucket": "b", "endpoint": "http://127.0.0.1:9000"}"#, environment: environment)
        #expect(minio.baseURL.absoluteString == "http://127.0.0.1:9000/b/")
        #expect(minio.capabilities.hashAlgorithms == [.md5])
        #expect(minio is any FileProviderSharing, "presigned links without a links configuration")
        #expect((minio as any FileProviderBasic) is any FileProviderIncompleteUploads)
    }

    /// A part is given room for the bytes the stream is said to hold, not a whole part size; a
    /// wrong size (too small, too large) or none still gives the same parts.
    @Test func partsWhateverTheExpectedSize() async throws {
        let bytes = Data((0..<10_000).map { UInt8($0 % 251) })
        for expected in [nil, 10_000, 100, 50_000, 0] as [Int64?] {
            let reader = PartReader(ByteStream(data: bytes, chunkSize: 3000), partSize: 4096, expectedSize: expected)
            var parts: [Data] = []
            while let part = try await reader.next() { parts.append(part) }
            #expect(parts.map(\.count) == [4096, 4096, 1808], "expected \(String(describing: expected))")
            #expect(Data(parts.joined()) == bytes)
        }
        // More than one part: onlyPart() says so, and next() starts again with the first.
        let reader = PartReader(ByteStream(data: bytes, chunkSize: 3000), partSize: 4096, expectedSize: 10_000)
        #expect(try await reader.onlyPart() == nil && !reader.finished)
        var parts: [Data] = []
        while let part = try await reader.next() { parts.append(part) }
        #expect(parts.map(\.count) == [4096, 4096, 1808] && Data(parts.joined()) == bytes && reader.finished)
        // One part, or none: the whole stream.
        #expect(try await PartReader(ByteStream(data: bytes.prefix(4000), chunkSize: 3000), partSize: 4096).onlyPart() == bytes.prefix(4000))
        #expect(try await PartReader(ByteStream(data: Data()), partSize: 4096).onlyPart() == Data())
    }

    /// `x-amz-meta-mtime` is written as `String(format: "%.9f")` wrote it (rclone's form).
    @Test func mtimeFormat() {
        for seconds in [0, 1_795_984_221.199153737, 1_440_938_160, -1.5, 1e12 + 0.25, 4_102_444_800.000000001] {
            #expect(S3Provider.formatMtime(Date(timeIntervalSince1970: seconds)) == String(format: "%.9f", seconds))
        }
    }
}
