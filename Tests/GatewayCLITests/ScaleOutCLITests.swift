import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Issue 33: `gateway plan`, workers running chunks (`--plan --shard`, `--shard-from-env`),
/// `finalize`, `plan-status` and `--hash-shard`, as an operator and a scheduler use them.
@Suite("Scale-out: plans, shards, finalize")
struct ScaleOutCLITests {
    /// A source tree of `count` files in a few folders, awkward names and an empty folder.
    static func makeTree(_ s: CLIScratch, count: Int, size: Int = 100) throws {
        let awkward = ["a b.txt", "naïve café.txt", "#hash", "100%", "tab\tname", "new\nline", "back\\slash", "🚀"]
        for (index, name) in awkward.enumerated() { try s.write("src/odd/\(name)", Data("awkward \(index)\n".utf8)) }
        for index in 0..<count {
            try s.write("src/d\(index % 5)/f\(index).bin", Bytes.pattern(size + index % 7, seed: UInt64(index)))
        }
        try FileManager.default.createDirectory(atPath: s.path("src/empty/also empty"), withIntermediateDirectories: true)
    }

    static func json(_ result: GatewayRunner.Result) throws -> [String: Any] {
        let line = result.text.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(result.text) \(result.stderr)")
    }

    /// The WebDAV server that `server` (an environment variable) names as remote `apache`, directly
    /// and through a ``DroppingProxy``: the proxy, and the environments of a worker using each.
    /// Runs the chunks `0..<count` of the plan in `plan` (but `except`) at once, as workers on
    /// other nodes would, and expects each to exit 0.
    static func runShards(_ s: CLIScratch, plan: String = "plan", of count: Int, except: Int? = nil, environment: [String: String],
                          sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await withThrowingTaskGroup(of: (Int, GatewayRunner.Result).self) { group in
            for shard in 0..<count where shard != except {
                group.addTask { (shard, try await s.runner.run(["copy", "--plan", plan, "--shard", "\(shard)"], extraEnvironment: environment)) }
            }
            for try await (shard, result) in group {
                #expect(result.status == 0, "chunk \(shard): \(result.stderr)", sourceLocation: sourceLocation)
            }
        }
    }

    static func proxiedRemote(_ s: CLIScratch, server: String) throws -> (DroppingProxy, direct: [String: String], slow: [String: String]) {
        let environment = ProcessInfo.processInfo.environment
        guard let base = environment[server], let url = URL(string: base), let port = url.port else {
            throw CLITestSetupError("\(server) not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let proxy = try DroppingProxy(targetPort: port, dropAfter: .max, maxDrops: 0)
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        func config(_ base: String) -> String {
            #"{"remotes": {"apache": {"type": "webdav", "url": "\#(base)", "user": "\#(user)", "password_env": "DAV_SECRET"}}}"#
        }
        var proxied = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        proxied.port = proxy.port
        do {
            try s.write("direct.json", Data(config(base).utf8))
            try s.write("proxied.json", Data(config(proxied.url!.absoluteString).utf8))
        } catch {
            proxy.stop()
            throw error
        }
        let direct = ["GATEWAY_CONFIG": s.path("direct.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
        var slow = direct
        slow["GATEWAY_CONFIG"] = s.path("proxied.json")
        return (proxy, direct, slow)
    }

    @Test("sync in 3 chunks: a failed chunk stops finalize from deleting; after its rerun, finalize deletes exactly the extras")
    func syncWithFailedChunk() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try Self.makeTree(s, count: 90)
        try s.write("dst/extra.txt", Data("old".utf8))
        try s.write("dst/stale/deep/old.bin", Data("old".utf8))
        try s.write("dst/d1/extra-in-kept-folder", Data("old".utf8))
        let plan = try await s.runner.run(["plan", "src", "dst", "--out", "plan", "--chunks", "3", "--mode", "sync", "--json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        let planned = try Self.json(plan)
        #expect(planned["chunks"] as? Int == 3 && planned["files"] as? Int == 98 && planned["mode"] as? String == "sync", "\(planned)")
        // A file of chunk 1 vanishes after planning: that chunk fails.
        let chunk1 = String(decoding: try s.read("plan/chunks/000001.tsv"), as: UTF8.self)
        let victim = try #require(chunk1.split(separator: "\n").first { $0.hasPrefix("f\t") }.map { String($0.split(separator: "\t")[3]) })
        let saved = try s.read("src/" + victim)
        try FileManager.default.removeItem(atPath: s.path("src/" + victim))
        var statuses: [Int32] = []
        for shard in 0..<3 { statuses.append(try await s.runner.run(["sync", "--plan", "plan", "--shard", "\(shard)"]).status) }
        #expect(statuses == [0, 1, 0])
        let status = try Self.json(try await s.runner.run(["plan-status", "--json", "plan"]))
        #expect(status["done"] as? Int == 2 && status["failed"] as? Int == 1 && status["pending"] as? Int == 0, "\(status)")
        let refused = try await s.runner.run(["finalize", "plan"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("chunk 1: failed"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was deleted"), "\(refused.stderr)")
        for extra in ["dst/extra.txt", "dst/stale/deep/old.bin", "dst/d1/extra-in-kept-folder"] { #expect(s.exists(extra), "\(extra)") }

        try s.write("src/" + victim, saved)
        let rerun = try await s.runner.run(["sync", "--plan", "plan", "--shard", "1", "--json"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try Self.json(rerun)["copied"] as? Int == 1, "only the missing file moves: \(rerun.text)")
        let finalize = try await s.runner.run(["finalize", "--json", "plan"])
        #expect(finalize.status == 0, "\(finalize.stderr)")
        let merged = try Self.json(finalize)
        #expect(merged["deleted"] as? Int == 3, "\(merged)")
        // Each chunk's last run counts: chunk 1's rerun skipped what its first run had copied.
        #expect((merged["copied"] as? Int ?? 0) + (merged["skipped"] as? Int ?? 0) == 98, "\(merged)")
        #expect(merged["failed"] as? Int == 0 && merged["chunks"] as? Int == 3, "\(merged)")
        for extra in ["dst/extra.txt", "dst/stale", "dst/d1/extra-in-kept-folder"] { #expect(!s.exists(extra), "\(extra)") }
        #expect(s.exists("dst/empty/also empty"))
        let check = try await s.runner.run(["check", "src", "dst"])
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        #expect(try Self.json(try await s.runner.run(["plan-status", "--json", "plan"]))["finalized"] as? Bool == true)
    }

    @Test("the worker contract: --shard-from-env order, a done chunk skipped, usage errors exit 2, a changed plan exits 3")
    func workerContract() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try Self.makeTree(s, count: 30)
        #expect(try await s.runner.run(["plan", "src", "dst", "--out", "plan", "--chunks", "4"]).status == 0)
        func marker(_ chunk: Int) -> Bool { s.exists("plan/state/00000\(chunk).done.json") }

        let none = try await s.runner.run(["copy", "--plan", "plan", "--shard-from-env"])
        #expect(none.status == 2 && none.stderr.contains("SLURM_ARRAY_TASK_ID"), "\(none.stderr)")
        let slurm = try await s.runner.run(["copy", "--plan", "plan", "--shard-from-env"],
                                           extraEnvironment: ["SLURM_ARRAY_TASK_ID": "1", "JOB_COMPLETION_INDEX": "2", "GATEWAY_SHARD": "3"])
        #expect(slurm.status == 0 && marker(1) && !marker(2) && !marker(3), "\(slurm.stderr)")
        let kubernetes = try await s.runner.run(["copy", "--plan", "plan", "--shard-from-env"],
                                                extraEnvironment: ["JOB_COMPLETION_INDEX": "2", "GATEWAY_SHARD": "3"])
        #expect(kubernetes.status == 0 && marker(2) && !marker(3), "\(kubernetes.stderr)")
        let plain = try await s.runner.run(["copy", "--plan", "plan", "--shard-from-env"], extraEnvironment: ["GATEWAY_SHARD": "3"])
        #expect(plain.status == 0 && marker(3), "\(plain.stderr)")
        let again = try await s.runner.run(["copy", "--plan", "plan", "--shard-from-env"], extraEnvironment: ["GATEWAY_SHARD": "3"])
        #expect(again.status == 0 && again.stderr.contains("already done"), "\(again.stderr)")
        let notFinished = try await s.runner.run(["finalize", "plan"])
        #expect(notFinished.status == 1 && notFinished.stderr.contains("chunk 0: not run"), "\(notFinished.stderr)")

        for (arguments, fragment) in [
            (["sync", "--plan", "plan", "--shard", "0"], "this is a copy plan"),
            (["copy", "--plan", "plan", "--shard", "4"], "no chunk 4"),
            (["copy", "--plan", "plan", "--shard", "0", "src", "dst"], "takes no SRC or DST"),
            (["copy", "--plan", "plan"], "--shard"),
            (["copy", "--shard", "1", "src", "dst"], "need --plan"),
            (["copy", "--plan", "plan", "--shard", "0", "--checksum"], "set when the plan is made"),
            (["copy", "--plan", "plan", "--shard-from-env"], "is \"x\""),
            (["copy", "--hash-shard", "4/4", "src", "dst"], "--hash-shard must be K/N"),
            (["move", "--hash-shard", "0/4", "src", "dst"], "use a plan"),
            (["plan", "src", "dst", "--out", "plan"], "a plan is already there"),
            (["plan", "src", "dst", "--out", "p2", "--chunks", "0"], "--chunks must be between"),
            (["plan", "src", "dst", "--out", "p2", "--mode", "mirror"], "--mode must be"),
            (["plan", "src", "dst", "--out", "dst/.plan"], "must lie outside dst"),
            (["plan", "src", "dst", "--out", "src"], "must lie outside src"),
        ] {
            let result = try await s.runner.run(arguments, extraEnvironment: ["GATEWAY_SHARD": "x"])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
        }
        #expect(!s.exists("p2"))

        // A chunk file changed after planning, then a manifest edited by hand: exit 3, nothing run.
        var chunk = try s.read("plan/chunks/000000.tsv")
        chunk.append(contentsOf: Data("f\t1\t-\tsneaked-in\n".utf8))
        try chunk.write(to: URL(fileURLWithPath: s.path("plan/chunks/000000.tsv")))
        let changed = try await s.runner.run(["copy", "--plan", "plan", "--shard", "0"])
        #expect(changed.status == 3 && changed.stderr.contains("chunk 0 changed since it was planned"), "\(changed.stderr)")
        #expect(try await s.runner.run(["plan-status", "plan"]).text.contains("failed 1"))
        let manifest = String(decoding: try s.read("plan/manifest.json"), as: UTF8.self)
        try Data(manifest.replacingOccurrences(of: "\"mode\" : \"copy\"", with: "\"mode\" : \"sync\"").utf8)
            .write(to: URL(fileURLWithPath: s.path("plan/manifest.json")))
        for arguments in [["copy", "--plan", "plan", "--shard", "0"], ["finalize", "plan"], ["plan-status", "plan"]] {
            let edited = try await s.runner.run(arguments)
            #expect(edited.status == 3 && edited.stderr.contains("fingerprint does not match"), "\(arguments): \(edited.stderr)")
        }
        let notAPlan = try await s.runner.run(["finalize", "src"])
        #expect(notAPlan.status == 3 && notAPlan.stderr.contains("no manifest.json"), "\(notAPlan.stderr)")
    }

    @Test("a check plan: workers exit 0 with their findings; finalize prints missing, extra and different, and exits 1")
    func checkPlan() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try Self.makeTree(s, count: 40)
        #expect(try await s.runner.run(["copy", "src", "dst"]).status == 0)
        try FileManager.default.removeItem(atPath: s.path("dst/d1/f1.bin"))
        try s.write("dst/d2/f2.bin", Data("changed".utf8))
        try s.write("dst/odd/extra", Data())
        #expect(try await s.runner.run(["plan", "src", "dst", "--out", "plan", "--mode", "check", "--chunks", "3"]).status == 0)
        var found: [String] = []
        for shard in 0..<3 {
            let worker = try await s.runner.run(["check", "--plan", "plan", "--shard", "\(shard)"])
            #expect(worker.status == 0, "\(worker.stderr)")
            found += worker.text.split(separator: "\n").map(String.init)
        }
        #expect(found.sorted() == ["different d2/f2.bin", "missing d1/f1.bin"])
        let finalize = try await s.runner.run(["finalize", "plan"])
        #expect(finalize.status == 1)
        #expect(finalize.text == "missing d1/f1.bin\nextra odd/extra\ndifferent d2/f2.bin\n", "\(finalize.text)")
        #expect(finalize.stderr.contains("3 differences (1 missing, 1 extra, 1 different), 46 matching"), "\(finalize.stderr)")
    }

    @Test("a move plan: each chunk moves its files; finalize removes the emptied source folders, not before")
    func movePlan() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try Self.makeTree(s, count: 30)
        let before = try s.tree("src").filter { !$0.hasSuffix("/") }
        #expect(try await s.runner.run(["plan", "src", "dst", "--out", "plan", "--mode", "move", "--chunks", "3"]).status == 0)
        for shard in 0..<3 {
            let worker = try await s.runner.run(["move", "--plan", "plan", "--shard", "\(shard)", "--no-trash"])
            #expect(worker.status == 2 && worker.stderr.contains("--no-trash is set when the plan is made"), "\(worker.stderr)")
            let run = try await s.runner.run(["move", "--plan", "plan", "--shard", "\(shard)"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let left = try s.tree("src")
        #expect(left.allSatisfy { $0.hasSuffix("/") }, "only folders are left before finalize: \(left)")
        #expect(s.exists("src/d1"))
        let finalize = try await s.runner.run(["finalize", "--json", "plan"])
        #expect(finalize.status == 0, "\(finalize.stderr)")
        #expect(try Self.json(finalize)["copied"] as? Int == 38)
        #expect(!s.exists("src"), "the emptied source folders are gone: \((try? s.tree("src")) ?? [])")
        #expect(try s.tree("dst").filter { !$0.hasSuffix("/") } == before)
        #expect(s.exists("dst/empty/also empty"))
    }

    @Test("--hash-shard K/N: three workers copy every file once; check and sync take their shard only")
    func hashShard() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try Self.makeTree(s, count: 60)
        var copied = 0
        for shard in 0..<3 {
            let result = try await s.runner.run(["copy", "--json", "--hash-shard", "\(shard)/3", "src", "dst"])
            #expect(result.status == 0, "\(result.stderr)")
            let summary = try Self.json(result)
            #expect(summary["skipped"] as? Int == 0, "no worker sees another's files: \(summary)")
            copied += summary["copied"] as? Int ?? 0
        }
        #expect(copied == 68)
        #expect(s.exists("dst/empty/also empty"))
        #expect(try await s.runner.run(["check", "src", "dst"]).status == 0)
        try s.write("dst/extra-a", Data())
        try s.write("dst/extra-b", Data())
        try s.write("dst/extra-c", Data())
        var extras: [String] = []
        var deleted = 0
        for shard in 0..<3 {
            let check = try await s.runner.run(["check", "--hash-shard", "\(shard)/3", "src", "dst"])
            extras += check.text.split(separator: "\n").map(String.init)
            let sync = try await s.runner.run(["sync", "--json", "--no-trash", "--hash-shard", "\(shard)/3", "src", "dst"])
            #expect(sync.status == 0, "\(sync.stderr)")
            deleted += try Self.json(sync)["deleted"] as? Int ?? 0
        }
        #expect(extras.sorted() == ["extra extra-a", "extra extra-b", "extra extra-c"])
        #expect(deleted == 3)
        #expect(try await s.runner.run(["check", "src", "dst"]).status == 0)
    }

    /// Apache stores a `PUT` under its name only when whole; `rclone serve webdav` writes where it
    /// is told, so the gateway uploads to a temporary there, which a killed worker leaves behind.
    @Test("4 workers to WebDAV, one killed with -9 mid-upload: its rerun moves only what was left and no temporary stays; finalize and check agree",
          .timeLimit(.minutes(3)), arguments: ["GATEWAY_TEST_WEBDAV_APACHE_URL", "GATEWAY_TEST_WEBDAV_RCLONE_URL"])
    func killedWorker(server: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // The killed worker reaches the server through a proxy that stops taking anything from it
        // after 1 MiB: it is caught mid-chunk, for sure, when it is killed.
        let (proxy, direct, slow) = try Self.proxiedRemote(s, server: server)
        defer { proxy.stop() }
        let folder = "scale-\(UUID().uuidString.prefix(8))"
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "apache:\(folder)"], extraEnvironment: direct) }

        try Self.makeTree(s, count: 160, size: 64 << 10)
        for index in 0..<4 { try s.write("src/large/l\(index).bin", Bytes.pattern(1_200_000, seed: UInt64(900 + index))) }
        let plan = try await s.runner.run(["plan", "src", "apache:\(folder)", "--out", "plan", "--chunks", "4", "--json"], extraEnvironment: direct)
        #expect(plan.status == 0, "\(plan.stderr)")
        let manifest = try #require(JSONSerialization.jsonObject(with: s.read("plan/manifest.json")) as? [String: Any])
        let chunks = try #require(manifest["chunks"] as? [[String: Any]])
        let victim = 1
        let victimBytes = try #require(chunks[victim]["bytes"] as? Int)
        let victimFiles = try #require(chunks[victim]["files"] as? Int)
        #expect(victimBytes > 2 << 20, "the chunk must outlast the proxy's allowance: \(chunks)")

        proxy.setHolding(afterTotal: 1 << 20)
        let killed = try s.runner.start(["copy", "--plan", "plan", "--shard", "\(victim)", "--transfers", "2"], extraEnvironment: slow)
        try await Self.runShards(s, of: 4, except: victim, environment: direct)
        // Wait until the victim has started and its uploads stall at the proxy, then kill it.
        try await waitUntil("worker \(victim) started and its uploads stalled") {
            s.exists("plan/state/000001.running.json") && proxy.held > 0
        }
        let killedPID = killed.process.processIdentifier
        func scratchFolders() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []).filter { $0.hasPrefix("gateway-chunk-\(killedPID)-") }
        }
        killed.kill()
        #expect(scratchFolders().count == 1, "the killed worker's local copy of its chunk")
        // Its held uploads are cut, as a dead client's would be (released instead, the bytes its
        // socket still held would reach the server and complete files after its death).
        proxy.stop()
        let status = try Self.json(try await s.runner.run(["plan-status", "--json", "plan"]))
        #expect(status["done"] as? Int == 3 && status["interrupted"] as? Int == 1, "\(status)")
        #expect(try await s.runner.run(["finalize", "plan"], extraEnvironment: direct).status == 1)

        // What of the victim's chunk is already there, whole, under its own name.
        let entries = try String(decoding: try s.read("plan/chunks/000001.tsv"), as: UTF8.self).split(separator: "\n")
            .map { try PlanEntry.parse($0) }.filter { $0.kind == .file }
        let listing = try await s.runner.run(["ls", "--json", "-R", "apache:\(folder)"], extraEnvironment: direct)
        let present = try #require(JSONSerialization.jsonObject(with: listing.stdout) as? [[String: Any]])
        var sizes: [String: Int] = [:]
        for item in present { if let path = item["path"] as? String, let size = item["size"] as? Int { sizes[path] = size } }
        var left = 0
        var done = 0
        for entry in entries {
            let size = Int(entry.size ?? 0)
            if sizes[entry.path] == size { done += 1 } else { left += size }
        }
        #expect(done > 0 && done < victimFiles, "killed mid-chunk: \(done) of \(victimFiles) files were there")
        if server.contains("RCLONE") {
            // The check below means something: the killed worker did leave a temporary.
            #expect(present.contains { ($0["name"] as? String)?.contains(".gateway-") == true }, "no temporary after the kill: \(present.count) items")
        }

        let rerun = try await s.runner.run(["copy", "--json", "--plan", "plan", "--shard", "\(victim)"], extraEnvironment: direct)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let summary = try Self.json(rerun)
        #expect((summary["bytes"] as? Int ?? .max) <= left, "the rerun moved \(summary["bytes"] ?? "?") bytes; \(left) were left")
        #expect(summary["skipped"] as? Int == done && summary["copied"] as? Int == victimFiles - done, "\(summary); \(done) were there")

        #expect(scratchFolders().isEmpty, "the rerun removes what the killed worker left in \(NSTemporaryDirectory())")
        let finalize = try await s.runner.run(["finalize", "--json", "plan"], extraEnvironment: direct)
        #expect(finalize.status == 0, "\(finalize.stderr)")
        let merged = try Self.json(finalize)
        #expect((merged["copied"] as? Int ?? 0) + (merged["skipped"] as? Int ?? 0) == 160 + 8 + 4, "\(merged)")
        let check = try await s.runner.run(["check", "src", "apache:\(folder)"], extraEnvironment: direct)
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        let after = try await s.runner.run(["ls", "-R", "apache:\(folder)"], extraEnvironment: direct)
        #expect(!after.text.contains(".gateway-"), "a temporary was left: \(after.text.split(separator: "\n").filter { $0.contains(".gateway-") })")
    }

    @Test("a file larger than a chunk, to SFTP: OpenSSH takes its ranges from 4 workers at once; rclone serve sftp, which writes only in sequence, gets it whole",
          .timeLimit(.minutes(3)))
    func splitToSFTP() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // The SFTP suite's remotes: `openssh` and `rclone` among them.
        let configured = try await SFTPCLITests().configure(s)
        guard let root = ProcessInfo.processInfo.environment["GATEWAY_TEST_SFTP_OPENSSH_ROOT"] else {
            throw CLITestSetupError("GATEWAY_TEST_SFTP_OPENSSH_ROOT not set: run ./scripts/test.sh (it starts the servers)")
        }
        let big = Bytes.pattern(24 << 20, seed: 41)
        try s.write("src/big.bin", big)
        try s.write("src/small.txt", Data("small\n".utf8))
        for (remote, splits) in [("openssh", true), ("rclone", false)] {
            let folder = "split-\(UUID().uuidString.prefix(8))"
            defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "\(remote):\(folder)"], extraEnvironment: configured) }
            let plan = try await s.runner.run(["plan", "src", "\(remote):\(folder)", "--out", "plan-\(remote)", "--chunks", "4", "--json"],
                                              extraEnvironment: configured)
            #expect(plan.status == 0, "\(plan.stderr)")
            #expect(try Self.json(plan)["split_files"] as? Int == (splits ? 1 : 0), "\(remote): \(plan.text)")
            try await Self.runShards(s, plan: "plan-\(remote)", of: 4, environment: configured)
            let finalized = try await s.runner.run(["finalize", "plan-\(remote)"], extraEnvironment: configured)
            #expect(finalized.status == 0, "\(remote): \(finalized.stderr)")
            let back = try await s.runner.run(["copy", "\(remote):\(folder)", s.path("back-\(remote)")], extraEnvironment: configured)
            #expect(back.status == 0, "\(back.stderr)")
            #expect(try s.read("back-\(remote)/big.bin") == big, "\(remote): the file is whole, byte for byte")
            #expect(try s.tree("back-\(remote)").sorted() == ["big.bin", "small.txt"], "\(remote): no partial file stays")
            if remote == "openssh" {
                // On the server itself too (the listing above leaves hidden names out only if asked to).
                let names = try FileManager.default.contentsOfDirectory(atPath: root + "/" + folder).sorted()
                #expect(names == ["big.bin", "small.txt"], "\(names)")
            }
        }
    }

    @Test("a file larger than a chunk, to S3: on moto each range is an object and finalize joins them on the server (UploadPartCopy); rclone serve s3, which has no UploadPartCopy, gets it whole",
          .timeLimit(.minutes(3)))
    func splitToS3() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // The S3 suite's remotes: `moto` and `rs3` (rclone serve s3) among them.
        let configured = try S3CLITests().configure(s)
        let big = Bytes.pattern(24 << 20, seed: 45)
        try s.write("src/big.bin", big)
        try s.write("src/small.txt", Data("small\n".utf8))
        for (remote, splits) in [("moto", true), ("rs3", false)] {
            let folder = "split-\(UUID().uuidString.prefix(8))"
            defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "\(remote):\(folder)"], extraEnvironment: configured) }
            let plan = try await s.runner.run(["plan", "src", "\(remote):\(folder)", "--out", "plan-\(remote)", "--chunks", "4", "--json"],
                                              extraEnvironment: configured)
            #expect(plan.status == 0, "\(plan.stderr)")
            #expect(try Self.json(plan)["split_files"] as? Int == (splits ? 1 : 0), "\(remote): \(plan.text) \(plan.stderr)")
            // The plan's probe leaves nothing behind.
            let probed = try await s.runner.run(["ls", "\(remote):"], extraEnvironment: configured)
            #expect(!probed.text.contains(".ranges.gateway-"), "\(remote): \(probed.text)")
            try await Self.runShards(s, plan: "plan-\(remote)", of: 4, environment: configured)
            if splits {
                // Before finalize: one hidden object per range, the final name free.
                let listed = try await s.runner.run(["ls", "\(remote):\(folder)"], extraEnvironment: configured)
                let names = listed.text.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
                let ranges = names.filter { $0.hasPrefix(".big.bin.gateway-resume-") && $0.hasSuffix(".partial") }
                #expect(!names.contains("big.bin") && ranges.count == 4, "\(listed.text)")
            }
            let finalized = try await s.runner.run(["finalize", "plan-\(remote)", "-vv"], extraEnvironment: configured)
            #expect(finalized.status == 0, "\(remote): \(finalized.stderr)")
            #expect(!finalized.stderr.contains("copying it whole"), "\(remote): \(finalized.stderr)")
            if splits {
                // Joined on the server: no range went through the finalizing process.
                #expect(!finalized.stderr.contains("ranges streamed into the file") && !finalized.stderr.contains("UploadPartCopy not supported"),
                        "\(finalized.stderr)")
            }
            let back = try await s.runner.run(["copy", "\(remote):\(folder)", s.path("back-\(remote)")], extraEnvironment: configured)
            #expect(back.status == 0, "\(back.stderr)")
            #expect(try s.read("back-\(remote)/big.bin") == big, "\(remote): the file is whole, byte for byte")
            #expect(try s.tree("back-\(remote)").sorted() == ["big.bin", "small.txt"], "\(remote): the file is there")
            // (A copy never takes gateway temporaries: the remote's own listing shows what stays.)
            let after = try await s.runner.run(["ls", "\(remote):\(folder)"], extraEnvironment: configured)
            #expect(after.status == 0 && !after.text.contains(".gateway-"), "\(remote): no range object stays: \(after.text)")
        }
    }

    @Test("a file larger than a chunk, to WebDAV: Apache takes its ranges from 4 workers at once (ranged PUTs into one partial file); nginx (501 to Content-Range) and lighttpd get it whole",
          .timeLimit(.minutes(3)))
    func splitToWebDAV() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let nginx = environment["GATEWAY_TEST_WEBDAV_NGINX_URL"],
              let lighttpd = environment["GATEWAY_TEST_WEBDAV_LIGHTTPD_URL"] else {
            throw CLITestSetupError("a GATEWAY_TEST_WEBDAV_*_URL is not set: run ./scripts/test.sh (it starts the servers)")
        }
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        try s.write("dav.json", Data(#"""
            {"remotes": {"apache": {"type": "webdav", "url": "\#(apache)", "user": "\#(user)", "password_env": "DAV_SECRET"},
                         "nginx": {"type": "webdav", "url": "\#(nginx)", "user": "\#(user)", "password_env": "DAV_SECRET"},
                         "lighttpd": {"type": "webdav", "url": "\#(lighttpd)", "user": "\#(user)", "password_env": "DAV_SECRET"}}}
            """#.utf8))
        let configured = ["GATEWAY_CONFIG": s.path("dav.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
        let big = Bytes.pattern(24 << 20, seed: 43)
        try s.write("src/big.bin", big)
        try s.write("src/small.txt", Data("small\n".utf8))
        let apacheFolder = "split-\(UUID().uuidString.prefix(8))"
        for (remote, splits) in [("apache", true), ("nginx", false), ("lighttpd", false)] {
            let folder = remote == "apache" ? apacheFolder : "split-\(UUID().uuidString.prefix(8))"
            defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "\(remote):\(folder)"], extraEnvironment: configured) }
            let plan = try await s.runner.run(["plan", "src", "\(remote):\(folder)", "--out", "plan-\(remote)", "--chunks", "4", "--json"],
                                              extraEnvironment: configured)
            #expect(plan.status == 0, "\(plan.stderr)")
            #expect(try Self.json(plan)["split_files"] as? Int == (splits ? 1 : 0), "\(remote): \(plan.text) \(plan.stderr)")
            try await Self.runShards(s, plan: "plan-\(remote)", of: 4, environment: configured)
            if splits {
                // Before finalize: the ranges wait in the hidden partial file, the final name is free.
                let listed = try await s.runner.run(["ls", "\(remote):\(folder)"], extraEnvironment: configured)
                let names = listed.text.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
                #expect(!names.contains("big.bin") && names.contains { $0.hasPrefix(".big.bin.gateway-resume-") }, "\(listed.text)")
            }
            let finalized = try await s.runner.run(["finalize", "plan-\(remote)"], extraEnvironment: configured)
            #expect(finalized.status == 0, "\(remote): \(finalized.stderr)")
            #expect(!finalized.stderr.contains("copying it whole"), "\(remote): \(finalized.stderr)")
            let back = try await s.runner.run(["copy", "\(remote):\(folder)", s.path("back-\(remote)")], extraEnvironment: configured)
            #expect(back.status == 0, "\(back.stderr)")
            #expect(try s.read("back-\(remote)/big.bin") == big, "\(remote): the file is whole, byte for byte")
            #expect(try s.tree("back-\(remote)").sorted() == ["big.bin", "small.txt"], "\(remote): no partial file stays")
        }
        // Apache took the file as one ranged PUT per planned range, into its partial file (a PUT
        // without Content-Range shows `-` there).
        let planned = try (0..<4).flatMap { index in
            String(decoding: try s.read("plan-apache/chunks/00000\(index).tsv"), as: UTF8.self).split(separator: "\n")
                .compactMap { try? PlanEntry.parse($0) }.compactMap(\.range)
        }
        let puts = try await ApacheAccessLog.requests("PUT", containing: apacheFolder + "/.big.bin.gateway-resume-")
        #expect(planned.count >= 2 && puts.count == planned.count && puts.allSatisfy { $0.contains(" bytes ") }, "\(planned) \(puts)")
    }

    @Test("finalize reads back both ends of every range: a partial file changed after its workers wrote it gets the file copied whole, never committed",
          .timeLimit(.minutes(2)))
    func finalizeChecksRanges() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let big = Bytes.pattern(24 << 20, seed: 44)
        try s.write("src/big.bin", big)
        let plan = try await s.runner.run(["plan", "src", s.path("dst"), "--out", "plan", "--chunks", "4", "--json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(try Self.json(plan)["split_files"] as? Int == 1, "\(plan.text)")
        try await Self.runShards(s, of: 4, environment: [:])
        // A range lost as a server that copies the file at each write loses it: zeros, in the middle
        // of the partial file (where the second range begins).
        let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: s.path("dst")).first { $0.hasPrefix(".big.bin.gateway-resume-") },
                                   "the partial file waits for finalize")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: s.path("dst/" + partial)))
        let ranges = String(decoding: try s.read("plan/chunks/000001.tsv"), as: UTF8.self).split(separator: "\n")
            .compactMap { try? PlanEntry.parse($0) }.compactMap(\.range)
        let second = try #require(ranges.first, "chunk 1 holds a range of the file")
        try handle.seek(toOffset: UInt64(second.offset))
        try handle.write(contentsOf: Data(count: 4096))
        try handle.close()
        let finalized = try await s.runner.run(["finalize", "plan"])
        #expect(finalized.status == 0, "\(finalized.stderr)")
        #expect(finalized.stderr.contains("big.bin: the destination does not hold the range at byte \(second.offset) as the source has it; copying it whole"),
                "\(finalized.stderr)")
        #expect(try s.read("dst/big.bin") == big, "the file is whole, byte for byte")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("dst")) == ["big.bin"], "no partial file stays")
    }

    @Test("a file larger than a chunk, from WebDAV to the local disk: 4 workers write its ranges at once, one killed with -9 mid-range and rerun; finalize moves it into place, the old one to the trash; check agrees, undo brings the old one back",
          .timeLimit(.minutes(3)))
    func splitLargeFile() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // The killed worker reads through a proxy that stops passing the server's answers after 4 MiB.
        let (proxy, direct, slow) = try Self.proxiedRemote(s, server: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        defer { proxy.stop() }
        let folder = "split-\(UUID().uuidString.prefix(8))"
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "apache:\(folder)"], extraEnvironment: direct) }

        try Self.makeTree(s, count: 20)
        let big = Bytes.pattern(40 << 20, seed: 4242)
        try s.write("src/big/large.bin", big)
        let upload = try await s.runner.run(["copy", "src", "apache:\(folder)"], extraEnvironment: direct)
        #expect(upload.status == 0, "\(upload.stderr)")
        try s.write("dst/big/large.bin", Data("the old version\n".utf8))

        let plan = try await s.runner.run(["plan", "apache:\(folder)", "dst", "--out", "plan", "--chunks", "4", "--json"], extraEnvironment: direct)
        #expect(plan.status == 0, "\(plan.stderr)")
        let planned = try Self.json(plan)
        #expect(planned["split_files"] as? Int == 1 && planned["files"] as? Int == 29, "\(planned)")
        #expect(plan.stderr.contains("1 large file split across chunks"), "\(plan.stderr)")
        // The victim: a chunk holding a range of the large file.
        var rangesPerChunk: [Int] = []
        for index in 0..<4 {
            let lines = String(decoding: try s.read("plan/chunks/00000\(index).tsv"), as: UTF8.self).split(separator: "\n")
            rangesPerChunk.append(try lines.map { try PlanEntry.parse($0) }.filter { $0.kind == .range && $0.bytes >= 8 << 20 }.count)
        }
        #expect(rangesPerChunk.filter { $0 > 0 }.count >= 2, "the file is spread over chunks: \(rangesPerChunk)")
        let victim = try #require(rangesPerChunk.firstIndex { $0 > 0 })

        proxy.setHoldingDownloads(afterTotal: 4 << 20)
        let killed = try s.runner.start(["copy", "--plan", "plan", "--shard", "\(victim)"], extraEnvironment: slow)
        try await Self.runShards(s, of: 4, except: victim, environment: direct)
        func partials() -> [String] { ((try? s.tree("dst")) ?? []).filter { $0.hasSuffix(".partial") } }
        try await waitUntil("worker \(victim) stalled mid-range") {
            s.exists("plan/state/00000\(victim).running.json") && proxy.held > 0
        }
        killed.kill()
        proxy.stop()
        #expect(partials().count == 1, "the ranges meet in one partial file: \(partials())")
        #expect(try s.read("dst/big/large.bin") == Data("the old version\n".utf8), "the old file keeps its name until finalize")
        #expect(try await s.runner.run(["finalize", "plan"], extraEnvironment: direct).status == 1)

        let rerun = try await s.runner.run(["copy", "--json", "--plan", "plan", "--shard", "\(victim)"], extraEnvironment: direct)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let finalize = try await s.runner.run(["finalize", "--json", "plan"], extraEnvironment: direct)
        #expect(finalize.status == 0, "\(finalize.stderr)")
        let merged = try Self.json(finalize)
        // The killed worker may have copied small files before it stalled: its rerun skips them.
        #expect((merged["copied"] as? Int ?? 0) + (merged["skipped"] as? Int ?? 0) == 29 && merged["failed"] as? Int == 0, "\(merged)")
        #expect(merged["bytes"] as? Int ?? 0 >= 40 << 20, "\(merged)")
        #expect(try s.read("dst/big/large.bin") == big)
        #expect(partials().isEmpty, "\(partials())")
        let check = try await s.runner.run(["check", "apache:\(folder)", "dst"], extraEnvironment: direct)
        #expect(check.status == 0, "\(check.text) \(check.stderr)")
        // The finalize run's undo puts the old file back.
        let undo = try await s.runner.run(["undo"], extraEnvironment: direct)
        #expect(undo.status == 0, "\(undo.stderr)")
        #expect(try s.read("dst/big/large.bin") == Data("the old version\n".utf8))
    }

    @Test("docs/scale-out/kubernetes.yaml: an Indexed Job running the chunks and a finalize Job, with the config from a Secret")
    func kubernetesManifest() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = root.appendingPathComponent("docs/scale-out/kubernetes.yaml").path
        // PyYAML (Debian python3-yaml) reads it; the checks run on its JSON.
        let script = "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))"
        let output = try ChildProcess.run("/usr/bin/python3", ["-c", script, file], environment: ProcessInfo.processInfo.environment)
        #expect(output.status == 0, "\(String(decoding: output.stderr, as: UTF8.self))")
        let documents = try #require(JSONSerialization.jsonObject(with: output.stdout) as? [[String: Any]])
        let jobs = documents.filter { $0["kind"] as? String == "Job" }
        #expect(jobs.count == 2)
        let workers = try #require(jobs.first { (($0["spec"] as? [String: Any])?["completionMode"] as? String) == "Indexed" })
        let spec = try #require(workers["spec"] as? [String: Any])
        #expect(workers["apiVersion"] as? String == "batch/v1")
        #expect((spec["completions"] as? Int ?? 0) >= 1 && (spec["parallelism"] as? Int ?? 0) >= 1)
        #expect((spec["parallelism"] as? Int ?? .max) <= (spec["completions"] as? Int ?? 0))
        #expect(spec["backoffLimitPerIndex"] as? Int != nil)
        let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        #expect(pod["restartPolicy"] as? String == "Never", "backoffLimitPerIndex needs restartPolicy Never")
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let command = ((container["command"] as? [String] ?? []) + (container["args"] as? [String] ?? [])).joined(separator: " ")
        #expect(command.contains("copy") && command.contains("--plan") && command.contains("--shard-from-env"), "\(command)")
        let volumes = pod["volumes"] as? [[String: Any]] ?? []
        #expect(volumes.contains { ($0["secret"] as? [String: Any])?["secretName"] != nil }, "the config comes from a Secret: \(volumes)")
        let env = container["env"] as? [[String: Any]] ?? []
        #expect(env.contains { $0["name"] as? String == "GATEWAY_CONFIG" }, "\(env)")
        let finalize = try #require(jobs.first { $0 as NSDictionary != workers as NSDictionary })
        let finalizePod = try #require(((finalize["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any])
        let finalizeCommand = ((finalizePod["containers"] as? [[String: Any]])?.first).map {
            (($0["command"] as? [String] ?? []) + ($0["args"] as? [String] ?? [])).joined(separator: " ")
        } ?? ""
        #expect(finalizeCommand.contains("finalize"), "\(finalizeCommand)")
    }
}
