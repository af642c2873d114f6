import Foundation

/// Content metadata of one file: what an ``ExtendedFileProvider``'s `metadata(of:)` returns.
///
/// Every field is optional: a field is `nil` when the file does not record it. ``entries`` gives
/// the documented key names (`width`, `camera_make`, `duration_seconds`, ...) the CLI's
/// `gateway meta --json` prints; ``other`` holds what the readers found beyond them.
public struct MediaMetadata: Sendable, Hashable {
    /// The content's format as read from its bytes (`jpeg`, `png`, `webp`, `gif`, `tiff`, `heif`,
    /// `svg`, `pdf`, `mp3`, `flac`, `ogg`, `mp4`, ...); for a type no reader knows, the name's
    /// extension (or `unknown`).
    public var format: String?
    /// The file's size in bytes.
    public var size: Int64?

    /// Image width in pixels (PDF: the first page's width in points).
    public var width: Int?
    /// Image height in pixels (PDF: the first page's height in points).
    public var height: Int?
    /// Page count (PDF, multi-page TIFF, animated GIF/WebP frames).
    public var pages: Int?
    /// EXIF `Make`.
    public var cameraMake: String?
    /// EXIF `Model`.
    public var cameraModel: String?
    /// EXIF `DateTimeOriginal` as ISO 8601 (`2024-05-01T12:34:56`, with the offset when EXIF
    /// records one in `OffsetTimeOriginal`).
    public var dateTaken: String?
    /// EXIF orientation, 1 to 8 (1 is upright; 6 is rotated 90° clockwise to display).
    public var orientation: Int?
    /// GPS latitude in signed decimal degrees (south is negative).
    public var gpsLatitude: Double?
    /// GPS longitude in signed decimal degrees (west is negative).
    public var gpsLongitude: Double?
    /// Exposure time in seconds.
    public var exposureTime: Double?
    /// Aperture as an f-number.
    public var fNumber: Double?
    /// ISO speed.
    public var iso: Int?

    /// Title (audio tag or PDF document information).
    public var title: String?
    /// Artist (audio).
    public var artist: String?
    /// Album (audio).
    public var album: String?
    /// Year (audio).
    public var year: Int?
    /// Track number (audio).
    public var track: Int?
    /// Genre (audio).
    public var genre: String?
    /// Duration in seconds (audio).
    public var durationSeconds: Double?
    /// Average bit rate in kbit/s (audio).
    public var bitrateKbps: Int?
    /// Sample rate in Hz (audio).
    public var sampleRate: Int?
    /// Channel count (audio).
    public var channels: Int?
    /// Author (PDF document information).
    public var author: String?

    /// Further fields by name (`pdf_subject`, `pdf_producer`, `bands`, ...).
    public var other: [String: String]

    /// Creates metadata with only the basic fields set.
    public init(format: String? = nil, size: Int64? = nil) {
        self.format = format
        self.size = size
        self.other = [:]
    }

    /// One metadata value, as JSON has them.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        /// Text.
        case text(String)
        /// A whole number.
        case integer(Int64)
        /// A number with a fraction.
        case number(Double)

        /// The value as the CLI's `key: value` lines show it.
        public var description: String {
            switch self {
            case .text(let text): return text
            case .integer(let value): return String(value)
            case .number(let value):
                // Shortest text that reads back as the same Double; never exponent notation for
                // the magnitudes metadata has (an exposure of 1/8000 s is 0.000125).
                if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
                let text = "\(value)"
                guard text.contains("e") else { return text }
                var fixed = String(format: "%.12f", value)
                while fixed.hasSuffix("0") { fixed.removeLast() }
                return fixed
            }
        }
    }

    /// The fields that are set, by their documented key names (`camera_make`, `gps_latitude`,
    /// `duration_seconds`, ...), plus ``other``'s, sorted by key.
    public var entries: [(key: String, value: Value)] {
        var result: [String: Value] = [:]
        func put(_ key: String, _ value: String?) { if let value { result[key] = .text(value) } }
        func put(_ key: String, _ value: Int?) { if let value { result[key] = .integer(Int64(value)) } }
        func put(_ key: String, _ value: Int64?) { if let value { result[key] = .integer(value) } }
        func put(_ key: String, _ value: Double?) { if let value, value.isFinite { result[key] = .number(value) } }
        for (key, value) in other { result[key] = .text(value) }
        put("format", format)
        put("size", size)
        put("width", width)
        put("height", height)
        put("pages", pages)
        put("camera_make", cameraMake)
        put("camera_model", cameraModel)
        put("date_taken", dateTaken)
        put("orientation", orientation)
        put("gps_latitude", gpsLatitude)
        put("gps_longitude", gpsLongitude)
        put("exposure_time", exposureTime)
        put("f_number", fNumber)
        put("iso", iso)
        put("title", title)
        put("artist", artist)
        put("album", album)
        put("year", year)
        put("track", track)
        put("genre", genre)
        put("duration_seconds", durationSeconds)
        put("bitrate_kbps", bitrateKbps)
        put("sample_rate", sampleRate)
        put("channels", channels)
        put("author", author)
        return result.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }
}
