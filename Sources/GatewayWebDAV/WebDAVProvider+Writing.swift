import Foundation
public import GatewayCore
import GatewayTransport
import Synchronization

extension WebDAVProvider {
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        var options = options
        if options.beforeReplacing != nil { options.atomically = true }
        let remote = try await AtomicWrite.checkTarget(path, options: options, remote: name, sameVersion: ETag.sameVersion) {
            try await itemIfPresent(path: $0)
        }
        // A small file whose bytes are at hand goes straight to its name where the server's PUT is
        // itself atomic (it stores the body under a temporary name and renames it when complete):
        // one request instead of PUT and MOVE. Elsewhere, and for conditional or no-overwrite
        // writes, the temporary name and MOVE keep the final name whole. (With beforeReplacing,
        // the previous file goes to the trash once the bytes are all in memory, right before the
        // PUT: the server's own rename is the one the hook precedes. So an undoable overwrite
        // costs one request more, not three.)
        let buffered = stream.expectedLength.map { $0 <= Self.bufferedUploadSize } ?? false
        var direct = options.atomically && options.overwrite && options.ifVersion == nil && buffered
            && (options.expectedSize == nil || options.expectedSize == stream.expectedLength)
        if direct { direct = await serverPutIsAtomic() }
        // A name this server would change in a Destination goes straight to its name (not atomic:
        // see WebDAVProvider+Destination). What stood there before decides what a failure removes.
        var inPlace = false
        var existedBefore = true
        if options.atomically, !direct, await needsDirectPut(remote) {
            inPlace = true
            existedBefore = try await itemIfPresent(path: remote) != nil
        }
        let renames = options.atomically && !direct && !inPlace
        let target = renames ? RemotePath.temporaryPath(for: remote) : remote
        let (counted, counter) = AtomicWrite.counting(stream, progress: options.progress)
        var headers: [(name: String, value: String)] = []
        if let date = options.modificationDate, vendor != .other {
            headers.append((name: "X-OC-Mtime", value: String(Int64(saturating: date.timeIntervalSince1970))))
        }
        if vendor != .other, let checksum = OwnCloudChecksums.header(for: options.contentHashes) {
            headers.append((name: "OC-Checksum", value: checksum))
        }
        var conditional = false
        if let expected = options.ifVersion, !options.atomically, !expected.hasPrefix("W/"), !expected.hasPrefix("lm:") {
            headers.append((name: "If-Match", value: expected))
            conditional = true
        }
        do {
            var upload = HTTPRequest.Body.stream(counted)
            if let length = stream.expectedLength, length <= Self.bufferedUploadSize, !conditional {
                // A small file goes as one buffer: libcurl reads it on its own thread (no task pumping
                // a stream across), and can send it again on a kept-alive connection the server had
                // closed. (libcurl would label a buffer as a form: no Content-Type, as for a stream.)
                // Not a conditional PUT: sent again after a lost answer, one the server carried out
                // would fail its own If-Match.
                let data = try await counted.collect(limit: Int(length))
                if direct, Int64(data.count) != length {
                    // Checked before anything is sent: the server would store a short body whole.
                    throw FileProviderError.truncated(path: remote, reason: "received \(data.count) of \(length) bytes; nothing was written")
                }
                upload = .data(data)
                headers.append((name: "Content-Type", value: ""))
            }
            if direct || inPlace { try await options.beforeReplacing?(remote) }
            let clock = ContinuousClock()
            var started = clock.now
            let (head, body) = try await send("PUT", target, headers: headers, body: upload)
            var answer = head
            guard head.isSuccess else {
                if head.status == 412 { throw FileProviderError.versionMismatch(path: remote, expected: options.ifVersion ?? "", actual: nil) }
                throw failure(head, body: body, path: remote)
            }
            let written = counter.value
            try AtomicWrite.checkLength(written, expected: options.expectedSize ?? stream.expectedLength, path: remote)
            var stored: FileObject?
            if renames {
                try await options.beforeReplacing?(remote)
                started = clock.now
                answer = try await commit(target, to: remote, overwrite: options.overwrite)
                stored = try await verifyCommitted(remote, size: written)
            }
            logger.debug("wrote file", metadata: ["path": .string(remote), "bytes": .stringConvertible(written)])
            let stamp = await recordSourceStamp(at: remote, size: written, options: options, answer: answer,
                                                elapsed: started.duration(to: clock.now), stored: stored)
            return await storedAttributes(remote, size: written, options: options, described: stored, stamp: stamp,
                                          fallbackDate: options.modificationDate)
        } catch {
            // Remove what this write left: the temporary, or (not atomic) a partial upload. Never the
            // target of a refused conditional write, which holds someone else's newer file.
            // A direct (atomic) PUT left nothing: the server kept the previous file.
            if inPlace {
                if !existedBefore { await discard(remote) }
            } else if !direct, AtomicWrite.discards(error, atomically: options.atomically) {
                await discard(target)
            }
            // An upload into a missing folder: 409 (RFC 4918), 500 (nginx), or a stream the server
            // reset (HTTP/2) before its 409 arrived. Name the missing folder as every backend does
            // ("not found").
            if error.failureKind == .connectionLost || [409, 500].contains((error as? FileProviderHTTPError)?.statusCode ?? 0),
               await parentIsMissing(remote) {
                throw CocoaError.posix(ENOENT, path: RemotePath.parent(of: remote), remote: name, writing: true)
            }
            throw error
        }
    }

    /// What a write returns: with ``WriteOptions/returnsStoredAttributes``, the server's own
    /// description of what now stands at `remote` (version tag, dates) with the stamp just
    /// recorded; `described` where the write already asked for it (the check after a rename: no
    /// second request), else one `PROPFIND`. Otherwise what the writer knows, with `fallbackDate`.
    func storedAttributes(_ remote: String, size: Int64, options: WriteOptions, described: FileObject?, stamp: StoredStamp?,
                          fallbackDate: Date?) async -> FileObject {
        if options.returnsStoredAttributes {
            if var described {
                if let stamp, stamp.describes(size: described.size, lastModified: described.modificationDate, etag: Self.etag(of: described)) {
                    described.sourceStamp = stamp.sourceStamp
                }
                return described
            }
            if let stored = try? await attributesOfItem(path: remote) { return stored }
        }
        return FileObject(path: remote, type: .file, size: size, modificationDate: fallbackDate)
    }

    /// Whether this server's `PUT` replaces a file atomically (``AtomicPut``): asked once with
    /// `OPTIONS` in `auto` mode, then remembered.
    ///
    /// Known atomic: Apache httpd 2.4 and later with mod_dav_fs, which writes a PUT body to a
    /// `.davfs.tmp` file beside the target and renames it over the target only when the body
    /// arrived complete (mod_dav_fs `dav_fs_open_stream`, `DAV_MODE_WRITE_TRUNC`; 2.2 wrote in
    /// place). It says so by `<http://apache.org/dav/propset/fs/1>` in its `DAV` header and by its
    /// `Server` header; a server that hides its version (`ServerTokens Prod`) is not trusted.
    func serverPutIsAtomic() async -> Bool {
        switch atomicPut {
        case .always: return true
        case .never: return false
        case .auto: break
        }
        if let known = learnedAtomicPut.withLock({ $0 }) { return known }
        guard let (head, _) = try? await send("OPTIONS", "/", folder: true), head.isSuccess else { return false }
        let atomic = Self.isAtomicPutServer(dav: head.header("dav"), server: head.header("server"))
        learnedAtomicPut.withLock { $0 = atomic }
        logger.debug("server PUT atomic", metadata: ["atomic": .stringConvertible(atomic), "server": .string(head.header("server") ?? "")])
        return atomic
    }

    /// Whether `DAV` and `Server` headers name a server whose `PUT` is atomic: Apache httpd 2.4 or
    /// later with mod_dav_fs, or `gateway serve webdav` (which says so with its own compliance class).
    public static func isAtomicPutServer(dav: String?, server: String?) -> Bool {
        if let dav, dav.contains("<urn:gateway:dav:atomic-put>") { return true }
        guard let dav, dav.contains("<http://apache.org/dav/propset/fs/1>"), let server, server.hasPrefix("Apache/") else { return false }
        let version = server.dropFirst("Apache/".count).prefix { $0.isNumber || $0 == "." }.split(separator: ".").compactMap { Int($0) }
        guard version.count >= 2 else { return false }
        return version[0] > 2 || (version[0] == 2 && version[1] >= 4)
    }

    /// Whether the folder `remote` would be written into is known not to exist.
    private func parentIsMissing(_ remote: String) async -> Bool {
        do {
            return try await itemIfPresent(path: RemotePath.parent(of: remote)) == nil
        } catch {
            return false
        }
    }

    /// Renames a finished temporary upload to its final name; returns the server's answer.
    @discardableResult
    func commit(_ temporary: String, to remote: String, overwrite: Bool) async throws -> HTTPResponseHead {
        let (head, body) = try await send("MOVE", temporary, headers: [
            (name: "Destination", value: paths.url(remote).absoluteString),
            (name: "Overwrite", value: overwrite ? "T" : "F"),
        ])
        switch head.status {
        case 200..<300 where head.status != 207:
            return head
        case 412:
            throw existsError(remote)
        default:
            throw failure(head, body: body, path: remote)
        }
    }

    /// Removes a temporary or partial upload, even when the calling task was cancelled. Some servers
    /// finish writing an aborted upload only after they notice the dropped connection, so the removal
    /// is checked and repeated for a few seconds.
    func discard(_ path: String) async {
        let gone = await AtomicWrite.discard(path, delete: { [self] in _ = try? await send("DELETE", $0) },
                                             isGone: { [self] in (try? await itemIfPresent(path: $0)) == .some(nil) })
        if !gone { logger.warning("could not remove a temporary upload", metadata: ["path": .string(path)]) }
    }
}

extension String {
    /// `"/a"` + `"b"` gives `"/a/b"`; the root gives `"/b"`.
    func appendingPathComponentRemote(_ component: String) -> String {
        self == "/" ? "/" + component : self + "/" + component
    }
}


extension WebDAVProvider {
    /// Uploads up to this size are read into memory first and sent as one buffer.
    static let bufferedUploadSize: Int64 = 1 << 20
}
