import Foundation
@testable import GatewayTestSupport
import Testing
@testable import gateway

@Suite("gateway CLI (runs the built binary)")
struct CLITests {
    static let specialNames = ["a b.txt", "naïve café.txt", "#hash", "100%", "what?.txt", ".hidden", "x:y", "🚀"]

    func makeTree(_ s: CLIScratch, at root: String) async throws {
        for (index, name) in Self.specialNames.enumerated() {
            try s.write("\(root)/\(name)", Data("file \(index)\n".utf8))
        }
        try s.write("\(root)/sub dir/nested/deep.bin", Data((0..<300_000).map { UInt8($0 % 253) }))
        try s.write("\(root)/sub dir/zero", Data())
        try FileManager.default.createDirectory(atPath: s.path("\(root)/empty folder/also empty"), withIntermediateDirectories: true)
    }

    @Test("copy of a folder tree is byte-equal, keeps empty folders and modification times")
    func copyTree() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try await makeTree(s, at: "src")
        let old = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: s.path("src/a b.txt"))
        let result = try await s.runner.run(["copy", "src", "dst"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(try s.tree("dst") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("dst/" + item) == s.read("src/" + item), "\(item) differs")
        }
        let copied = try FileManager.default.attributesOfItem(atPath: s.path("dst/a b.txt"))[.modificationDate] as? Date
        #expect(copied.map { abs($0.timeIntervalSince(old)) < 0.001 } == true)
        // Copying again over the existing tree works too.
        #expect(try await s.runner.run(["copy", "src", "dst"]).status == 0)
    }

    @Test("copy of a file: to a name, into a folder with trailing slash, into an existing folder")
    func copyFileDestinations() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("f.txt", Data("content".utf8))
        try FileManager.default.createDirectory(atPath: s.path("existing"), withIntermediateDirectories: true)
        #expect(try await s.runner.run(["copy", "f.txt", "renamed.txt"]).status == 0)
        #expect(try s.read("renamed.txt") == Data("content".utf8))
        #expect(try await s.runner.run(["copy", "f.txt", "existing"]).status == 0)
        #expect(try s.read("existing/f.txt") == Data("content".utf8))
        #expect(try await s.runner.run(["copy", "f.txt", "newdir/"]).status == 0, "a trailing slash creates the folder")
        #expect(try s.read("newdir/f.txt") == Data("content".utf8))
    }

    @Test("ls prints names, -l details, -R recursion, --json a streamed array")
    func list() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try await makeTree(s, at: "t")
        let plain = try await s.runner.run(["ls", "t"])
        #expect(plain.status == 0)
        let lines = Set(plain.text.split(separator: "\n").map(String.init))
        #expect(lines == Set(Self.specialNames + ["sub dir/", "empty folder/"]))

        let recursive = try await s.runner.run(["ls", "-R", "t"])
        #expect(recursive.text.contains("sub dir/nested/deep.bin\n"))
        #expect(recursive.text.contains("empty folder/also empty/\n"))

        let long = try await s.runner.run(["ls", "-l", "t/sub dir"])
        #expect(long.text.contains(" zero\n"))
        #expect(long.text.contains("nested/"))

        let json = try await s.runner.run(["ls", "--json", "-R", "t"])
        #expect(json.status == 0)
        let entries = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(entries.count == Self.specialNames.count + 6)
        for entry in entries { #expect(Set(entry.keys) == ["name", "path", "type", "size", "modified"]) }
        let deep = try #require(entries.first { $0["name"] as? String == "deep.bin" })
        #expect(deep["path"] as? String == "sub dir/nested/deep.bin")
        #expect(deep["type"] as? String == "file")
        #expect(deep["size"] as? Int == 300_000)
        let modified = try #require(deep["modified"] as? String)
        #expect(try Date(modified, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) <= Date())
        let folder = try #require(entries.first { $0["name"] as? String == "empty folder" })
        #expect(folder["type"] as? String == "directory")
        #expect(folder["size"] is NSNull)

        let empty = try await s.runner.run(["ls", "--json", "t/empty folder/also empty"])
        #expect(try JSONSerialization.jsonObject(with: empty.stdout) as? [Any] != nil)
    }

    @Test("stat --json, cat with ranges, rcat from stdin")
    func statCatRcat() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let data = Data((0..<5000).map { UInt8($0 % 256) })
        try s.write("data.bin", data)
        let stat = try await s.runner.run(["stat", "--json", "data.bin"])
        let object = try #require(try JSONSerialization.jsonObject(with: stat.stdout) as? [String: Any])
        #expect(object["size"] as? Int == 5000)
        #expect(object["type"] as? String == "file")
        #expect(object["name"] as? String == "data.bin")
        #expect(Set(object.keys).isSuperset(of: ["name", "path", "type", "size", "modified", "created", "content_type", "version", "hidden", "read_only"]))

        #expect(try await s.runner.run(["cat", "data.bin"]).stdout == data)
        #expect(try await s.runner.run(["cat", "--offset", "100", "--count", "50", "data.bin"]).stdout == data.subdata(in: 100..<150))
        #expect(try await s.runner.run(["cat", "--offset", "4990", "data.bin"]).stdout == data.subdata(in: 4990..<5000))
        #expect(try await s.runner.run(["cat", "--offset", "-1", "data.bin"]).status == 2)

        let piped = Data(repeating: 0x41, count: 3 * 1024 * 1024 + 17)
        let rcat = try await s.runner.run(["rcat", "from-stdin.bin"], stdin: piped)
        #expect(rcat.status == 0, "stderr: \(rcat.stderr)")
        #expect(try s.read("from-stdin.bin") == piped)
    }

    @Test("mkdir with parents, move, rm and rm -r")
    func mkdirMoveRemove() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        #expect(try await s.runner.run(["mkdir", "a/b/c"]).status == 0)
        #expect(try await s.runner.run(["mkdir", "a/b/c"]).status == 0, "mkdir of an existing folder is fine")
        try s.write("a/b/c/f.txt", Data("f".utf8))
        #expect(try await s.runner.run(["move", "a/b/c/f.txt", "a/g.txt"]).status == 0)
        #expect(try s.read("a/g.txt") == Data("f".utf8))
        #expect(!s.exists("a/b/c/f.txt"))
        #expect(try await s.runner.run(["move", "a/b", "moved"]).status == 0)
        #expect(s.exists("moved/c"))
        let notEmpty = try await s.runner.run(["rm", "a"])
        #expect(notEmpty.status == 1)
        #expect(notEmpty.stderr.contains("use rm -r"))
        #expect(s.exists("a/g.txt"))
        #expect(try await s.runner.run(["rm", "a/g.txt"]).status == 0)
        #expect(try await s.runner.run(["rm", "-r", "moved"]).status == 0)
        #expect(!s.exists("moved"))
    }

    @Test("about --json reports total, used and free")
    func about() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let result = try await s.runner.run(["about", "--json", "."])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(Set(object.keys) == ["total", "used", "free"])
        #expect((object["total"] as? Int ?? 0) > 0)
        #expect(try await s.runner.run(["about", "."]).text.contains("Total:"))
    }

    @Test("failures: one line 'gateway: <op> <location>: <reason>' and exit code 1")
    func operationFailures() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let missing = try await s.runner.run(["stat", "nothere.txt"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "gateway: stat nothere.txt: no such file or directory\n")
        let copy = try await s.runner.run(["copy", "nothere", "x"])
        #expect(copy.status == 1)
        #expect(copy.stderr.hasPrefix("gateway: copy nothere: "))
        #expect(try await s.runner.run(["cat", "."]).status == 1)
    }

    @Test("usage and config errors exit with 2")
    func usageAndConfigErrors() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        #expect(try await s.runner.run(["ls", "--no-such-flag", "."]).status == 2)
        #expect(try await s.runner.run(["frobnicate"]).status == 2)
        let unknownRemote = try await s.runner.run(["ls", "nosuchremote:"])
        #expect(unknownRemote.status == 2)
        #expect(unknownRemote.stderr.contains("unknown remote"))

        try s.write("bad.json", Data(#"{"remotes": {"docs": {"type": "local", "rot": "/tmp"}}}"#.utf8))
        let validate = try await s.runner.run(["config", "validate", "bad.json"])
        #expect(validate.status == 2)
        #expect(validate.stderr.contains(#"bad.json: remote "docs": unknown key "rot" for type "local" (did you mean "root"?)"#))
        let lines = validate.stderr.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("gateway: config ") })

        let used = try await s.runner.run(["--config", "bad.json", "ls", "docs:"])
        #expect(used.status == 2)
        #expect(try await s.runner.run(["ls", "--config", "missing.json", "."]).status == 2)
        #expect(try await s.runner.run(["help"]).status == 0)
        #expect(try await s.runner.run(["--help"]).text.contains("Exit codes"))
    }

    @Test("named remotes from a config file, GATEWAY_CONFIG and environment overrides")
    func namedRemotes() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("store/inside.txt", Data("inside".utf8))
        try s.write("other/elsewhere.txt", Data("other".utf8))
        try s.write("config.json", Data(#"{"remotes": {"store": {"type": "local", "root": "\#(s.path("store"))"}}}"#.utf8))

        let listed = try await s.runner.run(["--config", "config.json", "ls", "store:"])
        #expect(listed.text == "inside.txt\n")
        let remotes = try await s.runner.run(["remotes", "--json"], extraEnvironment: ["GATEWAY_CONFIG": s.path("config.json")])
        let parsed = try #require(try JSONSerialization.jsonObject(with: remotes.stdout) as? [[String: Any]])
        #expect(parsed.first?["name"] as? String == "store")
        #expect(parsed.first?["type"] as? String == "local")

        let overridden = try await s.runner.run(["ls", "store:"], extraEnvironment: [
            "GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_REMOTE_STORE_ROOT": s.path("other"),
        ])
        #expect(overridden.text == "elsewhere.txt\n")

        // The default location is $XDG_CONFIG_HOME/gateway/config.json.
        try s.write("config-home/gateway/config.json", try s.read("config.json"))
        #expect(try await s.runner.run(["cat", "store:inside.txt"]).text == "inside")
        // A remote path cannot climb out of its root.
        let escape = try await s.runner.run(["cat", "store:../other/elsewhere.txt"])
        #expect(escape.status != 0)
        #expect(escape.stdout.isEmpty)
        // Copy between a named remote and a bare path.
        #expect(try await s.runner.run(["copy", "store:inside.txt", "other/"]).status == 0)
        #expect(try s.read("other/inside.txt") == Data("inside".utf8))
        // A local name containing a colon is written ./a:b.
        try s.write("a:b", Data("colon".utf8))
        #expect(try await s.runner.run(["cat", "./a:b"]).text == "colon")
    }

    @Test("--progress prints progress lines and a summary on stderr; --quiet prints none")
    func progress() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("p/big.bin", Data(count: 2_000_000))
        let withProgress = try await s.runner.run(["copy", "--progress", "p", "q"])
        #expect(withProgress.status == 0)
        #expect(withProgress.stderr.contains("gateway: copied 1 file (1.9 MiB), skipped 0, failed 0"))
        let quiet = try await s.runner.run(["copy", "--quiet", "p", "r"])
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty)
    }

    @Test("Ctrl-C during a transfer exits 130 and leaves no partial file")
    func interrupt() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let process = try ChildProcess.spawn(GatewayRunner.binary, ["rcat", s.path("partial.bin")], environment: s.runner.environment,
                                             stdin: .pipe)
        defer { process.closeInput() }
        #expect(process.write(Data(count: 1_000_000)))
        // Mid-transfer once the upload's temporary exists (a bound only a broken run reaches).
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        func temporaryExists() -> Bool {
            ((try? FileManager.default.contentsOfDirectory(atPath: s.base)) ?? []).contains { $0.hasPrefix(".partial.bin.gateway-") }
        }
        while !temporaryExists(), clock.now < deadline { usleep(5_000) }
        #expect(temporaryExists(), "the transfer never started")
        process.signal(SIGINT)
        await process.exited()
        #expect(process.terminationStatus == 130)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.base).filter { $0 != "config-home" }
        #expect(leftovers.isEmpty, "left behind: \(leftovers)")
    }

    @Test("edge cases: linked folders, copying into itself, failed JSON listings, remote without config")
    func edgeCases() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("real/inner.txt", Data("inner".utf8))
        try FileManager.default.createSymbolicLink(atPath: s.path("link"), withDestinationPath: "real")
        #expect(try await s.runner.run(["ls", "link"]).text == "inner.txt\n", "a link to a folder lists the folder")

        // A tree holding a link to a folder: the link is skipped with a notice, the rest copied.
        try FileManager.default.createSymbolicLink(atPath: s.path("real/loop"), withDestinationPath: ".")
        let copied = try await s.runner.run(["copy", "real", "copy"])
        #expect(copied.status == 0, "stderr: \(copied.stderr)")
        #expect(copied.stderr.contains("real/loop: skipped: symbolic link to a folder is not followed"))
        #expect(try s.read("copy/inner.txt") == Data("inner".utf8))
        try FileManager.default.removeItem(atPath: s.path("real/loop"))

        // Copying a folder into itself is refused, also when a named remote reaches the same place.
        try s.write("config.json", Data(#"{"remotes": {"here": {"type": "local", "root": "\#(s.base)"}}}"#.utf8))
        let nested = try await s.runner.run(["--config", "config.json", "copy", "real", "here:real/deeper"])
        #expect(nested.status == 1)
        #expect(nested.stderr.contains("the destination is inside the source folder"))
        #expect(!s.exists("real/deeper"))
        #expect(try await s.runner.run(["copy", "real", "real/sub"]).status == 1)

        // A listing that fails writes no JSON that could pass for an empty folder.
        let missing = try await s.runner.run(["ls", "--json", "missing"])
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)

        let unknown = try await s.runner.run(["ls", "nosuch:"])
        #expect(unknown.stderr.contains(#"remote "nosuch": unknown remote (no remotes are configured"#))
        #expect(try await s.runner.run(["config", "validate"]).text.contains("no config file (built-in default)"))
    }
}

/// `--help` texts are re-flowed so ArgumentParser wraps them to the terminal's width.
@Suite("Help text")
struct HelpTextTests {
    @Test("paragraph lines join; blank lines, indented examples and lead-in lines stay")
    func reflow() {
        let text = "One paragraph\nwrapped in source.\n\nExamples:\n  gateway undo\n  gateway undo 12\nLast line."
        #expect(HelpText.reflow(text) == "One paragraph wrapped in source.\n\nExamples:\n  gateway undo\n  gateway undo 12\nLast line.")
    }
}
