#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMediaLibraries
import Foundation
import GatewayCore
import Synchronization

/// Images through libvips: the header (size, format, pages, the EXIF block) and thumbnails with
/// shrink-on-load, read from a ``MediaInput`` through a custom vips source.
///
/// Only the loaders below are used (others, libvips's "untrusted" ones among them, are refused), an
/// image whose header claims more than ``ThumbnailOptions/maxPixels`` is refused before decoding,
/// and libvips's operation cache is off, so memory stays bounded whatever the file says.
enum VipsImageReader {
    /// The loaders used, by libvips class name, and the format each reads.
    static let loaders: [String: String] = [
        "VipsForeignLoadJpegSource": "jpeg", "VipsForeignLoadPngSource": "png", "VipsForeignLoadWebpSource": "webp",
        "VipsForeignLoadNsgifSource": "gif", "VipsForeignLoadTiffSource": "tiff", "VipsForeignLoadHeifSource": "heif",
        "VipsForeignLoadSvgSource": "svg", "VipsForeignLoadPdfSource": "pdf",
    ]

    /// libvips, loaded (on first use: it is not linked) and started once per process, with its
    /// operation cache off and its "untrusted" loaders blocked but for SVG and PDF.
    static let ready: Result<Void, MediaLibraryError> = {
        var message: UnsafePointer<CChar>?
        guard gw_media_load_vips(&message) == 0 else {
            return .failure(MediaLibraryError(message: "thumbnails and image metadata need libvips: \(message.map { String(cString: $0) } ?? "it could not start")"))
        }
        return .success(())
    }()

    /// What the header says.
    struct Header {
        var format: String
        var width: Int
        var height: Int
        var pages: Int?
        /// The orientation libvips found outside EXIF (a TIFF tag, HEIF's rotation), 1 to 8.
        var orientation: Int?
        var exif: Data?
        var other: [String: String] = [:]
    }

    /// The loaders that read a whole source into memory unless it can be mapped (libvips 8.14's
    /// WebP and GIF loaders, librsvg, poppler): their remote files are fetched whole into the
    /// input's cache file first, which libvips then maps.
    static let mappingLoaders: Set<String> = [
        "VipsForeignLoadWebpSource", "VipsForeignLoadNsgifSource", "VipsForeignLoadSvgSource", "VipsForeignLoadPdfSource",
    ]

    /// A source at the start of the input and the allowed loader that recognises it, or `nil`.
    static func open(_ input: any MediaInput, path: String) throws -> (SourceBridge, String)? {
        let source = try SourceBridge(input: input)
        guard let loader = try source.loader() else {
            source.release()
            return nil
        }
        if loader == "VipsForeignLoadPngSource" {
            do { try PNGChunkGuard.check(input, path: path) } catch {
                source.release()
                throw error
            }
        }
        guard mappingLoaders.contains(loader), !input.isComplete else { return (source, loader) }
        source.release()
        _ = try input.completeDescriptor()
        return (try SourceBridge(input: input), loader)
    }

    /// Reads the header only. `nil` when no allowed loader recognises the content.
    static func header(of input: any MediaInput, path: String) throws -> Header? {
        try ready.get()
        guard let (source, loader) = try open(input, path: path) else { return nil }
        defer { source.release() }
        guard let image = gw_vips_header_from_source(source.source) else {
            throw source.failure(path: path, operation: "read the image header")
        }
        defer { unref(image) }
        var header = Header(format: loaders[loader] ?? loader,
                            width: Int(gw_vips_image_get_width(image)), height: Int(gw_vips_image_get_height(image)))
        if gw_vips_image_has_field(image, "n-pages") != 0 {
            var pages: Int32 = 0
            if gw_vips_image_get_int(image, "n-pages", &pages) == 0, pages > 0 { header.pages = Int(pages) }
        }
        if gw_vips_image_has_field(image, "orientation") != 0 {
            var orientation: Int32 = 0
            if gw_vips_image_get_int(image, "orientation", &orientation) == 0, (1...8).contains(orientation) { header.orientation = Int(orientation) }
        }
        if gw_vips_image_has_field(image, "exif-data") != 0 {
            var bytes: UnsafeRawPointer?
            var length = 0
            if gw_vips_image_get_blob(image, "exif-data", &bytes, &length) == 0, let bytes, length > 0, length <= ExifReader.maximumSize {
                header.exif = Data(bytes: bytes, count: length)
            }
        }
        if header.format == "heif", let compression = string(image, "heif-compression"), compression == "av1" {
            header.format = "avif"
        }
        header.other["bands"] = String(gw_vips_image_get_bands(image))
        if gw_vips_image_hasalpha(image) != 0 { header.other["alpha"] = "true" }
        return header
    }

    /// A thumbnail, or `nil` when no allowed loader recognises the content.
    static func thumbnail(of input: any MediaInput, path: String, options: ThumbnailOptions) throws -> Thumbnail? {
        try ready.get()
        let size = Int32(clamping: max(1, options.maxDimension))
        // The header first (a separate source: a fresh position), to refuse a bomb before decoding.
        guard let header = try header(of: input, path: path) else { return nil }
        let pixels = Int64(header.width).multipliedReportingOverflow(by: Int64(header.height))
        if pixels.overflow || pixels.partialValue > options.maxPixels {
            throw CocoaError.described(.fileReadTooLarge, path: path, reason:
                "the image is \(header.width) x \(header.height) pixels, more than the \(options.maxPixels) a thumbnail may decode")
        }
        guard let (source, _) = try open(input, path: path) else { return nil }
        defer { source.release() }
        var thumbnail: OpaquePointer?
        // Truncated or damaged data fails instead of giving a grey or garbled image.
        guard gw_vips_thumbnail_source(source.source, &thumbnail, size, size, "fail_on=warning") == 0, var image = thumbnail else {
            throw source.failure(path: path, operation: "make a thumbnail")
        }
        defer { unref(image) }
        if options.format == .jpeg, gw_vips_image_hasalpha(image) != 0 {
            var flat: OpaquePointer?
            guard gw_vips_flatten_white(image, &flat) == 0, let flat else {
                throw source.failure(path: path, operation: "flatten the thumbnail")
            }
            unref(image)
            image = flat
        }
        guard let thumbnail = encode(image, options: options) else { throw source.failure(path: path, operation: "make a thumbnail") }
        return thumbnail
    }

    /// `image` saved as the PNG or JPEG `options` asks for (metadata stripped), or `nil` when
    /// libvips fails (its error is left for ``takeError()``).
    static func encode(_ image: OpaquePointer, options: ThumbnailOptions) -> Thumbnail? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let saved = options.format == .png
            ? gw_vips_pngsave_buffer(image, &buffer, &length)
            : gw_vips_jpegsave_buffer(image, &buffer, &length, Int32(min(100, max(1, options.jpegQuality))))
        guard saved == 0, let buffer else { return nil }
        defer { gw_g_free(buffer) }
        return Thumbnail(data: Data(bytes: buffer, count: length), format: options.format,
                         width: Int(gw_vips_image_get_width(image)), height: Int(gw_vips_image_get_height(image)))
    }

    private static func string(_ image: OpaquePointer, _ field: String) -> String? {
        guard gw_vips_image_has_field(image, field) != 0 else { return nil }
        var value: UnsafePointer<CChar>?
        guard gw_vips_image_get_string(image, field, &value) == 0, let value else { return nil }
        return String(cString: value)
    }

    /// libvips's error text since the last call (and clears it).
    static func takeError() -> String {
        guard let copy = gw_vips_take_error() else { return "unknown libvips error" }
        defer { gw_g_free(copy) }
        let text = String(cString: copy).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.split(separator: "\n").last.map(String.init) ?? "unknown libvips error"
    }
}

/// A libvips source reading from a ``MediaInput``: a descriptor source for a complete local file
/// (libvips maps it), or a custom source whose reads call back into the input.
final class SourceBridge: @unchecked Sendable {
    private(set) var source: OpaquePointer!
    private let input: any MediaInput
    private let state = Mutex(State())

    private struct State {
        var position: Int64 = 0
        var error: (any Error)?
    }

    init(input: any MediaInput) throws {
        self.input = input
        if input.isComplete {
            // A complete local file: libvips reads (or maps) it itself. Each source starts at the
            // beginning (libvips's copy of the descriptor shares its position).
            let descriptor = try input.completeDescriptor()
            lseek(descriptor, 0, SEEK_SET)
            source = gw_vips_source_new_from_descriptor(descriptor)
        } else {
            // The source holds the bridge (released when the source is finalized), so a callback
            // can never reach a bridge that is gone.
            let context = Unmanaged.passRetained(self).toOpaque()
            source = gw_vips_source_new_custom(context, { _, buffer, length, context in
                guard let context, let buffer else { return -1 }
                return Int64(Unmanaged<SourceBridge>.fromOpaque(context).takeUnretainedValue().read(buffer, Int64(length)))
            }, { _, offset, whence, context in
                guard let context else { return -1 }
                return Int64(Unmanaged<SourceBridge>.fromOpaque(context).takeUnretainedValue().seek(Int64(offset), whence))
            }, { context, _ in
                guard let context else { return }
                Unmanaged<SourceBridge>.fromOpaque(context).release()
            })
            if source == nil { Unmanaged<SourceBridge>.fromOpaque(context).release() }
        }
        guard source != nil else {
            throw CocoaError.described(.fileReadUnknown, path: "", reason: "libvips could not make a source: \(VipsImageReader.takeError())")
        }
    }

    /// Drops this reference to the source (images made from it hold their own).
    func release() {
        unref(source)
        source = nil
    }

    /// The allowed loader that recognises the content, or `nil`.
    func loader() throws -> String? {
        guard let name = gw_vips_foreign_find_load_source(source) else {
            if let error = state.withLock({ $0.error }) { throw error }
            _ = VipsImageReader.takeError()
            return nil
        }
        let loader = String(cString: name)
        return VipsImageReader.loaders[loader] == nil ? nil : loader
    }

    /// The error to throw after libvips failed: the input's own (network, cancellation) when a read
    /// failed, else libvips's message as a damaged file.
    func failure(path: String, operation: String) -> any Error {
        let message = VipsImageReader.takeError()
        if let error = state.withLock({ $0.error }) { return error }
        return CocoaError.described(.fileReadCorruptFile, path: path, reason: "could not \(operation): \(message)")
    }

    private func read(_ buffer: UnsafeMutableRawPointer, _ length: Int64) -> Int64 {
        let position = state.withLock { $0.position }
        do {
            let got = try input.read(at: position, into: buffer, count: Int(clamping: max(0, length)))
            state.withLock { $0.position = position + Int64(got) }
            return Int64(got)
        } catch {
            state.withLock { $0.error = error }
            return -1
        }
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        state.withLock { state in
            let base: Int64
            switch whence {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = state.position
            case SEEK_END: base = input.size
            default: return -1
            }
            let (target, overflow) = base.addingReportingOverflow(offset)
            guard !overflow, target >= 0 else { return -1 }
            state.position = target
            return target
        }
    }
}

/// Drops a reference to a libvips image or source (`nil` is allowed).
private func unref(_ object: OpaquePointer?) {
    gw_vips_unref(UnsafeMutableRawPointer(object))
}

/// A media library that could not start (libvips's initialisation failed).
struct MediaLibraryError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
