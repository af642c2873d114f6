import Foundation
public import GatewayCore
import GatewaySFTPProtocol

/// Uploads that survive a dropped connection: the bytes go to `.NAME.gateway-resume-KEY.partial`
/// beside the target, which SFTP can extend at any offset; an interrupted upload's next attempt
/// writes from where its bytes end, then renames the file into place.
extension SFTPProvider: FileProviderResumableWrite {
    /// The size of the partial file an interrupted upload under `key` left, 0 for none. A server
    /// that cannot write into an existing file at an offset (`rclone serve sftp` at its defaults)
    /// is found out here, once per remote, by writing a partial file's last byte again (the same
    /// byte: nothing changes): there 0 is returned, so the upload starts over (its `OPEN`
    /// truncates the partial file) rather than failing.
    public func resumableWriteLength(path: String, key: String) async throws -> Int64 {
        let remote = try RemotePath.normalize(path)
        let partial = RemotePath.resumablePath(for: remote, key: key)
        return try await withSession { connection in
            let target = try await serverPath(partial, on: connection)
            let size: Int64
            do {
                let attributes = try await connection.expectAttributes(.lstat(path: target), "LSTAT", path: partial)
                guard attributes.kind == .file, let stored = attributes.size, stored > 0 else { return 0 }
                size = Int64(clamping: stored)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                return 0
            }
            if let known = writesAtOffsets { return known ? size : 0 }
            let writes = try await rewritesLastByte(of: target, size: size, path: partial, on: connection)
            rememberWritesAtOffsets(writes)
            if !writes {
                logger.info("SFTP: the server cannot write into an existing file at an offset; interrupted uploads start over",
                            metadata: ["remote": "\(name)"])
            }
            return writes ? size : 0
        }
    }

    /// Writes `stream` at `offset` into the partial file of `key` (created, or truncated, when
    /// `offset` is 0), checks the whole length, and renames it into place. A transient failure
    /// keeps the partial file for the next attempt; any other removes it.
    public func resumableWrite(path: String, key: String, offset: Int64, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        let remote = try await AtomicWrite.checkTarget(path, options: options, remote: name) { try await itemIfPresent(path: $0) }
        let partial = RemotePath.resumablePath(for: remote, key: key)
        if offset > 0 {
            let stored = try await resumableWriteLength(path: remote, key: key)
            guard stored == offset else {
                throw FileProviderError.truncated(path: remote, reason: "the interrupted upload holds \(stored) bytes, not \(offset)")
            }
        }
        let (counted, count) = AtomicWrite.counting(stream, progress: options.progress)
        do {
            try await put(counted, to: partial, at: offset, modificationDate: options.modificationDate)
            let expected = options.expectedSize ?? stream.expectedLength.map { $0.saturatingAdding(offset) }
            try AtomicWrite.checkLength(offset + count.value, expected: expected, path: remote)
            try await options.beforeReplacing?(remote)
            try await withSession { connection in try await rename(partial, to: remote, replacing: options.overwrite, on: connection) }
        } catch {
            if !error.failureKind.keepsInterruptedWrite { await atomicWriteDelete(partial) }
            throw error
        }
        if options.returnsStoredAttributes, let stored = try? await attributesOfItem(path: remote) { return stored }
        return FileObject(path: remote, type: .file, size: offset + count.value, modificationDate: options.modificationDate)
    }

    /// Reads the last byte of a file and writes it back in place: whether the server writes into
    /// an existing file at an offset.
    func rewritesLastByte(of target: String, size: Int64, path: String, on connection: SFTPConnection) async throws -> Bool {
        let handle: [UInt8]
        do {
            handle = try await connection.expectHandle(.open(path: target, flags: [.read, .write], attributes: SFTPAttributes()), "OPEN", path: path)
        } catch is SFTPStatusError {
            return false
        }
        defer { Task { try? await connection.closeHandle(handle, path: path) } }
        guard case .data(_, let last) = try await connection.request(.read(handle: handle, offset: UInt64(size - 1), length: 1)), last.count == 1 else {
            return false
        }
        do {
            try await connection.expectOK(.write(handle: handle, offset: UInt64(size - 1), data: last), "WRITE", path: path)
            return true
        } catch is SFTPStatusError {
            return false
        }
    }
}
