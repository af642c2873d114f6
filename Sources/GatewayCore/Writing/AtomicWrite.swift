import Foundation
import Synchronization

/// The steps of an atomic write that every backend shares: check the target, count the bytes
/// (with progress and cancellation), compare the count with the expected length, give the previous
/// file to ``WriteOptions/beforeReplacing``, rename into place, and remove what a failed write left
/// (checked and repeated, as servers finish an aborted upload late).
///
/// A backend with nothing special to do drives the whole write with four primitives
/// (``AtomicWriteBackend``: stat, put, rename, delete) and gets ``AtomicWriteBackend/atomicWrite(path:from:options:)``.
/// The built-in backends, which take shortcuts of their own (WebDAV's one-`PUT` write on an
/// atomic server, FTP's rename on the upload's own connection, Local's descriptor-relative calls),
/// use the steps one by one, so the rules stay the same everywhere.
public enum AtomicWrite {
    /// Checks a write's target: not the root, not a folder, and, when `options` ask, absent
    /// (`overwrite` false) or at the expected version (`ifVersion`, compared by `sameVersion`).
    /// Looks the target up only when one of those asks for it. Returns the normalized path.
    ///
    /// - Throws: `CocoaError` (`EISDIR`, `EEXIST`) naming the path on `remote`, or
    ///   ``FileProviderError/versionMismatch(path:expected:actual:)``.
    public static func checkTarget(_ path: String, options: WriteOptions, remote: String,
                                   sameVersion: (String?, String) -> Bool = { $0 == $1 },
                                   lookUp: (String) async throws -> FileObject?) async throws -> String {
        let normalized = try RemotePath.normalize(path)
        guard normalized != "/" else { throw CocoaError.posix(EISDIR, path: normalized, remote: remote, writing: true) }
        guard !options.overwrite || options.ifVersion != nil else { return normalized }
        let existing = try await lookUp(normalized)
        if let existing, existing.isDirectory { throw CocoaError.posix(EISDIR, path: normalized, remote: remote, writing: true) }
        if existing != nil, !options.overwrite { throw CocoaError.posix(EEXIST, path: normalized, remote: remote, writing: true) }
        if let expected = options.ifVersion, !sameVersion(existing?.versionTag, expected) {
            throw FileProviderError.versionMismatch(path: normalized, expected: expected, actual: existing?.versionTag)
        }
        return normalized
    }

    /// Bytes handed to a backend, counted as they pass.
    public final class ByteCount: Sendable {
        private let count = Mutex<Int64>(0)

        /// Creates a count of zero.
        public init() {}

        /// Bytes so far.
        public var value: Int64 { count.withLock { $0 } }

        func add(_ bytes: Int) { count.withLock { $0 = $0.saturatingAdding(Int64(bytes)) } }
    }

    /// `stream`, counted into the returned ``ByteCount`` and into `progress`, stopping with
    /// `CancellationError` once `progress` is cancelled.
    public static func counting(_ stream: ByteStream, progress: TransferProgress?) -> (stream: ByteStream, count: ByteCount) {
        let count = ByteCount()
        let counted = stream.observing(beforeEach: { try progress.checkCancellation() }, afterEach: { chunk in
            count.add(chunk.count)
            progress?.addBytes(Int64(chunk.count))
        })
        return (counted, count)
    }

    /// Fails unless `written` is the `expected` length (when one is known): a short or overlong
    /// source never becomes a file under its final name.
    public static func checkLength(_ written: Int64, expected: Int64?, path: String) throws {
        if let expected, expected != written {
            throw FileProviderError.truncated(path: path, reason: "received \(written) of \(expected) bytes; nothing was written")
        }
    }

    /// Removes what a failed write left at `path`, even when the calling task was cancelled: deletes,
    /// pauses, then checks it is gone, up to ten times with growing pauses (some servers finish
    /// storing an aborted upload only after they notice the dropped connection, so a check right
    /// after the delete could pass too early). Returns whether it is gone.
    @discardableResult
    public static func discard(_ path: String, delete: @escaping @Sendable (String) async -> Void,
                               isGone: @escaping @Sendable (String) async -> Bool) async -> Bool {
        await Task {
            for attempt in 1...10 {
                await delete(path)
                try? await Task.sleep(for: .milliseconds(50 * attempt))
                if await isGone(path) { return true }
            }
            return false
        }.value
    }

    /// Whether a failed write's leftovers go: always for an atomic write (its temporary), and for
    /// an in-place write only when the source was cut short (a partial file is no file).
    public static func discards(_ error: any Error, atomically: Bool) -> Bool {
        if atomically { return true }
        if case .truncated? = error as? FileProviderError { return true }
        return false
    }
}

/// The four primitives a backend gives for ``atomicWrite(path:from:options:)``: the whole atomic
/// write (a temporary name beside the target, renamed into place when complete) written once in
/// the core. A new backend implements these and its `write(path:from:options:)` is one line.
public protocol AtomicWriteBackend: FileProviderBasic {
    /// The item at a normalized path, or `nil` when there is none.
    func atomicWriteLookUp(_ path: String) async throws -> FileObject?
    /// Stores `stream` under `path` (a temporary name), replacing anything there.
    func atomicWritePut(_ stream: ByteStream, to path: String, options: WriteOptions) async throws
    /// Renames `from` to `to`, replacing an existing file at `to` when `replacing`.
    func atomicWriteRename(_ from: String, to: String, replacing: Bool) async throws
    /// Moves the complete temporary `from` into place at `to` (the last step of an atomic write);
    /// by default ``atomicWriteRename(_:to:replacing:)``. A backend that gives the file its
    /// modification time in the same step (SFTP sends `SETSTAT` and the rename together, rather
    /// than the time before the `CLOSE`) implements this one too.
    func atomicWriteCommit(_ from: String, to: String, replacing: Bool, options: WriteOptions) async throws
    /// Deletes the file at `path`; a missing file is no failure.
    func atomicWriteDelete(_ path: String) async
    /// Whether two version tags name the same content (default: equal texts).
    func atomicWriteSameVersion(_ a: String?, _ b: String) -> Bool
}

extension AtomicWriteBackend {
    public func atomicWriteSameVersion(_ a: String?, _ b: String) -> Bool { a == b }

    public func atomicWriteCommit(_ from: String, to: String, replacing: Bool, options: WriteOptions) async throws {
        try await atomicWriteRename(from, to: to, replacing: replacing)
    }

    /// Writes `stream` to `path` atomically (or in place, with `atomically` false): checks the
    /// target, stores the counted bytes under a temporary name, compares their count with
    /// ``WriteOptions/expectedSize`` (or the stream's length), calls
    /// ``WriteOptions/beforeReplacing``, renames into place, and removes the temporary on any
    /// failure. Returns the stored file as the backend describes it (with
    /// ``WriteOptions/returnsStoredAttributes``), else as written.
    public func atomicWrite(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        var options = options
        if options.beforeReplacing != nil { options.atomically = true }
        let remote = try await AtomicWrite.checkTarget(path, options: options, remote: name,
                                                       sameVersion: atomicWriteSameVersion, lookUp: atomicWriteLookUp)
        let target = options.atomically ? RemotePath.temporaryPath(for: remote) : remote
        let (counted, count) = AtomicWrite.counting(stream, progress: options.progress)
        do {
            try await atomicWritePut(counted, to: target, options: options)
            try AtomicWrite.checkLength(count.value, expected: options.expectedSize ?? stream.expectedLength, path: remote)
            if options.atomically {
                try await options.beforeReplacing?(remote)
                try await atomicWriteCommit(target, to: remote, replacing: options.overwrite, options: options)
            }
        } catch {
            if AtomicWrite.discards(error, atomically: options.atomically) {
                await AtomicWrite.discard(target, delete: { await atomicWriteDelete($0) },
                                          isGone: { (try? await atomicWriteLookUp($0)) == .some(nil) })
            }
            throw error
        }
        if options.returnsStoredAttributes, let stored = try? await atomicWriteLookUp(remote) { return stored }
        return FileObject(path: remote, type: .file, size: count.value, modificationDate: options.modificationDate)
    }
}
