/// Writes that survive an interruption: the bytes that arrived are kept in a partial file named
/// after a caller's key, and a later write under the same key continues after them instead of
/// starting over. The copy engine uses it to resume interrupted downloads (with a ranged read of
/// an unchanged source), within a run's retries and across runs.
///
/// The partial file is hidden and named as partial, so it never looks like the finished file; the
/// final name only ever receives the complete file, atomically, as with ``WriteOptions/atomically``.
public protocol FileProviderResumableWrite: FileProviderReadWrite {
    /// How many bytes an interrupted resumable write of `path` under `key` left behind (0: none).
    func resumableWriteLength(path: String, key: String) async throws -> Int64

    /// Writes `stream` as the bytes from `offset` on of the file at `path`, after the first `offset`
    /// bytes that an earlier write under `key` stored (`offset` 0 starts afresh), then moves the
    /// whole file into place. `options.expectedSize` is the size of the whole file.
    ///
    /// When the write fails with a transient error (a dropped connection, a time-out) the partial
    /// file stays for the next attempt; after other failures and on cancellation it is removed.
    func resumableWrite(path: String, key: String, offset: Int64, from stream: ByteStream, options: WriteOptions) async throws -> FileObject
}

extension FailureKind {
    /// Whether a resumable write that failed this way keeps its partial file for the next attempt:
    /// after transient failures (a dropped connection, a time-out), but not after bytes that did
    /// not match their hash, and never after cancellation or permanent errors.
    public var keepsInterruptedWrite: Bool { isTransient && self != .checksumMismatch }
}
