import Foundation
import GatewayCore
import HTTPTypes
import HummingbirdCore
import NIOCore

/// `PROPFIND`: live properties of an item and, at `Depth: 1`, of its children, written as they are
/// listed (a folder of 100,000 entries is never held whole).
extension WebDAVHandler {
    /// The live properties every item has (files add length and type).
    static let liveProperties: [PropertyName] = [
        .dav("resourcetype"), .dav("displayname"), .dav("getlastmodified"), .dav("creationdate"),
        .dav("getetag"), .dav("getcontentlength"), .dav("getcontenttype"),
    ]

    func propfind(_ request: Request, path: String) async throws -> Response {
        let depth = (request.headers[HTTPField.Name("Depth")!] ?? "infinity").trimmingCharacters(in: .whitespaces).lowercased()
        guard ["0", "1", "infinity"].contains(depth) else { return Self.plain(.badRequest, "Depth must be 0, 1 or infinity") }
        if depth == "infinity", !options.allowDepthInfinity {
            let body = ByteBuffer(string: #"<?xml version="1.0" encoding="utf-8"?>"# + "\n" + #"<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>"#)
            var headers = HTTPFields()
            headers[.contentType] = "application/xml; charset=utf-8"
            headers[.contentLength] = String(body.readableBytes)
            return Response(status: .forbidden, headers: headers, body: ResponseBody(byteBuffer: body))
        }
        let what: PropfindRequest
        do {
            let body = try await request.body.collect(upTo: options.maximumRequestXML)
            what = try PropfindRequest.parse(Data(body.readableBytesView))
        } catch is PropfindRequest.PropfindError {
            return Self.plain(.badRequest, "the PROPFIND body is not a DAV:propfind document")
        } catch {
            return Self.plain(.contentTooLarge, "the PROPFIND body is larger than \(options.maximumRequestXML) bytes")
        }
        guard let item = try await item(path) else { return Self.plain(.notFound, "not found") }
        var headers = HTTPFields()
        headers[.contentType] = "application/xml; charset=utf-8"
        let provider = self.provider
        let handler = self
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: #"<?xml version="1.0" encoding="utf-8"?>"# + "\n" + #"<D:multistatus xmlns:D="DAV:">"# + "\n"))
            try await writer.write(ByteBuffer(string: handler.response(for: item, path: path, what: what)))
            if item.isDirectory, depth != "0" {
                if depth == "1" {
                    for try await page in provider.contentsOfDirectory(path: path, pageSize: 1000) {
                        var chunk = ""
                        for child in page.entries { chunk += handler.response(for: child, path: child.path, what: what) }
                        try await writer.write(ByteBuffer(string: chunk))
                    }
                } else {
                    for try await child in provider.walk(path: path, pageSize: 1000) {
                        try await writer.write(ByteBuffer(string: handler.response(for: child, path: child.path, what: what)))
                    }
                }
            }
            try await writer.write(ByteBuffer(string: "</D:multistatus>\n"))
            try await writer.finish(nil)
        }
        return Response(status: HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status"), headers: headers, body: body)
    }

    /// One `DAV:response` element.
    func response(for item: FileObject, path: String, what: PropfindRequest) -> String {
        var found = ""
        var missing: [PropertyName] = []
        let wanted: [PropertyName]
        switch what {
        case .allProperties: wanted = Self.liveProperties
        case .propertyNames: wanted = Self.liveProperties
        case .properties(let names): wanted = names
        }
        for name in wanted {
            if case .propertyNames = what {
                if value(name, of: item) != nil { found += "<D:\(name.name)/>" }
            } else if let value = value(name, of: item) {
                found += value
            } else if case .properties = what {
                missing.append(name)
            }
        }
        var xml = "<D:response><D:href>\(ServeText.xml(paths.href(for: path, isFolder: item.isDirectory)))</D:href>"
        xml += "<D:propstat><D:prop>\(found)</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
        if !missing.isEmpty {
            xml += "<D:propstat><D:prop>"
            for name in missing {
                xml += name.namespace == "DAV:" ? "<D:\(ServeText.xml(name.name))/>"
                    : "<X:\(ServeText.xml(name.name)) xmlns:X=\"\(ServeText.xml(name.namespace))\"/>"
            }
            xml += "</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>"
        }
        return xml + "</D:response>\n"
    }

    /// A live property as XML, or `nil` when the item has none of that name.
    func value(_ name: PropertyName, of item: FileObject) -> String? {
        guard name.namespace == "DAV:" else { return nil }
        switch name.name {
        case "resourcetype":
            return item.isDirectory ? "<D:resourcetype><D:collection/></D:resourcetype>" : "<D:resourcetype/>"
        case "displayname":
            return "<D:displayname>\(ServeText.xml(item.name))</D:displayname>"
        case "getlastmodified":
            return item.modificationDate.map { "<D:getlastmodified>\(ServeText.httpDate($0))</D:getlastmodified>" }
        case "creationdate":
            return item.creationDate.map { "<D:creationdate>\(ServeText.iso8601($0))</D:creationdate>" }
        case "getetag":
            return item.isDirectory ? nil : "<D:getetag>\(ServeText.xml(Self.etag(item)))</D:getetag>"
        case "getcontentlength":
            return item.isDirectory ? nil : "<D:getcontentlength>\(item.size ?? 0)</D:getcontentlength>"
        case "getcontenttype":
            return item.isDirectory ? nil : "<D:getcontenttype>\(ServeText.xml(item.contentType ?? "application/octet-stream"))</D:getcontenttype>"
        default:
            return nil
        }
    }
}
