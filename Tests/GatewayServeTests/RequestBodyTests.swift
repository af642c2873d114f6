import Foundation
@testable import GatewayServeRequests
import Testing

/// PROPFIND and PROPPATCH bodies as `gateway serve webdav` reads them (libxml2 events): what they
/// ask, values kept as self-contained XML, hostile documents refused.
@Suite("WebDAV request bodies")
struct RequestBodyTests {
    @Test("PROPFIND: allprop, propname, a list; an empty body is allprop")
    func propfind() throws {
        #expect(try PropfindRequest.parse(Data()) == .allProperties)
        #expect(try PropfindRequest.parse(Data(#"<propfind xmlns="DAV:"><propname/></propfind>"#.utf8)) == .propertyNames)
        let list = try PropfindRequest.parse(Data(#"<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><x:a xmlns:x="urn:x"/><b xmlns=""/></D:prop></D:propfind>"#.utf8))
        #expect(list == .properties([.dav("getetag"), PropertyName(namespace: "urn:x", name: "a"), PropertyName(namespace: "", name: "b")]))
    }

    @Test("PROPPATCH: values keep their namespaces, attributes and text, and read back as XML")
    func proppatchValues() throws {
        let body = #"""
        <D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop>
        <Z:author><Z:name Z:lang="en" plain="1">Ann &amp; &lt;Bo&gt;</Z:name><![CDATA[<raw>]]></Z:author>
        </D:prop></D:set><D:remove><D:prop><Z:old/></D:prop></D:remove><D:other><D:prop><Z:ignored/></D:prop></D:other></D:propertyupdate>
        """#
        let update = try PropertyUpdate.parse(Data(body.utf8))
        #expect(update.operations.count == 2)
        guard case .set(let name, let value) = update.operations.first else { Issue.record("no set"); return }
        #expect(name == PropertyName(namespace: "urn:z", name: "author"))
        #expect(value == #"<v4:name xmlns:v4="urn:z" xmlns:a0="urn:z" a0:lang="en" plain="1">Ann &amp; &lt;Bo&gt;</v4:name>&lt;raw&gt;"#)
        #expect(update.operations.last == .remove(PropertyName(namespace: "urn:z", name: "old")))
    }

    @Test("hostile bodies are refused with a reason", arguments: [
        #"<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop><D:a>&e;</D:a></D:prop></D:propfind>"#,
        #"<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><D:propfind xmlns:D="DAV:"/>"#,
        #"<D:propfind xmlns:D="DAV:"><D:prop>&undefined;</D:prop></D:propfind>"#,
        "<D:propfind xmlns:D=\"DAV:\">" + String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100) + "</D:propfind>",
        #"<D:propfind xmlns:D="DAV:"><D:prop>"#,
        #"<D:multistatus xmlns:D="DAV:"/>"#,
    ])
    func hostile(_ body: String) {
        #expect(throws: PropfindRequest.PropfindError.self) { try PropfindRequest.parse(Data(body.utf8)) }
        let asUpdate = body.replacingOccurrences(of: "propfind", with: "propertyupdate")
        #expect(throws: PropertyUpdate.ParseError.self) { try PropertyUpdate.parse(Data(asUpdate.utf8)) }
    }

    @Test("Range: one range honoured, several served whole, past the end unsatisfiable")
    func ranges() {
        #expect(ByteRange.parse("bytes=0-9", size: 100) == .range(start: 0, count: 10))
        #expect(ByteRange.parse("bytes=90-", size: 100) == .range(start: 90, count: 10))
        #expect(ByteRange.parse("bytes=-10", size: 100) == .range(start: 90, count: 10))
        #expect(ByteRange.parse("bytes=95-200", size: 100) == .range(start: 95, count: 5))
        #expect(ByteRange.parse("bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=9223372036854775806-9223372036854775807", size: .max) == .range(start: .max - 1, count: 1))
        #expect(ByteRange.parse("bytes=-99999999999999999999", size: 100) == .whole)
    }
}
