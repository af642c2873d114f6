import ArgumentParser
import Foundation
import StorageGateway

struct ThumbnailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Make a thumbnail of an image or a PDF's first page.",
        discussion: HelpText.reflow("""
        Writes a PNG or JPEG no larger than --size pixels on its longer side (smaller images are
        not enlarged), EXIF orientation applied. OUTPUT's extension picks the format (.png, .jpg,
        .jpeg); `-` writes PNG to standard output. The file is written whole or not at all.

        Reads JPEG, PNG, WebP, GIF, TIFF, HEIC/AVIF, SVG and PDF. A remote file is read as it
        is decoded (JPEG shrinks on load), never held in memory; a PDF is fetched whole into a
        temporary file first. Other types fail with `no thumbnail for this type` (exit 1), as
        do damaged files and images above 256 megapixels (--max-megapixels).

        Examples:
          gateway thumbnail photos:2024/IMG_0001.jpg thumb.jpg
          gateway thumbnail --size 128 docs:report.pdf - > report.png
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "Largest size in pixels of the longer side.") var size = 256
    @Option(help: "Refuse images with more pixels than this many million (decompression bombs).") var maxMegapixels = 256
    @Option(help: "JPEG quality, 1 to 100.") var quality = 85
    @Argument(help: "REMOTE:PATH or a local path of an image or PDF.") var location: String
    @Argument(help: "Local file to write (.png, .jpg or .jpeg), or - for PNG on standard output.") var output: String

    func validate() throws {
        guard (1...16384).contains(size) else { throw ValidationError("--size must be 1 to 16384") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1 to 100") }
        guard (1...100_000).contains(maxMegapixels) else { throw ValidationError("--max-megapixels must be 1 to 100000") }
        _ = try format()
    }

    private func format() throws -> ThumbnailOptions.Format {
        if output == "-" { return .png }
        switch MediaType.fileExtension(of: output) {
        case "png": return .png
        case "jpg", "jpeg": return .jpeg
        default: throw ValidationError("OUTPUT must end in .png, .jpg or .jpeg, or be - (PNG on standard output)")
        }
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "thumbnail")
        let extended = try context.capability((any ExtendedFileProvider).self, of: provider, operation: "thumbnail", location: target)
        let options = ThumbnailOptions(maxDimension: size, format: try format(), jpegQuality: quality,
                                       maxPixels: Int64(maxMegapixels) * 1_000_000)
        let thumbnail = try await context.perform("thumbnail", target) {
            try await extended.thumbnail(of: target.path, options: options)
        }
        guard let thumbnail else {
            Diagnostics.printLine("thumbnail \(target.original): no thumbnail for this type")
            throw ExitCode(1)
        }
        if output == "-" {
            StandardOutput.writeRaw(thumbnail.data)
            return
        }
        do {
            try thumbnail.data.write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw Diagnostics.fail(operation: "write", item: output, error: error)
        }
        if !global.quiet {
            Diagnostics.printLine("wrote \(output): \(thumbnail.width) x \(thumbnail.height) \(thumbnail.format.rawValue.uppercased()), \(thumbnail.data.count) bytes")
        }
    }
}

struct MetaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meta",
        abstract: "Show a file's content metadata: image size and EXIF, audio tags, PDF pages.",
        discussion: HelpText.reflow("""
        Prints `key: value` lines sorted by key, or with --json one object. Keys (absent ones are
        omitted): format, size; images: width, height, pages, camera_make, camera_model,
        date_taken (ISO 8601), orientation (1-8), gps_latitude, gps_longitude (signed degrees),
        exposure_time (seconds), f_number, iso; audio: title, artist, album, year, track, genre,
        duration_seconds, bitrate_kbps, sample_rate, channels; PDF: title, author, pages, width
        and height (points). Others: bands, alpha, pdf_subject, pdf_creator, pdf_producer, and
        error when a file of a known type could not be read (the exit code is still 0).

        Only what the format needs is read from a remote: EXIF from the head of a JPEG, ID3v2 from
        the head and ID3v1 from the tail of an MP3, MP4 atoms by seeking; a PDF is read whole.
        Unknown types give format (the name's extension) and size only, reading nothing.

        A folder gives every file in it (not recursive), one JSON object per line with --json,
        each with its `path`; items that fail are reported and make the exit code 1.

        Examples:
          gateway meta photos:2024/IMG_0001.jpg
          gateway meta --json music:album/01.mp3 | jq .duration_seconds
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Option(help: "Files read at once when LOCATION is a folder.") var transfers = 8
    @Argument(help: "REMOTE:PATH or a local path (a file, or a folder for each file in it).") var location: String

    func validate() throws {
        guard (1...64).contains(transfers) else { throw ValidationError("--transfers must be 1 to 64") }
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "meta")
        let extended = try context.capability((any ExtendedFileProvider).self, of: provider, operation: "meta", location: target)
        let out = StandardOutput()
        // A file costs no extra request; a folder is found out by the "is a folder" answer.
        let single: MediaMetadata? = try await context.perform("meta", target) {
            do {
                return try await extended.metadata(of: target.path)
            } catch where error.failureKind == .isADirectory {
                return nil
            }
        }
        if let single {
            print(single, path: target.path, folderMode: false, to: out)
            out.flush()
            return
        }
        var failed = false
        let limit = transfers
        try await context.perform("meta", target) {
            for try await page in provider.contentsOfDirectory(path: target.path, pageSize: 256) {
                let files = page.entries.filter { !$0.isDirectory }
                // A page at a time, `limit` files at once, printed in listing order.
                // (The child result is a class: a large (Int, Result<MediaMetadata, Error>) tuple came
                // back garbled from the group in release builds of Swift 6.3.)
                let results = await withTaskGroup(of: MetaOutcome.self, returning: [Result<MediaMetadata, any Error>?].self) { group in
                    var results = [Result<MediaMetadata, any Error>?](repeating: nil, count: files.count)
                    var next = 0
                    var running = 0
                    while true {
                        while running < limit, next < files.count {
                            let index = next
                            let file = files[index]
                            group.addTask {
                                do { return MetaOutcome(index: index, result: .success(try await extended.metadata(of: file))) }
                                catch { return MetaOutcome(index: index, result: .failure(error)) }
                            }
                            next += 1
                            running += 1
                        }
                        guard let outcome = await group.next() else { break }
                        running -= 1
                        results[outcome.index] = outcome.result
                    }
                    return results
                }
                for (file, result) in zip(files, results) {
                    switch result {
                    case .success(let metadata)?:
                        print(metadata, path: file.path, folderMode: true, to: out)
                    case .failure(let error)?:
                        if error.failureKind == .cancelled { throw error }
                        out.flush()
                        _ = Diagnostics.fail(operation: "meta", item: "\(target.remote.map { "\($0):" } ?? "")\(file.path)", error: error)
                        failed = true
                    case nil:
                        break
                    }
                }
                out.flush()
            }
        }
        out.flush()
        if failed { throw ExitCode(1) }
    }

    private func print(_ metadata: MediaMetadata, path: String, folderMode: Bool, to out: StandardOutput) {
        if json {
            var object: [String: JSONField] = ["path": .string(path)]
            for (key, value) in metadata.entries {
                switch value {
                case .text(let text): object[key] = .string(text)
                case .integer(let number): object[key] = .integer(number)
                case .number(let number): object[key] = .exact(number)
                }
            }
            out.line(JSON.encode(object))
            return
        }
        if folderMode { out.line("path: \(Format.shown(path))") }
        for (key, value) in metadata.entries { out.line("\(key): \(Format.shown(value.description))") }
        if folderMode { out.line("") }
    }
}

/// One file's metadata or failure, and its place in the listing page.
private final class MetaOutcome: Sendable {
    let index: Int
    let result: Result<MediaMetadata, any Error>
    init(index: Int, result: Result<MediaMetadata, any Error>) {
        self.index = index
        self.result = result
    }
}
