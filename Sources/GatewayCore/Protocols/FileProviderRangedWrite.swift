public import Foundation

/// Files assembled from byte ranges that separate processes write, on this machine or on others
/// that share the destination, and that one of them moves into place once every range is there:
/// how a plan (`gateway plan`) splits a file too large for one chunk across several workers.
///
/// Unlike ``FileProviderPositionalWrite`` (one process, one writer object), the pieces meet in a
/// partial file named after the path and a caller's key (a resumable write's name,
/// `.NAME.gateway-resume-KEY.partial`), so every writer of one file finds the same one, on any
/// machine. Writing a range again overwrites it, so a retried or rerun worker is safe. The final
/// name only ever receives the whole file, by ``commitRanges(path:key:size:options:)``.
public protocol FileProviderRangedWrite: FileProviderReadWrite {
    /// Whether ranges can meet in partial files below `path` (a plan's destination folder, which
    /// may not exist yet): plans split files only where this says yes. A provider that always can
    /// says so (the default); one whose servers differ tries once (SFTP: whether the server
    /// writes into a file at an offset).
    func acceptsRangedWrites(below path: String) async throws -> Bool

    /// Writes exactly `length` bytes of `stream` at `offset` into the partial file of `path` under
    /// `key`, a file of `size` bytes once every range is in (the first writer makes it that size
    /// where the destination can, sparse where the file system allows; elsewhere each range extends
    /// it), and flushes them to stable storage before returning (or, where the server decides that,
    /// reads them back). Fails with
    /// ``FileProviderError/truncated(path:reason:)`` when the stream holds other than `length`
    /// bytes. `progress` is told every byte written.
    func writeRange(path: String, key: String, size: Int64, offset: Int64, length: Int64, from stream: ByteStream,
                    progress: TransferProgress?) async throws

    /// The size of the partial file of `path` under `key`, `nil` when there is none. Where the
    /// first writer gives it the planned size (Local, SFTP) that is the planned size; where a range
    /// only extends it (WebDAV), the end of the furthest range written so far.
    func rangedWriteSize(path: String, key: String) async throws -> Int64?

    /// Up to `length` bytes at `offset` of the partial file of `path` under `key` (fewer at its
    /// end): `gateway finalize` compares the bytes at both ends of every range with the source's
    /// before the commit, so a server that lost a range written at the same time as another never
    /// gets to name the file. The default reads the partial file by its name.
    func rangedWriteContents(path: String, key: String, offset: Int64, length: Int64) async throws -> Data

    /// Moves the partial file of `path` under `key` into place once every range is written: checks
    /// it holds `size` bytes, gives it `options.modificationDate`, calls `options.beforeReplacing`,
    /// and honours `options.overwrite`. Returns the file's attributes.
    func commitRanges(path: String, key: String, size: Int64, options: WriteOptions) async throws -> FileObject

    /// Removes the partial file of `path` under `key`, if there is one.
    func discardRanges(path: String, key: String) async throws
}

extension FileProviderRangedWrite {
    public func acceptsRangedWrites(below path: String) async throws -> Bool { true }

    /// A fresh hidden name for a provider's one-time probe of ranged writes (see
    /// ``acceptsRangedWrites(below:)``), in the folder nearest `path` that exists.
    public func rangedWriteProbePath(below path: String) async throws -> String {
        var folder = try RemotePath.normalize(path)
        while folder != "/", try await itemIfPresent(path: folder)?.isDirectory != true { folder = RemotePath.parent(of: folder) }
        return RemotePath.temporaryPath(for: try RemotePath.join(folder, "ranges"))
    }

    /// The normalized path a ``writeRange(path:key:size:offset:length:from:progress:)`` writes
    /// for, once checked: not the root, and the range inside `size` bytes.
    public func rangedWriteTarget(_ path: String, size: Int64, offset: Int64, length: Int64) throws -> String {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
        guard size >= 0, offset >= 0, length >= 0, offset <= size, length <= size - offset else {
            throw FileProviderError.invalidPath(path: remote, reason: "the range \(offset)+\(length) lies outside \(size) bytes")
        }
        return remote
    }

    public func rangedWriteContents(path: String, key: String, offset: Int64, length: Int64) async throws -> Data {
        try await contents(path: RemotePath.resumablePath(for: try RemotePath.normalize(path), key: key), offset: offset, length: length)
    }
}
