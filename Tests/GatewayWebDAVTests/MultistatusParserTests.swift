import Foundation
@testable import GatewayTestSupport
import GatewayCore
@testable import GatewayWebDAV
import Testing

/// The 207 parser on captured bodies: different prefixes, default namespaces, several propstats,
/// missing properties, odd hrefs, broken XML.
@Suite("WebDAV multistatus parser")
struct MultistatusParserTests {
    func parse(_ xml: String, chunkSize: Int = 7) throws -> [DAVResource] {
        let parser = MultistatusParser()
        let data = Data(xml.utf8)
        var index = 0
        var all: [DAVResource] = []
        while index < data.count {
            let end = min(index + chunkSize, data.count)
            try parser.feed(data.subdata(in: index..<end), path: "/")
            all += parser.drain()
            index = end
        }
        try parser.finish(path: "/")
        return all + parser.drain()
    }

    @Test("Apache mod_dav: D: prefix plus lp1: for live properties, 404 propstat ignored")
    func apache() throws {
        let body = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:">
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/dav/a%20b/</D:href>
        <D:propstat><D:prop><lp1:resourcetype><D:collection/></lp1:resourcetype>
        <lp1:getlastmodified>Sat, 21 Nov 2026 13:23:43 GMT</lp1:getlastmodified>
        <lp1:getetag>W/"1000-660c94508c40a"</lp1:getetag></D:prop>
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        <D:propstat><D:prop><D:getcontenttype/><D:getcontentlength/></D:prop>
        <D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:">
        <D:href>/dav/a%20b/file%231.txt</D:href>
        <D:propstat><D:prop><lp1:resourcetype/><lp1:getcontentlength>6</lp1:getcontentlength>
        <D:getcontenttype>text/plain</D:getcontenttype><lp1:getetag>"6-660c9526b552d"</lp1:getetag>
        <lp1:creationdate>2026-11-21T13:27:27Z</lp1:creationdate></D:prop>
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        </D:response>
        </D:multistatus>
        """
        for chunk in [1, 7, 4096] {
            let resources = try parse(body, chunkSize: chunk)
            #expect(resources.count == 2)
            #expect(resources[0].isCollection)
            #expect(resources[0].etag == #"W/"1000-660c94508c40a""#)
            #expect(resources[0].contentLength == nil, "a 404 propstat contributes nothing")
            #expect(resources[0].lastModified == "Sat, 21 Nov 2026 13:23:43 GMT")
            #expect(resources[1].href == "/dav/a%20b/file%231.txt")
            #expect(!resources[1].isCollection)
            #expect(resources[1].contentLength == 6)
            #expect(resources[1].contentType == "text/plain")
            #expect(resources[1].creationDate == "2026-11-21T13:27:27Z")
        }
    }

    @Test("default namespace, no prefixes; other prefixes for DAV:; foreign elements ignored")
    func namespaces() throws {
        let body = """
        <multistatus xmlns="DAV:" xmlns:x="http://example.com/ns"><response><href>http://h:8080/r/x.bin</href>
        <propstat><prop><getcontentlength>42</getcontentlength><x:getcontentlength>999</x:getcontentlength>
        <resourcetype/></prop><status>HTTP/1.1 200 OK</status></propstat></response>
        <zz:response xmlns:zz="DAV:"><zz:href>/r/sub/</zz:href><zz:propstat><zz:prop><zz:resourcetype><zz:collection/></zz:resourcetype>
        </zz:prop><zz:status>HTTP/1.1 200 OK</zz:status></zz:propstat></zz:response>
        <D:response xmlns:D="urn:not-dav"><D:href>/ignored</D:href></D:response>
        </multistatus>
        """
        let resources = try parse(body)
        #expect(resources.count == 2)
        #expect(resources[0].href == "http://h:8080/r/x.bin")
        #expect(resources[0].contentLength == 42, "the x: element in another namespace must not override")
        #expect(resources[1].isCollection)
    }

    @Test("properties split across several propstats, response-level error status, quota")
    func propstatsAndErrors() throws {
        let body = """
        <d:multistatus xmlns:d="DAV:">
        <d:response><d:href>/a</d:href>
        <d:propstat><d:prop><d:getetag>"e1"</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
        <d:propstat><d:prop><d:getlastmodified>Mon, 02 Jan 2006 15:04:05 GMT</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>
        <d:propstat><d:prop><d:getcontentlength>5</d:getcontentlength></d:prop><d:status>HTTP/1.1 403 Forbidden</d:status></d:propstat>
        </d:response>
        <d:response><d:href>/locked</d:href><d:status>HTTP/1.1 423 Locked</d:status>
        <d:responsedescription>The resource is locked</d:responsedescription></d:response>
        <d:response><d:href>/</d:href><d:propstat><d:prop><d:quota-available-bytes>1000</d:quota-available-bytes>
        <d:quota-used-bytes>24</d:quota-used-bytes></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
        </d:multistatus>
        """
        let resources = try parse(body)
        #expect(resources.count == 3)
        #expect(resources[0].etag == "\"e1\"")
        #expect(resources[0].lastModified == "Mon, 02 Jan 2006 15:04:05 GMT")
        #expect(resources[0].contentLength == nil)
        #expect(resources[1].status == 423)
        #expect(resources[1].description == "The resource is locked")
        #expect(resources[2].quotaAvailable == 1000)
        #expect(resources[2].quotaUsed == 24)
    }

    @Test("broken XML is a clear error, never a crash", arguments: [
        "<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/a</D:href>",
        "<D:multistatus xmlns:D=\"DAV:\"><D:response></D:multistatus>",
        "not xml at all",
        "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><x>&e;</x>",
        "",
    ])
    func brokenXML(body: String) {
        do {
            let resources = try parse(body)
            // Only the entity case may parse; it must not have read the file.
            #expect(!resources.contains { $0.href.contains("root:") })
            #expect(body.contains("ENTITY"), "broken XML must be rejected: \(body)")
        } catch let error as FileProviderError {
            #expect(error.failureKind == .malformedResponse)
            #expect(error.description.contains("multistatus answer"), "\(error)")
        } catch {
            Issue.record("unexpected error type: \(error)")
        }
    }

    @Test("a large listing parses with flat memory, one chunk at a time")
    func largeListing() throws {
        let parser = MultistatusParser()
        try parser.feed(Data(#"<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">"#.utf8), path: "/")
        var count = 0
        var mostAtOnce = 0
        for index in 0..<20_000 {
            let item = "<D:response><D:href>/f\(index)</D:href><D:propstat><D:prop><D:getcontentlength>\(index)</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
            try parser.feed(Data(item.utf8), path: "/")
            let drained = parser.drain().count
            count += drained
            mostAtOnce = max(mostAtOnce, drained)
        }
        // Each response is handed out as soon as it is complete: the parser holds at most the one
        // in progress, whatever the length of the answer (memory flat), never the whole listing.
        #expect(count >= 19_999 && mostAtOnce <= 1, "handed out \(count) while streaming, at most \(mostAtOnce) at once")
        try parser.feed(Data("</D:multistatus>".utf8), path: "/")
        try parser.finish(path: "/")
        count += parser.drain().count
        #expect(count == 20_000)
    }

    @Test("a document type (with entity declarations) is refused, and nothing leaks (found by fuzzing)")
    func doctypeRefused() {
        let body = #"<?xml version="1.0"?><!DOCTYPE multistatus [<!ENTITY x "expanded">]><multistatus xmlns="DAV:"><response><href>&x;</href></response></multistatus>"#
        #expect(throws: FileProviderError.self) { _ = try parse(body) }
        do {
            _ = try parse(body, chunkSize: 4096)
        } catch {
            #expect("\(error)".contains("DOCTYPE is not allowed"), "\(error)")
        }
    }

    @Test("a million distinct element names fail early and clearly instead of parsing in quadratic time")
    func distinctNames() throws {
        // 200 responses of 5,000 distinct unknown properties each (within the per-response bound).
        let parser = MultistatusParser()
        try parser.feed(Data(#"<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:x="urn:x">"#.utf8), path: "/")
        let clock = ContinuousClock()
        let start = clock.now
        var failure: (any Error)?
        for response in 0..<200 where failure == nil {
            var item = "<D:response><D:href>/f\(response)</D:href><D:propstat><D:prop>"
            for name in (response * 5_000)..<(response * 5_000 + 5_000) { item += "<x:n\(name)/>" }
            item += "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
            do {
                try parser.feed(Data(item.utf8), path: "/")
            } catch {
                failure = error
            }
        }
        #expect(failure.map { "\($0)".contains("distinct element names") } == true, "\(String(describing: failure))")
        #expect(clock.now - start < .seconds(5), "\(clock.now - start)")
        // Many elements of a few names (a large listing) stay fine: see largeListing.
    }

    @Test("ownCloud/Nextcloud checksums: oc:checksums under any prefix, one or several oc:checksum elements")
    func ownCloudChecksums() throws {
        // As Apache returns a dead property; Nextcloud writes the same under the oc: prefix.
        let body = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:" xmlns:ns1="http://owncloud.org/ns">
        <D:response xmlns:lp1="DAV:" xmlns:ns1="http://owncloud.org/ns">
        <D:href>/dav/h.txt</D:href>
        <D:propstat><D:prop><lp1:getcontentlength>6</lp1:getcontentlength>
        <ns1:checksums><ns1:checksum>SHA1:F572D396FAE9206628714FB2CE00F72E94F2258F MD5:b1946ac92492d2347c6235b4d2611184 ADLER32:084c01f3</ns1:checksum></ns1:checksums>
        </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        </D:response>
        <D:response><D:href>/dav/two.txt</D:href>
        <D:propstat><D:prop><x:checksums xmlns:x="http://owncloud.org/ns"><x:checksum>SHA1:f572d396fae9206628714fb2ce00f72e94f2258f</x:checksum><x:checksum>MD5:b1946ac92492d2347c6235b4d2611184</x:checksum></x:checksums></D:prop>
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        </D:response>
        <D:response><D:href>/dav/none.txt</D:href>
        <D:propstat><D:prop><oc:checksums xmlns:oc="http://owncloud.org/ns"/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>
        </D:response>
        <D:response><D:href>/dav/other-namespace.txt</D:href>
        <D:propstat><D:prop><y:checksums xmlns:y="urn:elsewhere">SHA1:f572d396fae9206628714fb2ce00f72e94f2258f</y:checksums></D:prop>
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        </D:response>
        </D:multistatus>
        """
        let resources = try parse(body)
        #expect(resources.count == 4)
        let expected: [HashAlgorithm: String] = [.sha1: "f572d396fae9206628714fb2ce00f72e94f2258f", .md5: "b1946ac92492d2347c6235b4d2611184"]
        #expect(resources[0].contentLength == 6)
        #expect(OwnCloudChecksums.parse(try #require(resources[0].checksums)) == expected)
        #expect(OwnCloudChecksums.parse(try #require(resources[1].checksums)) == expected)
        #expect(resources[2].checksums == nil)
        #expect(resources[3].checksums == nil)
        #expect(OwnCloudChecksums.parse("SHA1:tooshort MD5: SHA-256:\(String(repeating: "a", count: 64)) junk") == [.sha256: String(repeating: "a", count: 64)])
        #expect(OwnCloudChecksums.header(for: expected) == "SHA1:f572d396fae9206628714fb2ce00f72e94f2258f")
        #expect(OwnCloudChecksums.header(for: [.sha256: String(repeating: "a", count: 64)]) == nil)
    }
}

@Suite("WebDAV paths and dates")
struct WebDAVPathTests {
    let paths = WebDAVPath(baseURL: URL(string: "http://host:8080/dav/my%20files")!)

    @Test("remote paths encode every reserved character per segment")
    func encode() {
        #expect(WebDAVPath.encode("/a b/c#d/x?.txt") == "a%20b/c%23d/x%3F.txt")
        #expect(WebDAVPath.encode("/100%/naïve") == "100%25/na%C3%AFve")
        // The same as Foundation's encoding of each segment with only the unreserved characters and
        // "=" kept (see WebDAVPath.encode).
        var unreserved = CharacterSet()
        unreserved.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~=")
        for path in ["/", "/a", "/a b/c+d&e=f;g,h", "/ü/e\u{301}/日本語/🙂 x", "/[x]/(y)/{z}/'q'/\"w\"/`", "/a%2Fb/~user/.hidden/-._~",
                     "/tab\there/new\nline/nul?/#frag/@at:colon/!$*"] {
            let expected = path.split(separator: "/", omittingEmptySubsequences: true)
                .map { String($0).addingPercentEncoding(withAllowedCharacters: unreserved)! }.joined(separator: "/")
            #expect(WebDAVPath.encode(path) == expected, "\(path)")
        }
        #expect(paths.url("/a b").absoluteString == "http://host:8080/dav/my%20files/a%20b")
        #expect(paths.url("/sub", folder: true).absoluteString == "http://host:8080/dav/my%20files/sub/")
        #expect(paths.url("/").absoluteString == "http://host:8080/dav/my%20files/")
    }

    @Test("hrefs: absolute URLs, absolute paths, relative, encoded differently, outside the base")
    func hrefs() {
        #expect(paths.remotePath(fromHref: "/dav/my%20files/", requestPath: "/") == "/")
        #expect(paths.remotePath(fromHref: "/dav/my%20files", requestPath: "/") == "/")
        #expect(paths.remotePath(fromHref: "/dav/my files/a%23b/", requestPath: "/") == "/a#b")
        #expect(paths.remotePath(fromHref: "http://host:8080/dav/my%20files/x%3F.txt", requestPath: "/") == "/x?.txt")
        #expect(paths.remotePath(fromHref: "/dav/my%20files/na%c3%afve", requestPath: "/") == "/naïve")
        #expect(paths.remotePath(fromHref: "child.txt", requestPath: "/sub") == "/sub/child.txt")
        #expect(paths.remotePath(fromHref: "/other/place", requestPath: "/") == nil)
        #expect(paths.remotePath(fromHref: "/dav/my%20files/../../etc", requestPath: "/") == nil)
    }

    @Test("HTTP and RFC 3339 dates")
    func dates() {
        #expect(InternetDate.http("Sat, 21 Nov 2026 13:23:43 GMT") == Date(timeIntervalSince1970: 1_795_267_423))
        #expect(InternetDate.http("Saturday, 21-Nov-26 13:23:43 GMT") == Date(timeIntervalSince1970: 1_795_267_423))
        #expect(InternetDate.http("garbage") == nil)
        // Hostile values give no date, never a trap.
        #expect(InternetDate.http("Sat, 21 Nov 99999999999999999999 13:23:43 GMT") == nil)
        #expect(InternetDate.http("Sat, 21 Nov 9999999999 13:23:43 GMT") == nil)
        #expect(InternetDate.http("Sat, 21 Xyz 2026 13:23:43 GMT") == nil)
        #expect(InternetDate.http("Sat, 99 Nov 2026 99:99:99 GMT") == nil)
        #expect(InternetDate.rfc3339("99999-11-21T13:23:43+99:99") == nil)
        #expect(InternetDate.rfc3339("2026-11-21T13:23:43Z") == Date(timeIntervalSince1970: 1_795_267_423))
        #expect(InternetDate.rfc3339("2026-11-21T14:23:43.5+01:00") == Date(timeIntervalSince1970: 1_795_267_423.5))
        #expect(InternetDate.rfc3339("2026-13-01T00:00:00Z") == nil)
    }
}
