import Foundation
import StorageGateway
import Synchronization
import Testing

/// The media test files: real images, audio and PDF documents made by real tools
/// (`scripts/media-fixtures.sh`: libvips, exiftool, lame, flac, oggenc, ffmpeg, rsvg-convert), and
/// `exiftool -j -n` as the oracle for what the gateway reads from them.
enum MediaFiles {
    /// The small files every media behaviour test uploads (the large ones are used by name).
    static let samples = ["photo.jpg", "photo.png", "exif.png", "photo.webp", "photo.gif", "photo.tiff", "photo.heic", "photo.avif",
                          "vector.svg", "doc.pdf", "song.mp3", "song.flac", "song.ogg", "song.m4a", "clip.mp4", "clip.webm", "phone.mp4",
                          "notes.txt"]
    /// Damaged and hostile files, under `hostile/`.
    static let hostile = ["truncated.jpg", "corrupt.jpg", "text.png", "empty.jpg", "truncated.pdf", "truncated.mp3", "bomb.png",
                          "truncated.mp4", "corrupt.mp4"]

    private static let made = Mutex<Task<URL, any Error>?>(nil)

    /// The folder holding the files, made once per machine (and per script version).
    static func folder() async throws -> URL {
        let task = made.withLock { task -> Task<URL, any Error> in
            if let task { return task }
            let new = Task.detached { () throws -> URL in
                let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gateway-media-fixtures")
                let script = repositoryRoot.appendingPathComponent("scripts/media-fixtures.sh").path
                let output = try run("/bin/bash", [script, folder.path])
                guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("photo.jpg").path) else {
                    throw MediaFixtureError(message: "scripts/media-fixtures.sh made nothing: \(output)")
                }
                return folder
            }
            task = new
            return new
        }
        return try await task.value
    }

    /// The local file `name` of the fixture folder.
    static func file(_ name: String) async throws -> URL { try await folder().appendingPathComponent(name) }

    /// What the oracles answered, by their exact input: every provider's bytes are still checked
    /// (other bytes are another key), but the same bytes are decoded once per run, not once per
    /// fixture (fourteen fixtures times a few hundred tool starts was two minutes of CI).
    private static let answers = Mutex<[String: String]>([:])

    /// `run`, remembered for the same input: `key` names the tool's arguments and the input's bytes.
    private static func remembered(_ key: String, _ executable: String, _ arguments: [String]) throws -> String {
        if let known = answers.withLock({ $0[key] }) { return known }
        let output = try run(executable, arguments)
        answers.withLock { $0[key] = output }
        return output
    }

    /// A key for `data` under a tool's arguments.
    private static func key(_ data: Data, _ arguments: String...) -> String {
        arguments.joined(separator: " ") + " " + data.base64EncodedString()
    }

    /// `exiftool -j -n` of a file: the oracle's fields by exiftool's tag names.
    static func exiftool(_ url: URL) throws -> [String: Any] {
        let bytes = try Data(contentsOf: url)
        let output = try remembered(key(bytes, "exiftool", url.lastPathComponent), "/usr/bin/env", ["exiftool", "-j", "-n", url.path])
        guard let array = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], let fields = array.first else {
            throw MediaFixtureError(message: "exiftool gave no object for \(url.path): \(output)")
        }
        return fields
    }

    /// `vipsheader` fields of an image (width, height, bands), read by libvips's own tool.
    static func vipsHeader(_ data: Data, suffix: String) throws -> (width: Int, height: Int, bands: Int) {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gateway-thumb-\(UUID().uuidString).\(suffix)")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        func field(_ name: String) throws -> Int {
            let text = try remembered(key(data, "vipsheader", name, suffix), "/usr/bin/env", ["vipsheader", "-f", name, url.path])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Int(text) else { throw MediaFixtureError(message: "vipsheader -f \(name): \(text)") }
            return value
        }
        return (try field("width"), try field("height"), try field("bands"))
    }

    /// The pixel at (x, y) of an encoded image, by `vips getpoint`.
    static func pixel(_ data: Data, suffix: String, x: Int, y: Int) throws -> [Double] {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("gateway-thumb-\(UUID().uuidString).\(suffix)")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let text = try remembered(key(data, "getpoint", suffix, String(x), String(y)), "/usr/bin/env", ["vips", "getpoint", url.path, String(x), String(y)])
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
    }

    /// Runs a tool and returns its standard output; a missing tool or a failure throws (never skips).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(executable, arguments, environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else {
            let errorText = String(decoding: result.stderr, as: UTF8.self)
            throw MediaFixtureError(message: "\(([executable] + arguments).joined(separator: " ")) failed (\(result.status)): \(errorText)")
        }
        return String(decoding: result.stdout, as: UTF8.self)
    }

    private static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

struct MediaFixtureError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
