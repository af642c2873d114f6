public import Foundation

/// Files written in pieces at any offsets, by several writers at once: what a download in several
/// ranged streams needs (`gateway copy --multi-thread-streams`).
///
/// The file is assembled under a temporary name and moved into place by
/// ``PositionalFileWriter/commit()`` once complete, like an atomic write.
public protocol FileProviderPositionalWrite: FileProviderReadWrite {
    /// Opens a new file of exactly `size` bytes at `path` (honouring `options.overwrite` and
    /// `options.modificationDate`), to be filled with ``PositionalFileWriter/write(_:at:)``.
    func openPositionalWrite(path: String, size: Int64, options: WriteOptions) async throws -> any PositionalFileWriter
}

/// A file being assembled from pieces. Safe to use from several tasks at once, each writing its
/// own byte range.
public protocol PositionalFileWriter: Sendable {
    /// Stores `data` at `offset`.
    func write(_ data: Data, at offset: Int64) throws
    /// Moves the complete file into place and returns its attributes.
    func commit() async throws -> FileObject
    /// Removes the unfinished file. Safe to call more than once, and after a failed commit.
    func abort()
}
