import Foundation
public import GatewayCore
import GatewayTransport

extension WebDAVProvider {
    /// The properties every PROPFIND asks for: an explicit, minimal list.
    static let propfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/>\
        <D:getetag/><D:getcontenttype/><D:creationdate/></D:prop></D:propfind>
        """.utf8)

    /// The same with ownCloud/Nextcloud's stored content hashes, for `vendor` `nextcloud`/`owncloud`.
    static let vendorPropfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns"><D:prop><D:resourcetype/><D:getcontentlength/>        <D:getlastmodified/><D:getetag/><D:getcontenttype/><D:creationdate/><oc:checksums/></D:prop></D:propfind>
        """.utf8)

    /// What a listing asks for: only what a listing entry needs (type, size, time, version).
    /// `getcontenttype` and `creationdate` cost Apache a third of a large folder's listing time
    /// (0.15 s against 0.05 s for 10,000 entries); stat asks for them.
    static let listingPropfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:propfind>
        """.utf8)

    /// The same with ownCloud/Nextcloud's stored content hashes.
    static let vendorListingPropfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns"><D:prop><D:resourcetype/><D:getcontentlength/>\
        <D:getlastmodified/><D:getetag/><oc:checksums/></D:prop></D:propfind>
        """.utf8)

    /// The stat body with the gateway's source stamp (``SourceStamp``), for plain WebDAV.
    static let stampedPropfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:" xmlns:G="\(stampNamespace)"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/>\
        <D:getetag/><D:getcontenttype/><D:creationdate/><G:\(stampProperty)/></D:prop></D:propfind>
        """.utf8)

    /// The listing body with the gateway's source stamp: asked for by the copy engine only (a dead
    /// property makes Apache's listing about three times slower).
    static let stampedListingPropfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:" xmlns:G="\(stampNamespace)"><D:prop><D:resourcetype/><D:getcontentlength/>\
        <D:getlastmodified/><D:getetag/><G:\(stampProperty)/></D:prop></D:propfind>
        """.utf8)

    /// Whether this remote's items may carry source stamps in a dead property (`dead_properties`
    /// on plain WebDAV).
    var readsServerStamps: Bool { deadProperties && vendor == .other }

    /// The PROPFIND body of a stat (Depth 0) for this server's vendor.
    var propfindBody: Data {
        vendor != .other ? Self.vendorPropfindBody : readsServerStamps ? Self.stampedPropfindBody : Self.propfindBody
    }

    /// The PROPFIND body of a listing (Depth 1 or infinity) for this server's vendor.
    var listingPropfindBody: Data { vendor == .other ? Self.listingPropfindBody : Self.vendorListingPropfindBody }

    /// The listing body with `details` where this server has them.
    func listingPropfindBody(_ details: ListingDetails) -> Data {
        details.contains(.sourceStamps) && readsServerStamps ? Self.stampedListingPropfindBody : listingPropfindBody
    }

    static let quotaBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:"><D:prop><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>
        """.utf8)

    static let xmlContentType = (name: "Content-Type", value: "application/xml; charset=utf-8")

    /// Sends a PROPFIND and returns the streamed 207 body; maps other answers to errors.
    func propfind(_ path: String, depth: String, body: Data, folder: Bool) async throws -> ByteStream {
        var url = paths.url(path, folder: folder)
        for _ in 0..<3 {
            let request = HTTPRequest(method: "PROPFIND", url: url, path: path,
                                      headers: [Self.xmlContentType, (name: "Depth", value: depth)], body: .data(body))
            let (head, stream) = try await client.stream(request)
            switch head.status {
            case 207:
                return stream
            case 301, 302, 307, 308:
                // A collection asked for without its trailing slash: follow within this server only.
                _ = try? await stream.collect(limit: 1 << 16)
                url = try redirectTarget(head, from: url, path: path)
            default:
                throw failure(head, body: (try? await stream.collect(limit: 1 << 16)) ?? Data(), path: path)
            }
        }
        throw FileProviderHTTPError(statusCode: 310, path: path, serverText: "too many redirects")
    }

    /// The hash the server stored for the file (`oc:checksums`, with `vendor` `nextcloud` or
    /// `owncloud`); `nil` when it stored none, as for files uploaded without an `OC-Checksum`.
    /// (On plain WebDAV, a file's ``FileObject/hashes`` may hold the hashes its source stamp
    /// recorded, when the uploader knew them; no algorithm is claimed for every file.)
    public func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        guard capabilities.hashAlgorithms.contains(algorithm) else {
            throw FileProviderError.unsupported(operation: "\(algorithm.rawValue) hashes (vendor \"\(vendor.rawValue)\")", path: path)
        }
        let item = try await attributesOfItem(path: path)
        guard !item.isDirectory else { throw CocoaError.posix(EISDIR, path: item.path, remote: name) }
        return item.hashes[algorithm]
    }

    /// Turns a parsed response into a ``FileObject`` (nil when the href lies outside the remote).
    ///
    /// `extraProperties["etag"]` (the raw ETag, as `stat` shows it) is filled only with
    /// `describing`: a listing of 10,000 entries would otherwise build 10,000 dictionaries for a
    /// value ``FileObject/versionTag`` already holds.
    func fileObject(_ resource: DAVResource, requestPath: String, describing: Bool = false, local: StoredStamp? = nil) -> FileObject? {
        guard let path = paths.remotePath(fromHref: resource.href, requestPath: requestPath) else { return nil }
        let modified = resource.lastModified.flatMap(InternetDate.http)
        // Without an ETag (nginx), the time (to the second) and a file's size stand for the version.
        let version = resource.etag ?? resource.lastModified.map {
            "lm:\($0)" + (resource.isCollection ? "" : resource.contentLength.map { " size \($0)" } ?? "")
        }
        var extra: [String: String] = [:]
        if describing, let etag = resource.etag { extra["etag"] = etag }
        // The stamp's hashes stay in the stamp: they are what the uploader knew of its source, not
        // hashes the server vouches for (downloads are not verified against them).
        let stamp = sourceStamp(of: resource, local: local)
        return FileObject(
            path: path,
            type: resource.isCollection ? .directory : .file,
            size: resource.isCollection ? nil : resource.contentLength,
            creationDate: resource.creationDate.flatMap(InternetDate.rfc3339),
            modificationDate: modified,
            contentType: resource.isCollection ? nil : resource.contentType,
            versionTag: version,
            extraProperties: extra,
            hashes: resource.checksums.map(OwnCloudChecksums.parse) ?? [:],
            sourceStamp: stamp
        )
    }

    /// The items of parsed responses: those the server reports as fine and that lie in the remote.
    /// A member answered with a `404` (gone since) is left out; one answered with another error
    /// status (a `403` for a member it will not show, a `507` for an answer it cut short) fails the
    /// listing, naming it: leaving it out would make a copy or sync miss it without a word.
    ///
    /// With ``ListingDetails/sourceStamps`` (plain WebDAV), files carry the stamps this machine
    /// recorded (``LocalStamps``): one local lookup per file of the page.
    func items(from resources: [DAVResource], requestPath: String, details: ListingDetails = []) throws -> [FileObject] {
        // Each file's path, worked out once, for the local lookups (only when they are asked for).
        let filePaths = details.contains(.sourceStamps) && vendor == .other
            ? resources.map { $0.isCollection ? nil : paths.remotePath(fromHref: $0.href, requestPath: requestPath) } : []
        let local = filePaths.isEmpty ? [:] : localStamps.stamps(of: filePaths.compactMap { $0 })
        return try resources.indices.compactMap { index in
            let resource = resources[index]
            if let status = resource.status, !(200..<300).contains(status) {
                guard status != 404, let path = paths.remotePath(fromHref: resource.href, requestPath: requestPath) else { return nil }
                throw FileProviderError.truncated(
                    path: requestPath,
                    reason: "the server's listing of \(requestPath) gives \(path) as \(status) \(FileProviderHTTPError(statusCode: status, path: path).reasonPhrase) instead of its properties")
            }
            let path = local.isEmpty ? nil : filePaths[index]
            return fileObject(resource, requestPath: requestPath, local: path.flatMap { local[$0] })
        }
    }

    public func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing {
        contentsOfDirectory(path: path, pageSize: pageSize, details: [])
    }

    /// Lists a folder; with ``ListingDetails/sourceStamps``, entries carry their ``SourceStamp``.
    public func contentsOfDirectory(path: String, pageSize: Int, details: ListingDetails) -> DirectoryListing {
        let folder: String
        do {
            folder = try RemotePath.normalize(path)
        } catch {
            return DirectoryListing(path: path, failure: error)
        }
        let pageSize = max(1, pageSize)
        return DirectoryListing(path: folder, pageSize: pageSize) { [self] in
            var body: ByteStream.AsyncIterator?
            var parser: MultistatusParser?
            var finished = false
            return {
                if parser == nil {
                    let stream: ByteStream
                    do {
                        stream = try await self.propfind(folder, depth: "1", body: self.listingPropfindBody(details), folder: true)
                    } catch let error as FileProviderHTTPError where [400, 403, 404, 405, 409].contains(error.statusCode) {
                        // A file asked for as a folder ("name/"): Apache answers 400, lighttpd 403, others 404 or 409.
                        if let item = try? await self.attributesOfItem(path: folder), !item.isDirectory {
                            throw CocoaError.posix(ENOTDIR, path: folder, remote: self.name)
                        }
                        throw error
                    }
                    body = stream.makeAsyncIterator()
                    parser = MultistatusParser()
                }
                guard let activeParser = parser, !finished else { return nil }
                var entries: [FileObject] = []
                while true {
                    for item in try self.items(from: activeParser.drain(), requestPath: folder, details: details) {
                        if item.path == folder {
                            if !item.isDirectory { throw CocoaError.posix(ENOTDIR, path: folder, remote: self.name) }
                            continue
                        }
                        entries.append(item)
                    }
                    if entries.count >= pageSize { return ListingPage(entries: entries, isLast: false) }
                    guard let chunk = try await body!.next() else {
                        try activeParser.finish(path: folder)
                        entries += try self.items(from: activeParser.drain(), requestPath: folder, details: details).filter { $0.path != folder }
                        finished = true
                        return ListingPage(entries: entries, isLast: true)
                    }
                    try activeParser.feed(chunk, path: folder)
                }
            }
        }
    }

    /// The responses of a `PROPFIND Depth: 0` on `remote` asking for `body`'s properties, parsed
    /// as the answer streams: the first, and the first whose href is `remote` (at most two). A
    /// server that ignores the depth (or a hostile one that never stops) cannot make it grow.
    func describe(_ remote: String, body: Data, folder: Bool) async throws -> [DAVResource] {
        let parser = MultistatusParser()
        var first: DAVResource?
        var named: DAVResource?
        func keep(_ resources: [DAVResource]) {
            for resource in resources {
                if first == nil { first = resource }
                if named == nil, paths.remotePath(fromHref: resource.href, requestPath: remote) == remote { named = resource }
            }
        }
        for try await chunk in try await propfind(remote, depth: "0", body: body, folder: folder) {
            try parser.feed(chunk, path: remote)
            keep(parser.drain())
        }
        try parser.finish(path: remote)
        keep(parser.drain())
        guard let first else { return [] }
        guard let named, named != first else { return [first] }
        return [first, named]
    }

    public func attributesOfItem(path: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        let resources = try await describe(remote, body: propfindBody, folder: remote == "/")
        // A server may answer a missing item with a 207 whose response carries the 404 (Xandikos
        // does; RFC 4918 allows a status per resource): that item does not exist.
        let described = resources.first { paths.remotePath(fromHref: $0.href, requestPath: remote) == remote } ?? resources.first
        if let described, let status = described.status, !(200..<300).contains(status) {
            throw FileProviderHTTPError(statusCode: status, path: remote, serverText: described.description, method: "PROPFIND")
        }
        // The stamp this machine recorded, if any (plain WebDAV): one local lookup.
        let local = vendor == .other ? localStamps.stamp(of: remote) : nil
        let items = resources.compactMap {
            fileObject($0, requestPath: remote, describing: true,
                       local: paths.remotePath(fromHref: $0.href, requestPath: remote) == remote ? local : nil)
        }
        guard let item = items.first(where: { $0.path == remote }) ?? items.first else {
            throw FileProviderError.malformedResponse(path: remote, detail: "the server's answer did not describe the item")
        }
        return item
    }

    public func storageProperties(path: String) async throws -> VolumeObject {
        let remote = try RemotePath.normalize(path)
        guard let resource = try await describe(remote, body: Self.quotaBody, folder: true).first, resource.quotaAvailable != nil || resource.quotaUsed != nil else {
            throw FileProviderError.unavailable(reason: "the server does not report quota (no RFC 4331 quota properties)", path: remote)
        }
        var total: Int64?
        if let available = resource.quotaAvailable, let used = resource.quotaUsed {
            let (sum, overflow) = available.addingReportingOverflow(used)
            total = overflow ? nil : sum
        }
        return VolumeObject(totalCapacity: total, availableCapacity: resource.quotaAvailable, usedCapacity: resource.quotaUsed, name: name)
    }
}

extension WebDAVProvider {
    /// The whole tree in one `PROPFIND Depth: infinity`, parsed while it streams, but never trusted
    /// to be whole without evidence. RFC 4918 §9.1 lets a server refuse infinite depth (403, as
    /// Apache does by default; then the tree is walked folder by folder), and some servers instead
    /// answer 207 with fewer levels than asked (one: the folder and its members). So the folders at
    /// the deepest level of an answer, which it cannot show to be empty, are listed with
    /// `Depth: 1` afterwards (``DepthEvidence``). When one of them has members the answer left out,
    /// or the server refused, the remote is walked folder by folder from then on (learned once per
    /// provider, said once at `-v`). Items are never reported twice: a folder at the deepest level
    /// has no member in the answer.
    public func walk(path: String, pageSize: Int) -> PullSequence<FileObject> {
        let root: String
        do {
            root = try RemotePath.normalize(path)
        } catch {
            return PullSequence { { throw error } }
        }
        guard infiniteDepthUsable else { return walkFolderByFolder(path: root, pageSize: pageSize) }
        return PullSequence { [self] in
            var body: ByteStream.AsyncIterator?
            var parser: MultistatusParser?
            var evidence = DepthEvidence(root: root)
            /// The folder-by-folder walks that finish the tree: of the root when the server
            /// refused infinite depth, else of each deepest folder of the answer.
            var fallback: PullSequence<FileObject>.AsyncIterator?
            var unverified: [String] = []
            var pending: [FileObject] = []
            var finished = false
            return {
                while true {
                    if var walker = fallback {
                        if let item = try await walker.next() {
                            fallback = walker
                            if evidence.isVerifying { self.learnInfiniteDepth(truncated: evidence.levels, path: root) }
                            return item
                        }
                        fallback = nil
                    }
                    if parser == nil {
                        do {
                            body = try await self.propfind(root, depth: "infinity", body: self.listingPropfindBody, folder: true).makeAsyncIterator()
                            parser = MultistatusParser()
                        } catch let error as FileProviderHTTPError where [403, 400, 501].contains(error.statusCode) {
                            self.learnInfiniteDepth(refused: error.statusCode, path: root)
                            parser = MultistatusParser()
                            finished = true
                            fallback = self.walkFolderByFolder(path: root, pageSize: pageSize).makeAsyncIterator()
                            continue
                        }
                    }
                    if let item = pending.popLast() { return item }
                    if !finished {
                        if let chunk = try await body!.next() {
                            try parser!.feed(chunk, path: root)
                        } else {
                            try parser!.finish(path: root)
                            finished = true
                        }
                        pending = try self.items(from: parser!.drain(), requestPath: root).filter { $0.path != root }.reversed()
                        for item in pending { evidence.saw(item) }
                        if finished { unverified = evidence.takeDeepestFolders().reversed() }
                        continue
                    }
                    guard let folder = unverified.popLast() else { return nil }
                    // Members of a deepest folder, without the folder itself (already reported).
                    fallback = TreeWalk.folderByFolder(self, path: folder, pageSize: pageSize).makeAsyncIterator()
                }
            }
        }
    }

    /// Whether walks still begin with `Depth: infinity` (no refusal or short answer seen yet).
    var infiniteDepthUsable: Bool { usesInfiniteDepth.withLock { $0 } }

    /// Stops walks from using `Depth: infinity`; `true` the first time only (so it is said once).
    private func stopUsingInfiniteDepth() -> Bool {
        usesInfiniteDepth.withLock { used in
            defer { used = false }
            return used
        }
    }

    /// The server refused `Depth: infinity`: walk folder by folder from now on.
    func learnInfiniteDepth(refused status: Int, path: String) {
        guard stopUsingInfiniteDepth() else { return }
        logger.debug("Depth: infinity refused; walking folder by folder", metadata: ["path": .string(path), "status": .stringConvertible(status)])
    }

    /// The server answered `Depth: infinity` with fewer levels than the tree has: walk folder by
    /// folder from now on, and say so once.
    func learnInfiniteDepth(truncated levels: Int, path: String) {
        guard stopUsingInfiniteDepth() else { return }
        logger.info("the server answered Depth: infinity with only \(levels) level\(levels == 1 ? "" : "s") of the tree; walking folder by folder",
                    metadata: ["path": .string(path)])
    }
}

/// What a `Depth: infinity` answer shows of its own depth: the deepest level it reached and the
/// folders there. Those folders have no member in the answer, so it cannot tell whether they are
/// empty or the server stopped there; they are listed again. Only the folders of one level are
/// kept, and only while that level is the deepest.
struct DepthEvidence: Sendable {
    let root: String
    /// The deepest level seen (1 for the root's members).
    private(set) var levels = 0
    private var deepestFolders: [String] = []
    /// Whether the answer is over and its deepest folders are being listed.
    private(set) var isVerifying = false

    init(root: String) { self.root = root }

    /// Notes one item of the answer.
    mutating func saw(_ item: FileObject) {
        let level = RemotePath.relative(item.path, to: root).map { $0.split(separator: "/").count } ?? 0
        if level > levels {
            levels = level
            deepestFolders.removeAll()
        }
        if level == levels, item.isDirectory { deepestFolders.append(item.path) }
    }

    /// The folders at the deepest level, to list; from now on the walk verifies.
    mutating func takeDeepestFolders() -> [String] {
        isVerifying = true
        defer { deepestFolders = [] }
        return deepestFolders
    }
}
