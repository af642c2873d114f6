public import Foundation

/// Changing a remote: folders, moves, copies, removal, uploads and downloads.
///
/// Long operations take an optional ``TransferProgress`` that they update as they go, and stop
/// promptly (throwing `CancellationError`) when their `Task` or the progress is cancelled.
public protocol FileProviderOperations: FileProviderBasic {
    /// Creates a folder. With `withIntermediateDirectories`, missing parents are created too and an
    /// existing folder is not an error.
    func createFolder(path: String, withIntermediateDirectories: Bool) async throws

    /// Moves or renames an item inside this remote.
    ///
    /// - Throws: an already-exists error when `destination` exists and `overwrite` is `false`.
    func moveItem(path: String, to destination: String, overwrite: Bool) async throws

    /// Copies a file or a folder tree inside this remote (server-side where the backend can).
    func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws

    /// Removes a file, or a folder; a non-empty folder only when `recursive` is `true`.
    func removeItem(path: String, recursive: Bool) async throws

    /// Uploads a local file to `path`, atomically (nothing appears under `path` unless complete).
    func uploadItem(from localURL: URL, to path: String, overwrite: Bool, progress: TransferProgress?) async throws

    /// Downloads `path` to a local file, atomically (a temporary file beside it, renamed when complete).
    func downloadItem(path: String, to localURL: URL, overwrite: Bool, progress: TransferProgress?) async throws

    /// Sets an item's modification time. Whether a remote can is known per remote (plain WebDAV
    /// cannot, Nextcloud can; FTP only with `MFMT`), so ``ProviderCapabilities/Features/setModificationDate``
    /// in ``FileProviderBasic/capabilities`` is the one place to ask; without it this throws
    /// ``FileProviderError/unsupported(operation:path:)``.
    func setModificationDate(_ date: Date, path: String) async throws
}

extension FileProviderOperations {
    public func setModificationDate(_ date: Date, path: String) async throws {
        throw FileProviderError.unsupported(operation: "setting modification times", path: path)
    }
}

extension FileProviderOperations where Self: FileProviderReadWrite {
    /// Uploads by streaming the local file through ``FileProviderReadWrite/write(path:from:options:)``.
    public func uploadItem(from localURL: URL, to path: String, overwrite: Bool, progress: TransferProgress?) async throws {
        let stream = try ByteStream.contentsOfFile(at: localURL)
        var options = WriteOptions(overwrite: overwrite, atomically: true, progress: progress)
        options.expectedSize = stream.expectedLength
        _ = try await write(path: path, from: stream, options: options)
    }

    /// Downloads by streaming ``FileProviderReadWrite/readStream(path:options:)`` into a local file.
    public func downloadItem(path: String, to localURL: URL, overwrite: Bool, progress: TransferProgress?) async throws {
        let stream = try await readStream(path: path, options: ReadOptions())
        try await LocalFileSink.write(stream, to: localURL, overwrite: overwrite, progress: progress)
    }
}
