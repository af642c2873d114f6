import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Thumbnails and metadata (`ExtendedFileProvider`) on every backend: files made by real tools
/// (scripts/media-fixtures.sh) are uploaded, and what the gateway reads is compared field by
/// field with `exiftool -j -n` on the same files; thumbnails are decoded by libvips's own tools.
@Suite("Thumbnails and metadata")
struct MediaBehaviourTests {
    /// Uploads `names` from the fixture folder into the scratch folder.
    private func upload(_ names: [String], from folder: String = "", to s: ProviderScratch) async throws {
        for name in names {
            let url = try await MediaFiles.file(folder + name)
            try await s.provider.write(path: s.path(name), fromLocalFile: url)
        }
    }

    private func extended(_ s: ProviderScratch) throws -> any ExtendedFileProvider {
        try #require(s.provider as? any ExtendedFileProvider, "every built-in provider is an ExtendedFileProvider")
    }

    @Test("thumbnailAvailable answers from the name alone", arguments: ProviderFixture.all)
    func availability(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let media = try extended(s)
            for name in ["a.jpg", "B.JPEG", "c.png", "d.webp", "e.gif", "f.tif", "g.heic", "h.avif", "i.svg", "j.pdf", "k.mp4", "l.webm", "M.MOV"] {
                #expect(media.thumbnailAvailable(path: s.path(name)), "\(name)")
            }
            for name in ["a.mp3", "b.txt", "noextension", ".jpg", "folder.jpg/x"] {
                #expect(!media.thumbnailAvailable(path: s.path(name)), "\(name)")
            }
            // No I/O: none of these exist.
            #expect(try await s.provider.itemIfPresent(path: s.path("a.jpg")) == nil)
        }
    }

    @Test("metadata matches exiftool field by field", arguments: ProviderFixture.all)
    func metadataMatchesExiftool(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let media = try extended(s)
            try await upload(MediaFiles.samples, to: s)
            let formats = ["photo.jpg": "jpeg", "photo.png": "png", "exif.png": "png", "photo.webp": "webp", "photo.gif": "gif", "photo.tiff": "tiff",
                           "photo.heic": "heif", "photo.avif": "avif", "vector.svg": "svg", "doc.pdf": "pdf", "song.mp3": "mp3",
                           "song.flac": "flac", "song.ogg": "ogg", "song.m4a": "mp4", "clip.mp4": "mp4", "clip.webm": "webm",
                           "phone.mp4": "mp4", "notes.txt": "txt"]
            for name in MediaFiles.samples {
                let local = try await MediaFiles.file(name)
                let oracle = try MediaFiles.exiftool(local)
                let got = try await media.metadata(of: s.path(name))
                let size = try #require(try FileManager.default.attributesOfItem(atPath: local.path)[.size] as? Int)
                #expect(got.size == Int64(size), "\(name)")
                #expect(got.format == formats[name], "\(name): \(got)")
                #expect(got.other["error"] == nil, "\(name): \(got.other)")
                Oracle.compare(got, with: oracle, name: name)
            }
            // What every image has.
            let photo = try await media.metadata(of: s.path("photo.jpg"))
            #expect(photo.width == 1200 && photo.height == 800 && photo.orientation == 6)
            #expect(photo.dateTaken == "2024-05-01T12:34:56+02:00")
            let exifPNG = try await media.metadata(of: s.path("exif.png"))
            #expect(exifPNG.cameraModel == "EOS R5" && exifPNG.iso == 200, "EXIF from a PNG eXIf chunk: \(exifPNG)")
            let pdf = try await media.metadata(of: s.path("doc.pdf"))
            #expect(pdf.pages == 3 && pdf.title == "Quarterly Report" && pdf.author == "Ada Lovelace")
            #expect(pdf.width == 420 && pdf.height == 595, "A5 in points")
            let song = try await media.metadata(of: s.path("song.mp3"))
            #expect(song.title == "Gateway Song" && song.track == 3 && song.year == 2021 && song.channels == 2)
            let m4a = try await media.metadata(of: s.path("song.m4a"))
            #expect(m4a.title == "Gateway Song" && m4a.track == 3 && m4a.year == 2021 && m4a.genre == "Rock" && m4a.sampleRate == 44100)
            // Videos: FFmpeg's reading of the stream (exiftool has no codec names).
            let clip = try await media.metadata(of: s.path("clip.mp4"))
            #expect(clip.width == 320 && clip.height == 240 && clip.other["video_codec"] == "h264" && clip.other["audio_codec"] == "aac", "\(clip)")
            #expect(clip.other["rotation"] == nil && clip.other["frame_rate"] == "25.000" && clip.sampleRate == 44100, "\(clip)")
            let webm = try await media.metadata(of: s.path("clip.webm"))
            #expect(webm.other["video_codec"] == "vp9" && webm.other["audio_codec"] == "opus" && webm.channels == 2 && webm.sampleRate == 48000, "\(webm)")
            let phone = try await media.metadata(of: s.path("phone.mp4"))
            #expect(phone.width == 320 && phone.height == 240 && phone.other["rotation"] == "270", "the size as stored, the turn apart: \(phone)")
            let text = try await media.metadata(of: s.path("notes.txt"))
            #expect(text.entries.map(\.key) == ["format", "size"], "unknown types give format and size only")
        }
    }

    @Test("thumbnails: size, orientation, PNG and JPEG that decode", arguments: ProviderFixture.all)
    func thumbnails(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let media = try extended(s)
            try await upload(["photo.jpg", "photo.png", "photo.webp", "photo.gif", "photo.tiff", "photo.heic", "photo.avif",
                              "vector.svg", "doc.pdf", "song.mp3", "notes.txt", "clip.mp4", "clip.webm", "phone.mp4"], to: s)
            // (name, expected width x height at 64 pixels, how it is turned upright: EXIF orientation 6
            // turns the photos a quarter clockwise; phone.mp4's display matrix a quarter counterclockwise,
            // as the ffmpeg tool shows it)
            let cases: [(String, Int, Int, Turn)] = [
                ("photo.jpg", 43, 64, .clockwise), ("photo.webp", 43, 64, .clockwise), ("photo.png", 64, 43, .none),
                ("photo.gif", 64, 43, .none), ("photo.tiff", 64, 43, .none), ("photo.heic", 64, 43, .none),
                ("photo.avif", 64, 43, .none), ("vector.svg", 64, 32, .none), ("doc.pdf", 45, 64, .none),
                ("clip.mp4", 64, 48, .none), ("clip.webm", 64, 48, .none), ("phone.mp4", 48, 64, .counterclockwise),
            ]
            for (name, width, height, turn) in cases {
                for format in ThumbnailOptions.Format.allCases {
                    let thumbnail = try #require(try await media.thumbnail(of: s.path(name), options: ThumbnailOptions(maxDimension: 64, format: format)), "\(name)")
                    let suffix = format == .png ? "png" : "jpg"
                    let magic = format == .png ? Data([0x89, 0x50, 0x4e, 0x47]) : Data([0xff, 0xd8, 0xff])
                    #expect(thumbnail.data.prefix(magic.count) == magic, "\(name) as \(format)")
                    let decoded = try MediaFiles.vipsHeader(thumbnail.data, suffix: suffix)
                    #expect(decoded.width == width && decoded.height == height, "\(name) as \(format): \(decoded)")
                    #expect(thumbnail.width == width && thumbnail.height == height)
                    guard name.hasPrefix("photo") || name.hasSuffix(".mp4") || name.hasSuffix(".webm") else { continue }
                    // White on top, black below: turned 90° clockwise, white is on the right; turned
                    // counterclockwise, on the left.
                    let turned = turn != .none
                    let left = try MediaFiles.pixel(thumbnail.data, suffix: suffix, x: 2, y: height / 2 + (turned ? 0 : -12))
                    let right = try MediaFiles.pixel(thumbnail.data, suffix: suffix, x: width - 3, y: height / 2 + (turned ? 0 : 12))
                    // photo.png's lower half is half-transparent black: a JPEG lays it over white.
                    let dark: ClosedRange<Double> = name == "photo.png" && format == .jpeg ? 100...155 : 0...60
                    if turn == .clockwise {
                        #expect(left.prefix(3).allSatisfy { $0 < 60 } && right.prefix(3).allSatisfy { $0 > 195 }, "\(name): \(left) \(right)")
                    } else {
                        #expect(left.prefix(3).allSatisfy { $0 > 195 } && right.prefix(3).allSatisfy { dark.contains($0) }, "\(name) as \(format): \(left) \(right)")
                    }
                }
            }
            // Never enlarged.
            let big = try #require(try await media.thumbnail(of: s.path("vector.svg"), options: ThumbnailOptions(maxDimension: 4000)))
            #expect(big.width == 300 && big.height == 150)
            // Types without thumbnails give nil, whatever the content.
            #expect(try await media.thumbnail(of: s.path("song.mp3"), options: ThumbnailOptions()) == nil)
            #expect(try await media.thumbnail(of: s.path("notes.txt"), options: ThumbnailOptions()) == nil)
        }
    }

    @Test("hostile files fail with a clear error, metadata still answers", arguments: ProviderFixture.all)
    func hostileFiles(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let media = try extended(s)
            try await upload(MediaFiles.hostile, from: "hostile/", to: s)
            let expected: [String: CocoaError.Code] = [
                "truncated.jpg": .fileReadCorruptFile, "corrupt.jpg": .fileReadCorruptFile, "text.png": .fileReadCorruptFile,
                "empty.jpg": .fileReadCorruptFile, "truncated.pdf": .fileReadCorruptFile, "bomb.png": .fileReadTooLarge,
                "truncated.mp4": .fileReadCorruptFile, "corrupt.mp4": .fileReadCorruptFile,
            ]
            for (name, code) in expected.sorted(by: { $0.key < $1.key }) {
                do {
                    _ = try await media.thumbnail(of: s.path(name), options: ThumbnailOptions(maxDimension: 64))
                    Issue.record("\(name): a thumbnail of a hostile file")
                } catch let error as CocoaError {
                    #expect(error.code == code, "\(name): \(error)")
                    #expect(!ErrorMessage.reason(for: error).isEmpty)
                }
            }
            for name in MediaFiles.hostile {
                let metadata = try await media.metadata(of: s.path(name))
                #expect(metadata.size != nil, "\(name)")
            }
            let bomb = try await media.metadata(of: s.path("bomb.png"))
            #expect(bomb.width == 50_000 && bomb.height == 50_000, "the header is read, nothing decoded")
            #expect(try await media.metadata(of: s.path("text.png")).other["error"] != nil)
            // A cut MP4 has lost its index: not readable as video or audio. A whole index over noise
            // still gives the header.
            #expect(try await media.metadata(of: s.path("truncated.mp4")).other["error"] == "not a video FFmpeg can read")
            let noise = try await media.metadata(of: s.path("corrupt.mp4"))
            #expect(noise.width == 320 && noise.other["video_codec"] == "h264" && noise.other["error"] == nil, "\(noise)")
        }
    }

    @Test("a folder and a missing file fail as the provider's reads do", arguments: ProviderFixture.all)
    func folderAndMissing(fixture: ProviderFixture) async throws {
        try await fixture.run { s in
            let media = try extended(s)
            try await s.provider.createFolder(path: s.path("album.jpg"), withIntermediateDirectories: false)
            await #expect(throws: (any Error).self) { _ = try await media.metadata(of: s.path("album.jpg")) }
            do {
                _ = try await media.thumbnail(of: s.path("album.jpg"), options: ThumbnailOptions())
                Issue.record("a thumbnail of a folder")
            } catch {
                #expect(error.failureKind == .isADirectory, "\(error)")
            }
            do {
                _ = try await media.metadata(of: s.path("missing.jpg"))
                Issue.record("metadata of a missing file")
            } catch {
                #expect(error.failureKind == .notFound, "\(error)")
            }
        }
    }
}

/// How a thumbnail is turned from the picture as stored.
enum Turn { case none, clockwise, counterclockwise }

/// `exiftool -j -n` names for the gateway's keys, compared where the oracle has them.
enum Oracle {
    static func compare(_ got: MediaMetadata, with oracle: [String: Any], name: String) {
        func number(_ keys: String...) -> Double? {
            for key in keys {
                if let value = oracle[key] as? Double { return value }
                if let value = oracle[key] as? Int { return Double(value) }
                if let text = oracle[key] as? String, let value = Double(text.split(separator: "/").first ?? "") { return value }
            }
            return nil
        }
        func text(_ keys: String...) -> String? {
            for key in keys {
                if let value = oracle[key] as? String { return value }
                if let value = oracle[key] as? Int { return String(value) }
            }
            return nil
        }
        let isImage = MediaType(path: name) == .image
        if isImage, let width = number("ImageWidth"), let height = number("ImageHeight") {
            #expect(got.width == Int(width) && got.height == Int(height), "\(name): \(got.width ?? -1)x\(got.height ?? -1) vs \(width)x\(height)")
        }
        if let make = text("Make") { #expect(got.cameraMake == make, "\(name)") }
        if let model = text("Model") { #expect(got.cameraModel == model, "\(name)") }
        if isImage, let orientation = number("Orientation") { #expect(got.orientation == Int(orientation), "\(name)") }
        if isImage, let taken = text("DateTimeOriginal"), taken.count >= 19 {
            let iso = taken.replacingOccurrences(of: ":", with: "-", options: [], range: taken.startIndex..<taken.index(taken.startIndex, offsetBy: 10))
                .replacingOccurrences(of: " ", with: "T") + (text("OffsetTimeOriginal") ?? "")
            #expect(got.dateTaken == iso, "\(name)")
        }
        if let latitude = number("GPSLatitude") { #expect(abs((got.gpsLatitude ?? 999) - latitude) < 1e-6, "\(name)") }
        if let longitude = number("GPSLongitude") { #expect(abs((got.gpsLongitude ?? 999) - longitude) < 1e-6, "\(name)") }
        if let exposure = number("ExposureTime") { #expect(abs((got.exposureTime ?? 99) - exposure) < 1e-9, "\(name)") }
        if let fNumber = number("FNumber") { #expect(abs((got.fNumber ?? 99) - fNumber) < 1e-9, "\(name)") }
        if let iso = number("ISO") { #expect(got.iso == Int(iso), "\(name)") }
        if let title = text("Title") { #expect(got.title == title, "\(name)") }
        if let author = text("Author") { #expect(got.author == author, "\(name)") }
        if let pages = number("PageCount") { #expect(got.pages == Int(pages), "\(name)") }
        if let artist = text("Artist") { #expect(got.artist == artist, "\(name)") }
        if let album = text("Album") { #expect(got.album == album, "\(name)") }
        if let year = number("Year", "Date", "ContentCreateDate") { #expect(got.year == Int(year), "\(name)") }
        // (Matroska's TrackNumber is the stream's number in the file, not an album's track.)
        if MediaType(path: name) != .video, let track = number("Track", "TrackNumber") { #expect(got.track == Int(track), "\(name)") }
        if let genre = oracle["Genre"] {
            // exiftool -n gives ID3's genre number where the tag holds one (17 is Rock).
            #expect(got.genre == (genre as? String) || (genre as? Int) == 17 && got.genre == "Rock", "\(name): \(genre)")
        }
        if MediaType(path: name) == .audio {
            if var rate = number("SampleRate", "AudioSampleRate") {
                // With -n, an MPEG audio frame's rate is its header index (MPEG-1: 44100, 48000, 32000).
                if name.hasSuffix(".mp3"), rate < 3 { rate = [44100.0, 48000, 32000][Int(rate)] }
                #expect(got.sampleRate == Int(rate), "\(name)")
            }
            // exiftool estimates an Ogg Vorbis file's duration from its nominal bit rate (1.2 s for
            // this 5 s quality-mode file), so Ogg is checked against the known length only.
            if !name.hasSuffix(".ogg"), let duration = number("Duration") {
                #expect(abs((got.durationSeconds ?? -1) - duration) < 0.1, "\(name): \(got.durationSeconds ?? -1) vs \(duration)")
            }
            #expect(abs((got.durationSeconds ?? -1) - 5) < 0.1, "the fixtures' tone lasts 5 s: \(name)")
            if let channels = number("Channels", "AudioChannels") { #expect(got.channels == Int(channels), "\(name)") }
            if let mode = number("ChannelMode") { #expect(got.channels == (mode == 3 ? 1 : 2), "\(name): MPEG channel mode \(mode)") }
        }
        if MediaType(path: name) == .video {
            // The size as stored (exiftool: the track's), the turn as exiftool reads the display matrix.
            if let width = number("ImageWidth"), let height = number("ImageHeight") {
                #expect(got.width == Int(width) && got.height == Int(height), "\(name): \(got.width ?? -1)x\(got.height ?? -1) vs \(width)x\(height)")
            }
            if let rotation = number("Rotation") { #expect(Int(got.other["rotation"] ?? "0") == Int(rotation), "\(name): \(got.other)") }
            if let rate = number("VideoFrameRate") { #expect(abs((Double(got.other["frame_rate"] ?? "") ?? -1) - rate) < 0.01, "\(name): \(got.other)") }
            if let rate = number("AudioSampleRate") { #expect(got.sampleRate == Int(rate), "\(name)") }
            if let channels = number("AudioChannels") { #expect(got.channels == Int(channels), "\(name)") }
            // (exiftool gives WebM's duration as text, "00:00:04.008000000".)
            if let duration = number("Duration") { #expect(abs((got.durationSeconds ?? -1) - duration) < 0.1, "\(name): \(got.durationSeconds ?? -1) vs \(duration)") }
            #expect(abs((got.durationSeconds ?? -1) - 4) < 0.1, "the fixtures' clips last 4 s: \(name)")
        }
    }
}
