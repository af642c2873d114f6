public import Foundation

/// Extras beyond plain files: thumbnails and content metadata (image size, EXIF, audio tags, PDF
/// pages), made from the file's bytes without downloading more of it than the format needs.
///
/// The built-in providers (Local, WebDAV, FTP) adopt it through one shared implementation over
/// their ranged reads (`RangedMediaProvider` in the `StorageGateway` module); discover it with
/// `as? any ExtendedFileProvider`.
public protocol ExtendedFileProvider: FileProviderBasic {
    /// Whether a thumbnail can be made for this item, judged from its name alone (no I/O): images
    /// (JPEG, PNG, WebP, GIF, TIFF, HEIC/AVIF, SVG) and PDF documents. See ``MediaType``.
    func thumbnailAvailable(path: String) -> Bool

    /// A thumbnail no larger than `options.maxDimension` pixels on its longer side, EXIF
    /// orientation applied, or `nil` when this type has none (``thumbnailAvailable(path:)`` is
    /// false). A file whose content is not what its name says (an MP3 named `.jpg`) is a damaged
    /// file.
    ///
    /// - Throws: `CocoaError(.fileReadCorruptFile)` for a damaged or truncated file,
    ///   `CocoaError(.fileReadTooLarge)` for an image above `options.maxPixels`, and the provider's
    ///   own errors (not found, a folder).
    func thumbnail(of path: String, options: ThumbnailOptions) async throws -> Thumbnail?

    /// Content metadata. Unknown types give the basic ``MediaMetadata/format`` and
    /// ``MediaMetadata/size`` only.
    ///
    /// - Throws: the provider's own errors (not found, a folder). A damaged file of a known type
    ///   gives what could be read, not an error.
    func metadata(of path: String) async throws -> MediaMetadata

    /// Content metadata of an item a listing just described, without describing it again (a
    /// folder's files cost one request each instead of two). The default looks the path up.
    func metadata(of item: FileObject) async throws -> MediaMetadata
}

extension ExtendedFileProvider {
    public func metadata(of item: FileObject) async throws -> MediaMetadata {
        try await metadata(of: item.path)
    }

    /// A PNG thumbnail no larger than `maxDimension` pixels on its longer side, or `nil` when this
    /// type has none.
    public func thumbnail(of path: String, maxDimension: Int) async throws -> Data? {
        try await thumbnail(of: path, options: ThumbnailOptions(maxDimension: maxDimension))?.data
    }
}
