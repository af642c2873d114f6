import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway` with S3 remotes on moto and `rclone serve s3`: a round trip local → S3 → WebDAV → FTP
/// → S3 → local, a second copy that finds everything unchanged, and a multipart upload killed with
/// SIGKILL, continued by the rerun and cleaned up by `gateway cleanup`.
@Suite("gateway CLI with S3 remotes", .serialized)
struct S3CLITests {
    /// A config with S3 remotes `moto`, `motov` (a bucket that keeps versions) and `rs3` (secrets from the environment), WebDAV `apache`
    /// and FTP `pyftpd`. `partSize` is the moto remote's part size.
    func configure(_ s: CLIScratch, partSize: Int = 5 << 20) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        guard let moto = environment["GATEWAY_TEST_S3_MOTO_URL"], let rclone = environment["GATEWAY_TEST_S3_RCLONE_URL"],
              let key = environment["GATEWAY_TEST_S3_ACCESS_KEY"], let secret = environment["GATEWAY_TEST_S3_SECRET_KEY"],
              let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let pyftpd = environment["GATEWAY_TEST_FTP_PYFTPDLIB_URL"],
              let pyUser = environment["GATEWAY_TEST_FTP_PYFTPDLIB_USER"], let ftpPassword = environment["GATEWAY_TEST_FTP_PASSWORD"] else {
            throw CLITestSetupError("GATEWAY_TEST_S3_* / WEBDAV / FTP not set: run ./scripts/test.sh (it starts the servers)")
        }
        let config = """
        {"remotes": {
          "moto": {"type": "s3", "endpoint": "\(moto)", "bucket": "gateway", "access_key_id": "\(key)", "secret_access_key_env": "S3_SECRET",
                   "part_size": \(partSize)},
          "motov": {"type": "s3", "endpoint": "\(moto)", "bucket": "gateway-versioned", "access_key_id": "\(key)", "secret_access_key_env": "S3_SECRET"},
          "rs3": {"type": "s3", "endpoint": "\(rclone)", "bucket": "gateway", "access_key_id": "\(key)", "secret_access_key_env": "S3_SECRET"},
          "apache": {"type": "webdav", "url": "\(apache)", "user": "\(environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway")", "password_env": "DAV_SECRET"},
          "pyftpd": {"type": "ftp", "url": "\(pyftpd)", "user": "\(pyUser)", "password_env": "FTP_SECRET"}
        }}
        """
        try s.write("config.json", Data(config.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "S3_SECRET": secret, "FTP_SECRET": ftpPassword,
                "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
    }

    @Test("local -> S3 (moto) -> WebDAV -> FTP -> S3 (rclone serve s3) -> local is byte-equal; a second copy skips all",
          .timeLimit(.minutes(3)))
    func roundTrip() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try configure(s)
        let names = ["a b.txt", "naïve café.txt", "#hash", "100%", "plus+sign", "at@x", ".hidden", "🚀"]
        for (index, name) in names.enumerated() { try s.write("src/\(name)", Data("file \(index)\n".utf8)) }
        try s.write("src/sub dir/nested/big.bin", Data((0..<(12 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }))
        try s.write("src/sub dir/zero", Data())
        try FileManager.default.createDirectory(atPath: s.path("src/empty folder/also empty"), withIntermediateDirectories: true)
        let folder = "rt-\(UUID().uuidString.prefix(8))"
        defer {
            for location in ["moto:\(folder)", "rs3:\(folder)", "apache:\(folder)", "pyftpd:\(folder)"] {
                _ = try? s.runner.runBlocking(["rm", "-r", location], extraEnvironment: environment)
            }
        }
        let hops = [("src", "moto:\(folder)"), ("moto:\(folder)", "apache:\(folder)"), ("apache:\(folder)", "pyftpd:\(folder)"),
                    ("pyftpd:\(folder)", "rs3:\(folder)"), ("rs3:\(folder)", "back")]
        for (from, to) in hops {
            let result = try await s.runner.run(["copy", from, to], extraEnvironment: environment)
            #expect(result.status == 0, "copy \(from) \(to): \(result.stderr)")
        }
        #expect(try s.tree("back") == s.tree("src"), "empty folders are kept too (directory markers)")
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        let again = try await s.runner.run(["copy", "--json", "src", "moto:\(folder)"], extraEnvironment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.text.contains("\"copied\":0"), "nothing changed, nothing copied: \(again.text)")
        let check = try await s.runner.run(["check", "src", "moto:\(folder)"], extraEnvironment: environment)
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        let ranged = try await s.runner.run(["cat", "--offset", "5000000", "--count", "10", "moto:\(folder)/sub dir/nested/big.bin"],
                                            extraEnvironment: environment)
        #expect(ranged.stdout == (try s.read("src/sub dir/nested/big.bin")).subdata(in: 5_000_000..<5_000_010))
    }

    @Test("a download whose MD5 is known, above the cutoff, is two ranged GETs (1 MiB, then the rest) from rclone serve s3: byte-equal",
          .timeLimit(.minutes(2)))
    func splitVerifiedDownload() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try configure(s)
        let folder = "sv-\(UUID().uuidString.prefix(8))"
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "rs3:\(folder)"], extraEnvironment: environment) }
        // One PUT: the object's ETag is its MD5, which the download checks as it streams.
        try s.write("big.bin", Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }))
        let up = try await s.runner.run(["copy", s.path("big.bin"), "rs3:\(folder)/"], extraEnvironment: environment)
        #expect(up.status == 0, "\(up.stderr)")
        let down = try await s.runner.run(["--verbose", "copy", "--multi-thread-cutoff", "1M", "rs3:\(folder)/big.bin", s.path("back") + "/"],
                                          extraEnvironment: environment)
        #expect(down.status == 0, "\(down.stderr.suffix(2000))")
        let gets = down.stderr.split(separator: "\n").filter { $0.contains("method=GET") && $0.contains("http request") && $0.contains("big.bin") }
        #expect(gets.count == 2, "\(gets.joined(separator: "\n"))")
        #expect(try s.read("back/big.bin") == s.read("big.bin"))
    }

    @Test("on a bucket that keeps versions, rm -r, an overwriting copy and undo: everything is back, nothing was copied to the trash",
          .timeLimit(.minutes(3)))
    func versionedUndo() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try configure(s)
        let folder = "vu-\(UUID().uuidString.prefix(8))"
        defer {
            for location in ["motov:\(folder)", "motov:.gateway-trash"] {
                _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment)
            }
        }
        try s.write("src/tree/a.txt", Data("first a\n".utf8))
        try s.write("src/tree/deep/b.txt", Data("first b\n".utf8))
        #expect(try await s.runner.run(["copy", "src", "motov:\(folder)"], extraEnvironment: environment).status == 0)
        try s.write("src/tree/a.txt", Data("second a, longer\n".utf8))
        let overwrite = try await s.runner.run(["copy", "src", "motov:\(folder)"], extraEnvironment: environment)
        #expect(overwrite.status == 0, "\(overwrite.stderr)")
        let removed = try await s.runner.run(["rm", "-r", "motov:\(folder)/tree"], extraEnvironment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await s.runner.run(["cat", "motov:\(folder)/tree/a.txt"], extraEnvironment: environment).status != 0)

        let listed = try await s.runner.run(["trash", "list", "--json", "motov:\(folder)"], extraEnvironment: environment)
        #expect(listed.status == 0 && listed.text.contains("\(folder)/tree\"") && listed.text.contains("\"type\":\"directory\""),
                "\(listed.text)")
        // The trash holds records of versions, never a copy of the bytes (no `files/` in it).
        let copies = try await s.runner.run(["ls", "motov:.gateway-trash/files"], extraEnvironment: environment)
        #expect(copies.status != 0, "\(copies.text)")
        let records = try await s.runner.run(["ls", "motov:.gateway-trash/versions"], extraEnvironment: environment)
        #expect(records.status == 0 && records.text.split(separator: "\n").count >= 2, "\(records.text)\(records.stderr)")

        let undoRemove = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undoRemove.status == 0, "\(undoRemove.stderr)")
        var a = try await s.runner.run(["cat", "motov:\(folder)/tree/a.txt"], extraEnvironment: environment)
        #expect(a.text == "second a, longer\n")
        let b = try await s.runner.run(["cat", "motov:\(folder)/tree/deep/b.txt"], extraEnvironment: environment)
        #expect(b.text == "first b\n")
        let undoCopy = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undoCopy.status == 0, "\(undoCopy.stderr)")
        a = try await s.runner.run(["cat", "motov:\(folder)/tree/a.txt"], extraEnvironment: environment)
        #expect(a.text == "first a\n", "the overwritten version is current again")
    }

    @Test("a 1 GiB multipart upload killed with SIGKILL: the rerun sends only the missing parts; cleanup aborts what is left",
          .timeLimit(.minutes(5)))
    func killedMultipartUpload() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        let motoURL = try #require(URL(string: environment["GATEWAY_TEST_S3_MOTO_URL"] ?? ""))
        // The upload goes through a proxy that stops forwarding after 640 MiB, so the kill comes
        // mid-upload whatever the machine's speed.
        let proxy = try DroppingProxy(targetPort: motoURL.port ?? 80, dropAfter: .max, maxDrops: 0)
        defer { proxy.stop() }
        var configured = try configure(s, partSize: 64 << 20)
        let direct = configured
        let config = try String(decoding: s.read("config.json"), as: UTF8.self)
            .replacingOccurrences(of: "\"endpoint\": \"\(motoURL.absoluteString)\"", with: "\"endpoint\": \"http://127.0.0.1:\(proxy.port)\"")
        try s.write("proxied.json", Data(config.utf8))
        configured["GATEWAY_CONFIG"] = s.path("proxied.json")
        // 1 GiB written a MiB at a time (never held whole), each MiB different.
        #expect(FileManager.default.createFile(atPath: s.path("big.bin"), contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: s.path("big.bin")))
        var chunk = Data(count: 1 << 20)
        for mebibyte in 0..<1024 {
            chunk.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
                for index in stride(from: 0, to: buffer.count, by: 4093) { buffer[index] = UInt8(truncatingIfNeeded: index / 4093 &+ mebibyte) }
            }
            try handle.write(contentsOf: chunk)
        }
        try handle.close()
        let folder = "kill-\(UUID().uuidString.prefix(8))"
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "moto:\(folder)"], extraEnvironment: direct) }
        proxy.setHolding(afterTotal: 640 << 20)
        let victim = try s.runner.start(["copy", s.path("big.bin"), "moto:\(folder)/"], extraEnvironment: configured)
        try await waitUntil("the upload to stall at the proxy") { proxy.held > 0 }
        victim.kill()
        proxy.cutAll()
        let cleanupDry = try await s.runner.run(["cleanup", "--dry-run", "--json", "--older-than", "0s", "moto:\(folder)"], extraEnvironment: direct)
        #expect(cleanupDry.status == 0, "\(cleanupDry.stderr)")
        #expect(cleanupDry.text.contains("\"kind\":\"upload\""), "the killed upload is listed: \(cleanupDry.text)")

        // The rerun continues the upload: parts already there are not sent again.
        let rerun = try await s.runner.run(["--verbose", "copy", s.path("big.bin"), "moto:\(folder)/"], extraEnvironment: direct)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("continuing an interrupted multipart upload"), "\(rerun.stderr.suffix(2000))")
        // 16 parts of 64 MiB; at least the 5 that went through before the proxy stalled (640 MiB,
        // 4 parts in flight) are kept.
        let puts = rerun.stderr.split(separator: "\n").filter { $0.contains("method=PUT") && $0.contains("status=200") && $0.contains("big.bin") }
        // (What else the rerun said about its requests: retries, failures.)
        let notes = rerun.stderr.split(separator: "\n").filter {
            !$0.contains("status=200") && ($0.contains("retr") || $0.contains("status=") || $0.contains("warning") || $0.contains("error"))
        }
        #expect(puts.count > 0 && puts.count <= 11, "the rerun sent \(puts.count) parts of 16: \(notes.suffix(30).joined(separator: "\n"))")
        let back = try await s.runner.run(["copy", "moto:\(folder)/big.bin", s.path("back") + "/"], extraEnvironment: direct)
        #expect(back.status == 0, "\(back.stderr)")
        let compared = try ChildProcess.run("/usr/bin/cmp", [s.path("big.bin"), s.path("back/big.bin")], environment: [:])
        #expect(compared.status == 0, "the object is the file, byte for byte: \(String(decoding: compared.stdout, as: UTF8.self))")
        let left = try await s.runner.run(["cleanup", "--json", "--older-than", "0s", "moto:\(folder)"], extraEnvironment: direct)
        #expect(!left.text.contains("\"kind\":\"upload\""), "nothing is left after the completed rerun: \(left.text)")

        // An upload left on purpose is aborted by cleanup (a fresh proxy: the first counted its bytes).
        let secondProxy = try DroppingProxy(targetPort: motoURL.port ?? 80, dropAfter: .max, maxDrops: 0)
        defer { secondProxy.stop() }
        try s.write("proxied.json", Data(config.replacingOccurrences(of: "127.0.0.1:\(proxy.port)", with: "127.0.0.1:\(secondProxy.port)").utf8))
        secondProxy.setHolding(afterTotal: 80 << 20)
        let second = try s.runner.start(["copy", s.path("big.bin"), "moto:\(folder)/again/"], extraEnvironment: configured)
        try await waitUntil("the second upload to stall") { secondProxy.held > 0 }
        second.kill()
        secondProxy.cutAll()
        let cleanup = try await s.runner.run(["cleanup", "--json", "--older-than", "0s", "moto:\(folder)"], extraEnvironment: direct)
        #expect(cleanup.status == 0, "\(cleanup.stderr)")
        #expect(cleanup.text.contains("\"kind\":\"upload\"") && cleanup.text.contains("\"removed\":true"), "\(cleanup.text)")
        let after = try await s.runner.run(["cleanup", "--dry-run", "--json", "--older-than", "0s", "moto:\(folder)"], extraEnvironment: direct)
        #expect(!after.text.contains("\"kind\":\"upload\""), "\(after.text)")
    }
}
