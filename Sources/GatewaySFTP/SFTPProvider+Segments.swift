import Foundation
public import GatewayCore
import GatewaySFTPProtocol

/// Large uploads as several byte ranges at once, each on its own session from the pool, into a
/// temporary file that is renamed into place once the server holds every byte: SFTP writes at
/// any offset, and one session's encryption runs on one core.
///
/// The temporary file is first given its full size by writing its last byte. A server that cannot
/// write at an offset (`rclone serve sftp` at its defaults writes only in sequence) fails that
/// write or the check after it, and answers `nil`: the file then goes as one stream.
extension SFTPProvider: FileProviderSegmentedWrite {
    public func openSegmentedWrite(path: String, size: Int64, options: WriteOptions) async throws -> (any SegmentedFileWriter)? {
        guard size >= 2, options.atomically, options.ifVersion == nil, writesAtOffsets != false else { return nil }
        let remote = try await AtomicWrite.checkTarget(path, options: options, remote: name) { try await itemIfPresent(path: $0) }
        let target = RemotePath.temporaryPath(for: remote)
        let ready: Bool
        do {
            ready = try await withSession { connection in try await extend(target, to: size, path: remote, on: connection) }
        } catch {
            await atomicWriteDelete(target)
            throw error
        }
        guard ready else {
            await atomicWriteDelete(target)
            return nil
        }
        logger.debug("uploading in ranges", metadata: ["path": .string(remote), "bytes": .stringConvertible(size)])
        return SFTPSegmentedUpload(provider: self, target: target, remote: remote, size: size, options: options)
    }

    /// Creates `target` with `size` bytes by writing its last one, and tells whether the server
    /// writes at offsets (learned once per remote, as resumable uploads learn it).
    func extend(_ target: String, to size: Int64, path: String, on connection: SFTPConnection) async throws -> Bool {
        let file = try await serverPath(target, on: connection)
        let handle: [UInt8]
        do {
            handle = try await connection.expectHandle(.open(path: file, flags: [.write, .create, .truncate],
                                                             attributes: SFTPAttributes(permissions: 0o644)), "OPEN", path: path)
        } catch let error as SFTPStatusError where error.failureKind == .notFound {
            throw CocoaError.posix(ENOENT, path: RemotePath.parent(of: path), remote: name)
        } catch {
            throw await refine(error, path: path, expecting: .file)
        }
        let wrote: Bool
        do {
            try await connection.expectOK(.write(handle: handle, offset: UInt64(size - 1), data: [0]), "WRITE", path: path)
            wrote = true
        } catch is SFTPStatusError {
            wrote = false
        }
        let closed = (try? await connection.closeHandle(handle, path: path)) != nil
        var works = wrote && closed
        if works, writesAtOffsets == nil {
            works = try await rewritesLastByte(of: file, size: size, path: path, on: connection)
            rememberWritesAtOffsets(works)
        } else if !works {
            rememberWritesAtOffsets(false)
        }
        guard works else { return false }
        let stored = try await connection.expectAttributes(.lstat(path: file), "LSTAT", path: path)
        return stored.size == UInt64(size)
    }

    /// Checks that the temporary file has every byte, then moves it into place as an atomic write's
    /// last step does (its time and the rename in one round trip): the end of a segmented write
    /// and of a plan's ranged one.
    func commitFilledFile(_ target: String, remote: String, size: Int64, options: WriteOptions) async throws -> FileObject {
        let stored = try await itemIfPresent(path: target)
        guard let stored, stored.size == size else {
            throw FileProviderError.truncated(path: remote, reason: "the server holds \(stored?.size.map(String.init) ?? "no") bytes of \(size); nothing was written")
        }
        try await options.beforeReplacing?(remote)
        try await atomicWriteCommit(target, to: remote, replacing: options.overwrite, options: options)
        if options.returnsStoredAttributes, let written = try? await attributesOfItem(path: remote) { return written }
        return FileObject(path: remote, type: .file, size: size, modificationDate: options.modificationDate)
    }
}

/// A temporary file on an SFTP server being filled by ranges, each written through its own handle.
final class SFTPSegmentedUpload: SegmentedFileWriter {
    private let provider: SFTPProvider
    private let target: String
    private let options: WriteOptions
    /// The ranges, and the final name (`ledger.path`).
    private let ledger: SegmentLedger

    init(provider: SFTPProvider, target: String, remote: String, size: Int64, options: WriteOptions) {
        self.provider = provider
        self.target = target
        self.options = options
        self.ledger = SegmentLedger(size: size, path: remote)
    }

    func write(offset: Int64, length: Int64, from stream: ByteStream) async throws {
        try ledger.take(offset: offset, length: length)
        let progress = options.progress
        let exact = stream.exactly(length, path: ledger.path, what: "a range").observing(
            beforeEach: { try progress.checkCancellation() }, afterEach: { progress?.addBytes(Int64($0.count)) })
        // Several ranges share the transfer's memory: 2 MiB in flight each.
        try await provider.put(exact, to: target, at: offset, truncating: false, creating: false, modificationDate: nil, budget: 2 << 20)
        ledger.acknowledge(length)
    }

    func commit() async throws -> FileObject {
        try ledger.checkComplete()
        let object = try await provider.commitFilledFile(target, remote: ledger.path, size: ledger.size, options: options)
        ledger.finish()
        return object
    }

    func abort() async {
        if ledger.finish() { await provider.atomicWriteDelete(target) }
    }
}
