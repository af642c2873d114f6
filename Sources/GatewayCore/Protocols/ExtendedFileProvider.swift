public import Foundation

/// Extras beyond plain files: thumbnails and content metadata (image size, media duration, EXIF),
/// where the backend or the provider can produce them.
///
/// Implementations arrive with a later issue; the protocol is declared now.
public protocol ExtendedFileProvider: FileProviderBasic {
    /// Whether a thumbnail can be made for this item (by type or extension).
    func thumbnailAvailable(path: String) -> Bool
    /// A thumbnail image (PNG or JPEG bytes) no larger than `maxDimension` pixels on its longer side,
    /// or `nil` when none can be made.
    func thumbnail(of path: String, maxDimension: Int) async throws -> Data?
    /// Content metadata as display-ready key/value pairs.
    func metadata(of path: String) async throws -> [String: String]
}
