// libFuzzer harness for the media readers: EXIF blocks (libexif and the field checks around it),
// audio tags (TagLib through the gateway's callback stream), image headers and thumbnails
// (libvips through the gateway's custom source), PDF document information (poppler), and video
// headers and poster frames (FFmpeg through the gateway's read callback). Files
// on a remote are written by anyone, so all of this is untrusted input. A reader may find
// nothing or report a damaged file (`CocoaError`); a crash, a trap, a hang or unbounded memory is
// a finding.
//
// The first byte picks the reader, the second the file name's extension (which picks the
// reader inside MediaReader); the rest is the file.
import Foundation
import GatewayCore
import GatewayMedia

private let audioNames = ["a.mp3", "a.flac", "a.ogg", "a.m4a", "a.opus", "a.wav", "a.aiff", "a.ape"]
private let imageNames = ["a.jpg", "a.png", "a.webp", "a.gif", "a.tiff", "a.heic", "a.svg"]
private let videoNames = ["a.mp4", "a.webm", "a.mkv", "a.avi", "a.mpg", "a.ogv", "a.flv", "a.wmv"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMediaMetadata(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count >= 2 else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let selector = bytes[0] % 7
    let variant = Int(bytes[1])
    let body = Data(bytes[2...])
    switch selector {
    case 0:
        var metadata = MediaMetadata()
        ExifReader.read(body, into: &metadata)
        check(metadata)
    case 1:
        check(try? MediaReader.metadata(of: DataMediaInput(body), name: audioNames[variant % audioNames.count]))
    case 2:
        check(try? MediaReader.metadata(of: DataMediaInput(body), name: imageNames[variant % imageNames.count]))
    case 3:
        // Small thumbnails of small images only: the fuzzer looks for crashes, not for slow decodes.
        let options = ThumbnailOptions(maxDimension: 16, format: variant & 1 == 0 ? .png : .jpeg, maxPixels: 250_000)
        if let thumbnail = try? MediaReader.thumbnail(of: DataMediaInput(body), name: imageNames[variant % imageNames.count], options: options) {
            if thumbnail.width > 16 || thumbnail.height > 16 || thumbnail.data.isEmpty { fatalError("thumbnail larger than asked: \(thumbnail.width)x\(thumbnail.height)") }
        }
    case 5:
        check(try? MediaReader.metadata(of: DataMediaInput(body), name: videoNames[variant % videoNames.count]))
    case 6:
        // A small poster of a small video only (as for images).
        let options = ThumbnailOptions(maxDimension: 16, format: variant & 1 == 0 ? .png : .jpeg, maxPixels: 250_000)
        if let thumbnail = try? MediaReader.thumbnail(of: DataMediaInput(body), name: videoNames[variant % videoNames.count], options: options) {
            if thumbnail.width > 16 || thumbnail.height > 16 || thumbnail.data.isEmpty { fatalError("poster larger than asked: \(thumbnail.width)x\(thumbnail.height)") }
        }
    default:
        check(try? MediaReader.metadata(of: DataMediaInput(body), name: "a.pdf"))
    }
    return 0
}

/// What any metadata must satisfy, whatever the file: values in their documented ranges.
private func check(_ metadata: MediaMetadata?) {
    guard let metadata else { return }
    if let orientation = metadata.orientation, !(1...8).contains(orientation) { fatalError("orientation \(orientation)") }
    if let latitude = metadata.gpsLatitude, !(-90...90).contains(latitude) { fatalError("latitude \(latitude)") }
    if let longitude = metadata.gpsLongitude, !(-180...180).contains(longitude) { fatalError("longitude \(longitude)") }
    if let rotation = metadata.other["rotation"], !["90", "180", "270"].contains(rotation) { fatalError("rotation \(rotation)") }
    if let width = metadata.width, width < 0 { fatalError("width \(width)") }
    if let height = metadata.height, height < 0 { fatalError("height \(height)") }
    if let duration = metadata.durationSeconds, !(duration >= 0) { fatalError("duration \(duration)") }
    for (key, value) in metadata.entries { _ = "\(key): \(value)" }
}
