import Foundation
import GatewayCore
@testable import GatewayS3Protocol
import Testing

/// S3's answers as servers send them (AWS's documented examples, moto, rclone's gofakes3), and
/// hostile ones: every bound gives an error, never a trap or unbounded memory.
@Suite("S3 XML answers")
struct S3XMLTests {
    @Test func listPageFromAWSDocumentation() throws {
        let body = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>bucket</Name><Prefix>photos/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>
          <Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <Contents><Key>photos/a b.jpg</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>
            <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size><StorageClass>STANDARD</StorageClass>
            <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID></Owner></Contents>
          <CommonPrefixes><Prefix>photos/2006/</Prefix></CommonPrefixes>
        </ListBucketResult>
        """
        let page = try S3ListPage(try S3XMLDocument.parse(Data(body.utf8)))
        #expect(page.objects == [.init(key: "photos/a b.jpg", size: 434_234, lastModified: "2009-10-12T17:50:30.000Z",
                                       etag: "\"fba9dede5f27731c9771645a39863328\"", storageClass: "STANDARD")])
        #expect(page.prefixes == ["photos/2006/"])
        #expect(page.isTruncated && page.continuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(InternetDate.rfc3339("2009-10-12T17:50:30.000Z") == Date(timeIntervalSince1970: 1_255_369_830))
        #expect(InternetDate.http("Mon, 12 Oct 2009 17:50:30 GMT") == Date(timeIntervalSince1970: 1_255_369_830))
    }

    @Test func urlEncodedKeysAreDecoded() throws {
        let body = "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
            + "<Contents><Key>a+b%2Bc%01%C3%A9</Key><Size>0</Size></Contents><CommonPrefixes><Prefix>d%20e/</Prefix></CommonPrefixes></ListBucketResult>"
        let page = try S3ListPage(try S3XMLDocument.parse(Data(body.utf8)))
        #expect(page.objects.map(\.key) == ["a b+c\u{01}é"])
        #expect(page.prefixes == ["d e/"])
    }

    @Test func errorBodies() throws {
        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The resource you requested does not exist</Message><Resource>/mybucket/myfoto.jpg</Resource></Error>"
        #expect(S3ErrorBody(Data(body.utf8)) == S3ErrorBody(try S3XMLDocument.parse(Data(body.utf8))))
        #expect(S3ErrorBody(Data(body.utf8))?.code == "NoSuchKey")
        #expect(S3ErrorBody(Data("<html>oops</html>".utf8)) == nil)
        #expect(S3ErrorBody(Data()) == nil)
    }

    @Test("hostile answers are refused", arguments: [
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",  // truncated without a token
        "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>a</Key><Size>99999999999999999999</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>%zz</Key><Size>1</Size></Contents></ListBucketResult>",
        "<Error><Code>AccessDenied</Code></Error>",
        "<!DOCTYPE x [<!ENTITY a \"aaaa\">]><ListBucketResult>&a;</ListBucketResult>",
        "<ListBucketResult><Contents><Key>a</Key>",
        "",
    ])
    func hostile(_ body: String) {
        #expect(throws: S3XMLError.self) { try S3ListPage(try S3XMLDocument.parse(Data(body.utf8))) }
    }

    @Test func bounds() {
        let deep = String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)
        #expect(throws: S3XMLError.self) { try S3XMLDocument.parse(Data(deep.utf8)) }
        let long = "<r><v>" + String(repeating: "x", count: S3XMLDocument.maximumValueLength + 1) + "</v></r>"
        #expect(throws: S3XMLError.self) { try S3XMLDocument.parse(Data(long.utf8)) }
        let names = "<r>" + (0..<600).map { "<n\($0)/>" }.joined() + "</r>"
        #expect(throws: S3XMLError.self) { try S3XMLDocument.parse(Data(names.utf8)) }
        let records = "<r>" + String(repeating: "<c><k>1</k></c>", count: S3XMLDocument.maximumRecords + 1) + "</r>"
        #expect(throws: S3XMLError.self) { try S3XMLDocument.parse(Data(records.utf8)) }
    }

    @Test func versionPageFromAWSDocumentation() throws {
        let body = try String(contentsOfFile: fuzzCorpus("versions-aws.xml"), encoding: .utf8)
        let page = try S3VersionsPage(try S3XMLDocument.parse(Data(body.utf8)))
        #expect(page.versions == [
            .init(key: "my-image.jpg", versionID: "03jpff543dhffds434rfdsFDN943fdsFkdmqnh892", isLatest: true, isDeleteMarker: true, size: 0, etag: nil),
            .init(key: "my-image a.jpg", versionID: "3/L4kqtJl40Nr8X8gdRQBpUMLUo", isLatest: false, isDeleteMarker: false, size: 434_234,
                  etag: "\"fba9dede5f27731c9771645a39863328\""),
        ])
        #expect(page.isTruncated && page.nextKeyMarker == "my-third-image.jpg" && page.nextVersionIDMarker == "03jpff543dhffds434rfdsFDN943fdsFkdmqnh892")
    }

    @Test("hostile version listings are refused", arguments: [
        "<ListVersionsResult><IsTruncated>true</IsTruncated></ListVersionsResult>",  // truncated without a marker
        "<ListVersionsResult><Version><Key>a</Key><VersionId>v</VersionId><Size>-1</Size></Version></ListVersionsResult>",
        "<ListVersionsResult><Version><Key>a</Key><Size>1</Size></Version></ListVersionsResult>",  // no version id
        "<ListVersionsResult><DeleteMarker><VersionId>v</VersionId></DeleteMarker></ListVersionsResult>",  // no key
        "<ListVersionsResult><EncodingType>url</EncodingType><Version><Key>%zz</Key><VersionId>v</VersionId><Size>1</Size></Version></ListVersionsResult>",
        "<ListBucketResult></ListBucketResult>",
    ])
    func hostileVersions(_ body: String) {
        #expect(throws: S3XMLError.self) { try S3VersionsPage(try S3XMLDocument.parse(Data(body.utf8))) }
    }

    @Test func bucketVersioning() throws {
        func state(_ body: String) throws -> S3BucketVersioning? { S3BucketVersioning(try S3XMLDocument.parse(Data(body.utf8))) }
        #expect(try state(try String(contentsOfFile: fuzzCorpus("versioning.xml"), encoding: .utf8)) == .enabled)
        #expect(try state("<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>") == .suspended)
        #expect(try state("<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>") == .off)
        // moto's answer, byte for byte as moto 5 sends it.
        #expect(try state("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<GetBucketVersioningResponse xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Status>Enabled</Status></GetBucketVersioningResponse>") == .enabled)
        #expect(try state("<Error><Code>NotImplemented</Code></Error>") == nil)
    }

    @Test("a version manifest reads back what was written, keys of any bytes, in chunks of any size")
    func versionManifest() throws {
        let header = S3VersionManifest.Header(kind: .folder, path: "/docs a/b%c é", deletionDate: Date(timeIntervalSince1970: 1_795_011_000))
        let entries = [
            S3VersionManifest.Entry(version: "3/L4kqtJl40Nr8X+gdRQ=", size: 434_234, relativeKey: "x y/new\nline"),
            S3VersionManifest.Entry(version: "null", size: 0, relativeKey: ""),
            S3VersionManifest.Entry(version: "v", size: Int64.max, relativeKey: String(repeating: "é", count: 512)),
        ]
        let text = Data((S3VersionManifest.line(header) + entries.map(S3VersionManifest.line).joined()).utf8)
        for chunkSize in [1, 7, text.count] {
            var reader = S3VersionManifest.LineReader()
            var lines: [Substring] = []
            var start = 0
            while start < text.count {
                lines += try reader.lines(in: text.subdata(in: start..<min(start + chunkSize, text.count)))
                start += chunkSize
            }
            #expect(!reader.isCutShort)
            #expect(try S3VersionManifest.header(lines[0]) == header)
            #expect(try lines.dropFirst().map { try S3VersionManifest.entry($0) } == entries)
        }
        var reader = S3VersionManifest.LineReader()
        _ = try reader.lines(in: Data("null 0 a".utf8))
        #expect(reader.isCutShort)
        var long = S3VersionManifest.LineReader()
        #expect(throws: S3VersionManifest.Failure.self) { try long.lines(in: Data(count: S3VersionManifest.maximumLineLength + 1)) }
        for bad in ["gateway-versions 2 file %2Fa 1", "gateway-versions 1 link %2Fa 1", "gateway-versions 1 file a 1",
                    "gateway-versions 1 file %2Fa 99999999999999999999", "gateway-versions 1 file %2Fa%00 1"] {
            #expect(throws: S3VersionManifest.Failure.self, "\(bad)") { try S3VersionManifest.header(bad[...]) }
        }
        for bad in ["v -1 a", "v 1", " 1 a", "v 1 %zz", "v 1 a b"] {
            #expect(throws: S3VersionManifest.Failure.self, "\(bad)") { try S3VersionManifest.entry(bad[...]) }
        }
    }
}

/// A file of the S3 fuzz harness's seed corpus (shared with these tests).
private func fuzzCorpus(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/FuzzS3XML/\(name)").path
}
