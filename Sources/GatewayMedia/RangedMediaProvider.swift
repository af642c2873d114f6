#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore

/// ``ExtendedFileProvider`` for any provider with ranged reads, implemented once: a backend adopts
/// it with one line (`extension MyProvider: RangedMediaProvider {}`) and gets thumbnails and
/// metadata made by libvips, libexif, TagLib and poppler from its own `readStream`.
///
/// Reads fetch only the ranges the readers look at, into a sparse cache file (see
/// ``RemoteMediaInput``); a provider whose files are local overrides
/// ``openMediaInput(for:fetchBudget:)`` to hand over an open descriptor instead.
public protocol RangedMediaProvider: ExtendedFileProvider, FileProviderReadWrite {
    /// Opens `item` (a file) for the media readers. `fetchBudget` caps the bytes a remote input
    /// fetches. The default reads through ``FileProviderReadWrite/readStream(path:options:)``, each
    /// range conditional on the item's version tag, so a file replaced meanwhile fails instead of
    /// mixing two versions.
    func openMediaInput(for item: FileObject, fetchBudget: Int64) async throws -> any MediaInput
}

extension RangedMediaProvider {
    public func openMediaInput(for item: FileObject, fetchBudget: Int64) async throws -> any MediaInput {
        let path = item.path
        let version = item.versionTag
        return try RemoteMediaInput(path: path, size: item.size ?? 0, fetchBudget: fetchBudget) { [self] offset, length in
            var options = ReadOptions(offset: offset, length: length, ifVersion: version, chunkSize: 256 << 10)
            options.bufferSize = Int(min(length, 4 << 20))
            return try await readStream(path: path, options: options)
        }
    }

    public func thumbnailAvailable(path: String) -> Bool { MediaType(path: path).hasThumbnail }

    public func thumbnail(of path: String, options: ThumbnailOptions) async throws -> Thumbnail? {
        guard thumbnailAvailable(path: path) else { return nil }
        let item = try await mediaFile(path)
        let input = try await openMediaInput(for: item, fetchBudget: .max)
        return try await MediaThread.run(onCancel: { (input as? RemoteMediaInput)?.cancel() }) {
            try MediaReader.thumbnail(of: input, name: item.path, options: options)
        }
    }

    public func metadata(of path: String) async throws -> MediaMetadata {
        try await readMetadata(try await mediaFile(path))
    }

    public func metadata(of item: FileObject) async throws -> MediaMetadata {
        guard !item.isDirectory else { throw CocoaError.posix(EISDIR, path: item.path, remote: name) }
        // A listing without sizes (some servers leave them out): ask the item itself.
        return try await readMetadata(item.size == nil ? try await mediaFile(item.path) : item)
    }

    private func readMetadata(_ item: FileObject) async throws -> MediaMetadata {
        guard MediaType(path: item.path) != .other, (item.size ?? 0) > 0 else {
            return try MediaReader.metadata(of: EmptyMediaInput(size: item.size ?? 0), name: item.path)
        }
        let input = try await openMediaInput(for: item, fetchBudget: MediaReader.metadataFetchBudget)
        return try await MediaThread.run(onCancel: { (input as? RemoteMediaInput)?.cancel() }) {
            try MediaReader.metadata(of: input, name: item.path)
        }
    }

    /// The item at `path`, which must be a file.
    private func mediaFile(_ path: String) async throws -> FileObject {
        var item = try await attributesOfItem(path: path)
        guard !item.isDirectory else { throw CocoaError.posix(EISDIR, path: path, remote: name) }
        if item.path.isEmpty { item.path = path }
        return item
    }
}

/// An input nothing is read from: metadata of a type no reader knows needs only the size.
private final class EmptyMediaInput: MediaInput {
    let size: Int64
    init(size: Int64) { self.size = size }
    func read(at offset: Int64, into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int { 0 }
    func completeDescriptor() throws -> Int32 { throw CocoaError(.fileReadUnknown) }
    var isComplete: Bool { false }
    var bytesFetched: Int64 { 0 }
}
