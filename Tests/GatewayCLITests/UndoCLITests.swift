import Foundation
@testable import GatewayTestSupport
import Testing

/// `gateway undo` and `gateway trash` against real servers: a removed tree comes back byte-equal,
/// a sync's deletions and overwrites are undone, refusals name the item and exit 1, and a run
/// killed halfway is undone for what it did.
@Suite("gateway undo and trash")
struct UndoCLITests {
    /// Remotes `apache` (WebDAV), `vsftpd` and `pyftpd` (FTP), each with its trash inside `folder`
    /// (tests running at once never share one), and `loc` (a local folder).
    func configure(_ s: CLIScratch, folder: String) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let vsftpd = environment["GATEWAY_TEST_FTP_VSFTPD_URL"],
              let pyftpd = environment["GATEWAY_TEST_FTP_PYFTPDLIB_URL"], let vsUser = environment["GATEWAY_TEST_FTP_VSFTPD_USER"],
              let pyUser = environment["GATEWAY_TEST_FTP_PYFTPDLIB_USER"], let password = environment["GATEWAY_TEST_FTP_PASSWORD"] else {
            throw CLITestSetupError("GATEWAY_TEST_* not set: run ./scripts/test.sh (it starts the servers)")
        }
        try FileManager.default.createDirectory(atPath: s.path("local"), withIntermediateDirectories: true)
        let trash = "\"trash_dir\": \"\(folder)/.gateway-trash\""
        let config = """
        {"remotes": {
          "apache": {"type": "webdav", "url": "\(apache)", "user": "\(environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway")", "password_env": "DAV_SECRET", \(trash)},
          "vsftpd": {"type": "ftp", "url": "\(vsftpd)", "user": "\(vsUser)", "password_env": "FTP_SECRET", \(trash)},
          "pyftpd": {"type": "ftp", "url": "\(pyftpd)", "user": "\(pyUser)", "password_env": "FTP_SECRET", \(trash)},
          "loc": {"type": "local", "root": "\(s.path("local"))"}
        }}
        """
        try s.write("config.json", Data(config.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test",
                "FTP_SECRET": password]
    }

    func makeTree(_ s: CLIScratch, _ folder: String) throws {
        try s.write("\(folder)/a.txt", Data("alpha\n".utf8))
        try s.write("\(folder)/sub/b.bin", Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        try s.write("\(folder)/sub/deeper/c.txt", Data("gamma\n".utf8))
        try s.write("\(folder)/name with spaces & ü.txt", Data("delta\n".utf8))
    }

    @Test("rm -r then undo restores the tree byte-equal, on WebDAV and FTP", arguments: ["apache", "vsftpd", "pyftpd"])
    func removeTreeThenUndo(remote: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let folder = "undo-\(UUID().uuidString.prefix(8))"
        let environment = try configure(s, folder: folder)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "\(remote):\(folder)"], extraEnvironment: environment) }
        try makeTree(s, "src")
        let copied = try await s.runner.run(["copy", "src", "\(remote):\(folder)/tree"], extraEnvironment: environment)
        #expect(copied.status == 0, "\(copied.stderr)")

        let removed = try await s.runner.run(["rm", "-r", "\(remote):\(folder)/tree"], extraEnvironment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        let gone = try await s.runner.run(["stat", "\(remote):\(folder)/tree"], extraEnvironment: environment)
        #expect(gone.status == 1)
        let listed = try await s.runner.run(["trash", "list", "--json", "\(remote):\(folder)"], extraEnvironment: environment)
        let items = try #require(try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]], "\(listed.text) \(listed.stderr)")
        #expect(items.contains { $0["original_path"] as? String == "\(remote):/\(folder)/tree" && $0["type"] as? String == "directory" }, "\(items)")

        let runs = try await s.runner.run(["undo", "--list", "--json"], extraEnvironment: environment)
        let list = try #require(try JSONSerialization.jsonObject(with: runs.stdout) as? [[String: Any]])
        #expect(list.first?["command"] as? String == "gateway rm -r \(remote):\(folder)/tree")
        #expect(list.first?["undoable"] as? Bool == true)

        let undone = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(undone.text.contains("restored \(remote):/\(folder)/tree"), "\(undone.text)")
        let back = try await s.runner.run(["copy", "\(remote):\(folder)/tree", "back"], extraEnvironment: environment)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try s.tree("back") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        // Undoing the copies too takes away the folders they made, not only their files: first the
        // copy back (a local destination, to the desktop trash), then the first copy.
        let backUndone = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(backUndone.status == 0, "\(backUndone.stderr)")
        #expect(!s.exists("back"), "the copy back is undone, its folder too")
        let copyUndone = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(copyUndone.status == 0, "\(copyUndone.stderr)")
        #expect(try await s.runner.run(["stat", "\(remote):\(folder)/tree"], extraEnvironment: environment).status == 1)
        // Undone runs are not undone twice; the next undo takes the copy before it.
        let again = try await s.runner.run(["undo", "--list", "--json"], extraEnvironment: environment)
        let after = try #require(try JSONSerialization.jsonObject(with: again.stdout) as? [[String: Any]])
        #expect(after.contains { $0["undo_of"] as? Int == list.first?["id"] as? Int })
        #expect(after.first { $0["id"] as? Int == list.first?["id"] as? Int }?["undoable"] as? Bool == false)
    }

    @Test("Nextcloud and ownCloud: rm -r goes to the server's trash bin, trash list shows it, undo brings it back",
          arguments: [TrashbinDAVServer.Dialect.nextcloud, .owncloud])
    func serverTrashbin(_ dialect: TrashbinDAVServer.Dialect) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let server = try TrashbinDAVServer(dialect)
        defer { server.stop() }
        let vendor = dialect == .nextcloud ? "nextcloud" : "owncloud"
        let config = #"{"remotes": {"cloud": {"type": "webdav", "url": "\#(server.webDAVURL())", "user": "alice", "password_env": "CLOUD_SECRET", "vendor": "\#(vendor)"}}}"#
        try s.write("config.json", Data(config.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "CLOUD_SECRET": server.password]
        try makeTree(s, "src")
        let copied = try await s.runner.run(["copy", "src", "cloud:tree"], extraEnvironment: environment)
        #expect(copied.status == 0, "\(copied.stderr)")

        let removed = try await s.runner.run(["rm", "-r", "cloud:tree"], extraEnvironment: environment)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(server.trashbin.map(\.location) == ["tree"], "the server's own trash bin holds it")
        #expect(!server.exists("/tree"))
        let listed = try await s.runner.run(["trash", "list", "--json", "cloud:"], extraEnvironment: environment)
        let items = try #require(try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]], "\(listed.text) \(listed.stderr)")
        #expect(items.count == 1 && items.first?["original_path"] as? String == "cloud:/tree", "\(items)")

        let undone = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(server.trashbin.isEmpty)
        let back = try await s.runner.run(["copy", "cloud:tree", "back"], extraEnvironment: environment)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try s.tree("back") == s.tree("src"))
        for item in try s.tree("src") where !item.hasSuffix("/") {
            #expect(try s.read("back/" + item) == s.read("src/" + item), "\(item) differs")
        }
        // Emptying the trash bin removes for good.
        #expect(try await s.runner.run(["rm", "cloud:tree/a.txt"], extraEnvironment: environment).status == 0)
        let emptied = try await s.runner.run(["trash", "empty", "cloud:"], extraEnvironment: environment)
        #expect(emptied.status == 0, "\(emptied.stderr)")
        #expect(server.trashbin.isEmpty)
    }

    @Test("a sync that deleted and overwrote files is undone; undo --dry-run changes nothing")
    func syncUndone() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let folder = "undo-\(UUID().uuidString.prefix(8))"
        let environment = try configure(s, folder: folder)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "apache:\(folder)"], extraEnvironment: environment) }
        try makeTree(s, "src")
        #expect(try await s.runner.run(["sync", "src", "apache:\(folder)/site"], extraEnvironment: environment).status == 0)
        // The source loses a file and a folder, and one file changes.
        try FileManager.default.removeItem(atPath: s.path("src/sub"))
        try s.write("src/a.txt", Data("alpha, edited\n".utf8))
        let sync = try await s.runner.run(["sync", "src", "apache:\(folder)/site"], extraEnvironment: environment)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try await s.runner.run(["stat", "apache:\(folder)/site/sub"], extraEnvironment: environment).status == 1)

        let dry = try await s.runner.run(["undo", "--dry-run"], extraEnvironment: environment)
        #expect(dry.status == 0 && dry.text.contains("would restore apache:/\(folder)/site/sub"), "\(dry.text) \(dry.stderr)")
        #expect(try await s.runner.run(["stat", "apache:\(folder)/site/sub"], extraEnvironment: environment).status == 1, "dry run changed nothing")

        let undo = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undo.status == 0, "\(undo.stderr)")
        let a = try await s.runner.run(["cat", "apache:\(folder)/site/a.txt"], extraEnvironment: environment)
        #expect(a.text == "alpha\n", "the overwritten file has its previous content")
        let c = try await s.runner.run(["cat", "apache:\(folder)/site/sub/deeper/c.txt"], extraEnvironment: environment)
        #expect(c.text == "gamma\n", "the deleted folder is back")
        // The trash folder is no content: a sync from the remote does not copy it.
        #expect(try await s.runner.run(["sync", "apache:\(folder)", "mirror"], extraEnvironment: environment).status == 0)
        let mirror = try s.tree("mirror")
        #expect(!mirror.contains { $0.contains("gateway-trash") }, "\(mirror)")
    }

    @Test("undo refuses an item changed since, names it on stderr, goes on with the others and exits 1")
    func undoRefusesChangedItem() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let folder = "undo-\(UUID().uuidString.prefix(8))"
        let environment = try configure(s, folder: folder)
        try s.write("src/one.txt", Data("1".utf8))
        try s.write("src/two.txt", Data("2".utf8))
        #expect(try await s.runner.run(["copy", "src", "loc:dst"], extraEnvironment: environment).status == 0)
        try s.write("local/dst/one.txt", Data("changed by someone else".utf8))
        let undo = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undo.status == 1)
        #expect(undo.stderr.contains("loc:/dst/one.txt") && undo.stderr.contains("changed after the operation"), "\(undo.stderr)")
        #expect(!s.exists("local/dst/two.txt"), "the unchanged copy was undone")
        #expect(try s.read("local/dst/one.txt") == Data("changed by someone else".utf8))
        // A permanent removal is named as not undoable.
        try s.write("local/gone.txt", Data("g".utf8))
        #expect(try await s.runner.run(["rm", "--no-trash", "loc:gone.txt"], extraEnvironment: environment).status == 0)
        let permanent = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(permanent.status == 1 && permanent.stderr.contains("cannot be undone"), "\(permanent.stderr)")
    }

    @Test("trash list, restore and empty --older-than on a local remote, seen by trash-cli")
    func trashCommands() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = try configure(s, folder: "unused")
        for name in ["x.txt", "y.txt"] { try s.write("local/\(name)", Data(name.utf8)) }
        #expect(try await s.runner.run(["rm", "loc:x.txt"], extraEnvironment: environment).status == 0)
        #expect(try await s.runner.run(["rm", "loc:y.txt"], extraEnvironment: environment).status == 0)
        // trash-cli, with the same desktop trash, sees what the gateway trashed.
        let dataHome = s.path("config-home/data")
        let cli = try Tool.run("/usr/bin/trash-list", [], environment: ["XDG_DATA_HOME": dataHome])
        #expect(cli.contains(s.path("local/x.txt")) && cli.contains(s.path("local/y.txt")), "\(cli)")
        // ... and the gateway sees what trash-cli trashed.
        try s.write("local/z.txt", Data("z".utf8))
        _ = try Tool.run("/usr/bin/trash-put", [s.path("local/z.txt")], environment: ["XDG_DATA_HOME": dataHome])
        let list = try await s.runner.run(["trash", "list", "loc:"], extraEnvironment: environment)
        #expect(list.text.contains("loc:/z.txt") && list.text.contains("loc:/x.txt"), "\(list.text)")

        let restore = try await s.runner.run(["trash", "restore", "loc:", "/z.txt"], extraEnvironment: environment)
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(try s.read("local/z.txt") == Data("z".utf8))

        // Back-date x.txt's record by ten days: only it goes with --older-than 7d.
        let info = dataHome + "/Trash/info/x.txt.trashinfo"
        let text = try String(contentsOfFile: info, encoding: .utf8)
        let old = text.replacingOccurrences(of: #"DeletionDate=\d{4}"#, with: "DeletionDate=2020", options: .regularExpression)
        try old.write(toFile: info, atomically: true, encoding: .utf8)
        let empty = try await s.runner.run(["trash", "empty", "--older-than", "7d", "loc:"], extraEnvironment: environment)
        #expect(empty.status == 0 && empty.stderr.contains("removed 1 item"), "\(empty.stderr)")
        let left = try await s.runner.run(["trash", "list", "loc:"], extraEnvironment: environment)
        #expect(!left.text.contains("x.txt") && left.text.contains("loc:/y.txt"), "\(left.text)")
        let bad = try await s.runner.run(["trash", "empty", "--older-than", "7 days", "loc:"], extraEnvironment: environment)
        #expect(bad.status == 2, "a malformed duration is a usage error")
    }

    @Test("a copy killed halfway is undone for the files it had copied", .timeLimit(.minutes(2)))
    func interruptedRunIsUndoable() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let folder = "undo-\(UUID().uuidString.prefix(8))"
        let environment = try configure(s, folder: folder)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "apache:\(folder)"], extraEnvironment: environment) }
        for index in 0..<400 { try s.write("many/f\(index).txt", Data("file \(index)\n".utf8)) }
        let process = try s.runner.start(["copy", "--transfers", "1", "many", "apache:\(folder)/many"], extraEnvironment: environment)
        // Wait until the journal holds some of the copies, then kill the run outright.
        let journal = s.path("config-home/state/gateway/undo.sqlite")
        var recorded = 0
        for _ in 0..<400 where recorded < 5 {
            try await Task.sleep(for: .milliseconds(25))
            recorded = Int((try? Tool.run("/usr/bin/sqlite3", [journal, "SELECT COUNT(*) FROM undo_records"]))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        }
        process.kill()
        #expect(recorded >= 5, "the journal recorded copies while the run went on")
        let undo = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undo.status == 0, "\(undo.stderr)")
        let listing = try await s.runner.run(["stat", "apache:\(folder)/many"], extraEnvironment: environment)
        #expect(listing.status == 1, "every file the killed run copied, and the folder it made, were taken back: \(listing.text)")
    }
}

/// Runs a tool and returns its standard output; fails on a non-zero exit.
enum Tool {
    struct Failed: Error, CustomStringConvertible { let description: String }

    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let result = try ChildProcess.run(path, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        guard result.status == 0 else {
            throw Failed(description: "\(path) \(arguments) exited \(result.status): \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return String(decoding: result.stdout, as: UTF8.self)
    }
}
