import CTagLibStream
import Foundation
import GatewayCore

/// Audio tags and properties through TagLib, reading the file through a ``MediaInput`` so that a
/// remote file costs only what TagLib looks at: the ID3v2 tag and first frame at the head, the
/// ID3v1/APE tags at the tail, the MP4 atoms it seeks to.
enum AudioReader {
    /// Fills the audio fields of `metadata`. Returns `false` when TagLib does not recognise the
    /// content; throws only the input's own errors (network, cancellation).
    static func read(_ input: any MediaInput, name: String, into metadata: inout MediaMetadata) throws -> Bool {
        let context = MediaInputCallbacks(input: input)
        var info = gw_taglib_info()
        let recognised = withExtendedLifetime(context) {
            name.withCString { cName in
                var io = gw_taglib_io(context: Unmanaged.passUnretained(context).toOpaque(), read: { context, offset, buffer, length in
                    guard let context, let buffer else { return -1 }
                    return Unmanaged<MediaInputCallbacks>.fromOpaque(context).takeUnretainedValue().read(offset, buffer, length)
                }, size: input.size, name: cName)
                return gw_taglib_read(&io, &info) == 0
            }
        }
        defer { gw_taglib_info_free(&info) }
        if let error = context.error { throw error }
        guard recognised else { return false }
        func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
            guard let pointer else { return nil }
            let value = String(cString: pointer).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        metadata.format = text(info.format) ?? metadata.format
        metadata.title = text(info.title)
        metadata.artist = text(info.artist)
        metadata.album = text(info.album)
        metadata.genre = text(info.genre)
        if info.year > 0 { metadata.year = Int(info.year) }
        if info.track > 0 { metadata.track = Int(info.track) }
        if info.has_audio_properties != 0 {
            if info.length_ms > 0 { metadata.durationSeconds = Double(info.length_ms) / 1000 }
            if info.bitrate_kbps > 0 { metadata.bitrateKbps = Int(info.bitrate_kbps) }
            if info.sample_rate > 0 { metadata.sampleRate = Int(info.sample_rate) }
            if info.channels > 0 { metadata.channels = Int(info.channels) }
        }
        return true
    }
}
