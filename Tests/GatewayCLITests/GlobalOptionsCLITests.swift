import Foundation
@testable import GatewayTestSupport
import Testing

/// The README promises that global options (`--config`, `-v`, `-q`, `--progress`) may come before
/// the subcommand: every leaf subcommand, nested ones included (issue 29, item 4).
@Suite("global options before any subcommand")
struct GlobalOptionsCLITests {
    /// The subcommands `gateway SUBCOMMAND --help` lists under SUBCOMMANDS.
    static func subcommands(_ s: CLIScratch, of command: [String]) async throws -> [String] {
        let help = try await s.runner.run(command + ["--help"])
        #expect(help.status == 0, "\(command) --help: \(help.stderr)")
        guard let section = help.text.range(of: "SUBCOMMANDS:") else { return [] }
        var names: [String] = []
        for line in help.text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { break }
            // "  ls                      List a folder" (an indented name, then its abstract); a
            // wrapped abstract is indented further and has no name of its own.
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first else { continue }
            names.append(String(name))
        }
        return names.filter { $0 != "help" }
    }

    /// Every leaf subcommand, found from the help (so a new one can't be forgotten here).
    static func leaves(_ s: CLIScratch) async throws -> [[String]] {
        var leaves: [[String]] = []
        var pending: [[String]] = [[]]
        while let command = pending.popLast() {
            let children = try await subcommands(s, of: command)
            if children.isEmpty { leaves.append(command) } else { pending += children.map { command + [$0] } }
        }
        return leaves.sorted { $0.joined(separator: " ") < $1.joined(separator: " ") }
    }

    @Test("every leaf's --help, and one real call of each, with --config and -v before the subcommand")
    func everyLeafTakesThemFirst() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("config.json", Data("""
            {"remotes": {"loc": {"type": "local", "root": "\(s.path("root"))"}},
             "links": {"base_url": "http://127.0.0.1:1", "secret_env": "LINK_SECRET"}}
            """.utf8))
        try s.write("root/dir/a.txt", Data("alpha\n".utf8))
        try s.write("root/photo.png", try Data(contentsOf: try await MediaFiles.file("photo.png")))
        let environment = ["LINK_SECRET": String(repeating: "k", count: 32), "GATEWAY_STATE_DIR": s.path("state")]
        let global = ["--config", s.path("config.json"), "-v"]

        let leaves = try await Self.leaves(s)
        #expect(leaves.contains(["trash", "list"]) && leaves.contains(["serve", "webdav"]) && leaves.contains(["config", "validate"]),
                "\(leaves)")
        for leaf in leaves {
            let help = try await s.runner.run(global + leaf + ["--help"], extraEnvironment: environment)
            #expect(help.status == 0 && help.text.contains("USAGE: gateway \(leaf.joined(separator: " "))"),
                    "gateway \((global + leaf).joined(separator: " ")) --help: \(help.status) \(help.stderr)")
        }

        /// One real call of each leaf; the serve commands run until stopped.
        let calls: [String: [String]] = [
            "about": ["about", "loc:"],
            "cat": ["cat", "loc:dir/a.txt"],
            "check": ["check", "loc:dir", "loc:copy"],
            "cleanup": ["cleanup", "--dry-run", "loc:"],
            "config types": ["config", "types"],
            "config validate": ["config", "validate"],
            "copy": ["copy", "loc:dir", "loc:copy"],
            "link": ["link", "loc:dir/a.txt"],
            "ls": ["ls", "-R", "loc:"],
            "meta": ["meta", "loc:photo.png"],
            "mkdir": ["mkdir", "loc:made"],
            "move": ["move", "loc:made", "loc:moved"],
            "rcat": ["rcat", "loc:dir/b.txt"],
            "remotes": ["remotes"],
            "rm": ["rm", "loc:dir/b.txt"],
            "stat": ["stat", "loc:dir/a.txt"],
            "sync": ["sync", "loc:dir", "loc:mirror"],
            "thumbnail": ["thumbnail", "loc:photo.png", s.path("thumb.png")],
            "trash list": ["trash", "list", "loc:"],
            "trash restore": ["trash", "restore", "loc:", "/dir/b.txt"],
            "trash empty": ["trash", "empty", "loc:"],
            "undo": ["undo", "--list"],
            "watch": ["watch", "--once", "--state", s.path("watch.anchor"), "loc:dir"],
            "serve webdav": ["serve", "webdav", "--addr", "127.0.0.1:0", "--no-auth", "loc:"],
            "serve links": ["serve", "links", "--addr", "127.0.0.1:0"],
            "mount": ["mount", "loc:dir", s.path("mnt")],
            // Against the mount above, while it runs.
            "pin": ["pin", "--wait", "loc:dir/a.txt"],
            "unpin": ["unpin", s.path("mnt") + "/a.txt"],
            "evict": ["evict", s.path("mnt") + "/a.txt"],
            "mount-status": ["mount-status", "--json", s.path("mnt")],
            "plan": ["plan", "loc:dir", "loc:planned", "--out", s.path("theplan"), "--chunks", "1"],
            "plan-status": ["plan-status", s.path("theplan")],
            // After its one chunk ran (below).
            "finalize": ["finalize", s.path("theplan")],
        ]
        #expect(Set(calls.keys) == Set(leaves.map { $0.joined(separator: " ") }), "a leaf without a real call here, or a call for none")
        // In this order: later calls use what earlier ones made.
        let order = ["remotes", "config validate", "config types", "ls", "stat", "cat", "rcat", "rm", "trash list", "trash restore",
                     "trash empty", "mkdir", "move", "copy", "check", "sync", "about", "watch", "undo", "link", "meta", "thumbnail",
                     "cleanup", "plan", "plan-status", "finalize"]
        for name in order {
            if name == "finalize" {
                let worker = try await s.runner.run(global + ["copy", "--plan", s.path("theplan"), "--shard", "0"], extraEnvironment: environment)
                #expect(worker.status == 0, "the plan's chunk: \(worker.stderr)")
            }
            let arguments = global + calls[name]!
            let result = try await s.runner.run(arguments, stdin: Data("bravo\n".utf8), extraEnvironment: environment)
            #expect(result.status == 0, "gateway \(arguments.joined(separator: " ")): \(result.status) \(result.stderr)")
        }
        #expect(try s.read("root/copy/a.txt") == Data("alpha\n".utf8) && s.exists("root/moved") && s.exists("thumb.png"))
        for name in ["serve webdav", "serve links"] {
            let log = s.path("\(name).log")
            let running = try s.runner.start(global + calls[name]!, extraEnvironment: environment, stderrFile: log)
            defer { running.kill() }
            var text = ""
            for _ in 0..<400 where running.process.isRunning && !text.contains(" at http://127.0.0.1:") {
                try await Task.sleep(for: .milliseconds(25))
                text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            }
            #expect(text.contains(" at http://127.0.0.1:"), "gateway \(name) with options first: \(text)")
        }
        // The mount runs until unmounted from outside.
        try FileManager.default.createDirectory(atPath: s.path("mnt"), withIntermediateDirectories: true)
        let mount = try BackgroundGateway(s.runner, global + calls["mount"]!, extraEnvironment: environment)
        defer { _ = try? MountCLITests.Mounted.command("/bin/fusermount3", ["-u", "-z", s.path("mnt")]) }
        try await mount.waitForStderr("mounted loc:dir at ")
        for name in ["pin", "unpin", "evict", "mount-status"] {
            let arguments = global + calls[name]!
            let result = try await s.runner.run(arguments, extraEnvironment: environment)
            #expect(result.status == 0, "gateway \(arguments.joined(separator: " ")): \(result.status) \(result.stderr)")
        }
        #expect(try MountCLITests.Mounted.command("/bin/fusermount3", ["-u", s.path("mnt")]).status == 0)
        let deadline = ContinuousClock.now + .seconds(60)
        while mount.process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!mount.process.isRunning && mount.process.terminationStatus == 0, "gateway mount with options first: \(mount.stderr)")
    }
}
