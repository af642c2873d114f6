import Foundation
public import GatewayCore
import GatewayTransport
import Synchronization

extension FTPProvider {
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
        if !options.overwrite || options.ifVersion != nil {
            let existing = try await itemIfPresent(path: remote)
            if let existing, existing.isDirectory { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
            if existing != nil, !options.overwrite { throw existsError(remote) }
            if let expected = options.ifVersion, existing?.versionTag != expected {
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: existing?.versionTag)
            }
        }
        let target = options.atomically
            ? RemotePath.parent(of: remote).appendingRemoteComponent(RemotePath.temporaryName(for: RemotePath.lastComponent(of: remote)))
            : remote
        let counter = Mutex<Int64>(0)
        let progress = options.progress
        let counted = stream.observing(beforeEach: { try progress.checkCancellation() }, afterEach: { chunk in
            counter.withLock { $0 += Int64(chunk.count) }
            progress?.addBytes(Int64(chunk.count))
        })
        let targetPath = try await serverPath(target)
        do {
            do {
                if options.atomically, let length = stream.expectedLength, length <= Self.replayableUploadSize {
                    // A small file to a temporary name: held in memory, so a dropped connection
                    // can be answered by sending it again.
                    try await client.storeRepeatable(targetPath, path: remote, contents: try await counted.collect(limit: Int(length)))
                } else {
                    try await client.store(targetPath, path: remote, from: counted)
                }
            } catch let error as FileProviderFTPError {
                throw await refineWriteFailure(error, remote: remote)
            }
            let written = counter.withLock { $0 }
            if let expected = options.expectedSize ?? stream.expectedLength, expected != written {
                throw FileProviderError.truncated(path: remote, reason: "received \(written) of \(expected) bytes; nothing was written")
            }
            if options.atomically { try await rename(target, to: remote, replacing: options.overwrite) }
            var stamped = false
            if let date = options.modificationDate, try await features().setModificationTime {
                try await setModificationDate(date, path: remote)
                stamped = true
            }
            logger.debug("wrote file", metadata: ["path": .string(remote), "bytes": .stringConvertible(written)])
            if options.returnsStoredAttributes, let stored = try? await attributesOfItem(path: remote) { return stored }
            return FileObject(path: remote, type: .file, size: written, modificationDate: stamped ? options.modificationDate : nil)
        } catch {
            let partial: Bool = if case .truncated? = error as? FileProviderError { true } else { false }
            if options.atomically || partial { await discard(target) }
            throw error
        }
    }

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
        await Task { [self] in
            guard let target = try? await serverPath(path) else { return }
            for attempt in 1...10 {
                _ = try? await client.execute(["DELE \(target)"], directory: RemotePath.parent(of: target), path: path)
                if (try? await itemIfPresent(path: path)) == .some(nil) { return }
                try? await Task.sleep(for: .milliseconds(50 * attempt))
            }
            logger.warning("could not remove a temporary upload", metadata: ["path": .string(path)])
        }.value
    }
}
