public import Foundation
public import GatewayCore
import GatewayTransport

extension WebDAVProvider {
    public func createFolder(path: String, withIntermediateDirectories: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else {
            if withIntermediateDirectories { return }
            throw existsError(remote)
        }
        if !withIntermediateDirectories, try await itemIfPresent(path: remote) != nil {
            // Checked first: some servers answer MKCOL on an existing folder with success.
            throw existsError(remote)
        }
        for attempt in 0..<2 {
            let (head, body) = try await send("MKCOL", remote, folder: true)
            switch head.status {
            case 200..<300:
                return
            case 405:
                // Something exists there already.
                guard withIntermediateDirectories, let existing = try await itemIfPresent(path: remote), existing.isDirectory else {
                    throw existsError(remote)
                }
                return
            case 409 where withIntermediateDirectories && attempt == 0:
                try await createFolder(path: RemotePath.parent(of: remote), withIntermediateDirectories: true)
            case 409 where try await itemIfPresent(path: RemotePath.parent(of: remote)) == nil:
                // The parent is missing (RFC 4918 §9.3.1): "not found", naming it, as every backend says.
                throw CocoaError.posix(ENOENT, path: RemotePath.parent(of: remote), remote: name, writing: true)
            case 403 where withIntermediateDirectories:
                // Apache answers 403 when another client made the folder between its check and
                // its mkdir ("Unable to create collection", EEXIST): a race that ends as wanted.
                guard let existing = try await itemIfPresent(path: remote), existing.isDirectory else {
                    throw failure(head, body: body, path: remote)
                }
                return
            default:
                throw failure(head, body: body, path: remote)
            }
        }
    }

    public func moveItem(path: String, to destination: String, overwrite: Bool) async throws {
        try await transfer("MOVE", path, to: destination, overwrite: overwrite)
    }

    public func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        try progress.checkCancellation()
        try await transfer("COPY", path, to: destination, overwrite: overwrite)
        progress?.addFile()
    }

    /// COPY or MOVE on the server, with an absolute, encoded `Destination`. A folder is addressed
    /// with its trailing slash, source and `Destination` alike (RFC 4918 §5.2, §8.3): nginx's
    /// dav module answers 400 to `MOVE /a` for a folder and lighttpd redirects it, so the source is
    /// looked at first (which also reports a missing source plainly, whatever the server says).
    private func transfer(_ method: String, _ path: String, to destination: String, overwrite: Bool) async throws {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        guard try RemotePath.checkTransfer(from: source, to: target, moving: method == "MOVE") else { return }
        let item = try await attributesOfItem(path: source)
        let folder = item.isDirectory
        if await destinationChanges(target, folder: folder) {
            // The server would store the item under another name (WebDAVProvider+Destination).
            if folder {
                try await transferMembers(method, source, to: target, overwrite: overwrite)
                return
            }
            // A file goes through this client instead, straight to its name.
            let options = WriteOptions(overwrite: overwrite, expectedSize: item.size, modificationDate: item.modificationDate)
            _ = try await write(path: target, from: try await readStream(path: source, options: ReadOptions()), options: options)
            if method == "MOVE" { try await removeItem(path: source, recursive: false) }
            return
        }
        var headers: [(name: String, value: String)] = [
            (name: "Destination", value: paths.url(target, folder: folder).absoluteString),
            (name: "Overwrite", value: overwrite ? "T" : "F"),
        ]
        if method == "COPY" { headers.append((name: "Depth", value: "infinity")) }
        let (head, body) = try await send(method, source, folder: folder, headers: headers)
        switch head.status {
        case 207:
            if let itemFailure = try multistatusFailure(body, path: source, method: method) { throw itemFailure }
            stampsFollow(method, source, to: target)
        case 200..<300:
            stampsFollow(method, source, to: target)
            // A name the probe could not vouch for: look that it arrived under its name.
            if vendor == .other, learnedChanges(folder: folder) == nil,
               !Self.probedCharacters(in: target).isEmpty,
               try await itemIfPresent(path: target) == nil {
                throw FileProviderError.malformedResponse(
                    path: target, detail: "the server confirmed the \(method.lowercased()) to \(target), but nothing stands under that name")
            }
            return
        case 412:
            throw existsError(target)
        default:
            // Servers differ in how they report a source that went away meanwhile (404, 403, 409).
            if head.status != 404, try await itemIfPresent(path: source) == nil {
                throw FileProviderHTTPError(statusCode: 404, path: source, serverText: "no such item")
            }
            throw failure(head, body: body, path: head.status == 409 ? target : source)
        }
    }

    /// The local source stamps (``LocalStamps``) after a server-side `MOVE` or `COPY`: a move takes
    /// them along; a copy leaves the target without any (its copy has a time and ETag of its own,
    /// and what it replaced is gone).
    private func stampsFollow(_ method: String, _ source: String, to target: String) {
        guard vendor == .other else { return }
        if method == "MOVE" { localStamps.moved(from: source, to: target) } else { localStamps.removed(target) }
    }

    /// Moves or copies a folder member by member into a new folder at `target`, for a server that
    /// would change the folder's name in a `Destination` (Xandikos keeps a folder's `Destination`
    /// percent-encoded): each member goes by its own `MOVE` or `COPY` (or through this client),
    /// then a moved folder is removed. Not atomic, but every item arrives under its name.
    private func transferMembers(_ method: String, _ source: String, to target: String, overwrite: Bool) async throws {
        if let existing = try await itemIfPresent(path: target) {
            guard overwrite else { throw existsError(target) }
            try await removeItem(path: existing.path, recursive: true)
        }
        try await createFolder(path: target, withIntermediateDirectories: false)
        var names: [String] = []
        for try await page in contentsOfDirectory(path: source, pageSize: 1000) { names += page.entries.map(\.name) }
        for name in names {
            try await transfer(method, source.appendingPathComponentRemote(name), to: target.appendingPathComponentRemote(name), overwrite: false)
        }
        if method == "MOVE" { try await removeItem(path: source, recursive: true) }
    }

    /// `DELETE`, with a folder's trailing slash (nginx answers 409 to a folder's URL without it).
    /// The item is looked at first: for its type, and, when not `recursive`, whether a folder is
    /// empty (a `DELETE` of a collection is always recursive in WebDAV).
    public func removeItem(path: String, recursive: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else {
            throw FileProviderError.invalidPath(path: remote, reason: "refusing to remove the remote's root")
        }
        let folder = try await attributesOfItem(path: remote).isDirectory
        if folder, !recursive {
            var pages = contentsOfDirectory(path: remote, pageSize: 1).makeAsyncIterator()
            if let page = try await pages.next(), !page.entries.isEmpty {
                throw CocoaError.posix(ENOTEMPTY, path: remote, remote: name, writing: true)
            }
        }
        let (head, body) = try await send("DELETE", remote, folder: folder)
        switch head.status {
        case 207:
            if let itemFailure = try multistatusFailure(body, path: remote, method: "DELETE") { throw itemFailure }
            if vendor == .other { localStamps.removed(remote) }
        case 200..<300:
            logger.debug("deleted", metadata: ["path": .string(remote)])
            if vendor == .other { localStamps.removed(remote) }
        default:
            throw failure(head, body: body, path: remote)
        }
    }

    public func setModificationDate(_ date: Date, path: String) async throws {
        let remote = try RemotePath.normalize(path)
        guard vendor != .other else {
            throw FileProviderError.unsupported(operation: "setting modification times (vendor \"other\")", path: remote)
        }
        // Nextcloud and ownCloud accept DAV:lastmodified as a Unix time in PROPPATCH.
        let body = Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:lastmodified>\(Int64(saturating: date.timeIntervalSince1970))</d:lastmodified></d:prop></d:set></d:propertyupdate>
            """.utf8)
        let (head, response) = try await send("PROPPATCH", remote, headers: [Self.xmlContentType], body: .data(body))
        guard head.isSuccess else { throw failure(head, body: response, path: remote) }
        if head.status == 207, let itemFailure = try multistatusFailure(response, path: remote, method: "PROPPATCH") { throw itemFailure }
    }
}
