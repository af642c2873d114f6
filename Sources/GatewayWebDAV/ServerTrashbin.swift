import Foundation
public import GatewayCore
import GatewayTransport
import Logging
import Synchronization

/// Nextcloud's and ownCloud's own trash bin as a remote's ``Trash``, so what the gateway removes
/// shows up (and can be restored) in the server's web interface and apps, and what they trashed
/// is listed by `gateway trash list`.
///
/// Both servers move a `DELETE`d item into the user's trash bin themselves, so trashing costs the
/// `DELETE` plus one request to learn the name the server gave the item:
/// - Nextcloud (`remote.php/dav/trashbin/USER/trash/NAME.dTIMESTAMP`): a `PROPFIND` of the name
///   the answer's `Date` says it has (a listing of the trash bin only when that misses); restoring
///   is a `MOVE` into `…/restore/`, which puts the item back where it was;
/// - ownCloud 10.3+ (`remote.php/dav/trash-bin/USER/FILEID`): the file id is asked for before the
///   `DELETE`; restoring is a `MOVE` to any path in the user's files.
///
/// Records are the server's own properties (`trashbin-original-location`, the deletion time), so
/// there is nothing for the gateway to keep. Used for `vendor` `nextcloud` and `owncloud` at one
/// of the server's WebDAV endpoints unless `trash_dir` asks for a trash folder instead.
public final class ServerTrashbin: TrashVolume, TrashLocator, @unchecked Sendable {
    /// Which server's trash bin API.
    enum Dialect: Sendable {
        case nextcloud, owncloud
    }

    let dialect: Dialect
    let endpoint: VendorEndpoint
    /// The user's id on the server (in the trash bin's URL).
    let user: String
    /// A provider rooted at `…/remote.php/dav/`, on the same origin with the same credentials.
    let dav: WebDAVProvider
    /// The records a listing gave, until ``info(of:)`` takes them (a listing holds one at a time).
    private let listed = Mutex<[String: TrashInfo]>([:])
    /// The most records kept from listings at once.
    static let listedLimit = 1_000
    /// Whether the server has a trash bin (its app can be turned off), once asked.
    private let available = Mutex<Bool?>(nil)

    /// The trash bin of the remote at `configuration`'s URL; `nil` when the vendor has none the
    /// gateway knows, or the URL is not `…/remote.php/dav/files/USER/…` (which names the user's id).
    init?(configuration: HTTPClientConfiguration, vendor: WebDAVProvider.Vendor, stateDirectory: URL, logger: Logger) {
        switch vendor {
        case .nextcloud: dialect = .nextcloud
        case .owncloud: dialect = .owncloud
        case .other: return nil
        }
        // The trash bin's URL names the user's id, which only a `remote.php/dav/files/USER/` URL
        // gives (a login name may differ from it: an email address, LDAP): a `remote.php/webdav/`
        // remote keeps the gateway's trash folder.
        guard let endpoint = VendorEndpoint(baseURL: configuration.baseURL), let user = endpoint.user,
              !user.isEmpty, let root = endpoint.url("/remote.php/dav/") else { return nil }
        self.endpoint = endpoint
        self.user = user
        var davConfiguration = configuration
        davConfiguration.baseURL = root
        dav = WebDAVProvider(configuration: davConfiguration, vendor: vendor, rangedUploads: false, atomicPut: .never,
                             syncCollection: .never, deadProperties: false, trash: TrashSettings(enabled: false),
                             stateDirectory: stateDirectory, logger: logger)
    }

    /// The trash bin's folder on the `dav` provider.
    var collection: String { dialect == .nextcloud ? "/trashbin/\(user)/trash" : "/trash-bin/\(user)" }

    /// The `dav` provider's path of a path in the user's files.
    func davPath(files path: String) -> String { path == "/" ? "/files/\(user)" : "/files/\(user)\(path)" }

    /// What a listing of the trash bin asks for.
    var propfindBody: Data {
        let properties = dialect == .nextcloud
            ? "<nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/>"
            : "<oc:trashbin-original-filename/><oc:trashbin-original-location/><oc:trashbin-delete-timestamp/>"
        return Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>\
            <d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/><oc:fileid/>\(properties)</d:prop></d:propfind>
            """.utf8)
    }

    // MARK: TrashLocator

    public var identifier: String { dialect == .nextcloud ? "nextcloud-trashbin" : "owncloud-trash-bin" }
    /// The trash bin is outside the user's files: nothing for copies to skip.
    public var folderPath: String? { nil }
    public func volume(for path: String) async throws -> any TrashVolume { self }
    public func volumes(under path: String) async throws -> [any TrashVolume] { [self] }
    public func volume(identifier: String) async throws -> (any TrashVolume)? { identifier == self.identifier ? self : nil }
    public func isTrashFolder(_ path: String) -> Bool { false }

    // MARK: TrashVolume

    /// The server names what it trashes: the item's own name stands in until ``moveIn(_:as:)``.
    public func reserve(_ info: TrashInfo, base: String, attempt: Int) async throws -> String? { base }

    public func recordedPath(for path: String) -> String { endpoint.filesPath(path) }

    public func providerPath(forRecorded recorded: String) -> String? { endpoint.remotePath(fromFilesPath: recorded) }

    public func info(of name: String) async throws -> TrashInfo {
        if let info = listed.withLock({ $0.removeValue(forKey: name) }) { return info }
        return try await fetchInfo(name)
    }

    /// The record of `name`, asked of the server.
    private func fetchInfo(_ name: String) async throws -> TrashInfo {
        let (_, resource) = try await probe("\(collection)/\(name)", remotePath: name)
        guard let resource else { throw FileProviderHTTPError(statusCode: 404, path: name, serverText: "not in the trash bin") }
        guard let info = Self.info(resource) else {
            throw FileProviderError.malformedResponse(path: name, detail: "the server's trash bin gives no original location for \(name)")
        }
        return info
    }

    /// The record in a trash bin entry's properties.
    static func info(_ resource: DAVResource) -> TrashInfo? {
        guard let location = resource.trashbinLocation, !location.isEmpty else { return nil }
        // Unix seconds, as an integer or (some servers) a decimal; anything else, or a time
        // before 1970 or past the year 36812, is no date (and never traps).
        let seconds = resource.trashbinDeleted.flatMap { text -> Int64? in
            if let value = Int64(text) { return value }
            guard let value = Double(text), value.isFinite, abs(value) < 1e15 else { return nil }
            return Int64(value.rounded(.down))
        }
        let date = seconds.flatMap { (0...Int64(1) << 40).contains($0) ? Date(timeIntervalSince1970: TimeInterval($0)) : nil }
        return TrashInfo(path: location.hasPrefix("/") ? location : "/" + location, deletionDate: date)
    }

    /// Nothing to drop: the server's record leaves with its item.
    public func removeInfo(of name: String) async throws {}

    public func entries() -> PullSequence<TrashEntry> {
        let collection = collection
        return PullSequence { [self] in
            var body: ByteStream.AsyncIterator?
            var parser: MultistatusParser?
            var pending: [DAVResource] = []
            var finished = false
            return {
                while true {
                    if !pending.isEmpty {
                        let resource = pending.removeFirst()
                        guard let entry = self.entry(resource) else { continue }
                        return entry
                    }
                    if finished { return nil }
                    if parser == nil {
                        do {
                            body = try await self.dav.propfind(collection, depth: "1", body: self.propfindBody, folder: true).makeAsyncIterator()
                        } catch where error.failureKind == .notFound {
                            return nil  // no trash bin yet
                        }
                        parser = MultistatusParser()
                    }
                    if let chunk = try await body!.next() {
                        try parser!.feed(chunk, path: collection)
                    } else {
                        try parser!.finish(path: collection)
                        finished = true
                    }
                    pending += parser!.drain()
                }
            }
        }
    }

    /// A listed item of the trash bin (not the trash bin itself), its record kept for ``info(of:)``.
    private func entry(_ resource: DAVResource, keep: Bool = true) -> TrashEntry? {
        guard resource.status.map({ (200..<300).contains($0) }) ?? true,
              let path = dav.paths.remotePath(fromHref: resource.href, requestPath: collection),
              path != collection, RemotePath.parent(of: path) == collection else { return nil }
        let name = RemotePath.lastComponent(of: path)
        if keep, let info = Self.info(resource) {
            listed.withLock {
                // Taken one by one as the listing is read; a reader that never takes them cannot
                // make this grow past a bound.
                if $0.count >= Self.listedLimit { $0.removeAll() }
                $0[name] = info
            }
        }
        return TrashEntry(name: name, attributes: dav.fileObject(resource, requestPath: collection))
    }

    public func attributes(of name: String) async throws -> FileObject? {
        try await dav.itemIfPresent(path: "\(collection)/\(name)")
    }

    public func removeContent(of name: String) async throws {
        do {
            try await dav.removeItem(path: "\(collection)/\(name)", recursive: true)
        } catch where error.failureKind == .notFound {}
    }

    /// Deletes the item at `path` (the server moves it into its trash bin) and returns the name it
    /// has there.
    ///
    /// The item is looked at first: its file id and ETag, and the server's clock. The `DELETE`
    /// is conditional on that ETag (an item replaced in between is not trashed in its place), and
    /// the trash bin entry found afterwards must carry the same file id (or, where the server
    /// gives none, the same original path and a deletion time no earlier than the look), so an
    /// older entry of the same path is never taken for it.
    public func moveIn(_ path: String, as name: String) async throws -> String {
        try await checkAvailable(path)
        let recorded = recordedPath(for: path)
        let source = davPath(files: recorded)
        let (looked, item) = try await probe(source, remotePath: path)
        guard let item else { throw FileProviderHTTPError(statusCode: 404, path: path, serverText: "no such item") }
        let id = item.fileID.flatMap { $0.isEmpty || $0.utf8.count > 64 || !$0.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) ? nil : $0 }
        func matches(_ entry: DAVResource?, notBefore second: Int64?) -> Bool {
            guard let entry, let info = Self.info(entry), info.path == recorded else { return false }
            if let id, let entryID = entry.fileID { return entryID == id }
            guard let second else { return true }
            return (info.deletionDate.map { Int64(saturating: $0.timeIntervalSince1970) } ?? .min) >= second
        }
        switch dialect {
        case .owncloud:
            guard let id else {
                throw FileProviderError.malformedResponse(path: path, detail: "the server gives no file id for \(path), which would name it in its trash bin")
            }
            _ = try await delete(source, remotePath: path, folder: item.isCollection, ifMatch: item.etag)
            guard matches(try await probe("\(collection)/\(id)", remotePath: path).resource, notBefore: nil) else {
                throw Self.notKept(path, remote: dav.name)
            }
            return id
        case .nextcloud:
            let base = RemotePath.lastComponent(of: path)
            // Nextcloud names the item NAME.dSECONDS, the second of the deletion, and an entry of
            // that name from the same second (any path) is replaced: wait until the server's clock
            // has moved past any such entry.
            var second = looked.map(Self.seconds)
            var waited = 0
            while let current = second, waited < 5, try await probe("\(collection)/\(base).d\(current)", remotePath: path).resource != nil {
                try await Task.sleep(for: .milliseconds(1_050))
                waited += 1
                second = try await probe(source, remotePath: path).date.map(Self.seconds)
            }
            let notBefore = looked.map(Self.seconds)
            let deleted = try await delete(source, remotePath: path, folder: item.isCollection, ifMatch: item.etag).map(Self.seconds)
            if let deleted {
                for candidate in stride(from: deleted, through: max(notBefore ?? deleted - 2, deleted - 5), by: -1) {
                    let name = "\(base).d\(candidate)"
                    if matches(try await probe("\(collection)/\(name)", remotePath: path).resource, notBefore: notBefore) { return name }
                }
            }
            // Not where the clock says: the listing's match (by file id, or the latest no older
            // than the look).
            var best: (name: String, date: Date)?
            func consider(_ resource: DAVResource) {
                guard matches(resource, notBefore: notBefore), let entry = entry(resource, keep: false) else { return }
                let date = Self.info(resource)?.deletionDate ?? .distantPast
                if best == nil || date > best!.date || (date == best!.date && entry.name > best!.name) { best = (entry.name, date) }
            }
            let parser = MultistatusParser()
            for try await chunk in try await dav.propfind(collection, depth: "1", body: propfindBody, folder: true) {
                try parser.feed(chunk, path: collection)
                for resource in parser.drain() { consider(resource) }
            }
            try parser.finish(path: collection)
            for resource in parser.drain() { consider(resource) }
            guard let best else { throw Self.notKept(path, remote: dav.name) }
            return best.name
        }
    }

    /// The error when the server deleted an item but its trash bin does not hold it.
    static func notKept(_ path: String, remote: String) -> CocoaError {
        CocoaError.described(.fileWriteUnknown, path: path, remote: remote,
                             reason: "the server deleted \(path) but its trash bin does not hold it (a server deletes for good what is over its trash bin's size limit)")
    }

    static func seconds(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince1970.rounded(.down)
        return value.isFinite && abs(value) < 1e15 ? Int64(value) : 0
    }

    /// Moves the trashed item `name` back to `path`; fails, changing nothing, when something is
    /// there or its folder is missing.
    public func moveOut(_ name: String, to path: String) async throws {
        let recorded = recordedPath(for: path)
        let target = davPath(files: recorded)
        if try await dav.itemIfPresent(path: target) != nil { throw dav.existsError(path) }
        let parent = RemotePath.parent(of: recorded)
        if parent != "/", try await dav.itemIfPresent(path: davPath(files: parent)) == nil {
            throw FileProviderHTTPError(statusCode: 409, path: path, serverText: "the folder \(RemotePath.parent(of: path)) is missing")
        }
        switch dialect {
        case .owncloud:
            try await restoreMove("\(collection)/\(name)", to: target, remotePath: path)
        case .nextcloud:
            // Nextcloud restores to the original location only: there, then on to `path`.
            // Its original folder must be there (else Nextcloud restores to the user's root) and
            // the original path free (else it restores under another name).
            let original = try await fetchInfo(name).path
            if original != recorded {
                if try await dav.itemIfPresent(path: davPath(files: original)) != nil {
                    throw CocoaError.described(.fileWriteFileExists, path: path, remote: dav.name,
                                               reason: "Nextcloud restores \(name) to \(original) first, where something is now")
                }
                let originalParent = RemotePath.parent(of: original)
                if originalParent != "/", try await dav.itemIfPresent(path: davPath(files: originalParent)) == nil {
                    throw CocoaError.described(.fileNoSuchFile, path: path, remote: dav.name,
                                               reason: "Nextcloud restores \(name) to \(original) first, and \(originalParent) is missing")
                }
            }
            try await restoreMove("\(collection)/\(name)", to: "/trashbin/\(user)/restore/\(name)", remotePath: path)
            if original != recorded {
                guard try await dav.itemIfPresent(path: davPath(files: original)) != nil else {
                    throw CocoaError.described(.fileWriteUnknown, path: path, remote: dav.name,
                                               reason: "Nextcloud restored \(name) somewhere other than \(original); look for it there")
                }
                try await dav.moveItem(path: davPath(files: original), to: target, overwrite: false)
            }
        }
    }

    // MARK: Requests

    /// A `PROPFIND Depth: 0` of `source` (a small answer; its first response only): the server's
    /// `Date`, and the item's properties, `nil` when it is missing.
    private func probe(_ source: String, remotePath path: String) async throws -> (date: Date?, resource: DAVResource?) {
        let (head, body) = try await dav.send("PROPFIND", source, headers: [WebDAVProvider.xmlContentType, (name: "Depth", value: "0")],
                                              body: .data(propfindBody))
        let date = head.header("date").flatMap(InternetDate.http)
        switch head.status {
        case 207:
            let parser = MultistatusParser()
            try parser.feed(body, path: path)
            try parser.finish(path: path)
            let resource = parser.drain().first { $0.status.map { (200..<300).contains($0) } ?? true }
            return (date, resource)
        case 404:
            return (date, nil)
        default:
            throw dav.failure(head, body: body, path: path)
        }
    }

    /// A `MOVE` out of the trash bin, its errors named by the remote's `path`.
    private func restoreMove(_ source: String, to destination: String, remotePath path: String) async throws {
        do {
            try await dav.moveItem(path: source, to: destination, overwrite: false)
        } catch let error as CocoaError where error.failureKind == .alreadyExists {
            throw dav.existsError(path)
        } catch let error as FileProviderHTTPError {
            throw FileProviderHTTPError(statusCode: error.statusCode, path: path, serverText: error.serverText, method: "MOVE")
        }
    }

    /// Sends `DELETE` for `source` (a `folder` with its trailing slash; only while its ETag is `ifMatch`, when given) and returns the
    /// answer's `Date`, if it has one.
    private func delete(_ source: String, remotePath path: String, folder: Bool, ifMatch: String?) async throws -> Date? {
        let (head, body) = try await dav.send("DELETE", source, folder: folder, headers: ifMatch.map { [(name: "If-Match", value: $0)] } ?? [])
        switch head.status {
        case 412:
            throw FileProviderError.versionMismatch(path: path, expected: ifMatch ?? "", actual: nil)
        case 207:
            if let itemFailure = try dav.multistatusFailure(body, path: path, method: "DELETE") { throw itemFailure }
        case 200..<300:
            break
        default:
            throw dav.failure(head, body: body, path: path)
        }
        return head.header("date").flatMap(InternetDate.http)
    }

    /// Fails, before anything is deleted, when the server has no trash bin (its app turned off):
    /// its `DELETE` would then be final.
    private func checkAvailable(_ path: String) async throws {
        if available.withLock({ $0 }) == true { return }
        do {
            guard try await probe(collection + "/", remotePath: path).resource != nil else {
                throw FileProviderHTTPError(statusCode: 404, path: path, serverText: "no trash bin")
            }
            available.withLock { $0 = true }
        } catch where [.notFound, .unsupported].contains(error.failureKind) || (error as? FileProviderHTTPError).map({ [405, 501].contains($0.statusCode) }) == true {
            throw FileProviderError.unsupported(
                operation: "moving to the server's trash bin (it has none: is the trash bin app on?); set trash_dir for a trash folder, or trash: false",
                path: path)
        }
    }
}
