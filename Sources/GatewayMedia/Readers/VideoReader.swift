import CMediaLibraries
import CVideoFrames
import Foundation
import GatewayCore

/// Videos through FFmpeg: the header (size, duration, codecs, rotation) and a poster frame, read
/// from a ``MediaInput`` through FFmpeg's own I/O callbacks, so a remote file costs what FFmpeg
/// looks at (the container's index and the packets up to the frame), not the whole file.
///
/// Only common containers and codecs are allowed (FFmpeg's many rarely used demuxers and decoders
/// are refused), a stream of more than ``ThumbnailOptions/maxPixels`` is refused before decoding,
/// the decoder runs on one thread, and at most ``maxPackets`` packets are read looking for the
/// frame. The poster is a frame a tenth of the way in (at most ten seconds), turned as the video's
/// display matrix says, and made into PNG or JPEG by libvips.
enum VideoReader {
    /// The most packets read after the seek before giving up on a frame.
    static let maxPackets: Int32 = 2000

    /// FFmpeg, loaded on first use (it is not linked), its logging silenced.
    static let ready: Result<Void, MediaLibraryError> = {
        var message: UnsafePointer<CChar>?
        guard gw_video_load(&message) == 0 else {
            return .failure(MediaLibraryError(message: "video posters and metadata need FFmpeg: \(message.map { String(cString: $0) } ?? "it could not start")"))
        }
        return .success(())
    }()

    /// Fills the video fields of `metadata`. Returns `false` when the content is not a video of an
    /// allowed container (or has no video stream); throws the input's own errors, and a damaged
    /// file as `fileReadCorruptFile`.
    static func read(_ input: any MediaInput, name: String, into metadata: inout MediaMetadata) throws -> Bool {
        guard let (info, _) = try run(input, path: name, poster: nil) else { return false }
        metadata.width = Int(info.width)
        metadata.height = Int(info.height)
        if info.duration_ms >= 0 { metadata.durationSeconds = Double(info.duration_ms) / 1000 }
        if info.bit_rate > 0 { metadata.bitrateKbps = Int(info.bit_rate / 1000) }
        if info.sample_rate > 0 { metadata.sampleRate = Int(info.sample_rate) }
        if info.channels > 0 { metadata.channels = Int(info.channels) }
        metadata.other["video_codec"] = text(info.video_codec)
        metadata.other["audio_codec"] = text(info.audio_codec)
        if info.frame_rate > 0 { metadata.other["frame_rate"] = String(format: "%.3f", info.frame_rate) }
        if info.rotation != 0 { metadata.other["rotation"] = String(info.rotation) }
        return true
    }

    /// A poster thumbnail, or `nil` when the content is not a video.
    static func thumbnail(of input: any MediaInput, path: String, options: ThumbnailOptions) throws -> Thumbnail? {
        try VipsImageReader.ready.get()
        guard let (info, frame) = try run(input, path: path, poster: options), let frame else { return nil }
        guard var image = frame.pixels.withUnsafeBytes({ gw_vips_image_from_rgb($0.baseAddress, $0.count, frame.width, frame.height) }) else {
            throw CocoaError.described(.fileReadUnknown, path: path, reason: "libvips could not take the frame: \(VipsImageReader.takeError())")
        }
        defer { gw_vips_unref(UnsafeMutableRawPointer(image)) }
        if info.rotation != 0 {
            var turned: OpaquePointer?
            guard gw_vips_rotate(image, &turned, info.rotation / 90) == 0, let turned else {
                throw CocoaError.described(.fileReadUnknown, path: path, reason: "could not turn the poster: \(VipsImageReader.takeError())")
            }
            gw_vips_unref(UnsafeMutableRawPointer(image))
            image = turned
        }
        guard let thumbnail = VipsImageReader.encode(image, options: options) else {
            throw CocoaError.described(.fileReadUnknown, path: path, reason: "could not encode the poster: \(VipsImageReader.takeError())")
        }
        return thumbnail
    }

    /// A decoded poster: packed RGB, `width` x `height`.
    private struct Frame {
        var pixels: Data
        var width: Int32
        var height: Int32
    }

    /// Reads the header, and the poster frame when `poster` is given. `nil` when not a video.
    private static func run(_ input: any MediaInput, path: String, poster: ThumbnailOptions?) throws -> (gw_video_info, Frame?)? {
        try ready.get()
        let callbacks = MediaInputCallbacks(input: input)
        var info = gw_video_info()
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let status = withExtendedLifetime(callbacks) {
            withUnsafeMutablePointer(to: &pixels) { frame in
                gw_video_read(Unmanaged.passUnretained(callbacks).toOpaque(), { context, offset, buffer, length in
                    guard let context, let buffer else { return -1 }
                    return Unmanaged<MediaInputCallbacks>.fromOpaque(context).takeUnretainedValue().read(offset, buffer, length)
                }, input.size, &info, Int32(clamping: max(1, poster?.maxDimension ?? 1)), poster?.maxPixels ?? 0, maxPackets,
                poster == nil ? nil : frame, &width, &height, &message, message.count)
            }
        }
        defer { gw_video_free(pixels) }
        switch Int(status) {
        case Int(GW_VIDEO_OK):
            guard poster != nil else { return (info, nil) }
            guard let pixels, width > 0, height > 0 else { return nil }
            return (info, Frame(pixels: Data(bytes: pixels, count: Int(width) * Int(height) * 3), width: width, height: height))
        case Int(GW_VIDEO_NOT_VIDEO):
            return nil
        case Int(GW_VIDEO_INPUT_FAILED):
            throw callbacks.error ?? CocoaError.described(.fileReadUnknown, path: path, reason: "the file could not be read")
        default:
            if let error = callbacks.error { throw error }
            throw CocoaError.described(.fileReadCorruptFile, path: path,
                                       reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// The text of a fixed C `char` array (a tuple in Swift) up to its NUL; `nil` when empty.
    private static func text<CharArray>(_ field: CharArray) -> String? {
        let value = withUnsafeBytes(of: field) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return value.isEmpty ? nil : value
    }
}
