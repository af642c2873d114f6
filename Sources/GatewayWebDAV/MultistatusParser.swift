import CLibXML2
import Foundation
import GatewayCore

/// One `DAV:response` of a 207 Multi-Status body: an href and the properties its successful
/// `propstat` blocks carried (a 404 `propstat` for a property the server lacks is normal and ignored).
struct DAVResource: Sendable, Equatable {
    var href = ""
    /// The response-level status, when the server gave one instead of `propstat`s (an error per item).
    var status: Int?
    var isCollection = false
    var contentLength: Int64?
    var lastModified: String?
    var etag: String?
    var contentType: String?
    var creationDate: String?
    var quotaAvailable: Int64?
    var quotaUsed: Int64?
    /// ownCloud/Nextcloud's stored content hashes (`oc:checksums`): `SHA1:… MD5:…`, space-separated.
    var checksums: String?
    /// The gateway's own source stamp (a dead property; see `WebDAVProvider+SourceStamps`).
    var sourceStamp: String?
    /// A server's error text for this item (`DAV:responsedescription`).
    var description: String?
    /// Nextcloud's and ownCloud's trash bins: the item's original name, its path in the user's
    /// files (`Documents/a.txt`) and when it was deleted (Unix seconds).
    var trashbinFilename: String?
    var trashbinLocation: String?
    var trashbinDeleted: String?
    /// ownCloud's file id (`oc:fileid`), which names a trashed item in its trash bin.
    var fileID: String?
}

/// A streaming (SAX) parser for WebDAV 207 Multi-Status bodies, fed chunk by chunk as the response
/// arrives, so memory stays flat for folders of any size.
///
/// A hostile body cannot make it grow: elements nest at most ``maximumDepth`` deep, one response
/// holds at most ``maximumElementsPerResponse`` elements, and a text the parser keeps (an href, a
/// property value) is at most ``textLimit`` bytes; past any bound the parse stops with
/// ``FileProviderError/malformedResponse(path:detail:)`` naming it. libxml2 expands no entity and
/// loads nothing from the network.
///
/// Elements are matched by namespace URI (`DAV:`, ownCloud's `http://owncloud.org/ns` for stored
/// checksums, file ids and trash bins, Nextcloud's `http://nextcloud.org/ns` for its trash bin, and the gateway's own for source stamps) and local name, never by prefix. Parsed responses
/// collect in ``completed``; the caller drains them between chunks.
///
/// One parser serves one body on one task at a time (the SAX callbacks run inside ``feed(_:path:)``),
/// so its state is marked `@exclusivity(unchecked)`: the run-time exclusivity checks on every
/// element's state changes cost about 5 % of a large listing's CPU time.
final class MultistatusParser {
    /// Responses parsed so far and not yet taken.
    @exclusivity(unchecked) private(set) var completed: [DAVResource] = []
    /// The `DAV:sync-token` of a `sync-collection` report (RFC 6578), once read.
    private(set) var syncToken: String?

    private var context: xmlParserCtxtPtr?
    private var handler = xmlSAXHandler()
    @exclusivity(unchecked) private var failure: String?
    @exclusivity(unchecked) private var path: [Tag] = []             // the open elements (DAV: and ownCloud names this parser knows, else .other)
    @exclusivity(unchecked) private var current: DAVResource?
    @exclusivity(unchecked) private var propstat: DAVResource?        // properties of the propstat being read
    @exclusivity(unchecked) private var propstatStatus: Int?
    /// The bytes of the text being kept, decoded once when its element ends.
    @exclusivity(unchecked) private var text: [UInt8] = []
    @exclusivity(unchecked) private var capturing = false
    /// Elements seen inside the current response.
    @exclusivity(unchecked) private var elementsInResponse = 0
    /// Whether a `response` is open (a flag: testing `current` against nil copies the whole value).
    @exclusivity(unchecked) private var inResponse = false
    /// Whether any byte was fed (an empty body gets its own message).
    private var fedBytes = false
    /// Whether a bound (or a root element other than `multistatus`) stopped the parse.
    private var stopped = false
    /// Whether the root element was seen.
    private var sawRoot = false
    /// The longest text kept (an href, a property value): 64 KiB.
    static let textLimit = 64 * 1024
    /// The deepest nesting accepted: a multistatus is 6 levels deep, with a property's own content a
    /// few more.
    static let maximumDepth = 64
    /// The most elements one `response` may hold: a real one has a few dozen.
    static let maximumElementsPerResponse = 10_000
    /// The most distinct element names a body may use: a real one uses a few dozen.
    static let maximumDistinctNames = 2_000
    /// The element names seen, by libxml2's interned name and namespace pointers (one pair per
    /// distinct name), with what they are to this parser: one hash look-up per element.
    @exclusivity(unchecked) private var tags: [NameKey: Tag] = [:]

    init() {
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { context, localName, _, uri, _, _, _, _, _ in
            MultistatusParser.from(context).start(localName: localName, uri: uri)
        }
        handler.endElementNs = { context, localName, _, uri in
            MultistatusParser.from(context).end(localName: localName, uri: uri)
        }
        handler.characters = { context, characters, length in
            MultistatusParser.from(context).characters(characters, Int(length))
        }
        // A multistatus body has no use for a document type: one (with entity declarations, which
        // make libxml2 build a document on the side) is refused rather than processed.
        handler.internalSubset = { context, _, _, _ in
            MultistatusParser.from(context).stop("a DOCTYPE is not allowed in a multistatus answer")
        }
        handler.serror = { context, error in
            guard let context, let error else { return }
            let parser = MultistatusParser.from(context)
            if parser.failure == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue {
                let message = error.pointee.message.map { String(cString: $0) } ?? "XML error"
                parser.failure = "\(message.trimmingCharacters(in: .whitespacesAndNewlines)) (line \(error.pointee.line))"
            }
        }
        let context = xmlCreatePushParserCtxt(&handler, Unmanaged.passUnretained(self).toOpaque(), nil, 0, nil)
        // No network access and no entity expansion from a server's body; libxml2's own limits
        // (no XML_PARSE_HUGE) stay on.
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        // libxml2 interns every element, attribute and prefix name in a dictionary whose hash is a
        // weak sum of bytes: a million distinct names ("n123456", "n654321" collide) took seconds,
        // growing quadratically. Real multistatus bodies use a few dozen names; 256 KiB of them is
        // plenty, and a body past it fails (after ``maximumDistinctNames`` elements, by name).
        if let dictionary = context?.pointee.dict { xmlDictSetLimit(dictionary, 256 << 10) }
        self.context = context
    }

    deinit {
        guard let context else { return }
        // The push parser may have built a document for a DTD it met before stopping; the context
        // does not free it (found by the multistatus fuzz harness: 12.8 KB per such answer).
        if let document = context.pointee.myDoc { xmlFreeDoc(document) }
        xmlFreeParserCtxt(context)
    }

    private static func from(_ pointer: UnsafeMutableRawPointer?) -> MultistatusParser {
        Unmanaged<MultistatusParser>.fromOpaque(pointer!).takeUnretainedValue()
    }

    /// Parses the next chunk of the body.
    ///
    /// - Throws: ``FileProviderError/malformedResponse(path:detail:)`` for broken XML.
    func feed(_ data: Data, path: String) throws {
        guard let context else { return }
        if !data.isEmpty { fedBytes = true }
        let result = data.withUnsafeBytes { buffer in
            xmlParseChunk(context, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count), 0)
        }
        try check(result, path: path)
    }

    /// Tells the parser the body ended; throws if the document is incomplete or broken.
    func finish(path: String) throws {
        guard let context else { return }
        guard fedBytes else {
            throw FileProviderError.malformedResponse(path: path, detail: "the server's multistatus answer was empty")
        }
        let result = xmlParseChunk(context, nil, 0, 1)
        if !stopped, !self.path.isEmpty {
            // libxml2 words a cut-off document as "Extra content at the end" or "Premature end of
            // data": say what happened instead.
            throw FileProviderError.malformedResponse(path: path, detail: "the server's multistatus answer ended before the document was complete")
        }
        try check(result, path: path)
    }

    /// Stops the parse with `reason` (a bound was passed): no further events, and the next
    /// ``feed(_:path:)`` or ``finish(path:)`` throws it.
    private func stop(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        stopped = true
        if let context { xmlStopParser(context) }
    }

    /// Takes the responses parsed so far.
    func drain() -> [DAVResource] {
        defer { completed.removeAll(keepingCapacity: true) }
        return completed
    }

    private func check(_ result: Int32, path: String) throws {
        if let failure {
            throw FileProviderError.malformedResponse(path: path, detail: "invalid multistatus answer from the server: \(failure)")
        }
        if result != 0 {
            throw FileProviderError.malformedResponse(path: path, detail: "invalid XML in the server's answer (libxml2 error \(result))")
        }
    }

    // MARK: SAX events

    private func start(localName: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?) {
        guard failure == nil else { return }
        guard path.count < Self.maximumDepth else {
            return stop("elements nested more than \(Self.maximumDepth) deep")
        }
        let key = NameKey(name: UnsafeRawPointer(localName), uri: UnsafeRawPointer(uri))
        let name: Tag
        if let known = tags[key] {
            name = known
        } else {
            guard tags.count < Self.maximumDistinctNames else {
                return stop("more than \(Self.maximumDistinctNames) distinct element names")
            }
            name = Self.tag(localName, uri)
            tags[key] = name
        }
        if inResponse {
            elementsInResponse += 1
            guard elementsInResponse <= Self.maximumElementsPerResponse else {
                return stop("one response holds more than \(Self.maximumElementsPerResponse) elements")
            }
        }
        if !sawRoot {
            sawRoot = true
            // An HTML page or another document sent with 207 is not an empty listing.
            guard name == .multistatus else { return stop("the answer is not a DAV:multistatus document") }
        }
        let parent = path.last
        path.append(name)
        switch (parent, name) {
        case (_, .response):
            current = DAVResource()
            inResponse = true
            elementsInResponse = 0
        case (.response, .propstat):
            propstat = DAVResource()
            propstatStatus = nil
        case (.response, .href), (.response, .status), (.propstat, .status), (.response, .responsedescription),
             (.multistatus, .syncToken):
            beginText()
        case (.resourcetype, .collection):
            propstat?.isCollection = true
        case (.prop, _) where name != .other:
            beginText()
        default:
            break
        }
    }

    private func end(localName: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?) {
        guard failure == nil else { return }
        let name = path.popLast() ?? .other
        let parent = path.last
        switch (parent, name) {
        case (.response, .href):
            current?.href = endText()
        case (.response, .status):
            current?.status = Self.statusCode(endText())
        case (.response, .responsedescription):
            current?.description = endText()
        case (.multistatus, .syncToken):
            syncToken = DAVText.trimmed(endText())
        case (.propstat, .status):
            propstatStatus = Self.statusCode(endText())
        case (.prop, .getcontentlength):
            propstat?.contentLength = Self.byteCount(endText())
        case (.prop, .getlastmodified):
            propstat?.lastModified = DAVText.trimmed(endText())
        case (.prop, .getetag):
            propstat?.etag = DAVText.trimmed(endText())
        case (.prop, .getcontenttype):
            propstat?.contentType = DAVText.trimmed(endText())
        case (.prop, .creationdate):
            propstat?.creationDate = DAVText.trimmed(endText())
        case (.prop, .quotaAvailableBytes):
            propstat?.quotaAvailable = Self.byteCount(endText())
        case (.prop, .quotaUsedBytes):
            propstat?.quotaUsed = Self.byteCount(endText())
        case (.ocChecksums, .ocChecksum):
            text.append(UInt8(ascii: " "))  // several <oc:checksum> elements, one hash each, or one with several
        case (.prop, .ocChecksums):
            propstat?.checksums = DAVText.trimmed(endText())
        case (.prop, .sourceStamp):
            propstat?.sourceStamp = DAVText.trimmed(endText())
        case (.prop, .trashbinFilename):
            propstat?.trashbinFilename = endText()
        case (.prop, .trashbinLocation):
            propstat?.trashbinLocation = endText()
        case (.prop, .trashbinDeleted):
            propstat?.trashbinDeleted = DAVText.trimmed(endText())
        case (.prop, .fileID):
            propstat?.fileID = DAVText.trimmed(endText())
        case (.prop, _):
            _ = endText()
        case (.response, .propstat):
            if let found = propstat, (200..<300).contains(propstatStatus ?? 200) { merge(found) }
            propstat = nil
        case (_, .response):
            if let current { completed.append(current) }
            current = nil
            inResponse = false
        default:
            break
        }
    }

    private func merge(_ found: DAVResource) {
        guard inResponse else { return }
        current!.isCollection = current!.isCollection || found.isCollection
        current!.contentLength = found.contentLength ?? current!.contentLength
        current!.lastModified = found.lastModified ?? current!.lastModified
        current!.etag = found.etag ?? current!.etag
        current!.contentType = found.contentType ?? current!.contentType
        current!.creationDate = found.creationDate ?? current!.creationDate
        current!.quotaAvailable = found.quotaAvailable ?? current!.quotaAvailable
        current!.quotaUsed = found.quotaUsed ?? current!.quotaUsed
        current!.checksums = found.checksums ?? current!.checksums
        current!.sourceStamp = found.sourceStamp ?? current!.sourceStamp
        current!.trashbinFilename = found.trashbinFilename ?? current!.trashbinFilename
        current!.trashbinLocation = found.trashbinLocation ?? current!.trashbinLocation
        current!.trashbinDeleted = found.trashbinDeleted ?? current!.trashbinDeleted
        current!.fileID = found.fileID ?? current!.fileID
    }

    private func characters(_ characters: UnsafePointer<xmlChar>?, _ length: Int) {
        guard capturing, let characters, failure == nil else { return }
        guard text.count + length <= Self.textLimit else {
            // A cut href would name another item: refuse instead of keeping a part.
            return stop("a text of more than \(Self.textLimit / 1024) KiB")
        }
        text.append(contentsOf: UnsafeBufferPointer(start: characters, count: length))
    }

    private func beginText() {
        text.removeAll(keepingCapacity: true)
        capturing = true
    }

    private func endText() -> String {
        capturing = false
        return String(decoding: text, as: UTF8.self)
    }

    /// The elements this parser knows: `DAV:` names, and ownCloud's checksums; `.other` for any
    /// other name or namespace.
    enum Tag: Equatable {
        case other, multistatus, response, href, status, responsedescription, propstat, prop, resourcetype, collection
        case getcontentlength, getlastmodified, getetag, getcontenttype, creationdate, quotaAvailableBytes, quotaUsedBytes
        case ocChecksums, ocChecksum, syncToken, sourceStamp
        case trashbinFilename, trashbinLocation, trashbinDeleted, fileID

        static let davNames: [String: Tag] = [
            "multistatus": .multistatus, "response": .response, "href": .href, "status": .status,
            "responsedescription": .responsedescription, "propstat": .propstat, "prop": .prop, "resourcetype": .resourcetype,
            "collection": .collection, "getcontentlength": .getcontentlength, "getlastmodified": .getlastmodified,
            "getetag": .getetag, "getcontenttype": .getcontenttype, "creationdate": .creationdate,
            "quota-available-bytes": .quotaAvailableBytes, "quota-used-bytes": .quotaUsedBytes, "sync-token": .syncToken,
        ]
    }

    /// An element's name as libxml2 interned it: the same pointers for the same name.
    struct NameKey: Hashable {
        let name: UnsafeRawPointer?
        let uri: UnsafeRawPointer?
    }

    /// What an element name is to this parser (looked up once per distinct name).
    private static func tag(_ localName: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?) -> Tag {
        guard let localName, let uri else { return .other }
        let name = String(cString: localName)
        if xmlStrEqual(uri, davNamespace) != 0 { return Tag.davNames[name] ?? .other }
        if xmlStrEqual(uri, ownCloudNamespace) != 0 {
            switch name {
            case "checksums": return .ocChecksums
            case "checksum": return .ocChecksum
            case "fileid": return .fileID
            case "trashbin-original-filename": return .trashbinFilename
            case "trashbin-original-location": return .trashbinLocation
            case "trashbin-delete-timestamp": return .trashbinDeleted
            default: return .other
            }
        }
        if xmlStrEqual(uri, nextcloudNamespace) != 0 {
            switch name {
            case "trashbin-filename": return .trashbinFilename
            case "trashbin-original-location": return .trashbinLocation
            case "trashbin-deletion-time": return .trashbinDeleted
            default: return .other
            }
        }
        if xmlStrEqual(uri, gatewayNamespace) != 0 {
            return name == WebDAVProvider.stampProperty ? .sourceStamp : .other
        }
        return .other
    }

    private static let davNamespace: [xmlChar] = Array("DAV:".utf8) + [0]
    private static let ownCloudNamespace: [xmlChar] = Array("http://owncloud.org/ns".utf8) + [0]
    private static let nextcloudNamespace: [xmlChar] = Array("http://nextcloud.org/ns".utf8) + [0]
    private static let gatewayNamespace: [xmlChar] = Array(WebDAVProvider.stampNamespace.utf8) + [0]

    /// A size property: a non-negative number up to `Int64.max`, else unknown (`nil`): a negative
    /// or overflowing `getcontentlength` from a hostile server is no size at all.
    static func byteCount(_ text: String) -> Int64? {
        guard let value = Int64(DAVText.trimmed(text)), value >= 0 else { return nil }
        return value
    }

    /// `HTTP/1.1 404 Not Found` gives 404.
    static func statusCode(_ line: String) -> Int? {
        // The three digits after the first run of spaces.
        let utf8 = line.utf8
        let afterSpaces = utf8.drop(while: DAVText.isSpace)
        let afterVersion = afterSpaces.drop(while: { !DAVText.isSpace($0) })
        let digits = afterVersion.drop(while: DAVText.isSpace).prefix(while: { !DAVText.isSpace($0) })
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}
