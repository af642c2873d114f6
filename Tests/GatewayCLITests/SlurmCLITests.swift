import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import GatewayTestSupport
import Testing

/// Issue 33 on a real scheduler: the one-node Slurm cluster `scripts/servers/slurm.sh` starts
/// (slurmctld, slurmd, munged; no systemd). A 4-task job array runs the chunks of a plan kept on
/// the WebDAV server itself, a dependent job finalizes, and `check` finds both sides equal.
@Suite("Scale-out under Slurm")
struct SlurmCLITests {
    /// Runs a program on a thread of its own (the concurrency pool's threads stay free).
    static func run(_ program: String, _ arguments: [String], environment: [String: String], directory: String) async throws -> ChildProcess.Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try ChildProcess.run(program, arguments, environment: environment, directory: directory) })
            }.start()
        }
    }

    @Test("a 4-task array copies 30,000 files from Local to Apache WebDAV; finalize merges 30,000, check finds no difference",
          .timeLimit(.minutes(5)))
    func jobArray() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let slurmConf = environment["GATEWAY_TEST_SLURM_CONF"] else {
            throw CLITestSetupError("GATEWAY_TEST_SLURM_CONF not set: run ./scripts/test.sh (it starts the one-node Slurm cluster)")
        }
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        try s.write("config.json", Data(#"{"remotes": {"apache": {"type": "webdav", "url": "\#(apache)", "user": "\#(user)", "password_env": "DAV_SECRET"}}}"#.utf8))
        var jobEnvironment = s.runner.environment
        jobEnvironment["GATEWAY_CONFIG"] = s.path("config.json")
        jobEnvironment["DAV_SECRET"] = environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"
        jobEnvironment["SLURM_CONF"] = slurmConf
        let folder = "slurm-\(UUID().uuidString.prefix(8))"
        defer {
            _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "apache:\(folder)"], extraEnvironment: jobEnvironment)
            _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "apache:\(folder)-plan"], extraEnvironment: jobEnvironment)
        }

        // 30,000 small files in 30 × 7 folders, written with plain system calls (a few seconds).
        for index in 0..<30_000 {
            let directory = s.path("src/d\(index % 30)/e\(index % 7)")
            if index < 210 { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            let fd = open(directory + "/f\(index).txt", O_CREAT | O_WRONLY | O_TRUNC, 0o644)
            #expect(fd >= 0)
            let text = Array("file \(index)\n".utf8)
            #expect(write(fd, text, text.count) == text.count)
            close(fd)
        }
        // The plan lives on the WebDAV server: the workers share no folder with the planner.
        let plan = try await s.runner.run(["plan", "src", "apache:\(folder)", "--out", "apache:\(folder)-plan", "--chunks", "4"],
                                          extraEnvironment: jobEnvironment)
        #expect(plan.status == 0, "\(plan.stderr)")

        let gateway = GatewayRunner.binary
        let planLocation = "apache:\(folder)-plan"
        let array = try await Self.run("/usr/bin/sbatch", [
            "--parsable", "--array=0-3", "--output=\(s.path("task-%a.out"))",
            "--wrap", "'\(gateway)' copy -q --plan \(planLocation) --shard-from-env && touch '\(s.path("done"))'.$SLURM_ARRAY_TASK_ID",
        ], environment: jobEnvironment, directory: s.base)
        let arrayID = String(decoding: array.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(array.status == 0 && !arrayID.isEmpty, "\(String(decoding: array.stderr, as: UTF8.self))")
        // Submitted at once (a dependency on a job Slurm already forgot counts as met), and waited for.
        let finalize = try await Self.run("/usr/bin/sbatch", [
            "--parsable", "--wait", "--dependency=afterok:\(arrayID)", "--output=\(s.path("finalize.out"))",
            "--wrap", "'\(gateway)' finalize --json \(planLocation) > '\(s.path("finalize.json"))' && touch '\(s.path("finalized"))'",
        ], environment: jobEnvironment, directory: s.base)
        #expect(finalize.status == 0, "\(String(decoding: finalize.stderr, as: UTF8.self))")
        // `sbatch --wait` says 0 for a job cancelled before it ran: each task's mark is the proof.
        for task in 0..<4 {
            #expect(s.exists("done.\(task)"), "task \(task) did not finish: \((try? String(decoding: s.read("task-\(task).out"), as: UTF8.self)) ?? "no output")")
        }
        #expect(s.exists("finalized"), "finalize did not run: \((try? String(decoding: s.read("finalize.out"), as: UTF8.self)) ?? "no output")")
        let merged = try #require(JSONSerialization.jsonObject(with: s.read("finalize.json")) as? [String: Any])
        #expect(merged["copied"] as? Int == 30_000 && merged["failed"] as? Int == 0 && merged["chunks"] as? Int == 4, "\(merged)")
        let check = try await s.runner.run(["check", "src", "apache:\(folder)"], extraEnvironment: jobEnvironment)
        #expect(check.status == 0, "\(check.text.prefix(500)) \(check.stderr)")
        #expect(check.stderr.contains("0 differences") && check.stderr.contains("30000 matching"), "\(check.stderr)")
        let status = try await s.runner.run(["plan-status", "--json", planLocation], extraEnvironment: jobEnvironment)
        let states = try #require(JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
        #expect(states["done"] as? Int == 4 && states["finalized"] as? Bool == true && states["files_done"] as? Int == 30_000, "\(states)")
    }
}
