import Foundation
@testable import GatewayTestSupport
import Testing

/// Issue 31's conflict matrix: a change made through the mount that waits (offline, or for its
/// upload) meets a change to the same item made on the remote meanwhile. Nothing is lost in any
/// cell: edit/edit, edit/delete, delete/edit, create-in-removed-folder.
extension MountCLITests {
    /// Where a matrix runs: what is mounted, the server's own folder (changed behind the mount's
    /// back), the environment, and the proxy that takes the remote away (none for Local).
    struct ConflictSide {
        let location: String
        let serverFolder: String
        let environment: [String: String]
        let proxy: DroppingProxy?
    }

    /// Apache or vsftpd behind a proxy the test can close, with `src` copied to a new folder on it;
    /// Local: `src` itself.
    func conflictSide(_ backend: String, _ s: CLIScratch) async throws -> ConflictSide {
        if backend == "local" {
            return ConflictSide(location: s.path("src"), serverFolder: s.path("src"),
                                environment: ["GATEWAY_STATE_DIR": s.path("state"), "XDG_CACHE_HOME": s.path("cache")], proxy: nil)
        }
        let environment = ProcessInfo.processInfo.environment
        let folder = "matrix-\(UUID().uuidString.prefix(8))"
        guard let state = environment["GATEWAY_TEST_STATE"] else { throw CLITestSetupError("GATEWAY_TEST_STATE not set: run ./scripts/test.sh") }
        if backend == "apache" {
            let (proxy, env, _) = try Self.apacheBehindProxy(s)
            let copied = try await s.runner.run(["copy", s.path("src"), "apache:\(folder)"], extraEnvironment: env)
            #expect(copied.status == 0, "\(copied.stderr)")
            return ConflictSide(location: "apache:\(folder)", serverFolder: state + "/webdav-apache/" + folder, environment: env, proxy: proxy)
        }
        guard let url = environment["GATEWAY_TEST_FTP_VSFTPD_URL"].flatMap(URL.init(string:)), let port = url.port,
              let user = environment["GATEWAY_TEST_FTP_VSFTPD_USER"], let password = environment["GATEWAY_TEST_FTP_PASSWORD"] else {
            throw CLITestSetupError("GATEWAY_TEST_FTP_VSFTPD_* not set: run ./scripts/test.sh (it starts the FTP servers)")
        }
        // Only the control connection goes through the proxy: closed, no session can start.
        let proxy = try DroppingProxy(targetPort: port, dropAfter: Int.max)
        try s.write("config.json", Data("""
            {"remotes": {"vsftpd": {"type": "ftp", "url": "ftp://127.0.0.1:\(proxy.port)/", "user": "\(user)",
                                    "password_env": "FTP_SECRET", "connect_timeout": 2}}}
            """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "FTP_SECRET": password,
                   "GATEWAY_STATE_DIR": s.path("state"), "XDG_CACHE_HOME": s.path("cache")]
        let copied = try await s.runner.run(["copy", s.path("src"), "vsftpd:\(folder)"], extraEnvironment: env)
        #expect(copied.status == 0, "\(copied.stderr)")
        return ConflictSide(location: "vsftpd:\(folder)", serverFolder: state + "/vsftpd/data/" + folder, environment: env, proxy: proxy)
    }

    @Test("conflict matrix: edited here and there, edited here and removed there, removed here and edited there, made here in a folder removed there: nothing lost",
          .timeLimit(.minutes(3)), arguments: ["local", "apache", "vsftpd"])
    func conflictMatrix(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        for name in ["ee", "ed", "de"] { try s.write("src/\(name).txt", Data("base \(name)\n".utf8)) }
        try s.write("src/dir/keep.txt", Data("keep\n".utf8))
        let side = try await conflictSide(backend, s)
        defer {
            side.proxy?.stop()
            if side.proxy != nil { try? FileManager.default.removeItem(atPath: side.serverFolder) }
        }
        let server = side.serverFolder
        // A second name for de.txt outside the folder: a change made through it is not seen by
        // a watch on the folder (Local's monitor), so the mount still knows the old version.
        try FileManager.default.createDirectory(atPath: s.path("links"), withIntermediateDirectories: true)
        try FileManager.default.linkItem(atPath: server + "/de.txt", toPath: s.path("links/de.txt"))
        let offline = side.proxy != nil
        // Offline, the changes wait in the journal; online (Local), edits wait for their upload.
        let extra = (offline ? ["--write-back", "0", "--poll-interval", "1"] : ["--write-back", "3"]) + ["-v"]
        try await withMount(s, side.location, environment: side.environment, extra: extra) { mount in
            let root = mount.mountpoint
            let known = try await mount.blocking { () -> [String] in
                _ = try ["ee", "ed", "de"].map { try Data(contentsOf: URL(fileURLWithPath: root + "/\($0).txt")) }
                return try FileManager.default.contentsOfDirectory(atPath: root + "/dir")
            }
            #expect(known == ["keep.txt"])
            if let proxy = side.proxy {
                proxy.setRefusing(true)
                proxy.cutAll()
                try await mount.gateway.waitForStderr("working offline")
            }
            @Sendable func append(_ name: String) throws {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/" + name))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("here\n".utf8))
                try handle.close()
            }
            @Sendable func changeThere() throws {
                try Data("there ee\n".utf8).write(to: URL(fileURLWithPath: server + "/ee.txt"))
                try FileManager.default.removeItem(atPath: server + "/ed.txt")
                try FileManager.default.removeItem(atPath: server + "/dir")
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: s.path("links/de.txt")))
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data("there de\n".utf8))
                try handle.close()
            }
            let removed = try await mount.blocking { () -> Int32 in
                try append("ee.txt")
                try append("ed.txt")
                // Open until the folder is gone there (a closed new file may be sent at once).
                let descriptor = open(root + "/dir/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0o644)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                let made = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                try made.write(contentsOf: Data("new\n".utf8))
                if offline {
                    // Removed here first (journaled), changed there after.
                    let result = unlink(root + "/de.txt") == 0 ? 0 : errno
                    try changeThere()
                    try made.close()
                    return result
                }
                // Online: changed there first, unseen; the removal here names the old version.
                try changeThere()
                try made.close()
                return unlink(root + "/de.txt") == 0 ? 0 : errno
            }
            #expect(removed == (offline ? 0 : EBUSY), "unlink: errno \(removed)")
            if let proxy = side.proxy {
                proxy.setRefusing(false)
                try await mount.gateway.waitForStderr("answers again")
            }
            func text(_ name: String) -> String? { try? String(contentsOfFile: server + "/" + name, encoding: .utf8) }
            func conflictCopies(_ name: String) -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: server)) ?? []).filter { $0.hasPrefix(name + " (conflict ") }
            }
            func serverState() -> String {
                let names = (FileManager.default.enumerator(atPath: server)?.allObjects as? [String] ?? []).sorted()
                return names.map { "\($0): \(text($0).map { $0.debugDescription } ?? "-")" }.joined(separator: ", ")
            }
            try await waitUntil("every change landed without losing the other side's: \(serverState())\n\(mount.gateway.stderr)",
                                timeout: .seconds(40)) {
                text("ee.txt") == "there ee\n" && conflictCopies("ee").count == 1 && conflictCopies("ed").count == 1
                    && text("dir/new.txt") == "new\n"
            }
            let copy = try #require(conflictCopies("ee").first, "\(mount.gateway.stderr)")
            #expect(text(copy) == "base ee\nhere\n", "edit/edit: the mount's version beside the remote's")
            // Edit/delete: the mount's version as a conflict copy; the name stays removed, as it
            // was there.
            let kept = try #require(conflictCopies("ed").first)
            #expect(text(kept) == "base ed\nhere\n" && text("ed.txt") == nil, "edit/delete: the mount's version kept")
            #expect(text("de.txt") == "there de\n", "delete/edit: the remote's change stays")
            #expect(text("dir/new.txt") == "new\n" && text("dir/keep.txt") == nil, "create in a removed folder: made again for it")
            // The mount shows the same: no queue left, the remote's version of de.txt.
            let status = try await mountStatus(s, root, environment: side.environment)
            #expect(status["pending_uploads"] as? Int == 0, "\(status)")
            try await waitUntil("the mount shows de.txt at the remote's version", timeout: .seconds(120)) {
                (try? String(contentsOfFile: root + "/de.txt", encoding: .utf8)) == "there de\n"
            }
        }
    }
}
