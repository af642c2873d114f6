import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway thumbnail` and `gateway meta`, as a user runs them, on local files and through WebDAV.
@Suite("gateway thumbnail and meta")
struct MediaCLITests {
    /// Copies fixture files into the scratch's `media/` folder.
    private func stage(_ s: CLIScratch, _ names: [String]) async throws {
        for name in names {
            try s.write("media/" + name, try Data(contentsOf: try await MediaFiles.file(name)))
        }
    }

    @Test("thumbnail writes PNG or JPEG by OUTPUT's extension, - writes PNG to stdout, --size bounds it")
    func thumbnail() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try await stage(s, ["photo.jpg", "doc.pdf", "song.mp3"])
        let png = try await s.runner.run(["thumbnail", "media/photo.jpg", "out.png"])
        #expect(png.status == 0, "\(png.stderr)")
        #expect(png.stderr.contains("171 x 256 PNG"), "default size 256, turned upright: \(png.stderr)")
        #expect(try MediaFiles.vipsHeader(s.read("out.png"), suffix: "png") == (171, 256, 3))
        let jpeg = try await s.runner.run(["thumbnail", "--size", "100", "media/photo.jpg", "out.jpeg"])
        #expect(jpeg.status == 0)
        #expect(try s.read("out.jpeg").prefix(3) == Data([0xff, 0xd8, 0xff]))
        #expect(try MediaFiles.vipsHeader(s.read("out.jpeg"), suffix: "jpg").height == 100)
        let stdout = try await s.runner.run(["thumbnail", "--size", "64", "media/doc.pdf", "-"])
        #expect(stdout.status == 0)
        #expect(stdout.stdout.prefix(4) == Data([0x89, 0x50, 0x4e, 0x47]))
        #expect(try MediaFiles.vipsHeader(stdout.stdout, suffix: "png").height == 64)

        let unsupported = try await s.runner.run(["thumbnail", "media/song.mp3", "x.png"])
        #expect(unsupported.status == 1)
        #expect(unsupported.stderr.contains("no thumbnail for this type"), "\(unsupported.stderr)")
        #expect(!s.exists("x.png"))
        let badOutput = try await s.runner.run(["thumbnail", "media/photo.jpg", "out.gif"])
        #expect(badOutput.status != 0 && badOutput.stderr.contains(".png, .jpg or .jpeg"), "\(badOutput.stderr)")
        let missing = try await s.runner.run(["thumbnail", "media/none.jpg", "y.png"])
        #expect(missing.status == 1 && !s.exists("y.png"))
    }

    @Test("libvips, poppler-glib and FFmpeg are not loaded until a thumbnail or metadata needs them")
    func mediaLibrariesLoadLazily() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("served"), withIntermediateDirectories: true)
        let served = try await ServeCLITests.serve(s, "served")
        defer { served.stop() }
        // Read to the end (a /proc file has no size, so a one-shot read may stop at a page).
        let file = try #require(FileHandle(forReadingAtPath: "/proc/\(served.running.process.processIdentifier)/maps"))
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("libcurl"), "the maps are read: libcurl is linked")
        for library in ["libvips", "libpoppler", "librsvg", "libgobject", "libavformat", "libavcodec", "libswscale"] {
            #expect(!maps.contains(library), "\(library) is mapped by a server that made no thumbnail")
        }
    }

    @Test("a hostile image fails with exit 1 and a clear message, and writes nothing")
    func hostile() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        for name in ["bomb.png", "truncated.jpg"] {
            try s.write(name, try Data(contentsOf: try await MediaFiles.file("hostile/" + name)))
        }
        let bomb = try await s.runner.run(["thumbnail", "bomb.png", "b.png"])
        #expect(bomb.status == 1 && bomb.stderr.contains("50000 x 50000"), "\(bomb.stderr)")
        let truncated = try await s.runner.run(["thumbnail", "truncated.jpg", "t.png"])
        #expect(truncated.status == 1 && truncated.stderr.contains("could not make a thumbnail"), "\(truncated.stderr)")
        #expect(!s.exists("b.png") && !s.exists("t.png"))
    }

    @Test("meta prints sorted key: value lines, --json one object with the documented keys")
    func meta() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try await stage(s, ["photo.jpg", "song.mp3", "notes.txt"])
        let text = try await s.runner.run(["meta", "media/photo.jpg"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.text.split(separator: "\n").map(String.init)
        #expect(lines == lines.sorted(), "sorted by key")
        #expect(lines.contains("camera_model: EOS R5") && lines.contains("orientation: 6") && lines.contains("gps_longitude: -2.2945"))
        let json = try await s.runner.run(["meta", "--json", "media/song.mp3"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["title"] as? String == "Gateway Song")
        #expect(object["track"] as? Int == 3 && object["sample_rate"] as? Int == 44100 && object["channels"] as? Int == 2)
        #expect((object["duration_seconds"] as? Double).map { abs($0 - 5) < 0.1 } == true)
        #expect(object["width"] == nil, "absent keys are omitted")
        let plain = try await s.runner.run(["meta", "--json", "media/notes.txt"])
        let basic = try #require(try JSONSerialization.jsonObject(with: plain.stdout) as? [String: Any])
        #expect(Set(basic.keys) == ["format", "size", "path"])
        // A folder: one object per file.
        let folder = try await s.runner.run(["meta", "--json", "media"])
        #expect(folder.status == 0)
        let objects = try folder.text.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(Set(objects.compactMap { $0?["path"] as? String }.map { ($0 as NSString).lastPathComponent }) == ["photo.jpg", "song.mp3", "notes.txt"])
    }

    @Test("meta and thumbnail through a WebDAV remote")
    func webdav() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let config = """
        {"remotes": {"dav": {"type": "webdav", "url": "\(url)", "user": "\(environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway")",
          "password_env": "DAV_SECRET"}}}
        """
        try s.write("config.json", Data(config.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
        try await stage(s, ["photo.webp", "song.flac"])
        let folder = "media-cli-\(UUID().uuidString.prefix(8))"
        #expect(try await s.runner.run(["copy", "media", "dav:\(folder)"], extraEnvironment: env).status == 0)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "dav:\(folder)"], extraEnvironment: env) }
        let meta = try await s.runner.run(["meta", "--json", "dav:\(folder)/song.flac"], extraEnvironment: env)
        let object = try #require(try JSONSerialization.jsonObject(with: meta.stdout) as? [String: Any], "\(meta.stderr)")
        #expect(object["format"] as? String == "flac" && object["artist"] as? String == "The Testers")
        let thumb = try await s.runner.run(["thumbnail", "--size", "50", "dav:\(folder)/photo.webp", "w.png"], extraEnvironment: env)
        #expect(thumb.status == 0, "\(thumb.stderr)")
        #expect(try MediaFiles.vipsHeader(s.read("w.png"), suffix: "png") == (33, 50, 3))
    }
}
