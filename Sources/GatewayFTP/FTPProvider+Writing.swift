import Foundation
public import GatewayCore
import GatewayTransport
import Synchronization

extension FTPProvider: FileProviderResumableWrite {
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        var options = options
        if options.beforeReplacing != nil { options.atomically = true }
        let remote = try await checkedWriteTarget(path, options: options)
        let target = options.atomically
            ? RemotePath.temporaryPath(for: remote)
            : remote
        return try await upload(stream, to: target, as: remote, offset: 0, options: options) { error in
            AtomicWrite.discards(error, atomically: options.atomically)
        }
    }

    /// The size of the partial file an interrupted resumable upload under `key` left (`SIZE`).
    public func resumableWriteLength(path: String, key: String) async throws -> Int64 {
        let remote = try RemotePath.normalize(path)
        let partial = RemotePath.resumablePath(for: remote, key: key)
        do {
            return try await client.fileInfo(try await serverPath(partial), path: partial).size ?? 0
        } catch let error as FileProviderFTPError where error.replyCode == 550 {
            return 0
        }
    }

    /// Uploads to `.NAME.gateway-resume-KEY.partial`: `STOR` from the start, `APPE` after the
    /// `offset` bytes an interrupted upload left there; then `RNFR`/`RNTO` into place. After a
    /// transient failure the partial file stays for the next attempt.
    public func resumableWrite(path: String, key: String, offset: Int64, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        let remote = try await checkedWriteTarget(path, options: options)
        let partial = RemotePath.resumablePath(for: remote, key: key)
        if offset > 0 {
            let stored = try await resumableWriteLength(path: remote, key: key)
            guard stored == offset else {
                throw FileProviderError.truncated(path: remote, reason: "the interrupted upload holds \(stored) bytes, not \(offset)")
            }
        }
        var options = options
        options.atomically = true
        return try await upload(stream, to: partial, as: remote, offset: offset, options: options) { error in
            !error.failureKind.keepsInterruptedWrite
        }
    }

    /// Checks a write's target (``AtomicWrite/checkTarget(_:options:remote:sameVersion:lookUp:)``).
    private func checkedWriteTarget(_ path: String, options: WriteOptions) async throws -> String {
        try await AtomicWrite.checkTarget(path, options: options, remote: name) { try await itemIfPresent(path: $0) }
    }

    /// Sends `stream` to `target` (`STOR`, or `APPE` after `offset` bytes already there), checks the
    /// byte count against the whole file's size, renames `target` to `remote` when they differ and
    /// sets the modification time. On failure `target` is deleted when `discards` says so.
    private func upload(_ stream: ByteStream, to target: String, as remote: String, offset: Int64, options: WriteOptions,
                        discards: (any Error) -> Bool) async throws -> FileObject {
        let (counted, counter) = AtomicWrite.counting(stream, progress: options.progress)
        let targetPath = try await serverPath(target)
        let expected = options.expectedSize ?? stream.expectedLength.map { $0.saturatingAdding(offset) }
        var stamp: Date?
        if let date = options.modificationDate, try await features().setModificationTime { stamp = date }
        var renamed = target == remote
        var stamped = false
        do {
            do {
                if offset == 0, options.atomically, let length = stream.expectedLength, length <= Self.replayableUploadSize {
                    // A small file to a temporary name: held in memory, so a dropped connection can be
                    // answered by sending it again; and all there before it goes, so the rename into
                    // place (and MFMT) ride on the upload's connection, right after it (one request, not three).
                    let contents = try await counted.collect(limit: Int(length))
                    try AtomicWrite.checkLength(Int64(contents.count), expected: expected, path: remote)
                    // The time is set on the temporary file, which the rename keeps: a refused
                    // rename then leaves an existing file under the final name untouched.
                    var then: [String] = stamp.map { ["MFMT \(Self.mfmtStamp($0)) \(targetPath)"] } ?? []
                    // (Not when the previous file must first go to the trash: that waits for the upload.)
                    if !renamed, options.beforeReplacing == nil { then += ["RNFR \(targetPath)", "RNTO \(try await serverPath(remote))"] }
                    let replies = try await client.storeRepeatable(targetPath, path: remote, contents: contents, then: then)
                    if replies.count == then.count {
                        if stamp != nil { stamped = replies[0].code / 100 == 2 }
                        if !renamed, options.beforeReplacing == nil { renamed = replies[then.count - 2].code == 350 && replies[then.count - 1].code / 100 == 2 }
                    }
                } else {
                    try await client.store(targetPath, path: remote, from: counted, append: offset > 0)
                }
            } catch let error as FileProviderFTPError {
                throw await refineWriteFailure(error, remote: remote)
            }
            let written = offset + counter.value
            try AtomicWrite.checkLength(written, expected: expected, path: remote)
            // Refused on the upload's connection (or a large file): the rename on its own, which
            // knows the servers that will not rename onto an existing file.
            if !renamed {
                try await options.beforeReplacing?(remote)
                try await rename(target, to: remote, replacing: options.overwrite)
            }
            if let stamp, !stamped {
                try await setModificationDate(stamp, path: remote)
                stamped = true
            }
            logger.debug("wrote file", metadata: ["path": .string(remote), "bytes": .stringConvertible(written),
                                                  "resumed_at": .stringConvertible(offset)])
            if options.returnsStoredAttributes, let stored = try? await attributesOfItem(path: remote) { return stored }
            return FileObject(path: remote, type: .file, size: written, modificationDate: stamped ? options.modificationDate : nil)
        } catch {
            if discards(error) { await discard(target) }
            throw error
        }
    }

    /// Throws ``FileProviderError/truncated(path:reason:)`` when `written` is not the `expected` size.
    /// Uploads up to this size to a temporary name are kept in memory and sent again when the
    /// connection drops under them.
    static let replayableUploadSize: Int64 = 1 << 20

    /// A refused STOR: a missing folder is "not found", a full disk "no space", else permission.
    private func refineWriteFailure(_ error: FileProviderFTPError, remote: String) async -> any Error {
        guard [550, 553, 450].contains(error.replyCode) else { return error }
        let parent = RemotePath.parent(of: remote)
        if let folder = try? await itemIfPresent(path: parent), folder.isDirectory {
            return FileProviderFTPError(replyCode: error.replyCode, command: error.command, path: remote, serverText: error.serverText,
                                        kind: error.replyCode == 450 ? .serverBusy : .permissionDenied)
        }
        return FileProviderFTPError(replyCode: error.replyCode, command: error.command, path: parent, serverText: error.serverText, kind: .notFound)
    }

    /// RNFR/RNTO. Servers on file systems that refuse to rename onto an existing file get the old
    /// file removed first, when replacing is allowed.
    func rename(_ source: String, to destination: String, replacing: Bool) async throws {
        let from = try await serverPath(source)
        let to = try await serverPath(destination)
        let directory = RemotePath.parent(of: to)
        do {
            _ = try await client.execute(["RNFR \(from)", "RNTO \(to)"], directory: directory, path: destination)
        } catch let error as FileProviderFTPError where replacing && error.replyCode >= 500 {
            guard let existing = try await itemIfPresent(path: destination), existing.type == .file,
                  try await itemIfPresent(path: source) != nil else {
                throw await refine(error, path: source)
            }
            _ = try await client.execute(["DELE \(to)", "RNFR \(from)", "RNTO \(to)"], directory: directory, path: destination)
        }
    }

    /// Removes a temporary or partial upload, even when the calling task was cancelled. A server
    /// may still be writing an aborted upload when the removal arrives, so it is checked and repeated.
    func discard(_ path: String) async {
        guard let target = try? await serverPath(path) else { return }
        let gone = await AtomicWrite.discard(path, delete: { [self] path in
            // "*": a name already gone is no failure here, and libcurl keeps the connection.
            _ = try? await client.execute(["*DELE \(target)"], directory: RemotePath.parent(of: target), path: path)
        }, isGone: { [self] path in (try? await itemIfPresent(path: path)) == .some(nil) })
        if !gone { logger.warning("could not remove a temporary upload", metadata: ["path": .string(path)]) }
    }
}
