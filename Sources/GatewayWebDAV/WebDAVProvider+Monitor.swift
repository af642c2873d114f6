import Foundation
public import GatewayCore
public import GatewayState
import GatewayTransport
import Synchronization

/// Change monitoring. Rounds send one `Depth: 1` PROPFIND per folder and compare ETag, size and
/// modification time with the snapshot in the local state store (see ``SnapshotMonitoring``);
/// on a server with RFC 6578 `sync-collection`, they ask each folder for its changes since a
/// sync token instead. A file whose ETag stays the same across a removal and a creation in one
/// round (Apache and Go servers derive it from size and time, which a `MOVE` keeps) is a rename.
extension WebDAVProvider: SnapshotMonitoring {
    public func snapshotIdentity(of item: FileObject) -> String? {
        item.type == .file ? item.versionTag : nil
    }

    /// The `sync-collection` report body (sync level 1, the listing's properties).
    func syncCollectionBody(token: String?) -> Data {
        let tokenElement = token.map { "<D:sync-token>\(XMLText.escaped($0))</D:sync-token>" } ?? "<D:sync-token/>"
        return Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <D:sync-collection xmlns:D="DAV:">\(tokenElement)<D:sync-level>1</D:sync-level>\
            <D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:sync-collection>
            """.utf8)
    }

    public var trustsFolderDeltas: Bool { syncCollection == .always }

    public func folderDelta(at folder: String, token: String?) async throws -> FolderDelta? {
        guard syncCollection != .never, syncCollectionSupport.withLock({ $0 }) != .unsupported else { return nil }
        let folder = try RemotePath.normalize(folder)
        let request = HTTPRequest(method: "REPORT", url: paths.url(folder, folder: true), path: folder,
                                  headers: [Self.xmlContentType, (name: "Depth", value: "0")], body: .data(syncCollectionBody(token: token)))
        let (head, stream) = try await client.stream(request)
        guard head.status == 207 else {
            let body = (try? await stream.collect(limit: 1 << 16)) ?? Data()
            if token != nil && [403, 409, 412].contains(head.status) {
                // RFC 6578 3.2: DAV:valid-sync-token; some servers answer 409 or 412 instead of 403.
                throw FolderDeltaTokenInvalid()
            }
            if token == nil && [400, 403, 405, 415, 422, 501].contains(head.status) {
                logger.debug("no sync-collection on this server; listing folders", metadata: ["status": .stringConvertible(head.status)])
                syncCollectionSupport.withLock { $0 = .unsupported }
                return nil
            }
            throw failure(head, body: body, path: folder)
        }
        syncCollectionSupport.withLock { $0 = .supported }
        let nextToken = Mutex<String?>(nil)
        let truncated = Mutex(false)
        let entries = PullSequence<FolderDeltaEntry> { [self] in
            let parser = MultistatusParser()
            var body = stream.makeAsyncIterator()
            var pending: [FolderDeltaEntry] = []
            var finished = false
            return {
                while pending.isEmpty {
                    if finished { return nil }
                    if let chunk = try await body.next() {
                        try parser.feed(chunk, path: folder)
                    } else {
                        try parser.finish(path: folder)
                        finished = true
                        nextToken.withLock { $0 = parser.syncToken }
                    }
                    for resource in parser.drain().reversed() {
                        guard let path = self.paths.remotePath(fromHref: resource.href, requestPath: folder) else { continue }
                        if path == folder, resource.status == 507 {
                            // RFC 6578 3.6: the server cut the answer; its token covers only what it sent.
                            truncated.withLock { $0 = true }
                            continue
                        }
                        guard path != folder, RemotePath.parent(of: path) == folder else { continue }
                        if resource.status == 404 {
                            pending.append(.removed(name: RemotePath.lastComponent(of: path)))
                        } else if resource.status.map({ (200..<300).contains($0) }) ?? true,
                                  let item = self.fileObject(resource, requestPath: folder) {
                            pending.append(.present(item))
                        }
                    }
                }
                return pending.popLast()
            }
        }
        return FolderDelta(isComplete: token == nil, entries: entries, nextToken: { nextToken.withLock { $0 } },
                           wasTruncated: { truncated.withLock { $0 } })
    }
}
