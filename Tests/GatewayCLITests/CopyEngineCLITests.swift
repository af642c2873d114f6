import Foundation
@testable import GatewayTestSupport
import Testing

@Suite("gateway copy, sync and check")
struct CopyEngineCLITests {
    @Test("--multi-thread-streams and --multi-thread-cutoff: a large file into another local remote, byte-equal; bad values are usage errors")
    func multiThread() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let data = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        try s.write("big.bin", data)
        try FileManager.default.createDirectory(atPath: s.path("store"), withIntermediateDirectories: true)
        try s.write("config.json", Data(#"{"remotes": {"store": {"type": "local", "root": "\#(s.path("store"))"}}}"#.utf8))
        let copy = try await s.runner.run(["--config", "config.json", "copy", "--multi-thread-streams", "3", "--multi-thread-cutoff", "1M",
                                     "big.bin", "store:big.bin"])
        #expect(copy.status == 0, "stderr: \(copy.stderr)")
        #expect(try s.read("store/big.bin") == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("store")) == ["big.bin"])
        for bad in [["--multi-thread-cutoff", "12Q"], ["--multi-thread-streams", "0"], ["--multi-thread-cutoff", "-5M"]] {
            let refused = try await s.runner.run(["copy"] + bad + ["big.bin", "other.bin"])
            #expect(refused.status == 2, "\(bad): \(refused.stderr)")
            #expect(refused.stderr.contains("--multi-thread"), "\(bad): \(refused.stderr)")
            #expect(!s.exists("other.bin"))
        }
    }

    @Test("ls -l and ls --json print modification times in UTC, to the second and to the millisecond")
    func listingTimes() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("d/f.txt", Data("x".utf8))
        try s.write("d/old.txt", Data("y".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_795_267_423.25)], ofItemAtPath: s.path("d/f.txt"))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 86_400 * 365 + 0.5)], ofItemAtPath: s.path("d/old.txt"))
        let long = try await s.runner.run(["ls", "-l", "d"])
        #expect(long.text == "           1 2026-11-21 13:23:43 f.txt\n           1 1971-01-01 00:00:00 old.txt\n")
        let json = try await s.runner.run(["ls", "--json", "d"])
        #expect(json.text.contains("\"modified\":\"2026-11-21T13:23:43.250Z\""), "\(json.text)")
        #expect(json.text.contains("\"modified\":\"1971-01-01T00:00:00.500Z\""), "\(json.text)")
    }

    @Test("--checksum (-c): copy and check compare same-size files by content, not by time")
    func checksum() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/a.txt", Data("aaaa".utf8))
        try s.write("dst/a.txt", Data("bbbb".utf8))
        let time = Date(timeIntervalSince1970: 1_790_000_000)
        for file in ["src/a.txt", "dst/a.txt"] { try FileManager.default.setAttributes([.modificationDate: time], ofItemAtPath: s.path(file)) }

        #expect(try await s.runner.run(["check", "src", "dst"]).status == 0, "same size and time look unchanged")
        let check = try await s.runner.run(["check", "-c", "src", "dst"])
        #expect(check.status == 1)
        #expect(check.text == "different a.txt\n")
        #expect(try await s.runner.run(["copy", "src", "dst"]).stderr.contains("skipped 1"))
        let copy = try await s.runner.run(["copy", "--checksum", "-v", "src", "dst"])
        #expect(copy.status == 0, "stderr: \(copy.stderr)")
        #expect(copy.stderr.contains("copied 1 file"))
        #expect(try s.read("dst/a.txt") == Data("aaaa".utf8))
        let again = try await s.runner.run(["copy", "-c", "-v", "src", "dst"])
        #expect(again.stderr.contains("skipped: unchanged (same checksum)"), "stderr: \(again.stderr)")
        #expect(try await s.runner.run(["check", "--checksum", "src", "dst"]).status == 0)
        // --checkers: how many files check compares at once; out of range is a usage error.
        try s.write("src/b.txt", Data("b".utf8))
        let sorted = try await s.runner.run(["check", "--checkers", "1", "src", "dst"])
        #expect(sorted.status == 1 && sorted.text == "missing b.txt\n", "\(sorted.text) \(sorted.stderr)")
        let bad = try await s.runner.run(["check", "--checkers", "0", "src", "dst"])
        #expect(bad.status == 2, "stderr: \(bad.stderr)")
        #expect(bad.stderr.contains("--checkers must be between 1 and 256"))
    }

    @Test("copy skips unchanged files; --json summary; sync --dry-run lists deletions; sync deletes; check exit codes")
    func workflow() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        for index in 0..<20 { try s.write("src/f\(index).txt", Data("file \(index)".utf8)) }
        try s.write("src/sub/deep.bin", Data(count: 100_000))

        let first = try await s.runner.run(["copy", "--json", "--transfers", "3", "src", "dst"])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: first.stdout) as? [String: Any])
        #expect(summary["copied"] as? Int == 21)
        #expect(summary["failed"] as? Int == 0)
        #expect(summary["dry_run"] as? Bool == false)
        #expect(Set(summary.keys) == ["copied", "skipped", "failed", "deleted", "bytes", "elapsed_seconds", "dry_run"])

        let second = try await s.runner.run(["copy", "src", "dst"])
        #expect(second.stderr.contains("copied 0 files (0 B), skipped 21, failed 0"))

        #expect(try await s.runner.run(["check", "src", "dst"]).status == 0)
        try s.write("dst/extra.txt", Data("extra".utf8))
        try s.write("dst/f3.txt", Data("changed size".utf8))
        let check = try await s.runner.run(["check", "--json", "src", "dst"])
        #expect(check.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: check.stdout) as? [String: Any])
        #expect(report["extra"] as? [String] == ["extra.txt"])
        #expect(report["different"] as? [String] == ["f3.txt"])
        #expect(report["missing"] as? [String] == [])

        let dry = try await s.runner.run(["sync", "--dry-run", "src", "dst"])
        #expect(dry.status == 0)
        #expect(dry.text.contains("copy src/f3.txt\n"))
        #expect(dry.text.contains("delete dst/extra.txt\n"))
        #expect(s.exists("dst/extra.txt"))

        let sync = try await s.runner.run(["sync", "src", "dst"])
        #expect(sync.status == 0, "stderr: \(sync.stderr)")
        #expect(sync.stderr.contains("deleted 1"))
        #expect(!s.exists("dst/extra.txt"))
        #expect(try s.read("dst/f3.txt") == Data("file 3".utf8))
        #expect(try await s.runner.run(["check", "src", "dst"]).status == 0)

        let move = try await s.runner.run(["move", "src", "moved"])
        #expect(move.status == 0)
        #expect(!s.exists("src"))
        #expect(try s.read("moved/sub/deep.bin").count == 100_000)
        #expect(try await s.runner.run(["sync", "moved/f1.txt", "x"]).status == 1, "sync needs a folder")
        #expect(try await s.runner.run(["copy", "--transfers", "0", "moved", "y"]).status == 2)
    }

    @Test("edge cases: move keeps differing sources, links, dry-run counts and names, parents for a single file")
    func edgeCases() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // move --ignore-existing must not delete a source whose destination differs.
        try s.write("m/keep.txt", Data("new content".utf8))
        try s.write("m/same.txt", Data("same".utf8))
        #expect(try await s.runner.run(["copy", "m/same.txt", "mdst/same.txt"]).status == 0)
        try s.write("mdst/keep.txt", Data("old".utf8))
        let move = try await s.runner.run(["move", "--ignore-existing", "m", "mdst"])
        #expect(move.status == 0, "stderr: \(move.stderr)")
        #expect(try s.read("m/keep.txt") == Data("new content".utf8), "a differing source must stay")
        #expect(!s.exists("m/same.txt"), "an identical source is moved (removed)")

        // Links: a link to a file is copied as its target and then found unchanged; a link to a
        // folder is skipped with a notice; check sees no difference.
        try s.write("l/target.txt", Data("target".utf8))
        try FileManager.default.createDirectory(atPath: s.path("l/folder"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: s.path("l/link.txt"), withDestinationPath: "target.txt")
        try FileManager.default.createSymbolicLink(atPath: s.path("l/link-dir"), withDestinationPath: "folder")
        let first = try await s.runner.run(["copy", "l", "ldst"])
        #expect(first.status == 0)
        #expect(first.stderr.contains("l/link-dir: skipped: symbolic link to a folder is not followed"))
        #expect(try s.read("ldst/link.txt") == Data("target".utf8))
        #expect(!s.exists("ldst/link-dir"))
        let second = try await s.runner.run(["copy", "l", "ldst"])
        #expect(second.stderr.contains("copied 0 files"), "stderr: \(second.stderr)")
        #expect(try await s.runner.run(["check", "l", "ldst"]).status == 0)

        // Dry run: planned copies are counted, mkdir lines name the destination.
        try s.write("d/sub/f.txt", Data("f".utf8))
        let dry = try await s.runner.run(["copy", "--dry-run", "--json", "d", "newdst"])
        #expect(dry.text.contains("mkdir newdst\n"))
        #expect(dry.text.contains("mkdir newdst/sub\n"))
        #expect(dry.text.contains("copy d/sub/f.txt\n"))
        #expect(dry.text.contains(#""copied":1"#))
        #expect(dry.stderr.contains("dry run: would have copied 1 file"))
        #expect(!s.exists("newdst"))

        // A single file into a folder that does not exist yet: its parents are created.
        let single = try await s.runner.run(["copy", "d/sub/f.txt", "deep/er/"])
        #expect(single.status == 0, "stderr: \(single.stderr)")
        #expect(try s.read("deep/er/f.txt") == Data("f".utf8))
    }
}
