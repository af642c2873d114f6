import Foundation
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// What thumbnails and metadata cost on the wire, counted in Apache's access log (`%B`: the body
/// bytes Apache sent for each request): a metadata read of a large file reads its head (and tail),
/// never the whole file.
@Suite("Media reads on WebDAV: bytes sent by the server")
struct MediaReadCostTests {
    /// Bytes Apache sent for GETs of paths containing `fragment`, and how many GETs.
    private func sent(_ fragment: String) async throws -> (bytes: Int, requests: Int) {
        let sent = try await ApacheAccessLog.bodyBytes("GET", containing: fragment)
        return (sent.reduce(0, +), sent.count)
    }

    @Test("meta of a 100 MB MP3, an M4A with its atoms at the end and a 20 MB JPEG reads at most 1 MiB of each; a thumbnail reads the JPEG once")
    func metadataReadsTheHeadOnly() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let provider = WebDAVProvider(configuration: server.configuration(remoteName: "media"))
        let folder = "/media-cost-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: folder, withIntermediateDirectories: false)
        defer { Task { try? await provider.removeItem(path: folder, recursive: true) } }
        let mp3 = try await MediaFiles.file("big.mp3")
        let jpeg = try await MediaFiles.file("big.jpg")
        try await provider.write(path: folder + "/big.mp3", fromLocalFile: mp3)
        try await provider.write(path: folder + "/big.jpg", fromLocalFile: jpeg)
        let jpegSize = try #require(try FileManager.default.attributesOfItem(atPath: jpeg.path)[.size] as? Int)
        #expect(jpegSize > 15_000_000, "the JPEG fixture is about 20 MB")

        let song = try await provider.metadata(of: folder + "/big.mp3")
        #expect(song.size == Int64(104_857_600))
        #expect(song.title == "Gateway Song" && song.artist == "The Testers" && song.year == 2021, "ID3v2 from the head: \(song)")
        let oracle = try MediaFiles.exiftool(mp3)
        #expect(song.genre != nil && song.album == oracle["Album"] as? String)
        let songCost = try await sent(folder + "/big.mp3")
        #expect(songCost.bytes > 0 && songCost.bytes <= 1 << 20, "\(songCost.bytes) bytes in \(songCost.requests) GETs")

        // An M4A whose `moov` atom follows the audio (as ffmpeg writes it): TagLib seeks over `mdat`.
        let m4a = try await MediaFiles.file("big.m4a")
        try await provider.write(path: folder + "/big.m4a", fromLocalFile: m4a)
        let m4aSize = try #require(try FileManager.default.attributesOfItem(atPath: m4a.path)[.size] as? Int)
        let long = try await provider.metadata(of: folder + "/big.m4a")
        #expect(long.format == "mp4" && long.title == "Gateway Song" && long.album == "Fixtures", "\(long)")
        #expect(abs((long.durationSeconds ?? 0) - 300) < 1, "\(long.durationSeconds ?? -1)")
        let m4aCost = try await sent(folder + "/big.m4a")
        #expect(m4aCost.bytes > 0 && m4aCost.bytes <= 1 << 20 && m4aCost.bytes < m4aSize / 4,
                "\(m4aCost.bytes) of \(m4aSize) bytes in \(m4aCost.requests) GETs")

        let photo = try await provider.metadata(of: folder + "/big.jpg")
        #expect(photo.width == 6000 && photo.height == 4000 && photo.cameraModel == "EOS R5" && photo.orientation == 6)
        let photoCost = try await sent(folder + "/big.jpg")
        #expect(photoCost.bytes > 0 && photoCost.bytes <= 1 << 20, "\(photoCost.bytes) bytes in \(photoCost.requests) GETs")

        // A thumbnail decodes the whole JPEG (at 1/8 scale): each byte is fetched once, in a few
        // ranges that grow while the decoder reads on.
        let thumbnail = try #require(try await provider.thumbnail(of: folder + "/big.jpg", options: ThumbnailOptions(maxDimension: 256)))
        #expect(thumbnail.width == 171 && thumbnail.height == 256)
        let total = try await sent(folder + "/big.jpg")
        let thumbnailBytes = total.bytes - photoCost.bytes
        #expect(thumbnailBytes <= jpegSize, "no byte fetched twice: \(thumbnailBytes) of \(jpegSize)")
        #expect(total.requests - photoCost.requests <= 12, "\(total.requests - photoCost.requests) GETs")
    }

    @Test("a file replaced while it is read fails instead of mixing two versions")
    func replacedMidRead() async throws {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let provider = WebDAVProvider(configuration: server.configuration(remoteName: "media"))
        let folder = "/media-race-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: folder, withIntermediateDirectories: false)
        defer { Task { try? await provider.removeItem(path: folder, recursive: true) } }
        let jpeg = try await MediaFiles.file("big.jpg")
        try await provider.write(path: folder + "/big.jpg", fromLocalFile: jpeg)
        let item = try await provider.attributesOfItem(path: folder + "/big.jpg")
        let input = try await provider.openMediaInput(for: item, fetchBudget: .max)
        var buffer = [UInt8](repeating: 0, count: 16)
        let first = try await Task.detached { try buffer.withUnsafeMutableBytes { try input.read(at: 0, into: $0.baseAddress!, count: 16) } }.value
        #expect(first == 16)
        try await provider.writeContents(path: folder + "/big.jpg", data: Data(repeating: 7, count: 30_000_000))
        await #expect(throws: (any Error).self, "the next range carries If-Match: the old ETag") {
            try await Task.detached {
                var more = [UInt8](repeating: 0, count: 16)
                _ = try more.withUnsafeMutableBytes { try input.read(at: 10_000_000, into: $0.baseAddress!, count: 16) }
            }.value
        }
    }
}
