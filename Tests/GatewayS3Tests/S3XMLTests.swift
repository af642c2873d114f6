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
}
