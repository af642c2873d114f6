import Foundation
import GatewayCore
import GatewayServeRequests
import GatewayState
import HTTPTypes
import HummingbirdCore
import NIOCore

/// `PROPFIND`: live properties of an item and, at `Depth: 1`, of its children, written as they are
/// listed (a folder of 100,000 entries is never held whole).
extension WebDAVHandler {
    /// The live properties every item has (files add length and type).
    static let liveProperties: [PropertyName] = [
        .dav("resourcetype"), .dav("displayname"), .dav("getlastmodified"), .dav("creationdate"),
        .dav("getetag"), .dav("getcontentlength"), .dav("getcontenttype"), .dav("lockdiscovery"), .dav("supportedlock"),
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

    /// One `DAV:response` element: live properties, and the dead ones `PROPPATCH` stored.
    func response(for item: FileObject, path: String, what: PropfindRequest) -> String {
        var found = ""
        var missing: [PropertyName] = []
        let dead = (try? deadProperties?.properties(of: path)) ?? []
        switch what {
        case .allProperties:
            for name in Self.liveProperties { found += value(name, of: item) ?? "" }
            for property in dead { found += Self.element(PropertyName(namespace: property.namespace, name: property.name), value: property.value) }
        case .propertyNames:
            for name in Self.liveProperties where value(name, of: item) != nil { found += "<D:\(name.name)/>" }
            for property in dead { found += Self.element(PropertyName(namespace: property.namespace, name: property.name), value: nil) }
        case .properties(let names):
            for name in names {
                if let live = value(name, of: item) {
                    found += live
                } else if let property = dead.first(where: { $0.namespace == name.namespace && $0.name == name.name }) {
                    found += Self.element(name, value: property.value)
                } else {
                    missing.append(name)
                }
            }
        }
        var xml = "<D:response><D:href>\(ServeText.xml(paths.href(for: path, isFolder: item.isDirectory)))</D:href>"
        xml += "<D:propstat><D:prop>\(found)</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
        if !missing.isEmpty {
            xml += "<D:propstat><D:prop>"
            for name in missing { xml += Self.element(name, value: nil) }
            xml += "</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>"
        }
        return xml + "</D:response>\n"
    }

    /// A property element with its own namespace declaration, empty or holding `value` (XML).
    static func element(_ name: PropertyName, value: String?) -> String {
        let local = ServeText.xml(name.name)
        let open: String, close: String
        if name.namespace == "DAV:" {
            (open, close) = ("<D:\(local)", "</D:\(local)>")
        } else if name.namespace.isEmpty {
            (open, close) = ("<\(local) xmlns=\"\"", "</\(local)>")
        } else {
            (open, close) = ("<X:\(local) xmlns:X=\"\(ServeText.xml(name.namespace))\"", "</X:\(local)>")
        }
        guard let value, !value.isEmpty else { return open + "/>" }
        return open + ">" + value + close
    }

    /// `PROPPATCH`: dead properties set and removed all together, or none (RFC 4918 9.2); the
    /// live (`DAV:`) ones are protected.
    func proppatch(_ request: Request, path: String) async throws -> Response {
        guard let store = deadProperties else { return Self.plain(.methodNotAllowed, "properties are not kept") }
        let update: PropertyUpdate
        do {
            let body = try await request.body.collect(upTo: options.maximumRequestXML)
            update = try PropertyUpdate.parse(Data(body.readableBytesView))
        } catch is PropertyUpdate.ParseError {
            return Self.plain(.badRequest, "the PROPPATCH body is not a DAV:propertyupdate document")
        } catch {
            return Self.plain(.contentTooLarge, "the PROPPATCH body is larger than \(options.maximumRequestXML) bytes")
        }
        guard let item = try await item(path) else { return Self.plain(.notFound, "not found") }
        let protected = update.operations.filter { $0.name.namespace == "DAV:" }.map(\.name)
        var statuses: [(PropertyName, String)] = []
        if protected.isEmpty {
            try store.update(path, update.operations.map { operation in
                switch operation {
                case .set(let name, let value): return .set(DeadProperty(namespace: name.namespace, name: name.name, value: value))
                case .remove(let name): return .remove(namespace: name.namespace, name: name.name)
                }
            })
            statuses = update.operations.map { ($0.name, "HTTP/1.1 200 OK") }
        } else {
            statuses = update.operations.map { operation in
                (operation.name, protected.contains(operation.name) ? "HTTP/1.1 403 Forbidden" : "HTTP/1.1 424 Failed Dependency")
            }
        }
        var xml = #"<?xml version="1.0" encoding="utf-8"?>"# + "\n" + #"<D:multistatus xmlns:D="DAV:"><D:response>"#
        xml += "<D:href>\(ServeText.xml(paths.href(for: path, isFolder: item.isDirectory)))</D:href>"
        for (name, status) in statuses {
            xml += "<D:propstat><D:prop>\(Self.element(name, value: nil))</D:prop><D:status>\(status)</D:status></D:propstat>"
        }
        xml += "</D:response></D:multistatus>\n"
        let body = ByteBuffer(string: xml)
        var headers = HTTPFields()
        headers[.contentType] = "application/xml; charset=utf-8"
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status"), headers: headers, body: ResponseBody(byteBuffer: body))
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
        case "lockdiscovery":
            return lockDiscovery(item.path)
        case "supportedlock":
            return Self.supportedLock
        default:
            return nil
        }
    }
}
