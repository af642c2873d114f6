/// What kind of content a file holds, judged from its name's extension alone (no I/O), as
/// ``ExtendedFileProvider/thumbnailAvailable(path:)`` needs.
public enum MediaType: String, Sendable, Hashable, CaseIterable {
    /// A raster or vector image libvips reads: JPEG, PNG, WebP, GIF, TIFF, HEIC/HEIF/AVIF, SVG.
    case image
    /// A PDF document (thumbnail of the first page; title, author, pages).
    case pdf
    /// Audio with tags TagLib reads: MP3, FLAC, Ogg Vorbis/Opus, M4A, WAV, AIFF, ...
    case audio
    /// Video FFmpeg reads: MP4, QuickTime, Matroska/WebM, AVI, MPEG, Ogg video, ... (a poster frame;
    /// size, duration, codecs). An MP4 holding audio only is read as audio.
    case video
    /// Anything else: metadata has the basic format and size only.
    case other

    /// The type of the file named by the last component of `path` (case-insensitive extension).
    public init(path: String) {
        self = MediaType.byExtension[MediaType.fileExtension(of: path)] ?? .other
    }

    /// Whether ``ExtendedFileProvider/thumbnail(of:options:)`` can make a thumbnail for this type.
    public var hasThumbnail: Bool { self == .image || self == .pdf || self == .video }

    /// The lowercased extension of the last path component (`""` when it has none).
    public static func fileExtension(of path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }

    private static let byExtension: [String: MediaType] = {
        var table: [String: MediaType] = [:]
        for ext in ["jpg", "jpeg", "jpe", "jfif", "png", "webp", "gif", "tif", "tiff", "heic", "heif", "avif", "svg", "svgz"] {
            table[ext] = .image
        }
        table["pdf"] = .pdf
        for ext in ["mp3", "flac", "ogg", "oga", "opus", "spx", "m4a", "m4b", "aac", "wav", "aif", "aiff", "ape", "wma", "wv", "mpc"] {
            table[ext] = .audio
        }
        for ext in ["mp4", "m4v", "mov", "qt", "mkv", "webm", "avi", "mpg", "mpeg", "m2ts", "mts", "3gp", "3g2", "ogv", "wmv", "asf", "flv"] {
            table[ext] = .video
        }
        return table
    }()
}
