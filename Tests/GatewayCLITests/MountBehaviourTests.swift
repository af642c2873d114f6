import Foundation
@testable import GatewayTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The mount's POSIX behaviour, the same checks on every fixture (a local folder, Apache WebDAV,
/// `rclone serve webdav`, vsftpd, pyftpdlib): system calls on a real kernel mount, with the
/// `errno` a program gets where a backend can't (hard links, device nodes), then what reached the
/// server once unmounted.
@Suite("gateway mount behaviour (every fixture)", .serialized)
struct MountBehaviourTests {
    typealias Mounted = MountCLITests.Mounted

    /// A remote of the fixture `backend` in `s`'s config, with a fresh folder on it (or a local folder).
    static func location(_ backend: String, _ s: CLIScratch) async throws -> (location: String, environment: [String: String]) {
        let environment = ProcessInfo.processInfo.environment
        func variable(_ name: String) throws -> String {
            guard let value = environment[name] else {
                throw CLITestSetupError("\(name) not set: run ./scripts/test.sh (it starts the test servers)")
            }
            return value
        }
        let remote: String
        var secret = "gateway-test"
        switch backend {
        case "local":
            try FileManager.default.createDirectory(atPath: s.path("src"), withIntermediateDirectories: true)
            return (s.path("src"), ["XDG_CACHE_HOME": s.path("cache")])
        case "apache", "rclone":
            let url = try variable(backend == "apache" ? "GATEWAY_TEST_WEBDAV_APACHE_URL" : "GATEWAY_TEST_WEBDAV_RCLONE_URL")
            let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
            secret = environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"
            remote = #"{"type": "webdav", "url": "\#(url)", "user": "\#(user)", "password_env": "REMOTE_SECRET"}"#
        case "vsftpd", "pyftpdlib":
            let prefix = backend == "vsftpd" ? "GATEWAY_TEST_FTP_VSFTPD" : "GATEWAY_TEST_FTP_PYFTPDLIB"
            let url = try variable(prefix + "_URL")
            let user = try variable(prefix + "_USER")
            secret = try variable("GATEWAY_TEST_FTP_PASSWORD")
            remote = #"{"type": "ftp", "url": "\#(url)", "user": "\#(user)", "password_env": "REMOTE_SECRET"}"#
        default:
            throw CLITestSetupError("unknown fixture \(backend)")
        }
        try s.write("config.json", Data(#"{"remotes": {"fixture": \#(remote)}}"#.utf8))
        let result = ["GATEWAY_CONFIG": s.path("config.json"), "REMOTE_SECRET": secret, "XDG_CACHE_HOME": s.path("cache")]
        let location = "fixture:mount-\(UUID().uuidString.prefix(8))"
        let made = try await s.runner.run(["mkdir", location], extraEnvironment: result)
        guard made.status == 0 else { throw CLITestSetupError("mkdir \(location): \(made.stderr)") }
        return (location, result)
    }

    /// System-call checks that record what differs instead of stopping at the first.
    struct Probe {
        var failures: [String] = []

        mutating func check(_ condition: Bool, _ what: @autoclosure () -> String) {
            if !condition { failures.append(what()) }
        }

        /// `result` is a success (not -1).
        @discardableResult
        mutating func succeeds<T: BinaryInteger>(_ result: T, _ what: String) -> T {
            if result == -1 { failures.append("\(what): \(String(cString: strerror(errno)))") }
            return result
        }

        /// `result` is -1 with `errno` `expected`.
        mutating func fails<T: BinaryInteger>(_ result: T, _ expected: Int32, _ what: String) {
            let code = errno
            if result != -1 {
                failures.append("\(what): succeeded, expected \(String(cString: strerror(expected)))")
            } else if code != expected {
                failures.append("\(what): \(String(cString: strerror(code))), expected \(String(cString: strerror(expected)))")
            }
        }

        mutating func write(_ descriptor: Int32, _ text: String, _ what: String) {
            let bytes = Array(text.utf8)
            check(Glibc.write(descriptor, bytes, bytes.count) == bytes.count, "\(what): \(String(cString: strerror(errno)))")
        }

        static func read(_ descriptor: Int32, count: Int = 4096) -> String {
            var buffer = [UInt8](repeating: 0, count: count)
            let got = Glibc.read(descriptor, &buffer, count)
            return got < 0 ? "<\(String(cString: strerror(errno)))>" : String(decoding: buffer.prefix(got), as: UTF8.self)
        }

        static func contents(_ path: String) -> String {
            (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<unreadable>"
        }

        static func size(_ path: String) -> Int {
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : -1
        }
    }

    /// What the checks leave on the remote, by name (read back through `gateway cat` after unmount).
    static let expectedRemote: [String: String] = [
        "created.txt": "hello\0\0\0\0\0tail",
        "appended.txt": "start\nmore\nend\n",
        "target.txt": "from source\n",
        "moved-open.txt": "written before the rename and after\n",
        "renamed-folder/inner/deep.txt": "deep\n",
        "truncated.txt": "0123",
        "grown.txt": "ab\0\0\0\0",
    ]

    @Test("POSIX semantics through the mount: create flags, read/write/seek, append, truncate, renames, unlink of an open file, folders, readdir during changes, statfs, refused links",
          .timeLimit(.minutes(4)), arguments: ["local", "apache", "rclone", "vsftpd", "pyftpdlib"])
    func posixSemantics(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let (location, environment) = try await Self.location(backend, s)
        defer { if location.hasPrefix("fixture:") { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment) } }
        // Something the remote holds before the mount: read through a handle while it is unlinked.
        let original = Data((0..<(600 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7 >> 3) })
        try s.write("seed/held.bin", original)
        try s.write("seed/inner/deep.txt", Data("deep\n".utf8))
        try s.write("seed/listing/a", Data("a".utf8))
        try s.write("seed/listing/b", Data("b".utf8))
        try s.write("seed/listing/c", Data("c".utf8))
        let copied = try await s.runner.run(["copy", s.path("seed"), location], extraEnvironment: environment)
        #expect(copied.status == 0, "\(copied.stderr)")

        try await MountCLITests().withMount(s, location, environment: environment, extra: ["--write-back", "0"]) { mount in
            let root = mount.mountpoint
            let failures = try await mount.blocking { () -> [String] in
                var probe = Probe()
                // Create flags: O_EXCL, a missing file without O_CREAT, a folder opened for writing.
                let created = probe.succeeds(open(root + "/created.txt", O_RDWR | O_CREAT | O_EXCL, 0o644), "create O_EXCL")
                probe.fails(open(root + "/created.txt", O_RDWR | O_CREAT | O_EXCL, 0o644), EEXIST, "O_EXCL on an existing file")
                probe.fails(open(root + "/missing.txt", O_RDONLY), ENOENT, "open of a missing file")
                probe.fails(open(root + "/inner", O_WRONLY), EISDIR, "a folder opened for writing")
                // Write, seek back, read; a write past the end leaves zeros between.
                probe.write(created, "hello", "write")
                probe.check(lseek(created, 0, SEEK_SET) == 0, "lseek to 0")
                probe.check(Probe.read(created) == "hello", "read back what was written")
                let tail = Array("tail".utf8)
                probe.check(pwrite(created, tail, tail.count, 10) == 4, "pwrite past the end")
                probe.succeeds(close(created), "close")
                probe.check(Probe.size(root + "/created.txt") == 14, "size after a write past the end: \(Probe.size(root + "/created.txt"))")
                probe.check(Probe.contents(root + "/created.txt") == "hello\0\0\0\0\0tail", "a hole reads as zeros")
                // O_APPEND writes at the end whatever the offset.
                let appending = probe.succeeds(open(root + "/appended.txt", O_WRONLY | O_CREAT | O_APPEND, 0o644), "open O_APPEND")
                probe.write(appending, "start\n", "append 1")
                _ = lseek(appending, 0, SEEK_SET)
                probe.write(appending, "more\n", "append 2")
                probe.succeeds(close(appending), "close")
                let again = probe.succeeds(open(root + "/appended.txt", O_WRONLY | O_APPEND), "reopen O_APPEND")
                probe.write(again, "end\n", "append 3")
                probe.succeeds(close(again), "close")
                probe.check(Probe.contents(root + "/appended.txt") == "start\nmore\nend\n", "O_APPEND: \(Probe.contents(root + "/appended.txt").debugDescription)")
                // truncate down and up; O_TRUNC.
                try Data("0123456789".utf8).write(to: URL(fileURLWithPath: root + "/truncated.txt"))
                probe.succeeds(truncate(root + "/truncated.txt", 4), "truncate down")
                probe.check(Probe.contents(root + "/truncated.txt") == "0123", "truncated to 4")
                try Data("ab".utf8).write(to: URL(fileURLWithPath: root + "/grown.txt"))
                probe.succeeds(truncate(root + "/grown.txt", 6), "truncate up")
                probe.check(Probe.contents(root + "/grown.txt") == "ab\0\0\0\0", "grown with zeros")
                let emptied = probe.succeeds(open(root + "/created-then-emptied", O_WRONLY | O_CREAT | O_TRUNC, 0o644), "O_TRUNC create")
                probe.write(emptied, "gone soon", "write")
                probe.succeeds(close(emptied), "close")
                let truncating = probe.succeeds(open(root + "/created-then-emptied", O_WRONLY | O_TRUNC), "O_TRUNC open")
                probe.succeeds(close(truncating), "close")
                probe.check(Probe.size(root + "/created-then-emptied") == 0, "O_TRUNC empties")
                probe.succeeds(unlink(root + "/created-then-emptied"), "unlink")
                // Rename over an existing file.
                try Data("from source\n".utf8).write(to: URL(fileURLWithPath: root + "/source.txt"))
                try Data("old target\n".utf8).write(to: URL(fileURLWithPath: root + "/target.txt"))
                probe.succeeds(rename(root + "/source.txt", root + "/target.txt"), "rename over a file")
                probe.check(Probe.contents(root + "/target.txt") == "from source\n", "target holds the source")
                probe.fails(access(root + "/source.txt", F_OK), ENOENT, "source gone after rename")
                // Rename of a file open for writing: the handle writes on under the new name.
                let moving = probe.succeeds(open(root + "/open.txt", O_WRONLY | O_CREAT, 0o644), "create open.txt")
                probe.write(moving, "written before the rename", "write")
                probe.succeeds(rename(root + "/open.txt", root + "/moved-open.txt"), "rename an open file")
                probe.write(moving, " and after\n", "write after the rename")
                probe.succeeds(close(moving), "close")
                probe.check(Probe.contents(root + "/moved-open.txt") == "written before the rename and after\n", "renamed open file")
                // Rename of a folder with contents.
                probe.succeeds(rename(root + "/inner", root + "/renamed-folder/"), "rename a folder")
                probe.check(Probe.contents(root + "/renamed-folder/inner/deep.txt") == "<unreadable>", "no nesting from a trailing slash")
                probe.succeeds(mkdir(root + "/renamed-folder-parent", 0o755), "mkdir")
                probe.succeeds(rename(root + "/renamed-folder", root + "/renamed-folder-parent/x"), "rename a folder into another")
                probe.succeeds(rename(root + "/renamed-folder-parent/x", root + "/renamed-folder"), "and back")
                probe.succeeds(mkdir(root + "/renamed-folder/inner", 0o755), "mkdir inside the renamed folder")
                probe.succeeds(rename(root + "/renamed-folder/deep.txt", root + "/renamed-folder/inner/deep.txt"), "move a file down")
                probe.check(Probe.contents(root + "/renamed-folder/inner/deep.txt") == "deep\n", "contents follow the folder")
                probe.succeeds(rmdir(root + "/renamed-folder-parent"), "rmdir")
                // Unlink of a file open for reading: the handle reads on, all of it.
                let held = probe.succeeds(open(root + "/held.bin", O_RDONLY), "open held.bin")
                var first = [UInt8](repeating: 0, count: 1000)
                probe.check(Glibc.read(held, &first, 1000) == 1000 && Data(first) == original.prefix(1000), "read before unlink")
                probe.succeeds(unlink(root + "/held.bin"), "unlink an open file")
                probe.fails(access(root + "/held.bin", F_OK), ENOENT, "name gone after unlink")
                var rest = Data()
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let got = Glibc.read(held, &buffer, buffer.count)
                    if got <= 0 { probe.check(got == 0, "read after unlink: \(String(cString: strerror(errno)))"); break }
                    rest.append(contentsOf: buffer.prefix(got))
                }
                probe.check(Data(first) + rest == original, "an unlinked open file reads whole: \(1000 + rest.count) of \(original.count) bytes")
                probe.succeeds(close(held), "close")
                // Folders: EEXIST, ENOTEMPTY, ENOTDIR, EISDIR.
                probe.succeeds(mkdir(root + "/folder", 0o755), "mkdir")
                probe.fails(mkdir(root + "/folder", 0o755), EEXIST, "mkdir of an existing name")
                try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/folder/file"))
                probe.fails(rmdir(root + "/folder"), ENOTEMPTY, "rmdir of a folder with a file")
                probe.fails(rmdir(root + "/folder/file"), ENOTDIR, "rmdir of a file")
                probe.fails(unlink(root + "/folder"), EISDIR, "unlink of a folder")
                probe.succeeds(unlink(root + "/folder/file"), "unlink")
                probe.succeeds(rmdir(root + "/folder"), "rmdir of the emptied folder")
                // Readdir while the folder changes: every name there at the start is seen once.
                if let folder = opendir(root + "/listing") {
                    var names: [String] = []
                    if let entry = readdir(folder) { names.append(Self.name(entry)) }
                    try Data("d".utf8).write(to: URL(fileURLWithPath: root + "/listing/d"))
                    while let entry = readdir(folder) { names.append(Self.name(entry)) }
                    closedir(folder)
                    let seen = names.filter { $0 != "." && $0 != ".." }
                    probe.check(Set(["a", "b", "c"]).isSubset(of: Set(seen)) && Set(seen).count == seen.count, "readdir during a change: \(seen)")
                } else {
                    probe.check(false, "opendir: \(String(cString: strerror(errno)))")
                }
                // statfs answers (df works).
                var volume = statvfs()
                probe.succeeds(statvfs(root, &volume), "statvfs")
                probe.check(volume.f_bsize > 0, "statvfs block size")
                // What no backend keeps.
                probe.fails(link(root + "/target.txt", root + "/hard-link"), EPERM, "link")
                if backend == "local" {
                    // Symbolic links where the backend keeps them: made, read, followed, renamed, removed as links.
                    probe.succeeds(symlink("target.txt", root + "/soft-link"), "symlink")
                    var info = stat()
                    probe.succeeds(lstat(root + "/soft-link", &info), "lstat of a link")
                    probe.check(info.st_mode & S_IFMT == S_IFLNK && info.st_size == 10, "a link's lstat: mode \(String(info.st_mode, radix: 8)), size \(info.st_size)")
                    var buffer = [CChar](repeating: 0, count: 256)
                    let count = readlink(root + "/soft-link", &buffer, buffer.count)
                    probe.check(count == 10 && String(decoding: buffer.prefix(max(0, count)).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "target.txt",
                                "readlink: \(count)")
                    probe.check(Probe.contents(root + "/soft-link") == "from source\n", "reading through a link")
                    probe.fails(symlink("elsewhere", root + "/soft-link"), EEXIST, "symlink over a link")
                    probe.succeeds(symlink("no/such/file", root + "/dangling"), "a dangling link")
                    probe.fails(open(root + "/dangling", O_RDONLY), ENOENT, "open through a dangling link")
                    probe.succeeds(rename(root + "/dangling", root + "/dangling-renamed"), "rename of a link")
                    probe.succeeds(unlink(root + "/dangling-renamed"), "unlink of a link")
                    probe.check(Probe.contents(root + "/target.txt") == "from source\n", "the link's target stays")
                } else {
                    probe.fails(symlink("target.txt", root + "/soft-link"), EPERM, "symlink")
                }
                probe.fails(mkfifo(root + "/fifo", 0o644), EPERM, "mkfifo")
                return probe.failures
            }
            #expect(failures.isEmpty, "\(backend): \(failures.joined(separator: "\n"))")
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]).status } == 0)
            #expect(try await MountCLITests().waitForExit(mount) == 0, "\(mount.gateway.stderr)")
        }
        // What the server holds now.
        for (name, text) in Self.expectedRemote.sorted(by: { $0.key < $1.key }) {
            let cat = try await s.runner.run(["cat", location + "/" + name], extraEnvironment: environment)
            #expect(cat.status == 0 && cat.stdout == Data(text.utf8), "\(backend) \(name): \(cat.text)")
        }
        if backend == "local" {
            let link = try FileManager.default.destinationOfSymbolicLink(atPath: location + "/soft-link")
            #expect(link == "target.txt", "the link on the local folder: \(link)")
        }
        for gone in ["held.bin", "source.txt", "folder", "created-then-emptied", "inner", "dangling", "dangling-renamed"] {
            let stat = try await s.runner.run(["stat", location + "/" + gone], extraEnvironment: environment)
            #expect(stat.status == 1, "\(backend): \(gone) should be gone: \(stat.text)")
        }
    }

    static func name(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
