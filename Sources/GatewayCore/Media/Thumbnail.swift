public import Foundation

/// How to make a thumbnail.
public struct ThumbnailOptions: Sendable, Hashable {
    /// The image format of a thumbnail.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// PNG (keeps transparency).
        case png
        /// JPEG (transparency flattened onto white).
        case jpeg
    }

    /// The largest size in pixels of the thumbnail's longer side (at least 1). Images smaller than
    /// this are not enlarged.
    public var maxDimension: Int
    /// PNG or JPEG.
    public var format: Format
    /// JPEG quality, 1 to 100.
    public var jpegQuality: Int
    /// Images with more pixels than this (width times height, from the file's header) are refused
    /// with `CocoaError(.fileReadTooLarge)` before anything is decoded: a decompression bomb costs
    /// a header read. 256 megapixels by default (a 24-megapixel photo is well below).
    public var maxPixels: Int64

    /// Creates options; the defaults make a PNG of at most 256 pixels.
    public init(maxDimension: Int = 256, format: Format = .png, jpegQuality: Int = 85, maxPixels: Int64 = 256_000_000) {
        self.maxDimension = maxDimension
        self.format = format
        self.jpegQuality = jpegQuality
        self.maxPixels = maxPixels
    }
}

/// A thumbnail image, encoded.
public struct Thumbnail: Sendable, Hashable {
    /// PNG or JPEG bytes.
    public var data: Data
    /// The encoding of ``data``.
    public var format: ThumbnailOptions.Format
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a thumbnail description.
    public init(data: Data, format: ThumbnailOptions.Format, width: Int, height: Int) {
        self.data = data
        self.format = format
        self.width = width
        self.height = height
    }
}
