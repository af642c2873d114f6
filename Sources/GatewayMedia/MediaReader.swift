import Foundation
public import GatewayCore

/// The media readers behind ``RangedMediaProvider``, for any ``MediaInput``: which library reads
/// which type (libvips images and PDF thumbnails, poppler PDF metadata, TagLib audio, FFmpeg
/// video), and what a damaged file gives. Synchronous and blocking (a remote input waits for its
/// ranged reads): call on a thread that may block, such as ``MediaThread/run(onCancel:_:)``'s,
/// never on the Swift concurrency pool.
public enum MediaReader {
    /// The most bytes a metadata read fetches from a remote image or audio file: enough for any
    /// header and tag, and a hostile file's claims cannot make it download more.
    public static let metadataFetchBudget: Int64 = 32 << 20

    /// A thumbnail of the file named `name`, or `nil` when its type has none.
    public static func thumbnail(of input: any MediaInput, name: String, options: ThumbnailOptions) throws -> Thumbnail? {
        switch MediaType(path: name) {
        case .image:
            guard let thumbnail = try VipsImageReader.thumbnail(of: input, path: name, options: options) else {
                throw CocoaError.described(.fileReadCorruptFile, path: name, reason: "not an image libvips can read")
            }
            return thumbnail
        case .pdf:
            guard let thumbnail = try VipsImageReader.thumbnail(of: input, path: name, options: options) else {
                throw CocoaError.described(.fileReadCorruptFile, path: name, reason: "not a PDF document")
            }
            return thumbnail
        case .video:
            guard let thumbnail = try VideoReader.thumbnail(of: input, path: name, options: options) else {
                throw CocoaError.described(.fileReadCorruptFile, path: name, reason: "not a video FFmpeg can read")
            }
            return thumbnail
        case .audio, .other:
            return nil
        }
    }

    /// The metadata of the file named `name`. A damaged file of a known type, or one whose reading
    /// would pass the input's fetch budget, gives the basic fields and `other["error"]`; only the
    /// input's own failures (network, cancellation) throw.
    public static func metadata(of input: any MediaInput, name: String) throws -> MediaMetadata {
        let fileExtension = MediaType.fileExtension(of: name)
        var metadata = MediaMetadata(format: fileExtension.isEmpty ? "unknown" : fileExtension, size: input.size)
        guard input.size > 0 else { return metadata }
        do {
            switch MediaType(path: name) {
            case .image:
                guard let header = try VipsImageReader.header(of: input, path: name) else {
                    metadata.other["error"] = "not an image libvips can read"
                    break
                }
                metadata.format = header.format
                metadata.width = header.width
                metadata.height = header.height
                metadata.pages = header.pages
                metadata.other.merge(header.other) { _, new in new }
                if let exif = header.exif { ExifReader.read(exif, into: &metadata) }
                if metadata.orientation == nil { metadata.orientation = header.orientation }
            case .pdf:
                if try !PDFReader.read(input, into: &metadata), metadata.other["error"] == nil {
                    metadata.other["error"] = "not a PDF document poppler can open"
                }
            case .audio:
                if try !AudioReader.read(input, name: name, into: &metadata) {
                    metadata.other["error"] = "not an audio file TagLib can read"
                }
            case .video:
                // An MP4 (or Ogg, Matroska) file with sound only is audio: TagLib reads its tags.
                if try !VideoReader.read(input, name: name, into: &metadata), try !AudioReader.read(input, name: name, into: &metadata) {
                    metadata.other["error"] = "not a video FFmpeg can read"
                }
            case .other:
                break
            }
        } catch let error as CocoaError where error.code == .fileReadCorruptFile || error.userInfo[RemoteMediaInput.budgetExceededKey] != nil {
            metadata.other["error"] = (error.userInfo[NSLocalizedFailureReasonErrorKey] as? String) ?? "damaged file"
        }
        return metadata
    }
}
