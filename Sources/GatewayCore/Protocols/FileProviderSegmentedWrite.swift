/// Files uploaded as several byte ranges at once, each streamed on its own connection: what a large
/// upload over `gateway copy --multi-thread-streams` needs where one connection is slower than the
/// server (Apache mod_dav, for one, takes a single `PUT` body in 2 KB writes on one thread).
///
/// Whether a server takes ranges is often known only by trying, so
/// ``openSegmentedWrite(path:size:options:)`` may answer `nil`, and the caller then writes the file
/// as one stream. Like an atomic write, the file is assembled under a temporary name and moved into
/// place by ``SegmentedFileWriter/commit()`` once the server holds every byte.
public protocol FileProviderSegmentedWrite: FileProviderReadWrite {
    /// Opens a new file of exactly `size` bytes at `path` (honouring `options.overwrite`), to be
    /// filled with ``SegmentedFileWriter/write(offset:length:from:)``, or returns `nil` when this
    /// server (or this kind of write) cannot take byte ranges. Nothing is left behind for `nil`.
    func openSegmentedWrite(path: String, size: Int64, options: WriteOptions) async throws -> (any SegmentedFileWriter)?
}

/// A remote file being assembled from byte ranges. Safe to use from several tasks at once, each
/// sending its own range.
public protocol SegmentedFileWriter: Sendable {
    /// Sends exactly `length` bytes from `stream` to `offset..<offset+length`. Fails with
    /// ``FileProviderError/truncated(path:reason:)`` when the stream ends early or runs over.
    func write(offset: Int64, length: Int64, from stream: ByteStream) async throws
    /// Checks that the server holds the whole file, moves it into place and returns its attributes.
    func commit() async throws -> FileObject
    /// Removes the unfinished file. Safe to call more than once, and after a failed commit.
    func abort() async
}
