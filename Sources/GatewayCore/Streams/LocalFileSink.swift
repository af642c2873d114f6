public import Foundation

/// Writes a ``ByteStream`` into a file on this machine the safe way: into a temporary file beside the
/// destination, renamed into place only when every byte arrived. Used by downloads of any provider.
public enum LocalFileSink {
    /// Streams `stream` into `url`.
    ///
    /// - Throws: an already-exists error when `url` exists and `overwrite` is `false`;
    ///   ``FileProviderError/truncated(path:reason:)`` when fewer bytes arrived than announced; any
    ///   stream or file error. In every failure case the temporary file is removed and `url` untouched.
    public static func write(_ stream: ByteStream, to url: URL, overwrite: Bool, progress: TransferProgress?) async throws {
        let manager = FileManager.default
        if !overwrite, manager.fileExists(atPath: url.path) {
            throw CocoaError.posix(EEXIST, path: url.path, writing: true)
        }
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(RemotePath.temporaryName(for: url.lastPathComponent))
        guard manager.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError.posix(errno == 0 ? EACCES : errno, path: url.path, writing: true)
        }
        var committed = false
        defer { if !committed { try? manager.removeItem(at: temporary) } }
        let handle = try FileHandle(forWritingTo: temporary)
        var written: Int64 = 0
        do {
            for try await chunk in stream {
                try progress.checkCancellation()
                try handle.write(contentsOf: chunk)
                written += Int64(chunk.count)
                progress?.addBytes(Int64(chunk.count))
            }
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        if let expected = stream.expectedLength, expected != written {
            throw FileProviderError.truncated(path: url.path, reason: "received \(written) of \(expected) bytes")
        }
        if overwrite {
            if rename(temporary.path, url.path) != 0 { throw CocoaError.posix(errno, path: url.path, writing: true) }
        } else {
            // link() fails with EEXIST atomically if someone created the file meanwhile.
            if link(temporary.path, url.path) != 0 { throw CocoaError.posix(errno, path: url.path, writing: true) }
            unlink(temporary.path)
        }
        committed = true
    }
}
