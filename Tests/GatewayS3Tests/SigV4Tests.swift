import Foundation
@testable import GatewayS3Protocol
import Testing

/// The signer against AWS's published Signature Version 4 test suite (Fixtures/sigv4, see its
/// README): for every case, the canonical request, the string to sign and the Authorization header
/// must be byte for byte AWS's.
@Suite("SigV4 signing")
struct SigV4Tests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/sigv4")
    /// Cases whose paths other AWS services normalize (S3 never does): signed with `.normalized`.
    static let normalizing: Set<String> = ["get-relative", "get-relative-relative", "get-slash", "get-slash-dot-slash",
                                           "get-slash-pointless-dot", "get-slashes"]
    /// A request line with raw spaces in the query, which no HTTP parser reads one way.
    static let malformed: Set<String> = ["post-vanilla-query-space"]
    static let sessionTokens = ["get-vanilla-with-session-token":
        "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"]

    static var cases: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { FileManager.default.fileExists(atPath: folder.appendingPathComponent("\($0)/\($0).req").path) }
            .filter { !malformed.contains($0) }.sorted()
    }

    /// A `.req` file as method, path, query, headers and body.
    static func parse(_ text: String) -> SigV4Signer.Request {
        let parts = text.components(separatedBy: "\n\n")
        var lines = parts[0].components(separatedBy: "\n")
        let requestLine = lines.removeFirst()
        let method = String(requestLine.prefix { $0 != " " })
        var target = String(requestLine.dropFirst(method.count + 1))
        if target.hasSuffix(" HTTP/1.1") { target.removeLast(9) }
        let pathPart = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        // The path as a client sends it: each segment encoded once.
        let path = pathPart[0].split(separator: "/", omittingEmptySubsequences: false)
            .map { S3URIEncoding.encode(S3URIEncoding.decode($0) ?? String($0)) }.joined(separator: "/")
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if line.first == " " || line.first == "\t", let last = headers.popLast() {
                headers.append((last.name, last.value + " " + line.trimmingCharacters(in: .whitespaces)))
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
        }
        let body = parts.count > 1 ? parts[1...].joined(separator: "\n\n") : ""
        return SigV4Signer.Request(method: method, path: path, query: pathPart.count > 1 ? String(pathPart[1]) : "", headers: headers,
                                   payloadHash: SigV4Signer.payloadHash(Data(body.utf8)))
    }

    static func read(_ name: String, _ suffix: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent("\(name)/\(name).\(suffix)"), encoding: .utf8)
    }

    @Test("the suite is there", arguments: [0])
    func suitePresent(_: Int) {
        #expect(Self.cases.count >= 30, "found \(Self.cases.count) cases in \(Self.folder.path)")
    }

    @Test("AWS test suite case", arguments: cases)
    func vector(_ name: String) throws {
        var request = Self.parse(try Self.read(name, "req"))
        let signer = SigV4Signer(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                 sessionToken: Self.sessionTokens[name], region: "us-east-1", service: "service")
        if let token = Self.sessionTokens[name] { request.headers.append(("X-Amz-Security-Token", token)) }
        let style: SigV4Signer.PathCanonicalization = Self.normalizing.contains(name) ? .normalized : .s3
        let canonical = signer.canonicalRequest(request, path: style).text
        #expect(canonical == (try Self.read(name, "creq")))
        let stringToSign = signer.stringToSign(canonicalRequest: canonical, timestamp: "20150830T123600Z")
        #expect(stringToSign == (try Self.read(name, "sts")))
        #expect(signer.authorization(for: request, timestamp: "20150830T123600Z", path: style) == (try Self.read(name, "authz")))
    }

    /// AWS's documented S3 example (GET of a range, "Example: GET Object" in the SigV4 header
    /// documentation): the signature for bucket examplebucket, key test.txt.
    @Test func s3DocumentationExample() {
        let signer = SigV4Signer(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        let request = SigV4Signer.Request(method: "GET", path: "/test.txt", query: "", headers: [
            ("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
            ("x-amz-content-sha256", SigV4Signer.emptyPayloadHash), ("x-amz-date", "20130524T000000Z"),
        ], payloadHash: SigV4Signer.emptyPayloadHash)
        #expect(signer.authorization(for: request, timestamp: "20130524T000000Z")
            == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// AWS's documented presigned URL example ("Authenticating Requests: Using Query Parameters").
    @Test func presignedDocumentationExample() {
        let signer = SigV4Signer(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        let query = signer.presignedQuery(method: "GET", path: "/test.txt", query: "", host: "examplebucket.s3.amazonaws.com",
                                          expires: 86400, date: Date(timeIntervalSince1970: 1_369_353_600))
        #expect(query.hasSuffix("X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"), "\(query)")
    }

    @Test func uriEncoding() {
        #expect(S3URIEncoding.encode("a b+c%@~é/x", keepingSlashes: true) == "a%20b%2Bc%25%40~%C3%A9/x")
        #expect(S3URIEncoding.encode("a/b") == "a%2Fb")
        #expect(S3URIEncoding.decode("a%20b+c", plusAsSpace: true) == "a b c")
        #expect(S3URIEncoding.decode("%zz") == nil)
        #expect(S3URIEncoding.decode("%ff") == nil)  // not UTF-8
        #expect(SigV4Signer.timestamp(Date(timeIntervalSince1970: 1_440_938_160)) == "20150830T123600Z")
    }

    /// The signing key is kept between requests: a signer whose secret, region or day changes
    /// (or a copy of it changed) signs as a new signer would, never with the kept key.
    @Test func keptSigningKeyFollowsItsInputs() {
        let request = SigV4Signer.Request(method: "GET", path: "/test.txt", query: "", headers: [
            ("Host", "examplebucket.s3.amazonaws.com"), ("x-amz-date", "20130524T000000Z"),
        ], payloadHash: SigV4Signer.emptyPayloadHash)
        var signer = SigV4Signer(accessKeyID: "AKID", secretAccessKey: "first", region: "us-east-1")
        let first = signer.authorization(for: request, timestamp: "20130524T000000Z")
        #expect(signer.authorization(for: request, timestamp: "20130524T000000Z") == first)
        var copy = signer
        copy.secretAccessKey = "second"
        let fresh = SigV4Signer(accessKeyID: "AKID", secretAccessKey: "second", region: "us-east-1")
        #expect(copy.authorization(for: request, timestamp: "20130524T000000Z") == fresh.authorization(for: request, timestamp: "20130524T000000Z"))
        #expect(copy.authorization(for: request, timestamp: "20130524T000000Z") != first)
        #expect(signer.authorization(for: request, timestamp: "20130524T000000Z") == first)
        signer.region = "eu-west-1"
        #expect(signer.authorization(for: request, timestamp: "20130524T000000Z")
            == SigV4Signer(accessKeyID: "AKID", secretAccessKey: "first", region: "eu-west-1").authorization(for: request, timestamp: "20130524T000000Z"))
        #expect(signer.authorization(for: request, timestamp: "20130525T000000Z")
            == SigV4Signer(accessKeyID: "AKID", secretAccessKey: "first", region: "eu-west-1").authorization(for: request, timestamp: "20130525T000000Z"))
    }

    /// Header values: the quick path (nothing to trim) and the full rule give what AWS's rule gives.
    @Test func trimmedValues() {
        #expect(SigV4Signer.trimmedValue("plain value") == "plain value")
        #expect(SigV4Signer.trimmedValue("  a   b  ") == "a b")
        #expect(SigV4Signer.trimmedValue("a\tb") == "a b")
        #expect(SigV4Signer.trimmedValue("a  b") == "a b")
        #expect(SigV4Signer.trimmedValue("\u{a0}x\u{a0}") == "x")
        #expect(SigV4Signer.trimmedValue("é x é") == "é x é")
        #expect(SigV4Signer.trimmedValue("") == "")
    }
}
