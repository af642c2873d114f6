import CMediaLibraries
import CMediaLibrariesCheck
import Foundation
@testable import GatewayMedia
import StorageGateway
import Synchronization
import Testing

/// The ranges a test input was asked for.
final class Asked: Sendable {
    let ranges = Mutex<[Range<Int64>]>([])
}

/// The media layer's own logic, without a server: the sparse cache's ranges and fetch policy,
/// EXIF dates, metadata keys and types by name.
@Suite("Media: cache ranges, fetch policy, keys")
struct MediaUnitTests {
    @Test("libvips and poppler-glib load on demand, with every function the loader lists")
    func mediaLibrariesLoad() {
        // CMediaLibrariesCheck compared each listed declaration with the libraries' headers when it
        // compiled; here every one of them resolves in the installed libraries.
        #expect(gw_media_libraries_checked() == 42)
        var message: UnsafePointer<CChar>?
        #expect(gw_media_load_vips(&message) == 0, "\(message.map { String(cString: $0) } ?? "")")
        #expect(gw_media_load_poppler(&message) == 0, "\(message.map { String(cString: $0) } ?? "")")
        #expect(gw_media_load_vips(&message) == 0, "a second load is the first one's result")
    }

    @Test("range sets merge overlapping and adjacent ranges and find the first gap")
    func ranges() {
        var ranges: [Range<Int64>] = []
        RemoteMediaInput.insert(10..<20, into: &ranges)
        RemoteMediaInput.insert(30..<40, into: &ranges)
        #expect(ranges == [10..<20, 30..<40])
        RemoteMediaInput.insert(20..<25, into: &ranges)
        #expect(ranges == [10..<25, 30..<40], "adjacent ranges merge")
        RemoteMediaInput.insert(0..<5, into: &ranges)
        RemoteMediaInput.insert(24..<31, into: &ranges)
        #expect(ranges == [0..<5, 10..<40])
        RemoteMediaInput.insert(7..<7, into: &ranges)
        #expect(ranges == [0..<5, 10..<40], "empty ranges change nothing")
        #expect(RemoteMediaInput.missing(in: 0..<5, ranges: ranges) == nil)
        #expect(RemoteMediaInput.missing(in: 2..<12, ranges: ranges) == 5..<10)
        #expect(RemoteMediaInput.missing(in: 12..<50, ranges: ranges) == 40..<50)
        #expect(RemoteMediaInput.missing(in: 41..<45, ranges: ranges) == 41..<45)
        #expect(RemoteMediaInput.missing(in: 3..<3, ranges: ranges) == nil)
    }

    /// A remote input over `data`, counting the ranges asked for.
    private func input(_ data: Data, budget: Int64 = .max, short: Bool = false) throws -> (RemoteMediaInput, Asked) {
        let asked = Asked()
        let input = try RemoteMediaInput(path: "/f", size: Int64(data.count), initialFetch: 4096, maximumFetch: 32768, fetchBudget: budget) { offset, length in
            asked.ranges.withLock { $0.append(offset..<(offset + length)) }
            let end = Int(min(Int64(data.count), offset + length))
            let slice = data.subdata(in: Int(offset)..<(short ? max(Int(offset), end - 1) : end))
            return ByteStream(data: slice, chunkSize: 1000)
        }
        return (input, asked)
    }

    private func read(_ input: RemoteMediaInput, at offset: Int64, count: Int) async throws -> Data {
        try await MediaThread.run {
            var buffer = Data(count: count)
            let got = try buffer.withUnsafeMutableBytes { try input.read(at: offset, into: $0.baseAddress!, count: count) }
            return buffer.prefix(got)
        }
    }

    @Test("reads fetch once, grow while sequential, start small after a seek")
    func fetchPolicy() async throws {
        let data = Data((0..<200_000).map { UInt8($0 % 251) })
        let (input, asked) = try input(data)
        var position: Int64 = 0
        while position < 100_000 {
            let chunk = try await read(input, at: position, count: 3000)
            #expect(chunk == data.subdata(in: Int(position)..<Int(position) + 3000))
            position += 3000
        }
        let sequential = asked.ranges.withLock { $0 }
        #expect(sequential.map(\.count) == [4096, 8192, 16384, 32768, 32768, 32768], "\(sequential)")
        // Back to the start: cached, no request.
        #expect(try await read(input, at: 0, count: 5000) == data.prefix(5000))
        #expect(asked.ranges.withLock { $0.count } == sequential.count)
        // A seek to the tail: a small request; the end of the file ends it.
        let tail = try await read(input, at: 199_990, count: 100)
        #expect(tail == data.suffix(10))
        #expect(asked.ranges.withLock { $0.last } == 199_990..<200_000)
        #expect(try await read(input, at: 200_000, count: 10).isEmpty, "at the end: nothing")
        #expect(input.bytesFetched == Int64(sequential.map(\.count).reduce(0, +) + 10))
        // The whole file for a reader that needs a file: only the gaps are fetched.
        let descriptor = try await MediaThread.run { try input.completeDescriptor() }
        #expect(input.isComplete)
        var whole = Data(count: data.count)
        let got = whole.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, data.count, 0) }
        #expect(got == data.count && whole == data)
        #expect(input.bytesFetched == Int64(data.count), "each byte fetched once")
    }

    @Test("the fetch budget, a short answer and cancellation fail clearly")
    func failures() async throws {
        let data = Data(repeating: 1, count: 100_000)
        let (limited, _) = try input(data, budget: 10_000)
        _ = try await read(limited, at: 0, count: 100)
        do {
            _ = try await read(limited, at: 50_000, count: 20_000)
            Issue.record("read past the budget")
        } catch let error as CocoaError {
            #expect(error.code == .fileReadTooLarge)
        }
        let (short, _) = try input(data, short: true)
        do {
            _ = try await read(short, at: 0, count: 100)
            Issue.record("a short answer was accepted")
        } catch let error as FileProviderError {
            guard case .truncated = error else { Issue.record("\(error)"); return }
        }
        let (cancelled, _) = try input(data)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await read(cancelled, at: 0, count: 10) }
    }

    @Test("metadata past the fetch budget is an error field, not a failure; the whole file is still there for readers that need it")
    func budgetInMetadata() async throws {
        let jpeg = Data([0xff, 0xd8, 0xff, 0xe0]) + Data(repeating: 0, count: 100_000)
        let input = try RemoteMediaInput(path: "/big.jpg", size: Int64(jpeg.count), fetchBudget: 10) { offset, length in
            ByteStream(data: jpeg.subdata(in: Int(offset)..<Int(min(Int64(jpeg.count), offset + length))))
        }
        let metadata = try await MediaThread.run { try MediaReader.metadata(of: input, name: "big.jpg") }
        #expect(metadata.other["error"]?.contains("more than 10 bytes") == true, "\(metadata)")
        #expect(metadata.size == Int64(jpeg.count) && metadata.width == nil)
        _ = try await MediaThread.run { try input.completeDescriptor() }
        #expect(input.isComplete, "a reader that needs the whole file is not held to the budget")
    }

    @Test("a PNG chunk that claims a gigabyte is refused before libpng reserves it")
    func hugePNGChunk() async throws {
        func chunk(_ type: String, length: UInt32, _ body: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: length.bigEndian) { Array($0) } + Array(type.utf8) + body + [0, 0, 0, 0]
        }
        let ihdr: [UInt8] = [0, 0, 0, 60, 0, 0, 0, 40, 8, 2, 0, 0, 0]
        let png = Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", length: 13, ihdr)
                       + chunk("eXIf", length: 1_056_965_056, Array(repeating: 0, count: 64)))
        let input = DataMediaInput(png)
        do {
            _ = try await MediaThread.run { try MediaReader.thumbnail(of: input, name: "x.png", options: ThumbnailOptions()) }
            Issue.record("a thumbnail of a PNG with a gigabyte chunk")
        } catch let error as CocoaError {
            #expect(error.code == .fileReadCorruptFile && ErrorMessage.reason(for: error).contains("eXIf"), "\(error)")
        }
        let metadata = try await MediaThread.run { try MediaReader.metadata(of: input, name: "x.png") }
        #expect(metadata.other["error"]?.contains("claims 1056965056 bytes") == true, "\(metadata)")
    }

    @Test("EXIF dates become ISO 8601; anything else is dropped")
    func exifDates() {
        #expect(ExifReader.isoDate("2024:05:01 12:34:56", offset: nil) == "2024-05-01T12:34:56")
        #expect(ExifReader.isoDate("2024:05:01 12:34:56", offset: "+02:00") == "2024-05-01T12:34:56+02:00")
        #expect(ExifReader.isoDate("2024:05:01 12:34:56", offset: "bogus!") == "2024-05-01T12:34:56")
        #expect(ExifReader.isoDate("    :  :     :  :  ", offset: nil) == nil)
        #expect(ExifReader.isoDate("2024:13:01 12:34:56", offset: nil) == nil)
        #expect(ExifReader.isoDate("2024:05:01", offset: nil) == nil)
        #expect(ExifReader.isoDate("２０２４:05:01 12:34:56", offset: nil) == nil)
        var metadata = MediaMetadata()
        ExifReader.read(Data("Exif\0\0garbage".utf8), into: &metadata)
        ExifReader.read(Data(), into: &metadata)
        #expect(metadata == MediaMetadata(), "junk gives nothing")
    }

    @Test("metadata keys are the documented names, sorted; numbers print without exponents")
    func keys() {
        var metadata = MediaMetadata(format: "jpeg", size: 10)
        metadata.cameraMake = "Canon"
        metadata.gpsLatitude = -33.8688
        metadata.exposureTime = 1.0 / 8000
        metadata.durationSeconds = .nan
        metadata.other["bands"] = "3"
        #expect(metadata.entries.map(\.key) == ["bands", "camera_make", "exposure_time", "format", "gps_latitude", "size"])
        #expect(metadata.entries.first { $0.key == "exposure_time" }?.value.description == "0.000125")
        #expect(MediaMetadata.Value.number(5).description == "5")
        #expect(MediaMetadata.Value.number(2.8).description == "2.8")
    }

    @Test("types by name, no I/O")
    func types() {
        #expect(MediaType(path: "/a/B.JPG") == .image)
        #expect(MediaType(path: "x.pdf") == .pdf && MediaType(path: "x.pdf").hasThumbnail)
        #expect(MediaType(path: "x.m4a") == .audio && !MediaType(path: "x.m4a").hasThumbnail)
        for name in ["x.mp4", "x.MOV", "x.mkv", "x.webm", "x.m4v", "x.avi"] {
            #expect(MediaType(path: name) == .video && MediaType(path: name).hasThumbnail, "\(name)")
        }
        #expect(MediaType(path: ".jpg") == .other, "a hidden file named .jpg has no extension")
        #expect(MediaType(path: "dir.jpg/") == .image)
        #expect(MediaType.fileExtension(of: "/a.b/c") == "")
    }
}
