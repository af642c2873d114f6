import Foundation
@testable import GatewayTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `gateway mount` as programs see it: a real kernel mount (FUSE) of a local folder and of an
/// Apache WebDAV folder, read by `ls`, `cat`, `find`, `cmp` and system calls, then unmounted from
/// outside (`fusermount3 -u`) and by Ctrl-C. Every mount is forced off at the end, pass or fail.
@Suite("gateway mount (FUSE)", .serialized)
struct MountCLITests {
    /// A running `gateway mount`, and the folder it is mounted at.
    final class Mounted: @unchecked Sendable {
        let gateway: BackgroundGateway
        let mountpoint: String

        init(_ s: CLIScratch, location: String, environment: [String: String], extra: [String] = []) async throws {
            mountpoint = s.path("mnt")
            try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
            gateway = try BackgroundGateway(s.runner, ["mount", location, mountpoint] + extra, extraEnvironment: environment)
            try await gateway.waitForStderr("mounted \(location) at ")
        }

        /// Whether the kernel lists a mount at the mount point.
        var isMounted: Bool {
            let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
            return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first.map(String.init) == mountpoint }
        }

        /// Takes the mount away whatever its state (lazy unmount), and stops the process.
        func forceOff() {
            _ = try? Self.command("/bin/fusermount3", ["-u", "-z", mountpoint])
            if gateway.process.isRunning { gateway.process.terminate() }
        }

        /// Runs a program; returns its status and output.
        @discardableResult
        static func command(_ path: String, _ arguments: [String], in directory: String? = nil) throws -> (status: Int32, output: String) {
            // ChildProcess, not Foundation's Process (whose wait can miss an exit under load);
            // both outputs are read to their ends.
            let output = try ChildProcess.run(path, arguments, environment: ProcessInfo.processInfo.environment, directory: directory)
            return (output.status, String(decoding: output.stdout + output.stderr, as: UTF8.self))
        }

        /// Runs blocking file-system work on a thread of its own; a mount that stops answering is
        /// forced off after `timeout` (so the thread gets ENOTCONN instead of hanging the suite).
        func blocking<T: Sendable>(timeout: Duration = .seconds(60), _ body: @escaping @Sendable () throws -> T) async throws -> T {
            let watchdog = Task { [self] in
                try await Task.sleep(for: timeout)
                Issue.record("the mount did not answer within \(timeout); forced off")
                forceOff()
            }
            defer { watchdog.cancel() }
            return try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try body() }) }.start()
            }
        }
    }

    /// Mounts `location`, runs `body`, and always takes the mount away.
    func withMount(_ s: CLIScratch, _ location: String, environment: [String: String], extra: [String] = [],
                   _ body: (Mounted) async throws -> Void) async throws {
        let mounted = try await Mounted(s, location: location, environment: environment, extra: extra)
        do {
            try await body(mounted)
        } catch {
            mounted.forceOff()
            throw error
        }
        mounted.forceOff()
    }

    /// A tree with a 3 MiB file (read in several kernel requests), awkward names and a folder of 600 entries.
    func makeTree(_ s: CLIScratch, _ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        files["big.bin"] = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        files["a b.txt"] = Data("spaces\n".utf8)
        files["naïve café.txt"] = Data("unicode\n".utf8)
        files["empty"] = Data()
        files["sub/inner/deep.txt"] = Data("deep\n".utf8)
        for index in 0..<600 { files["many/f\(index)"] = Data("entry \(index)\n".utf8) }
        for (path, data) in files { try s.write(folder + "/" + path, data) }
        return files
    }

    func apacheConfig(_ s: CLIScratch) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        try s.write("config.json", Data("""
            {"remotes": {"apache": {"type": "webdav", "url": "\(apache)", "user": "\(user)", "password_env": "DAV_SECRET"}}}
            """.utf8))
        return ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test"]
    }

    /// What a test mounts: its scratch folder `folder` itself (`local`), or (`apache`) a copy of it
    /// in a fresh folder on Apache; the environment that reaches it (with the test's own cache
    /// folder), and the folder where the server keeps those files (for changes behind its back).
    struct Source {
        let location: String
        let environment: [String: String]
        let serverFolder: String

        /// Removes the Apache copy (a local folder goes with the scratch).
        func remove(_ s: CLIScratch) {
            guard location.hasPrefix("apache:") else { return }
            _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment)
        }
    }

    func source(_ backend: String, _ s: CLIScratch, folder: String = "src") async throws -> Source {
        let local = s.path(folder)
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        var environment = ["XDG_CACHE_HOME": s.path("cache")]
        guard backend == "apache" else { return Source(location: local, environment: environment, serverFolder: local) }
        environment.merge(try apacheConfig(s)) { $1 }
        let name = "mount-\(UUID().uuidString.prefix(8))"
        let location = "apache:" + name
        // An empty folder is made; one with files is copied up (which makes it).
        let empty = try FileManager.default.contentsOfDirectory(atPath: local).isEmpty
        let made = try await s.runner.run(empty ? ["mkdir", location] : ["copy", local, location], extraEnvironment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        let state = try #require(ProcessInfo.processInfo.environment["GATEWAY_TEST_STATE"])
        return Source(location: location, environment: environment, serverFolder: state + "/webdav-apache/" + name)
    }

    @Test("--read-only: a local folder and an Apache folder, read by ls, find, cat and cmp; writes refused; fusermount3 -u ends it with 0",
          .timeLimit(.minutes(3)), arguments: ["local", "apache"])
    func readOnlyMount(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let files = try makeTree(s, "src")
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let (location, environment) = (source.location, source.environment)

        try await withMount(s, location, environment: environment, extra: ["--read-only"]) { mount in
            let root = mount.mountpoint
            #expect(mount.isMounted)
            // Read-ahead widened to 1 MiB where the user may (root, as in CI); else the kernel's 128 KiB.
            let device = try await mount.blocking { () -> String in
                var info = stat()
                guard stat(root, &info) == 0 else { return "" }
                return "\(info.st_dev >> 8 & 0xfff | (info.st_dev >> 32 & ~0xfff)):\(info.st_dev & 0xff | (info.st_dev >> 12 & ~0xff))"
            }
            let readAhead = (try? String(contentsOfFile: "/sys/class/bdi/\(device)/read_ahead_kb", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(readAhead == (getuid() == 0 ? "1024" : "128"), "bdi \(device)")
            // Names, as `ls` and readdir see them.
            let top = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root).sorted() }
            #expect(top == ["a b.txt", "big.bin", "empty", "many", "naïve café.txt", "sub"])
            let many = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root + "/many") }
            #expect(many.count == 600 && Set(many) == Set((0..<600).map { "f\($0)" }))
            let found = try await mount.blocking { try Mounted.command("/usr/bin/find", [".", "-type", "f"], in: root) }
            #expect(found.status == 0)
            #expect(Set(found.output.split(separator: "\n").map { String($0.dropFirst(2)) }) == Set(files.keys), "\(found.output.prefix(300))")
            // Contents and sizes, as programs read them.
            for (path, data) in files where !path.hasPrefix("many/") {
                let read = try await mount.blocking { try Data(contentsOf: URL(fileURLWithPath: root + "/" + path)) }
                #expect(read == data, "\(path): \(read.count) bytes, expected \(data.count)")
                let size = try await mount.blocking { try FileManager.default.attributesOfItem(atPath: root + "/" + path)[.size] as? Int }
                #expect(size == data.count, "\(path)")
            }
            let cat = try await mount.blocking { try Mounted.command("/bin/cat", [root + "/many/f599"]) }
            #expect(cat.status == 0 && cat.output == "entry 599\n")
            let compared = try await mount.blocking { try Mounted.command("/usr/bin/cmp", [root + "/big.bin", s.path("src/big.bin")]) }
            #expect(compared.status == 0, "\(compared.output)")
            // A read in the middle of the big file (a new ranged read, not the sequential stream).
            let middle = try await mount.blocking { () -> Data in
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: root + "/big.bin"))
                defer { try? handle.close() }
                try handle.seek(toOffset: 2_000_000)
                return try handle.read(upToCount: 10_000) ?? Data()
            }
            #expect(middle == files["big.bin"]!.subdata(in: 2_000_000..<2_010_000))
            // Writes are refused as on a read-only file system, and nothing changes.
            let refused = try await mount.blocking { () -> [Int32] in
                var codes: [Int32] = []
                errno = 0
                let created = open(root + "/new.txt", O_WRONLY | O_CREAT, 0o644)
                codes.append(created >= 0 ? 0 : errno)
                if created >= 0 { close(created) }
                let written = open(root + "/a b.txt", O_WRONLY)
                codes.append(written >= 0 ? 0 : errno)
                if written >= 0 { close(written) }
                codes.append(mkdir(root + "/folder", 0o755) == 0 ? 0 : errno)
                codes.append(unlink(root + "/a b.txt") == 0 ? 0 : errno)
                codes.append(rename(root + "/a b.txt", root + "/renamed") == 0 ? 0 : errno)
                return codes
            }
            #expect(refused == [EROFS, EROFS, EROFS, EROFS, EROFS], "\(refused)")
            let missing = try await mount.blocking { access(root + "/no such file", F_OK) == 0 ? 0 : errno }
            #expect(missing == ENOENT)
            // Unmounted from outside: the command ends by itself, with 0.
            let unmounted = try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]) }
            #expect(unmounted.status == 0, "\(unmounted.output)")
            let status = try await mount.blocking { () -> Int32 in
                mount.gateway.process.waitUntilExit()
                return mount.gateway.process.terminationStatus
            }
            #expect(status == 0, "\(mount.gateway.stderr)")
            #expect(mount.gateway.stderr.contains("unmounted \(root)"))
            #expect(!mount.isMounted)
        }
    }

    /// A new empty folder on Apache and the environment of a config naming it (`apache:mount-…`),
    /// with the cache folder in the scratch.
    func emptyApacheFolder(_ s: CLIScratch) async throws -> (environment: [String: String], location: String) {
        var environment = try apacheConfig(s)
        environment["XDG_CACHE_HOME"] = s.path("cache")
        let location = "apache:mount-\(UUID().uuidString.prefix(8))"
        #expect(try await s.runner.run(["mkdir", location], extraEnvironment: environment).status == 0)
        return (environment, location)
    }

    /// Writes `count` files `f0`, `f1`… ("file N\n") with plain open, write and close: no fsync
    /// (Foundation's `Data.write` syncs, which uploads at once).
    static func writePlainly(_ count: Int, in folder: String) throws {
        for index in 0..<count {
            let descriptor = open(folder + "/f\(index)", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            let bytes = Array("file \(index)\n".utf8)
            guard descriptor >= 0, Glibc.write(descriptor, bytes, bytes.count) == bytes.count, close(descriptor) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }

    /// Waits for the mount's process to end by itself (an unmount from outside); returns its status.
    func waitForExit(_ mount: Mounted) async throws -> Int32 {
        try await mount.blocking {
            mount.gateway.process.waitUntilExit()
            return mount.gateway.process.terminationStatus
        }
    }

    @Test("writes reach the remote: create, append, overwrite, truncate, mkdir, rmdir, unlink, rename over a file, an editor's save",
          .timeLimit(.minutes(3)), arguments: ["local", "apache"])
    func writes(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/old.txt", Data("old contents\n".utf8))
        try s.write("src/notes.txt", Data("version 1\n".utf8))
        try s.write("src/gone.txt", Data("remove me\n".utf8))
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let (location, environment) = (source.location, source.environment)
        let big = Data((0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 131) })

        try await withMount(s, location, environment: environment, extra: ["--write-back", "0"]) { mount in
            let root = mount.mountpoint
            try await mount.blocking {
                let files = FileManager.default
                try Data("created\n".utf8).write(to: URL(fileURLWithPath: root + "/new.txt"))
                try big.write(to: URL(fileURLWithPath: root + "/big.bin"))
                let appending = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/old.txt"))
                try appending.seekToEnd()
                try appending.write(contentsOf: Data("appended\n".utf8))
                try appending.close()
                // A write in the middle of an existing file keeps the rest.
                let patching = try FileHandle(forUpdating: URL(fileURLWithPath: root + "/big.bin"))
                try patching.seek(toOffset: 1_000_000)
                try patching.write(contentsOf: Data(repeating: 0xEE, count: 10))
                try patching.close()
                try files.createDirectory(atPath: root + "/folder/inner", withIntermediateDirectories: true)
                try Data("inside\n".utf8).write(to: URL(fileURLWithPath: root + "/folder/inner/file.txt"))
                try files.createDirectory(atPath: root + "/empty", withIntermediateDirectories: false)
                guard rmdir(root + "/empty") == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                try files.removeItem(atPath: root + "/gone.txt")
                guard truncate(root + "/new.txt", 4) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                // An editor's save: a temporary beside the file, fsync, renamed over it.
                let temporary = root + "/.notes.txt.swp"
                let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                let text = Array("version 2\n".utf8)
                guard Glibc.write(descriptor, text, text.count) == text.count, Glibc.fsync(descriptor) == 0 else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno)!)
                }
                close(descriptor)
                guard rename(temporary, root + "/notes.txt") == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
            }
            // Read back through the mount.
            var expected = big
            expected.replaceSubrange(1_000_000..<1_000_010, with: Data(repeating: 0xEE, count: 10))
            let read = try await mount.blocking { () -> [String: Data] in
                var read: [String: Data] = [:]
                for name in ["new.txt", "old.txt", "notes.txt", "big.bin", "folder/inner/file.txt"] {
                    read[name] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
                }
                return read
            }
            #expect(read["new.txt"] == Data("crea".utf8))
            #expect(read["old.txt"] == Data("old contents\nappended\n".utf8))
            #expect(read["notes.txt"] == Data("version 2\n".utf8))
            #expect(read["big.bin"] == expected)
            #expect(read["folder/inner/file.txt"] == Data("inside\n".utf8))
            let names = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root).sorted() }
            #expect(names == ["big.bin", "folder", "new.txt", "notes.txt", "old.txt"], "\(names)")

            // Unmounted from outside: pending uploads finish before the command ends with 0.
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")

            // What the remote holds now.
            let listed = try await s.runner.run(["ls", "-R", location], extraEnvironment: environment)
            let remote = Set(listed.text.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" })
            for name in ["new.txt", "old.txt", "notes.txt", "big.bin", "folder/inner/file.txt"] {
                #expect(remote.contains(where: { $0 == name || $0.hasSuffix("/" + name) || name.hasSuffix("/" + $0) }), "\(name) in \(listed.text)")
                let cat = try await s.runner.run(["cat", location + "/" + name], extraEnvironment: environment)
                #expect(cat.status == 0 && cat.stdout == (name == "big.bin" ? expected : read[name]!), "\(name): \(cat.stderr)")
            }
            for gone in ["gone.txt", "empty", ".notes.txt.swp"] {
                let stat = try await s.runner.run(["stat", location + "/" + gone], extraEnvironment: environment)
                #expect(stat.status == 1, "\(gone) should be gone: \(stat.text)")
            }
        }
    }

    @Test("--trash: what programs remove or write over in the mount goes to the trash; gateway undo after the unmount reverts it all",
          .timeLimit(.minutes(3)), arguments: ["local", "apache"])
    func trashAndUndo(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let before: [String: String] = ["keep.txt": "keep v1\n", "gone.txt": "remove me\n", "over.txt": "old over\n",
                                        "dir/inner.txt": "inner\n"]
        for (name, text) in before { try s.write("src/" + name, Data(text.utf8)) }
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let (location, environment) = (source.location, source.environment)
        func remote(_ name: String) async throws -> String? {
            let cat = try await s.runner.run(["cat", location + "/" + name], extraEnvironment: environment)
            return cat.status == 0 ? String(decoding: cat.stdout, as: UTF8.self) : nil
        }

        try await withMount(s, location, environment: environment, extra: ["--trash", "--write-back", "0"]) { mount in
            let root = mount.mountpoint
            try await mount.blocking {
                try Data("new\n".utf8).write(to: URL(fileURLWithPath: root + "/new.txt"))
                try Data("keep v2\n".utf8).write(to: URL(fileURLWithPath: root + "/keep.txt"))
                try FileManager.default.removeItem(atPath: root + "/gone.txt")
                try FileManager.default.createDirectory(atPath: root + "/made", withIntermediateDirectories: false)
                try FileManager.default.removeItem(atPath: root + "/dir/inner.txt")
                guard rmdir(root + "/dir") == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                // An editor's save: a temporary, fsync (uploaded now), renamed over the file.
                let temporary = root + "/.over.txt.swp"
                let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                let text = Array("new over\n".utf8)
                guard Glibc.write(descriptor, text, text.count) == text.count, Glibc.fsync(descriptor) == 0 else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno)!)
                }
                close(descriptor)
                guard rename(temporary, root + "/over.txt") == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
            }
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")
        }
        // What the programs did is on the remote...
        #expect(try await remote("new.txt") == "new\n")
        #expect(try await remote("keep.txt") == "keep v2\n")
        #expect(try await remote("over.txt") == "new over\n")
        #expect(try await remote("gone.txt") == nil)
        #expect(try await remote("dir/inner.txt") == nil)
        // ... the old items are in the remote's trash...
        let trash = try await s.runner.run(["trash", "list", location], extraEnvironment: environment)
        for name in ["gone.txt", "keep.txt", "over.txt", "dir"] {
            #expect(trash.text.contains(name), "\(name) in the trash: \(trash.text)")
        }
        // ... and one undo of the mount's run puts everything back.
        let listing = try await s.runner.run(["undo", "--list"], extraEnvironment: environment)
        #expect(listing.text.contains("gateway mount"), "\(listing.text)")
        let undo = try await s.runner.run(["undo"], extraEnvironment: environment)
        #expect(undo.status == 0, "\(undo.text)")
        for (name, text) in before { #expect(try await remote(name) == text, "\(name) after undo: \(undo.text)") }
        for name in ["new.txt", "made", ".over.txt.swp"] {
            let stat = try await s.runner.run(["stat", location + "/" + name], extraEnvironment: environment)
            #expect(stat.status == 1, "\(name) should be gone after undo: \(stat.text)")
        }
    }

    @Test("--trash on a remote whose trash is off is refused before it mounts, with the reason (exit 1)", .timeLimit(.minutes(1)))
    func trashRefusedWithoutATrash() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("src"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: s.path("mnt"), withIntermediateDirectories: true)
        try s.write("config.json", Data("""
            {"remotes": {"plain": {"type": "local", "root": "\(s.path("src"))", "trash": false}}}
            """.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "XDG_CACHE_HOME": s.path("cache")]
        let refused = try await s.runner.run(["mount", "--trash", "plain:", s.path("mnt")], extraEnvironment: environment)
        #expect(refused.status == 1, "\(refused.text)")
        #expect(refused.stderr.contains("has no trash") && refused.stderr.contains("without --trash"), "\(refused.text)")
        let mounts = try String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)
        #expect(!mounts.contains(s.path("mnt")), "nothing mounted")
    }

    @Test("200 files written, then fusermount3 -u at once: the command ends only when all 200 are on the server byte-equal",
          .timeLimit(.minutes(3)))
    func unmountWaitsForUploads() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let (environment, location) = try await emptyApacheFolder(s)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment) }
        try await withMount(s, location, environment: environment, extra: ["--write-back", "30"]) { mount in
            let root = mount.mountpoint
            try await mount.blocking { try Self.writePlainly(200, in: root) }
            // All 200 wait in the cache folder (the write-back delay has not passed).
            let cached = s.path("cache/gateway/mount/" + location.replacingOccurrences(of: ":", with: "_") + "/files")
            #expect(try FileManager.default.contentsOfDirectory(atPath: cached).count == 200)
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")
            #expect(mount.gateway.stderr.contains("uploading 200 files written through it"), "\(mount.gateway.stderr)")
        }
        // Byte-equal: every file fetched back and compared.
        let fetched = try await s.runner.run(["copy", location, s.path("back")], extraEnvironment: environment)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let back = try FileManager.default.contentsOfDirectory(atPath: s.path("back"))
        #expect(back.count == 200, "\(back.count) files on the server")
        for index in 0..<200 {
            #expect(try s.read("back/f\(index)") == Data("file \(index)\n".utf8), "f\(index)")
        }
    }

    @Test("kill -9 with 200 uploads pending, then mount again: all 200 are sent before it mounts, byte-equal",
          .timeLimit(.minutes(3)))
    func killedWithUploadsPending() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let (environment, location) = try await emptyApacheFolder(s)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment) }
        let cached = s.path("cache/gateway/mount/" + location.replacingOccurrences(of: ":", with: "_") + "/files")
        try await withMount(s, location, environment: environment, extra: ["--write-back", "600"]) { mount in
            let root = mount.mountpoint
            try await mount.blocking {
                try Self.writePlainly(200, in: root)
                // One renamed after its close: it is owed under its new name.
                guard rename(root + "/f0", root + "/renamed") == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: cached).count == 200)
            kill(mount.gateway.process.processIdentifier, SIGKILL)
            mount.gateway.process.waitUntilExit()
        }
        let listed = try await s.runner.run(["ls", location], extraEnvironment: environment)
        #expect(listed.text.isEmpty, "nothing was uploaded before the kill: \(listed.text)")

        // The next mount sends what was owed, then mounts.
        try await withMount(s, location, environment: environment) { mount in
            #expect(mount.gateway.stderr.contains("uploading 200 files an earlier mount of \(location) left in"), "\(mount.gateway.stderr)")
            let names = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint) }
            #expect(names.count == 200 && names.contains("renamed") && !names.contains("f0"))
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", mount.mountpoint]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: cached).isEmpty)
        let fetched = try await s.runner.run(["copy", location, s.path("back")], extraEnvironment: environment)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(try s.read("back/renamed") == Data("file 0\n".utf8))
        for index in 1..<200 {
            #expect(try s.read("back/f\(index)") == Data("file \(index)\n".utf8), "f\(index)")
        }
    }

    // Apache only: polled, the mount's own mkdir comes back as a change after the program is in
    // the folder (Local's inotify reports it within milliseconds, before any program gets there).
    @Test("programs working in a folder keep it as their working directory while the remote reports it made or changed",
          .timeLimit(.minutes(2)), arguments: ["apache"])
    func workingDirectoryKept(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/old/file.txt", Data("x\n".utf8))
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let serverFolder = source.serverFolder
        // -vv: the mount logs each remote change it applies, which the programs wait for.
        try await withMount(s, source.location, environment: source.environment, extra: ["--poll-interval", "2", "-vv"]) { mount in
            let root = mount.mountpoint
            // One program makes a folder through the mount and goes into it at once (its creation
            // comes back from the monitor at the next poll, up to 2 s later); another is in a
            // folder already there. Each asks for its working directory (getcwd, as git does
            // first) once the changes were applied: it waits for the file `go`, made when the
            // mount's log shows them. (Not /bin/pwd: when getcwd fails, it finds the path by
            // walking up through ".."; not a pyenv shim, which goes back in by $PWD.)
            // First, the monitor is known to follow changes: a file made on the server shows.
            try Data("ready\n".utf8).write(to: URL(fileURLWithPath: serverFolder + "/ready.txt"))
            _ = try? Mounted.command("/bin/chown", ["-R", "www-data:www-data", serverFolder])
            let readyBy = ContinuousClock.now + .seconds(30)
            var ready = false
            while !ready, ContinuousClock.now < readyBy {
                ready = try await mount.blocking { access(root + "/ready.txt", F_OK) == 0 }
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            try #require(ready, "a file made on the server never showed in the mount")
            let go = s.path("go")
            let getcwd = "i=0; while [ ! -e '\(go)' ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; "
                + "/usr/bin/python3 -c 'import os; print(os.getcwd())'"
            async let made = mount.blocking { try Mounted.command("/bin/sh", ["-c", "mkdir made && cd made && echo here > marker && " + getcwd], in: root) }
            async let old = mount.blocking { try Mounted.command("/bin/sh", ["-c", "echo here > marker && " + getcwd], in: root + "/old") }
            // (On any way out of here, `go` is made: the programs never wait out their 120 s.)
            do {
                try await waitUntil("the folder made through the mount is on the server") {
                    FileManager.default.fileExists(atPath: serverFolder + "/made")
                }
                // On the server: a file added in each folder (each folder's time changes).
                for folder in ["made", "old"] {
                    try Data("later\n".utf8).write(to: URL(fileURLWithPath: serverFolder + "/" + folder + "/later.txt"))
                }
                _ = try? Mounted.command("/bin/chown", ["-R", "www-data:www-data", serverFolder])
                // Applied: both new files came through the monitor (the folder made through the
                // mount came back as created at that poll or before).
                for path in ["/made/later.txt", "/old/later.txt"] {
                    try await mount.gateway.waitForStderr(path + " [GatewayMount] remote change")
                }
            } catch {
                _ = FileManager.default.createFile(atPath: go, contents: Data())
                throw error
            }
            _ = FileManager.default.createFile(atPath: go, contents: Data())
            let (inMade, inOld) = try await (made, old)
            #expect(inMade.status == 0 && inMade.output == root + "/made\n", "\(inMade.status) \(inMade.output)")
            #expect(inOld.status == 0 && inOld.output == root + "/old\n", "\(inOld.status) \(inOld.output)")
            // And the change itself was seen.
            let listed = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root + "/old").sorted() }
            #expect(listed == ["file.txt", "later.txt", "marker"])
        }
    }

    @Test("programs inside the mount: git clone/status/commit/fsck, sqlite3 in WAL mode, rsync -a twice, fio random writes with verify",
          .timeLimit(.minutes(5)), arguments: ["local", "apache"])
    func programs(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // A repository of 300 files in 10 folders, outside the mount.
        for index in 0..<300 { try s.write("repo/d\(index % 10)/f\(index).txt", Data("line \(index)\n".utf8)) }
        let git = ["-c", "user.email=test@example.invalid", "-c", "user.name=test"]
        for arguments in [["init", "-q"], ["add", "."], git + ["commit", "-qm", "init"]] {
            #expect(try Mounted.command("/usr/bin/git", arguments, in: s.path("repo")).status == 0)
        }
        let source = try await source(backend, s, folder: "remote")
        defer { source.remove(s) }
        let (location, environment) = (source.location, source.environment)
        var sql = "PRAGMA journal_mode=WAL;\nCREATE TABLE t(x INTEGER, y TEXT);\nBEGIN;\n"
        for index in 0..<10_000 { sql += "INSERT INTO t VALUES(\(index), 'row \(index)');\n" }
        sql += "COMMIT;\n"
        try s.write("inserts.sql", Data(sql.utf8))

        try await withMount(s, location, environment: environment, extra: ["--write-back", "0"]) { mount in
            let root = mount.mountpoint
            let results = try await mount.blocking(timeout: .seconds(240)) { () -> [String: (status: Int32, output: String)] in
                var results: [String: (status: Int32, output: String)] = [:]
                results["clone"] = try Mounted.command("/usr/bin/git", ["clone", "-q", s.path("repo"), root + "/clone"])
                results["status"] = try Mounted.command("/usr/bin/git", ["status", "--porcelain"], in: root + "/clone")
                try Data("changed\n".utf8).write(to: URL(fileURLWithPath: root + "/clone/d1/f1.txt"))
                results["commit"] = try Mounted.command("/usr/bin/git", git + ["commit", "-qam", "change"], in: root + "/clone")
                results["fsck"] = try Mounted.command("/usr/bin/git", ["fsck", "--full"], in: root + "/clone")
                results["log"] = try Mounted.command("/usr/bin/git", ["log", "--format=%s"], in: root + "/clone")
                results["sqlite"] = try Mounted.command("/bin/sh", ["-c", "sqlite3 db.sqlite < '\(s.path("inserts.sql"))'"], in: root)
                results["check"] = try Mounted.command("/usr/bin/sqlite3", ["db.sqlite", "PRAGMA integrity_check; SELECT count(*) FROM t;"], in: root)
                let rsync = ["-a", "--stats", "--exclude=.git", s.path("repo") + "/", root + "/mirror/"]
                results["rsync1"] = try Mounted.command("/usr/bin/rsync", rsync)
                results["rsync2"] = try Mounted.command("/usr/bin/rsync", rsync)
                results["fio"] = try Mounted.command("/usr/bin/fio", ["--name=random", "--filename=" + root + "/fio.bin", "--size=4M",
                                                                     "--rw=randwrite", "--bs=4k", "--verify=crc32c", "--ioengine=psync",
                                                                     "--verify_state_save=0"])
                return results
            }
            #expect(results["clone"]?.status == 0, "\(results["clone"]?.output ?? "")")
            #expect(results["status"]?.status == 0 && results["status"]?.output == "", "\(results["status"]?.output ?? "")")
            #expect(results["commit"]?.status == 0, "\(results["commit"]?.output ?? "")")
            #expect(results["fsck"]?.status == 0, "\(results["fsck"]?.output ?? "")")
            #expect(results["log"]?.output == "change\ninit\n")
            #expect(results["sqlite"]?.status == 0, "\(results["sqlite"]?.output ?? "")")
            #expect(results["check"]?.output == "ok\n10000\n", "\(results["check"]?.output ?? "")")
            #expect(results["rsync1"]?.status == 0 && results["rsync1"]?.output.contains("Number of regular files transferred: 300") == true,
                    "\(results["rsync1"].map { "\($0.status) \($0.output)" } ?? "")")
            #expect(results["rsync2"]?.output.contains("Number of regular files transferred: 0") == true,
                    "the second rsync -a sends nothing: \(results["rsync2"].map { "status \($0.status): \($0.output)" } ?? "")")
            #expect(results["fio"]?.status == 0, "\(results["fio"]?.output ?? "")")
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")
        }
        // What the remote holds: the database and the repository, checked outside the mount.
        let fetched = try await s.runner.run(["copy", location, s.path("back")], extraEnvironment: environment)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let check = try Mounted.command("/usr/bin/sqlite3", [s.path("back/db.sqlite"), "PRAGMA integrity_check; SELECT count(*) FROM t;"])
        #expect(check.output == "ok\n10000\n", "\(check.output)")
        #expect(try Mounted.command("/usr/bin/git", ["fsck", "--full"], in: s.path("back/clone")).status == 0)
        #expect(try s.read("back/clone/d1/f1.txt") == Data("changed\n".utf8))
        #expect(try s.read("back/mirror/d7/f7.txt") == Data("line 7\n".utf8))
    }

    @Test("a second mount on the same cache folder is refused, naming the first", .timeLimit(.minutes(2)))
    func secondMountRefused() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/file.txt", Data("x".utf8))
        try await withMount(s, s.path("src"), environment: [:], extra: ["--cache-dir", s.path("cache")]) { mount in
            try FileManager.default.createDirectory(atPath: s.path("mnt2"), withIntermediateDirectories: true)
            let second = try await s.runner.run(["mount", "--cache-dir", s.path("cache"), s.path("src"), s.path("mnt2")])
            #expect(second.status == 1)
            #expect(second.stderr.contains("another gateway mount uses the cache folder")
                    && second.stderr.contains("process \(mount.gateway.process.processIdentifier)"), "\(second.stderr)")
        }
    }

    @Test("Ctrl-C unmounts, sends what was written, and exits 0; the mount point is an empty folder again", .timeLimit(.minutes(2)))
    func interrupted() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/file.txt", Data("x".utf8))
        try await withMount(s, s.path("src"), environment: ["XDG_CACHE_HOME": s.path("cache")], extra: ["--write-back", "600"]) { mount in
            let listed = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint) }
            #expect(listed == ["file.txt"])
            // Written and waiting for its upload: Ctrl-C sends it before the command ends.
            try await mount.blocking {
                let descriptor = open(mount.mountpoint + "/late.txt", O_WRONLY | O_CREAT | O_EXCL, 0o644)
                guard descriptor >= 0, Glibc.write(descriptor, "late\n", 5) == 5, close(descriptor) == 0 else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
            }
            #expect(!FileManager.default.fileExists(atPath: s.path("src/late.txt")), "not sent before the unmount (--write-back 600)")
            let (status, _) = try await mount.gateway.interrupt()
            #expect(status == 0, "\(mount.gateway.stderr)")
            #expect(FileManager.default.contents(atPath: s.path("src/late.txt")) == Data("late\n".utf8), "\(mount.gateway.stderr)")
            #expect(!mount.isMounted)
            #expect(try FileManager.default.contentsOfDirectory(atPath: mount.mountpoint).isEmpty)
        }
    }

    @Test("a file changed on the server while open: a new read of it fails with EIO, never bytes of two versions", .timeLimit(.minutes(2)))
    func changedWhileOpen() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let original = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try s.write("src/file.bin", original)
        try await withMount(s, s.path("src"), environment: [:]) { mount in
            let path = mount.mountpoint + "/file.bin"
            let outcome = try await mount.blocking { () -> (Data, Int32) in
                let descriptor = open(path, O_RDONLY)
                guard descriptor >= 0 else { return (Data(), errno) }
                defer { close(descriptor) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let first = pread(descriptor, &buffer, 4096, 0)
                let head = Data(buffer.prefix(max(0, first)))
                // Replaced on the remote with other bytes (a new file: a new version).
                try Data(repeating: 0xAB, count: 4 << 20).write(to: URL(fileURLWithPath: s.path("src/file.bin")), options: .atomic)
                let later = pread(descriptor, &buffer, 4096, 3 << 20)
                return (head, later < 0 ? errno : 0)
            }
            #expect(outcome.0 == original.prefix(4096))
            #expect(outcome.1 == EIO, "a read of the replaced file must fail, got errno \(outcome.1)")
        }
    }

    @Test("changes made through the mount are seen by handles already open: another handle's write, a time set, a rename",
          .timeLimit(.minutes(2)), arguments: ["local", "apache"])
    func ownChangesWhileOpen(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let original = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        try s.write("src/file.bin", original)
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let (location, environment) = (source.location, source.environment)
        try await withMount(s, location, environment: environment, extra: ["--write-back", "0"]) { mount in
            let root = mount.mountpoint
            let outcome = try await mount.blocking { () -> [String] in
                var failures: [String] = []
                let reader = open(root + "/file.bin", O_RDONLY)
                guard reader >= 0 else { return ["open: \(errno)"] }
                defer { close(reader) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                if pread(reader, &buffer, 4096, 0) != 4096 || Data(buffer) != original.prefix(4096) { failures.append("first read") }
                // Rewritten through another handle, closed, fsynced: the reader sees the new bytes.
                let writer = open(root + "/file.bin", O_WRONLY | O_TRUNC)
                let replacement = [UInt8](repeating: 0x5A, count: 200_000)
                if writer < 0 || Glibc.write(writer, replacement, replacement.count) != replacement.count || fsync(writer) != 0 {
                    failures.append("rewrite: \(errno)")
                }
                close(writer)
                let count = pread(reader, &buffer, 4096, 150_000)
                if count != 4096 || buffer != [UInt8](repeating: 0x5A, count: 4096) { failures.append("read after rewrite: \(count), errno \(errno)") }
                // A time set through the mount, and a rename: still readable through the same handle.
                var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0)]
                if utimensat(AT_FDCWD, root + "/file.bin", &times, 0) != 0 { failures.append("utimensat: \(errno)") }
                if rename(root + "/file.bin", root + "/moved.bin") != 0 { failures.append("rename: \(errno)") }
                let later = pread(reader, &buffer, 4096, 190_000)
                if later != 4096 || buffer != [UInt8](repeating: 0x5A, count: 4096) { failures.append("read after rename: \(later), errno \(errno)") }
                var info = stat()
                if stat(root + "/moved.bin", &info) != 0 || info.st_mtim.tv_sec != 1_600_000_000 || info.st_size != 200_000 {
                    failures.append("stat after utimensat: \(info.st_mtim.tv_sec) \(info.st_size)")
                }
                return failures
            }
            #expect(outcome.isEmpty, "\(outcome) \(mount.gateway.stderr)")
        }
    }

    @Test("remote changes reach the kernel: a file changed, created, removed and renamed on the server is seen inside the mount; inotifywait on the file reports its removal",
          .timeLimit(.minutes(2)), arguments: ["local", "apache"])
    func remoteChangesSeen(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        for name in ["a.txt", "b.txt", "c.txt"] { try s.write("src/\(name)", Data("first \(name)\n".utf8)) }
        try s.write("src/same.txt", Data("same size, first\n".utf8))
        let source = try await source(backend, s)
        defer { source.remove(s) }
        // Where the server keeps the files: changes are made there, behind the gateway's back.
        let (location, environment, serverFolder) = (source.location, source.environment, source.serverFolder)
        try await withMount(s, location, environment: environment, extra: ["--poll-interval", "1"]) { mount in
            let root = mount.mountpoint
            // The kernel caches every name and its attributes (60 s by default).
            let before = try await mount.blocking { () -> [String] in
                try ["a.txt", "b.txt", "c.txt"].map { try String(contentsOfFile: root + "/" + $0, encoding: .utf8) }
            }
            #expect(before == ["first a.txt\n", "first b.txt\n", "first c.txt\n"])
            // Read twice: the second open keeps the kernel's pages (same version), which the
            // server's change must drop even at the same size.
            for _ in 0..<2 {
                let same = try await mount.blocking { try String(contentsOfFile: root + "/same.txt", encoding: .utf8) }
                #expect(same == "same size, first\n")
            }
            // The listing too (the kernel may keep it while changes are followed).
            let listedBefore = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root).sorted() }
            #expect(listedBefore == ["a.txt", "b.txt", "c.txt", "same.txt"])
            // A folder made through the mount: its names are known, a missing one is absent at
            // once (the kernel caches that too). One made on the server later must still show.
            // (Held open, so the kernel keeps the folder's inode and what the mount knows of it.)
            let (madeAbsent, heldFolder) = try await mount.blocking { () -> (Int32, Int32) in
                try FileManager.default.createDirectory(atPath: root + "/made", withIntermediateDirectories: false)
                let held = open(root + "/made", O_RDONLY | O_DIRECTORY)
                return (access(root + "/made/later.txt", F_OK) == 0 ? 0 : errno, held)
            }
            defer { close(heldFolder) }
            #expect(madeAbsent == ENOENT && heldFolder >= 0)
            // The file is watched: the kernel reports a FUSE removal notice to the removed item's
            // own watchers (IN_DELETE_SELF); a watch on the folder gets nothing from it (Linux 6.18).
            let watcher = try ChildProcess.spawn("/usr/bin/inotifywait", ["-m", "-e", "delete", "-e", "delete_self", "--format", "%e %w%f",
                                                                          root, root + "/b.txt"], stdout: .pipe, stderr: .pipe)
            defer { watcher.signal(SIGKILL); watcher.waitUntilExit() }
            let events = ChildProcess.Spawned.collect(watcher.output), messages = ChildProcess.Spawned.collect(watcher.errors)
            let readyBy = ContinuousClock.now + .seconds(120)
            while !String(decoding: messages.value, as: UTF8.self).contains("Watches established"), ContinuousClock.now < readyBy {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(String(decoding: messages.value, as: UTF8.self).contains("Watches established"))

            // On the server: a.txt rewritten (another size), new.txt created, b.txt removed, c.txt renamed.
            try Data("second version of a\n".utf8).write(to: URL(fileURLWithPath: serverFolder + "/a.txt"))
            try Data("new\n".utf8).write(to: URL(fileURLWithPath: serverFolder + "/new.txt"))
            try FileManager.default.removeItem(atPath: serverFolder + "/b.txt")
            try FileManager.default.moveItem(atPath: serverFolder + "/c.txt", toPath: serverFolder + "/d.txt")
            try Data("later\n".utf8).write(to: URL(fileURLWithPath: serverFolder + "/made/later.txt"))
            try Data("same size, again\n".utf8).write(to: URL(fileURLWithPath: serverFolder + "/same.txt"))
            if backend == "apache" { _ = try? Mounted.command("/bin/chown", ["-R", "www-data:www-data", serverFolder]) }

            // Seen without waiting for the 60-second attribute timeout (bounded below it).
            let deadline = ContinuousClock.now + .seconds(45)
            var seen: (a: String, b: Int32, c: Int32, d: String, new: String, later: String, same: String) = ("", 0, 0, "", "", "", "")
            while ContinuousClock.now < deadline {
                seen = try await mount.blocking {
                    ((try? String(contentsOfFile: root + "/a.txt", encoding: .utf8)) ?? "",
                     access(root + "/b.txt", F_OK) == 0 ? 0 : errno,
                     access(root + "/c.txt", F_OK) == 0 ? 0 : errno,
                     (try? String(contentsOfFile: root + "/d.txt", encoding: .utf8)) ?? "",
                     (try? String(contentsOfFile: root + "/new.txt", encoding: .utf8)) ?? "",
                     (try? String(contentsOfFile: root + "/made/later.txt", encoding: .utf8)) ?? "",
                     (try? String(contentsOfFile: root + "/same.txt", encoding: .utf8)) ?? "")
                }
                if seen.a == "second version of a\n", seen.b == ENOENT, seen.c == ENOENT, seen.d == "first c.txt\n", seen.new == "new\n",
                   seen.later == "later\n", seen.same == "same size, again\n" { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(seen.a == "second version of a\n", "\(seen)")
            #expect(seen.b == ENOENT && seen.c == ENOENT, "\(seen)")
            #expect(seen.d == "first c.txt\n" && seen.new == "new\n", "\(seen)")
            #expect(seen.later == "later\n", "a name made on the server in a folder the mount made: \(seen)")
            #expect(seen.same == "same size, again\n", "a same-size change to a file read before: \(seen)")
            let listedAfter = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root).sorted() }
            #expect(listedAfter == ["a.txt", "d.txt", "made", "new.txt", "same.txt"], "a listing after the server's changes: \(listedAfter)")
            // inotify inside the mount reported the removal.
            let reportedBy = ContinuousClock.now + .seconds(60)
            while !String(decoding: events.value, as: UTF8.self).contains("DELETE_SELF \(root)/b.txt"), ContinuousClock.now < reportedBy {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(String(decoding: events.value, as: UTF8.self).contains("DELETE_SELF \(root)/b.txt"),
                    "inotifywait saw: \(String(decoding: events.value, as: UTF8.self))")
        }
    }

    @Test("a file changed on the remote while it has unsent changes in the mount: both kept, the mount's as a conflict copy beside it",
          .timeLimit(.minutes(3)), arguments: ["local", "apache"])
    func conflictKeepsBoth(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/notes.txt", Data("base\n".utf8))
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let (location, environment) = (source.location, source.environment)
        // Local: inotify tells the mount of the remote change before the upload (the monitor's
        // path). Apache: polling is slow, so the upload itself finds the remote changed (its
        // version check fails).
        let extra = backend == "apache" ? ["--write-back", "1", "--poll-interval", "3600", "-v"] : ["--write-back", "4", "-v"]

        let remoteText = Data("changed on the remote, longer than before\n".utf8)
        let mountLog = Locked("")
        try await withMount(s, location, environment: environment, extra: extra) { mount in
            let file = mount.mountpoint + "/notes.txt"
            let descriptor = try await mount.blocking { () -> Int32 in
                let descriptor = open(file, O_WRONLY | O_APPEND)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                let text = Array("edited in the mount\n".utf8)
                guard Glibc.write(descriptor, text, text.count) == text.count else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
                return descriptor
            }
            // Meanwhile, another client changes the file on the remote.
            if backend == "apache" {
                let sent = try await s.runner.run(["rcat", location + "/notes.txt"], stdin: remoteText, extraEnvironment: environment)
                #expect(sent.status == 0, "\(sent.stderr)")
            } else {
                try remoteText.write(to: URL(fileURLWithPath: s.path("src/notes.txt")))
            }
            _ = try await mount.blocking { close(descriptor) }
            try await mount.gateway.waitForStderr("both kept")
            defer { mountLog.mutate { $0 = mount.gateway.stderr } }
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", mount.mountpoint]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")
        }
        let listed = try await s.runner.run(["ls", location], extraEnvironment: environment)
        let names = listed.text.split(separator: "\n").compactMap { line in line.range(of: "notes").map { String(line[$0.lowerBound...]) } }
        #expect(names.count == 2, "\(listed.text) \(mountLog.value)")
        let conflict = try #require(names.first { $0.hasPrefix("notes (conflict ") && $0.hasSuffix(").txt") }, "\(names)")
        let kept = try await s.runner.run(["cat", location + "/notes.txt"], extraEnvironment: environment)
        #expect(kept.stdout == remoteText, "the remote's version keeps the name: \(kept.text)")
        let copy = try await s.runner.run(["cat", location + "/" + conflict], extraEnvironment: environment)
        #expect(copy.stdout == Data("base\nedited in the mount\n".utf8), "the mount's version beside it: \(copy.text)")
    }

    /// A WebDAV stand-in whose `stall.bin` sends 64 KiB and then nothing for a minute, and whose
    /// listing has names with a newline and a tab.
    static func stallingServer() throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { request in
            let path = request.path.hasSuffix("/") && request.path.count > 1 ? String(request.path.dropLast()) : request.path
            let files = [("/good.txt", "5"), ("/stall.bin", "1048576"), ("/bad%0Aname.txt", "1"), ("/tab%09name.txt", "1")]
            switch request.method {
            case "PROPFIND":
                if path == "/" {
                    let folder = ScriptedReply.response(href: "/", folder: true)
                    return .multistatus(folder + (request.headers["depth"] == "0" ? "" : files.map { ScriptedReply.response(href: $0.0, size: $0.1) }.joined()))
                }
                if let file = files.first(where: { $0.0 == request.target }) { return .multistatus(ScriptedReply.response(href: file.0, size: file.1)) }
                return .http("404 Not Found")
            case "GET" where path == "/good.txt":
                return .http("200 OK", body: "hello")
            case "GET" where path == "/stall.bin":
                // Honest about ranges; the bytes stop at 64 KiB into the file.
                let size = 1 << 20
                var first = 0
                var last = size - 1
                if let range = request.headers["range"], range.hasPrefix("bytes=") {
                    let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
                    first = Int(bounds.first ?? "") ?? 0
                    if bounds.count > 1, let end = Int(bounds[1]) { last = min(end, size - 1) }
                }
                var headers = [("Content-Length", String(last - first + 1))]
                if request.headers["range"] != nil { headers.append(("Content-Range", "bytes \(first)-\(last)/\(size)")) }
                let status = request.headers["range"] == nil ? "200 OK" : "206 Partial Content"
                let sent = max(0, min(64 << 10, last + 1) - first)
                return ScriptedReply([.bytes(ScriptedReply.head(status, headers: headers)), .bytes([UInt8](repeating: 1, count: sent)),
                                      .pause(60), .close])
            case "OPTIONS":
                return .http("200 OK", headers: [("DAV", "1")])
            default:
                return .http("405 Method Not Allowed")
            }
        }
    }

    @Test("a hostile server: a read that stalls mid-file fails with EIO after low_speed_time, the mount still unmounts; names with control characters are left out",
          .timeLimit(.minutes(3)))
    func hostileServer() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let server = try Self.stallingServer()
        defer { server.stop() }
        try s.write("config.json", Data(#"""
            {"remotes": {"h": {"type": "webdav", "url": "http://127.0.0.1:\#(server.port)/", "low_speed_time": 2, "low_speed_limit": 1024}}}
            """#.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state"), "XDG_CACHE_HOME": s.path("cache")]
        try await withMount(s, "h:", environment: environment, extra: ["--poll-interval", "3600", "-v"]) { mount in
            let root = mount.mountpoint
            let names = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root).sorted() }
            #expect(names == ["good.txt", "stall.bin"])
            #expect(mount.gateway.stderr.contains("left out names with a control character"), "\(mount.gateway.stderr)")
            #expect(try await mount.blocking { try String(contentsOfFile: root + "/good.txt", encoding: .utf8) } == "hello")
            let started = ContinuousClock.now
            let failure = try await mount.blocking(timeout: .seconds(45)) { () -> Int32 in
                let descriptor = open(root + "/stall.bin", O_RDONLY)
                guard descriptor >= 0 else { return errno }
                defer { close(descriptor) }
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                var total = 0
                while true {
                    let count = Glibc.read(descriptor, &buffer, buffer.count)
                    if count < 0 { return errno }
                    if count == 0 { return total == 1 << 20 ? 0 : -1 }
                    total += count
                }
            }
            let waited = ContinuousClock.now - started
            #expect(failure == EIO, "a stalled read ends with EIO, got \(failure): \(mount.gateway.stderr.suffix(3000))")
            #expect(waited < .seconds(30), "the stall is cut after low_speed_time (2 s), not the server's minute: \(waited)")
            #expect(try await mount.blocking { try Mounted.command("/bin/fusermount3", ["-u", root]).status } == 0)
            #expect(try await waitForExit(mount) == 0, "\(mount.gateway.stderr)")
        }
    }

    @Test("--json status lines; a second Ctrl-C while an upload hangs says what is still to send and where, exits 130, and the next mount owes it",
          .timeLimit(.minutes(2)))
    func secondInterruptListsPending() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // A WebDAV stand-in with an empty folder whose PUTs never answer.
        let server = try ScriptedHTTPServer { request in
            switch request.method {
            case "PROPFIND" where request.path == "/" || request.path.isEmpty:
                return .multistatus(ScriptedReply.response(href: "/", folder: true))
            case "PROPFIND":
                return .http("404 Not Found")
            case "PUT":
                return ScriptedReply([.pause(60), .close])
            case "OPTIONS":
                return .http("200 OK", headers: [("DAV", "1")])
            default:
                return .http("405 Method Not Allowed")
            }
        }
        defer { server.stop() }
        try s.write("config.json", Data(#"{"remotes": {"h": {"type": "webdav", "url": "http://127.0.0.1:\#(server.port)/"}}}"#.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state")]
        let mountpoint = s.path("mnt")
        let cache = s.path("cache")
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        let gateway = try BackgroundGateway(s.runner, ["mount", "--json", "--write-back", "600", "--poll-interval", "3600",
                                                      "--cache-dir", cache, "h:", mountpoint], extraEnvironment: environment)
        defer { _ = try? Mounted.command("/bin/fusermount3", ["-u", "-z", mountpoint]) }
        try await gateway.waitForStderr(#""event":"mounted""#)
        let mounted = try #require(gateway.stderr.split(separator: "\n").first.map(String.init))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(mounted.utf8)) as? [String: Any], "\(mounted)")
        #expect(object["location"] as? String == "h:" && object["mountpoint"] as? String == mountpoint && object["read_only"] as? Bool == false)
        // Plain open/write/close (Foundation's Data.write syncs, which would wait for the upload).
        let descriptor = open(mountpoint + "/report.txt", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(descriptor >= 0)
        #expect(Glibc.write(descriptor, "unsent\n", 7) == 7)
        #expect(close(descriptor) == 0)
        // First Ctrl-C: unmounts, then waits for the upload (which hangs).
        kill(gateway.process.processIdentifier, SIGINT)
        try await gateway.waitForStderr(#""event":"unmounting""#)
        #expect(gateway.stderr.contains(#""pending":1"#), "\(gateway.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(gateway.process.isRunning, "still waiting for the upload")
        // Second Ctrl-C: says what is left and where, and exits 130.
        kill(gateway.process.processIdentifier, SIGINT)
        let deadline = ContinuousClock.now + .seconds(60)
        while gateway.process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!gateway.process.isRunning)
        #expect(gateway.process.terminationStatus == 130, "\(gateway.stderr)")
        let pending = try #require(gateway.stderr.split(separator: "\n").first { $0.contains(#""event":"pending""#) }, "\(gateway.stderr)")
        let pendingObject = try #require(try JSONSerialization.jsonObject(with: Data(pending.utf8)) as? [String: Any])
        #expect(pendingObject["files"] as? [String] == ["/report.txt"])
        #expect(pendingObject["cache_dir"] as? String == cache)
        // Every stderr line is one JSON object (nothing else mixed in).
        for line in gateway.stderr.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not JSON: \(line)")
        }
        // Still owed: the cache file is there, and the next mount replays it first.
        let kept = try FileManager.default.contentsOfDirectory(atPath: cache + "/files")
        #expect(kept.count == 1)
        #expect(kept.first.map { try? Data(contentsOf: URL(fileURLWithPath: cache + "/files/" + $0)) } == Data("unsent\n".utf8))
    }

    /// The stand-in of ``failedUploadIsRetried()``: its first three PUTs answer 507.
    static func standIn(_ request: ScriptedRequest, puts: Locked<Int>, uploaded: Locked<[UInt8]?>, stored: Locked<[UInt8]?>) -> ScriptedReply {
        switch request.method {
        case "PROPFIND" where request.path == "/" || request.path.isEmpty:
            return .multistatus(ScriptedReply.response(href: "/", folder: true))
        case "PROPFIND" where request.path == "/report.txt":
            guard let body = stored.value else { return .http("404 Not Found") }
            return .multistatus(ScriptedReply.response(href: "/report.txt", size: String(body.count)))
        case "PROPFIND":
            return .http("404 Not Found")
        case "PUT":
            let attempt = puts.mutate { count -> Int in
                count += 1
                return count
            }
            guard attempt > 3 else { return .http("507 Insufficient Storage") }
            if request.path == "/report.txt" { stored.mutate { $0 = request.body } } else { uploaded.mutate { $0 = request.body } }
            return .http("201 Created")
        case "MOVE" where request.headers["destination"]?.hasSuffix("/report.txt") == true:
            // The temporary upload renamed into place.
            stored.mutate { $0 = uploaded.value }
            return .http("201 Created")
        case "DELETE":
            return .http("204 No Content")
        case "OPTIONS":
            return .http("200 OK", headers: [("DAV", "1")])
        default:
            return .http("405 Method Not Allowed")
        }
    }

    @Test("--json: an upload the server refuses for a while is reported (upload_failed, will_retry true), retried, and lands",
          .timeLimit(.minutes(2)))
    func failedUploadIsRetried() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // A WebDAV stand-in whose first PUTs answer 507 Insufficient Storage (a full disk that an
        // administrator clears): the mount must say so, keep the file and try again.
        let puts = Locked(0)
        let uploaded = Locked<[UInt8]?>(nil)
        let stored = Locked<[UInt8]?>(nil)
        // Each answer closes its connection: the next request comes on a new one.
        let server = try ScriptedHTTPServer { request in ScriptedReply(Self.standIn(request, puts: puts, uploaded: uploaded, stored: stored).steps + [.close]) }
        defer { server.stop() }
        try s.write("config.json", Data(#"{"remotes": {"h": {"type": "webdav", "url": "http://127.0.0.1:\#(server.port)/"}}}"#.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state")]
        let mountpoint = s.path("mnt")
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        let gateway = try BackgroundGateway(s.runner, ["mount", "--json", "--write-back", "0", "--poll-interval", "3600",
                                                      "--cache-dir", s.path("cache"), "h:", mountpoint], extraEnvironment: environment)
        defer { _ = try? Mounted.command("/bin/fusermount3", ["-u", "-z", mountpoint]) }
        try await gateway.waitForStderr(#""event":"mounted""#)
        let descriptor = open(mountpoint + "/report.txt", O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(descriptor >= 0)
        #expect(Glibc.write(descriptor, "kept\n", 5) == 5)
        #expect(close(descriptor) == 0)
        try await gateway.waitForStderr(#""event":"upload_failed""#, timeout: .seconds(60))
        try await gateway.waitForStderr(#""event":"uploaded""#, timeout: .seconds(60))
        let lines = gateway.stderr.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        let failed = try #require(lines.first { $0["event"] as? String == "upload_failed" }, "\(gateway.stderr)")
        #expect(failed["path"] as? String == "/report.txt" && failed["will_retry"] as? Bool == true, "\(failed)")
        #expect((failed["error"] as? String)?.isEmpty == false, "the reason is given: \(failed)")
        let landed = try #require(lines.first { $0["event"] as? String == "uploaded" })
        #expect(landed["path"] as? String == "/report.txt" && landed["size"] as? Int == 5, "\(landed)")
        #expect(stored.value == Array("kept\n".utf8), "the server holds the file after the retries")
        #expect(puts.value >= 4)
        // Nothing left to send: the unmount ends with 0.
        #expect(try Mounted.command("/bin/fusermount3", ["-u", mountpoint]).status == 0)
        let deadline = ContinuousClock.now + .seconds(30)
        while gateway.process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!gateway.process.isRunning && gateway.process.terminationStatus == 0, "\(gateway.stderr)")
    }

    @Test("a 100,000-entry tree walked with find: every entry seen, the mount's peak RSS stays under 96 MB",
          .timeLimit(.minutes(4)))
    func largeTreeMemory() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // 100 folders of 1,000 empty files with long-ish names.
        let source = s.path("src")
        for folder in 0..<100 {
            let path = source + "/folder-\(folder)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for file in 0..<1000 {
                guard FileManager.default.createFile(atPath: path + "/a-file-with-a-longer-name-\(file).txt", contents: nil) else {
                    throw CLITestSetupError("cannot create test files in \(path)")
                }
            }
        }
        try await withMount(s, source, environment: ["XDG_CACHE_HOME": s.path("cache")]) { mount in
            let found = try await mount.blocking(timeout: .seconds(180)) {
                try Mounted.command("/bin/sh", ["-c", "find . -type f | wc -l"], in: mount.mountpoint)
            }
            #expect(found.status == 0 && found.output.trimmingCharacters(in: .whitespacesAndNewlines) == "100000", "\(found.output)")
            let status = try String(contentsOfFile: "/proc/\(mount.gateway.process.processIdentifier)/status", encoding: .utf8)
            let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
                .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") } ?? Int.max
            #expect(peak < 96 << 10, "peak RSS \(peak / 1024) MB after walking 100,000 entries")
        }
    }

    @Test("a mount point that is not a folder is refused with a clear message (exit 1)")
    func badMountpoint() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/file.txt", Data("x".utf8))
        let result = try await s.runner.run(["mount", s.path("src"), s.path("nowhere")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("is not a folder"), "\(result.stderr)")
    }
}
