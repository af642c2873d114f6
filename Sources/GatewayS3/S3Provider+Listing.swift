import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayTransport

extension S3Provider {
    /// One `ListObjectsV2` page below `prefix`: with `delimiter`, deeper keys are rolled up into
    /// common prefixes. Keys come URL-encoded (`encoding-type=url`, so keys with control characters
    /// survive XML), and are decoded where the server says it encoded them.
    func listPage(prefix: String, delimiter: String?, token: String?, maxKeys: Int, path remote: String) async throws -> S3ListPage {
        var query: [(String, String)] = [("list-type", "2"), ("encoding-type", "url"), ("max-keys", String(min(max(maxKeys, 1), 1000)))]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let token { query.append(("continuation-token", token)) }
        query.sort { $0.0 < $1.0 }
        let document = try await sendXML("GET", key: nil, query: query, path: remote)
        do {
            return try S3ListPage(document)
        } catch {
            throw FileProviderError.malformedResponse(path: remote, detail: "invalid listing from the server: \(error.description)")
        }
    }

    /// The continuation token of the page after `page` (listed with `previous`), `nil` after the
    /// last. A truncated page without a new token would list the same keys again forever, so it is
    /// a malformed answer, not a loop.
    func nextToken(after page: S3ListPage, previous: String?, path remote: String) throws -> String? {
        guard page.isTruncated else { return nil }
        guard let next = page.continuationToken, !next.isEmpty, next != previous else {
            throw FileProviderError.malformedResponse(path: remote, detail: "the listing is truncated but gives no new continuation token")
        }
        return next
    }

    /// Every object whose key starts with `prefix`, a page of up to 1,000 at a time in key order:
    /// one flat `ListObjectsV2` walk, however deep the tree (what removing, copying and walking a
    /// folder read).
    func objectPages(below prefix: String, path remote: String) -> PullSequence<[S3ListPage.Object]> {
        PullSequence { [self] in
            var token: String?
            var finished = false
            return {
                guard !finished else { return nil }
                let page = try await self.listPage(prefix: prefix, delimiter: nil, token: token, maxKeys: 1000, path: remote)
                token = try self.nextToken(after: page, previous: token, path: remote)
                finished = token == nil
                return page.objects
            }
        }
    }

    /// A listed object as an item.
    func item(_ object: S3ListPage.Object, path: String) -> FileObject {
        FileObject(path: path, type: .file, size: object.size, modificationDate: object.lastModified.flatMap(InternetDate.rfc3339),
                   versionTag: object.etag, hashes: Self.md5(fromETag: object.etag).map { [.md5: $0] } ?? [:])
    }

    /// A single-part upload's ETag is the MD5 of its bytes (`"` + 32 hex digits + `"`); a multipart
    /// one has `-N` at the end, and says nothing of the content.
    static func md5(fromETag etag: String?) -> String? {
        guard let etag else { return nil }
        let bare = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        guard bare.utf8.count == 32, bare.allSatisfy(\.isHexDigit) else { return nil }
        return bare.lowercased()
    }

    public func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing {
        let folder: String
        do {
            folder = try RemotePath.normalize(path)
        } catch {
            return DirectoryListing(path: path, failure: error)
        }
        let prefix = folderPrefix(folder)
        return DirectoryListing(path: folder, pageSize: pageSize) { [self] in
            var token: String?
            var finished = false
            var first = true
            return {
                guard !finished else { return nil }
                let page = try await self.listPage(prefix: prefix, delimiter: "/", token: token, maxKeys: pageSize, path: folder)
                var entries: [FileObject] = []
                var sawSelf = false
                for folderPrefix in try await self.livePrefixes(page.prefixes, path: folder) {
                    guard let path = self.remotePath(ofKey: folderPrefix), path != folder else { self.skipped(folderPrefix); continue }
                    entries.append(FileObject(path: path, type: .directory))
                }
                for object in page.objects {
                    if Self.isMarker(object.key) {
                        // The folder's own marker (a deeper one is rolled into a prefix).
                        if Self.sameKey(Self.markedPrefix(object.key), prefix) { sawSelf = true } else { self.skipped(object.key) }
                        continue
                    }
                    guard let path = self.remotePath(ofKey: object.key) else { self.skipped(object.key); continue }
                    entries.append(self.item(object, path: path))
                }
                if first, entries.isEmpty, !sawSelf, folder != "/", !page.isTruncated {
                    // Nothing has this prefix: a file of that name, or nothing at all.
                    if try await self.headObject(folder) != nil { throw CocoaError.posix(ENOTDIR, path: folder, remote: self.name) }
                    throw self.notFound(folder)
                }
                first = false
                token = try self.nextToken(after: page, previous: token, path: folder)
                finished = token == nil
                entries.sort { $0.name < $1.name }
                return ListingPage(entries: entries, isLast: finished)
            }
        }
    }

    /// The common prefixes of a listing that name a folder with something in it. On a bucket that
    /// has kept versions, moto (5.2) and SeaweedFS (before 4.41) also roll up keys whose current
    /// version is a delete marker, so a removed folder would be listed again; there each prefix is
    /// checked with an undelimited one-key listing, 8 at a time. Other buckets (and AWS, Ceph,
    /// MinIO) need no check and cost no request.
    func livePrefixes(_ prefixes: [String], path folder: String) async throws -> [String] {
        guard !prefixes.isEmpty, try await bucketVersioning() != .off else { return prefixes }
        return try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            var live = Array(repeating: false, count: prefixes.count)
            var next = 0
            func start() {
                let (index, prefix) = (next, prefixes[next])
                next += 1
                group.addTask {
                    let page = try await self.listPage(prefix: prefix, delimiter: nil, token: nil, maxKeys: 1, path: folder)
                    return (index, !page.objects.isEmpty)
                }
            }
            while next < min(8, prefixes.count) { start() }
            while let (index, isLive) = try await group.next() {
                live[index] = isLive
                if next < prefixes.count { start() }
            }
            return prefixes.indices.filter { live[$0] }.map { prefixes[$0] }
        }
    }

    /// Logs a key no path can name (once per listing page it is met on).
    func skipped(_ key: String) {
        logger.debug("key skipped: no path names it", metadata: ["key": .string(String(key.prefix(200)))])
    }

    /// The object at `remote` (a `HEAD`), or `nil` when there is none.
    func headObject(_ remote: String) async throws -> FileObject? {
        guard remote != "/" else { return nil }
        let (head, body) = try await send("HEAD", key: key(remote), path: remote)
        if head.status == 404 { return nil }
        guard head.isSuccess else { throw failure(head, body: body, path: remote) }
        return item(head: head, path: remote)
    }

    /// An item from a `HEAD` or `GET` answer: the size (unknown without a `Content-Length`), the upload time (as listings give it), the
    /// ETag, the MD5 (stored, or the ETag's), and the writer's time (`x-amz-meta-mtime`, as rclone
    /// stores it) as the source stamp the copy engine compares with.
    func item(head: HTTPResponseHead, path: String) -> FileObject {
        let etag = head.header("etag")
        var hashes: [HashAlgorithm: String] = [:]
        if let stored = head.header("x-amz-meta-md5")?.lowercased(), stored.utf8.count == 32, stored.allSatisfy(\.isHexDigit) {
            hashes[.md5] = stored
        } else if let md5 = Self.md5(fromETag: etag) {
            hashes[.md5] = md5
        }
        let uploaded = head.header("last-modified").flatMap(InternetDate.http)
        let written = head.header("x-amz-meta-mtime").flatMap(Self.parseMtime)
        return FileObject(path: path, type: .file, size: head.contentLength, modificationDate: uploaded,
                          contentType: head.header("content-type"), versionTag: etag, hashes: hashes,
                          sourceStamp: written.map { SourceStamp(modificationDate: $0, hashes: hashes) })
    }

    /// `x-amz-meta-mtime`: seconds since 1970 with a fraction (`1764012345.123456789`), as rclone
    /// writes it; `nil` for anything else (or a time past year 9999).
    static func parseMtime(_ text: String) -> Date? {
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite, abs(seconds) < 253_402_300_800 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// How `x-amz-meta-mtime` is written.
    static func formatMtime(_ date: Date) -> String {
        // C's formatting, as `String(format:)` gives it, without Foundation's slow formatter (a
        // fiftieth of the client's time in a small-file upload went to it). No locale is set: ".".
        let seconds = date.timeIntervalSince1970
        var buffer = [CChar](repeating: 0, count: 64)
        let count = withVaList([seconds]) { vsnprintf(&buffer, buffer.count, "%.9f", $0) }
        guard count > 0, count < buffer.count else { return String(format: "%.9f", seconds) }
        return String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether any key starts with `remote`'s folder prefix (so the folder exists). Asked without
    /// a delimiter: on a bucket that keeps versions, moto (5.2) and SeaweedFS (before 4.41) roll
    /// keys hidden by delete markers into common prefixes, so a delimited answer would name a
    /// folder whose every object is deleted.
    func folderExists(_ remote: String) async throws -> Bool {
        if remote == "/" { return true }
        let page = try await listPage(prefix: folderPrefix(remote), delimiter: nil, token: nil, maxKeys: 1, path: remote)
        return !page.objects.isEmpty || !page.prefixes.isEmpty
    }

    public func attributesOfItem(path: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        if remote == "/" { return FileObject(path: "/", type: .directory) }
        if let object = try await headObject(remote) { return object }
        if try await folderExists(remote) { return FileObject(path: remote, type: .directory) }
        throw notFound(remote)
    }

    public func storageProperties(path: String) async throws -> VolumeObject {
        throw FileProviderError.unavailable(reason: "S3 has no quota to report (a bucket has no size limit)", path: path)
    }

    /// Every item below `path` from one flat listing (no delimiter: 1,000 keys a request however
    /// deep the tree), folders made up from the keys' prefixes as they are first met. Keys come in
    /// byte order, and all keys below a folder are contiguous in it, so each folder is named once,
    /// before anything in it.
    public func walk(path: String, pageSize: Int) -> PullSequence<FileObject> {
        PullSequence { [self] in
            var pending: [FileObject] = []
            var next = 0  // the first of `pending` not yet handed out
            var pages: PullSequence<[S3ListPage.Object]>.AsyncIterator?
            var finished = false
            var open: [Substring] = []  // the components of the folder the last key was in
            var root = "/"
            var prefix = ""
            var sawAny = false
            return {
                while true {
                    if next < pending.count {
                        next += 1
                        return pending[next - 1]
                    }
                    pending.removeAll(keepingCapacity: true)
                    next = 0
                    if finished { return nil }
                    if pages == nil {
                        root = try RemotePath.normalize(path)
                        prefix = self.folderPrefix(root)
                        pages = self.objectPages(below: prefix, path: root).makeAsyncIterator()
                    }
                    let objects = try await pages?.next()
                    finished = objects == nil
                    for object in objects ?? [] {
                        sawAny = true
                        var isMarker = Self.isMarker(object.key)
                        guard let below = Self.remainder(of: isMarker ? Self.markedPrefix(object.key) : object.key, after: prefix) else {
                            self.skipped(object.key)
                            continue
                        }
                        // The key's components below the root; a key no path can name (an empty,
                        // `.` or `..` component) still makes the folders before that component.
                        var components = below.split(separator: "/", omittingEmptySubsequences: false)
                        if isMarker, components.last == "" { components.removeLast() }
                        if let bad = components.firstIndex(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
                            self.skipped(object.key)
                            components.removeSubrange(bad...)
                            isMarker = true
                        }
                        guard !components.isEmpty else { continue }
                        let itemPath = (root == "/" ? "" : root) + "/" + components.joined(separator: "/")
                        let folders = isMarker ? components[...] : components.dropLast()
                        var common = 0
                        while common < min(open.count, folders.count), open[common] == folders[folders.startIndex + common] { common += 1 }
                        open.removeLast(open.count - common)
                        for component in folders.dropFirst(common) {
                            open.append(component)
                            let joined = open.joined(separator: "/")
                            pending.append(FileObject(path: root == "/" ? "/" + joined : root + "/" + joined, type: .directory))
                        }
                        if !isMarker { pending.append(self.item(object, path: itemPath)) }
                    }
                    if finished, !sawAny, root != "/" {
                        if try await self.headObject(root) != nil { throw CocoaError.posix(ENOTDIR, path: root, remote: self.name) }
                        throw self.notFound(root)
                    }
                }
            }
        }
    }
}
