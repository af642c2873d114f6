import Foundation
import GatewayCore
import GatewayState
import Synchronization

/// A file with changes made through the mount that the remote may not have yet: its whole
/// contents in a cache file, read and written there, and uploaded with the provider's atomic
/// write after its last writer closes it (plus the write-back delay), or at `fsync`.
///
/// Each write bumps a generation; an upload records the generation it sent, so a write that
/// lands during an upload makes the file dirty again and it is sent once more. Uploads of one
/// file run one at a time.
final class DirtyFile: Sendable {
    let inode: UInt64
    /// The cache file holding the contents.
    let cachePath: String
    private let descriptor: Int32
    private let uploads = AsyncLock()
    private let state: Mutex<State>

    struct State {
        var size: Int64
        var generation: UInt64 = 1
        var uploaded: UInt64 = 0
        /// Handles open on it (readers and writers).
        var handles = 0
        /// The modification time to give the upload (a `touch`, `utimens`), if any.
        var modificationDate: Date?
        /// When the contents last changed through the mount.
        var lastWrite: Date?
        /// Removed through the mount: never uploaded again.
        var removed = false
        /// An upload of it runs now.
        var uploading = false
        /// The running upload's progress (bytes the provider sent so far).
        var progress: TransferProgress?
        /// Whether the remote has a file under its name (`false` for a file created through the
        /// mount until its first upload).
        var existsRemotely: Bool
        /// The remote version the contents were made from (the listed one, then each upload's):
        /// an upload replaces only that version, so a change made on the remote meanwhile is
        /// never overwritten (a version mismatch: both are kept, ``MountFileSystem/keepBoth``).
        var base: String?
    }

    /// A dirty file whose cache file at `cachePath` is already filled with `size` bytes
    /// (`modified`: the remote does not have them yet).
    init(inode: UInt64, cachePath: String, size: Int64, modified: Bool, existsRemotely: Bool, base: String? = nil) throws {
        let descriptor = open(cachePath, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.inode = inode
        self.cachePath = cachePath
        self.descriptor = descriptor
        var initial = State(size: size, existsRemotely: existsRemotely, base: base)
        if !modified { initial.uploaded = initial.generation }
        state = Mutex(initial)
    }

    deinit {
        close(descriptor)
        unlink(cachePath)
    }

    /// Puts the cache file's contents on this machine's disk (`fsync` while offline).
    func synchronizeLocally() throws {
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    var snapshot: State { state.withLock { $0 } }
    var size: Int64 { state.withLock { $0.size } }
    var isModified: Bool { state.withLock { !$0.removed && $0.generation != $0.uploaded } }

    func opened() { state.withLock { $0.handles += 1 } }

    /// One handle closed; returns how many remain.
    func closed() -> Int { state.withLock { $0.handles = max(0, $0.handles - 1); return $0.handles } }

    func markRemoved() { state.withLock { $0.removed = true } }

    /// The file now goes to a name the remote does not have (a conflict copy).
    func markLocalOnly() {
        state.withLock {
            $0.existsRemotely = false
            $0.base = nil
        }
    }

    func setModificationDate(_ date: Date) {
        state.withLock {
            $0.modificationDate = date
            $0.generation &+= 1
        }
    }

    /// Writes `bytes` at `offset`; returns how many were written.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        let status = FileDescriptorIO.writeAll(descriptor, bytes, at: offset)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        let end = offset.addingReportingOverflow(Int64(bytes.count))
        state.withLock {
            if !end.overflow { $0.size = max($0.size, end.partialValue) }
            $0.generation &+= 1
            $0.modificationDate = nil
            $0.lastWrite = Date()
        }
        return bytes.count
    }

    /// Up to `length` bytes from `offset`.
    func read(at offset: Int64, length: Int) throws -> Data {
        var data = Data(count: length)
        let count = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, off_t(offset)) }
        guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        data.count = count
        return data
    }

    /// Cuts or extends the file to `size` bytes.
    func truncate(to size: Int64) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        state.withLock {
            $0.size = size
            $0.generation &+= 1
            $0.modificationDate = nil
            $0.lastWrite = Date()
        }
    }

    /// Runs `body` while no upload of this file runs (a rename must not race one).
    func withoutUpload<T>(_ body: () async throws -> T) async rethrows -> T {
        try await uploads.withLock { try await body() }
    }

    /// Sends the contents to `path` with the provider's atomic write, unless nothing changed since
    /// the last upload; returns the server's description of what it stored, or `nil` when there
    /// was nothing to send.
    /// `stored` is told what the server stored while no other upload of this file can run, so
    /// descriptions are applied in the order the uploads happened.
    func upload(to path: @Sendable () -> String?, provider: any FileProviderReadWrite, undo: MountUndo? = nil,
                stored: (FileObject) -> Void) async throws -> FileObject? {
        try await uploads.withLock {
            let (generation, size, date, removed) = state.withLock { ($0.generation, $0.size, $0.modificationDate, $0.removed) }
            guard !removed, generation != state.withLock({ $0.uploaded }), let target = path() else { return nil }
            let progress = TransferProgress()
            state.withLock {
                $0.uploading = true
                $0.progress = progress
            }
            defer {
                state.withLock {
                    $0.uploading = false
                    $0.progress = nil
                }
            }
            var options = WriteOptions(overwrite: true, expectedSize: size, modificationDate: date, progress: progress)
            options.returnsStoredAttributes = true
            options.ifVersion = state.withLock { $0.existsRemotely ? $0.base : nil }
            let contents = try ByteStream.contentsOfFile(at: URL(fileURLWithPath: cachePath))
            let result: FileObject
            if let undo {
                // What the name held goes to the trash as the new contents take it; recorded.
                let written = try await undo.provider.writeUndoably(path: target, from: contents, options: options,
                                                                    existing: options.ifVersion != nil ? true : nil)
                undo.recorder.record(written.record, on: provider)
                result = written.file
            } else {
                result = try await provider.write(path: target, from: contents, options: options)
            }
            state.withLock {
                $0.uploaded = max($0.uploaded, generation)
                $0.existsRemotely = true
                $0.base = result.versionTag
            }
            stored(result)
            return result
        }
    }
}
