import Foundation
@testable import GatewayTestSupport
import Testing

/// Issue 31's pinning, eviction and states, on real mounts read by real programs (`getfattr`,
/// `cat`, `cmp`).
extension MountCLITests {
    /// The `user.gateway.*` attributes `getfattr -d` shows for `path` (name → value).
    static func attributes(_ path: String) throws -> [String: String] {
        let (status, output) = try Mounted.command("/usr/bin/getfattr", ["-d", "--absolute-names", path])
        guard status == 0 else { throw CLITestSetupError("getfattr -d \(path) failed (\(status)): \(output)") }
        var result: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("user.gateway.") {
            let parts = line.split(separator: "=", maxSplits: 1)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
        }
        return result
    }

    /// What `gateway mount-status --json` says of the mount at `mountpoint`.
    func mountStatus(_ s: CLIScratch, _ mountpoint: String, environment: [String: String]) async throws -> [String: Any] {
        let result = try await s.runner.run(["mount-status", "--json", mountpoint], extraEnvironment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let list = try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]]
        return try #require(list?.first, "mount-status --json printed \(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// Waits (up to `timeout`) until every path has the state `wanted`; returns the states last seen.
    func waitForState(_ mount: Mounted, _ paths: [String], _ wanted: String, timeout: Duration = .seconds(120)) async throws -> [String] {
        try await mount.blocking(timeout: timeout + .seconds(10)) {
            let deadline = ContinuousClock.now + timeout
            while true {
                // A name the monitor has not reported yet is not there for the mount (as for `ls`).
                let states = paths.map { (try? Self.attributes($0))?["user.gateway.state"] ?? "none" }
                if states.allSatisfy({ $0 == wanted }) || ContinuousClock.now > deadline { return states }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    @Test("pin, unpin, evict and item states: getfattr shows them, pinned contents are fetched without opening and kept current, pins past the limit are refused",
          .timeLimit(.minutes(3)), arguments: ["local", "apache"])
    func pinningAndStates(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        func contents(_ seed: Int, _ size: Int) -> Data { Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 2_654_435_761 >> 11) }) }
        for index in 1...3 { try s.write("src/pinned/f\(index)", contents(index, 1 << 20)) }
        try s.write("src/other.bin", contents(9, 2 << 20))
        try s.write("src/written.txt", Data("before\n".utf8))
        let source = try await source(backend, s)
        defer { source.remove(s) }
        let environment = source.environment.merging(["GATEWAY_STATE_DIR": s.path("state")]) { $1 }
        try await withMount(s, source.location, environment: environment,
                            extra: ["--cache-max-size", "4M", "--poll-interval", "1", "--write-back", "60"]) { mount in
            let root = mount.mountpoint
            let pinnedFiles = (1...3).map { root + "/pinned/f\($0)" }
            // Listed, never read: placeholders, not pinned.
            let first = try await mount.blocking { try Self.attributes(pinnedFiles[0]) }
            #expect(first == ["user.gateway.state": "placeholder"])
            // Other namespaces are not kept: ENOTSUP, which `ls -l` remembers for the whole
            // device (one round trip, not two per file); another user.* name: ENODATA.
            let errors = try await mount.blocking {
                try ["security.selinux", "system.posix_acl_access", "user.other"].map { name in
                    try Mounted.command("/usr/bin/getfattr", ["-n", name, "--absolute-names", pinnedFiles[0]]).output
                }
            }
            #expect(errors[0].contains("Operation not supported") && errors[2].contains("No such attribute"), "\(errors)")

            // Pinned (the folder) and waited for: every file in it materialized, marked pinned.
            let pinned = try await s.runner.run(["pin", "--wait", root + "/pinned"], extraEnvironment: environment)
            #expect(pinned.status == 0, "\(pinned.stderr)")
            let after = try await mount.blocking { try pinnedFiles.map { try Self.attributes($0) } }
            #expect(after.allSatisfy { $0 == ["user.gateway.state": "materialized", "user.gateway.pinned": "1"] }, "\(after)")

            // Changed and created on the server: fetched at the new version without anyone
            // opening them (getxattr opens nothing), and what is read is the new contents.
            try contents(42, 1 << 20).write(to: URL(fileURLWithPath: source.serverFolder + "/pinned/f1"))
            try contents(43, 1 << 19).write(to: URL(fileURLWithPath: source.serverFolder + "/pinned/new"))
            let fetched = try await waitForState(mount, [pinnedFiles[0], root + "/pinned/new"], "materialized")
            #expect(fetched == ["materialized", "materialized"])
            var status = try await mountStatus(s, root, environment: environment)
            #expect(status["pinned_bytes"] as? Int == (3 << 20) + (1 << 19), "\(status)")
            let reread = try await mount.blocking { try Data(contentsOf: URL(fileURLWithPath: pinnedFiles[0])) }
            #expect(reread == contents(42, 1 << 20))

            // 3.5 MiB pinned in a 4 MiB cache: pinning 2 MiB more is refused, with the reason.
            let refused = try await s.runner.run(["pin", root + "/other.bin"], extraEnvironment: environment)
            #expect(refused.status == 1 && refused.stderr.contains("--cache-max-size"), "\(refused.stderr)")
            #expect(try await mount.blocking { try Self.attributes(root + "/other.bin")["user.gateway.pinned"] } == nil)
            // It is read all the same (what does not fit is not kept), and the limit holds.
            let other = try await mount.blocking { try Data(contentsOf: URL(fileURLWithPath: root + "/other.bin")) }
            #expect(other == contents(9, 2 << 20))
            status = try await mountStatus(s, root, environment: environment)
            let used = try #require(status["cache_used"] as? Int)
            #expect(used <= 4 << 20 && status["cache_limit"] as? Int == 4 << 20, "\(status)")

            // A pinned item is not evicted; one pinned through its folder is not unpinned alone.
            let evictPinned = try await s.runner.run(["evict", pinnedFiles[1]], extraEnvironment: environment)
            #expect(evictPinned.status == 1 && evictPinned.stderr.contains("pinned"), "\(evictPinned.stderr)")
            let unpinChild = try await s.runner.run(["unpin", pinnedFiles[1]], extraEnvironment: environment)
            #expect(unpinChild.status == 1 && unpinChild.stderr.contains("folder above"), "\(unpinChild.stderr)")

            // A file written through the mount and not uploaded yet (write-back 60 s): dirty,
            // and not evicted.
            try await mount.blocking {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/written.txt"))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("more\n".utf8))
                try handle.close()
            }
            #expect(try await mount.blocking { try Self.attributes(root + "/written.txt")["user.gateway.state"] } == "dirty")
            let evictDirty = try await s.runner.run(["evict", root + "/written.txt"], extraEnvironment: environment)
            #expect(evictDirty.status == 1, "\(evictDirty.stderr)")
            status = try await mountStatus(s, root, environment: environment)
            #expect(status["pending_uploads"] as? Int == 1 && status["reachable"] as? Bool == true, "\(status)")
            let upload = (status["uploads"] as? [[String: Any]])?.first
            #expect((upload?["path"] as? String)?.hasSuffix("/written.txt") == true && upload?["uploading"] as? Bool == false
                        && upload?["sent"] as? Int == 0,
                    "waiting for its write-back delay: nothing sent yet: \(status)")

            // Unpinned (by REMOTE:PATH on the remote, by path on a local folder), then evicted:
            // placeholders again, and the cache holds none of it.
            let unpinArgument = backend == "apache" ? source.location + "/pinned" : root + "/pinned"
            let unpinned = try await s.runner.run(["unpin", unpinArgument], extraEnvironment: environment)
            #expect(unpinned.status == 0, "\(unpinned.stderr)")
            let evicted = try await s.runner.run(["evict", root + "/pinned"], extraEnvironment: environment)
            #expect(evicted.status == 0, "\(evicted.stderr)")
            let states = try await mount.blocking { try (pinnedFiles + [root + "/pinned/new"]).map { try Self.attributes($0) } }
            #expect(states.allSatisfy { $0 == ["user.gateway.state": "placeholder"] }, "\(states)")
            status = try await mountStatus(s, root, environment: environment)
            #expect((status["pins"] as? [String])?.isEmpty == true && status["pinned_bytes"] as? Int == 0, "\(status)")
            // Read again after the eviction: fetched again, the same bytes.
            #expect(try await mount.blocking { try Data(contentsOf: URL(fileURLWithPath: pinnedFiles[2])) } == contents(3, 1 << 20))
        }
        // Outside a mount: a clear error.
        let outside = try await s.runner.run(["pin", s.path("src/other.bin")], extraEnvironment: environment)
        #expect(outside.status == 1 && outside.stderr.contains("not inside a running gateway mount"), "\(outside.stderr)")
    }

    /// Bytes the files in `folder` take on disk (sparse files count what they hold).
    static func diskUse(of folder: String) -> Int64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.reduce(Int64(0)) { total, name in
            var info = stat()
            return stat(folder + "/" + name, &info) == 0 ? total + Int64(info.st_blocks) * 512 : total
        }
    }

    @Test("--cache-max-size 200M with a pinned folder of 100 MB while 1 GB of other files is read: the cache never exceeds 200 MB, pinned files stay materialized",
          .timeLimit(.minutes(4)))
    func cacheLimitUnderLoad() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let source = try await source("apache", s)
        defer { source.remove(s) }
        // Written straight into the server's folder (the copy up would take longer than the test).
        var chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 9) })
        for index in 0..<10 { try FileManager.default.createDirectory(atPath: source.serverFolder + "/pinned", withIntermediateDirectories: true)
            chunk[0] = UInt8(index)
            try Data(repeating: 0, count: 0).write(to: URL(fileURLWithPath: source.serverFolder + "/pinned/p\(index)"))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source.serverFolder + "/pinned/p\(index)"))
            for _ in 0..<10 { try handle.write(contentsOf: chunk) }
            try handle.close()
        }
        for index in 0..<4 {
            let handle = try { () throws -> FileHandle in
                _ = FileManager.default.createFile(atPath: source.serverFolder + "/big\(index)", contents: nil)
                return try FileHandle(forWritingTo: URL(fileURLWithPath: source.serverFolder + "/big\(index)"))
            }()
            for _ in 0..<256 { try handle.write(contentsOf: chunk) }
            try handle.close()
        }
        let environment = source.environment.merging(["GATEWAY_STATE_DIR": s.path("state")]) { $1 }
        try await withMount(s, source.location, environment: environment, extra: ["--cache-max-size", "200M"]) { mount in
            let root = mount.mountpoint
            let pinned = try await s.runner.run(["pin", "--wait", root + "/pinned"], extraEnvironment: environment)
            #expect(pinned.status == 0, "\(pinned.stderr)")
            let cacheFolder = try #require(try await mountStatus(s, root, environment: environment)["cache_dir"] as? String) + "/read"
            // Sampled every 0.1 s (the issue asks for 0.5 s) while 1 GB is read.
            let limit: Int64 = 200 << 20
            let samples = Locked<[Int64]>([])
            let sampling = Task.detached {
                while !Task.isCancelled {
                    let use = Self.diskUse(of: cacheFolder)
                    samples.mutate { $0.append(use) }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            let read = try await mount.blocking(timeout: .seconds(150)) { () -> Int in
                var total = 0
                for index in 0..<4 {
                    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: root + "/big\(index)"))
                    while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty { total += data.count }
                    try handle.close()
                }
                return total
            }
            sampling.cancel()
            #expect(read == 1 << 30)
            let seen = samples.value
            #expect(seen.count > 5, "the cache was sampled while the files were read")
            #expect(seen.allSatisfy { $0 <= limit }, "largest sample \(seen.max() ?? 0) bytes, limit \(limit)")
            #expect((seen.max() ?? 0) >= 100 << 20, "the pinned 100 MB were in the cache folder")
            let states = try await mount.blocking { try (0..<10).map { try Self.attributes(root + "/pinned/p\($0)")["user.gateway.state"] ?? "none" } }
            #expect(states.allSatisfy { $0 == "materialized" }, "\(states)")
            let status = try await mountStatus(s, root, environment: environment)
            #expect(status["pinned_bytes"] as? Int == 100 << 20 && (status["cache_used"] as? Int ?? .max) <= 200 << 20, "\(status)")
        }
    }
}

extension MountCLITests {
    @Test("--cache-max-age: contents nobody read for that long are dropped (placeholders again); pinned ones stay",
          .timeLimit(.minutes(2)))
    func cacheMaxAge() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try s.write("src/read.bin", Data(repeating: 1, count: 300_000))
        try s.write("src/kept/pinned.bin", Data(repeating: 2, count: 300_000))
        let source = try await source("local", s)
        let environment = source.environment.merging(["GATEWAY_STATE_DIR": s.path("state")]) { $1 }
        try await withMount(s, source.location, environment: environment, extra: ["--cache-max-age", "2s"]) { mount in
            let root = mount.mountpoint
            let pinned = try await s.runner.run(["pin", "--wait", root + "/kept"], extraEnvironment: environment)
            #expect(pinned.status == 0, "\(pinned.stderr)")
            _ = try await mount.blocking { try Data(contentsOf: URL(fileURLWithPath: root + "/read.bin")) }
            #expect(try await mount.blocking { try Self.attributes(root + "/read.bin")["user.gateway.state"] } == "materialized")
            let dropped = try await waitForState(mount, [root + "/read.bin"], "placeholder")
            #expect(dropped == ["placeholder"])
            #expect(try await mount.blocking { try Self.attributes(root + "/kept/pinned.bin")["user.gateway.state"] } == "materialized")
        }
    }
}

extension MountCLITests {
    /// A folder of `backend` for a restart: its location, the environment reaching it, and (on
    /// Xandikos) its server log.
    func restartSource(_ backend: String, _ s: CLIScratch) async throws -> (location: String, environment: [String: String], log: String?) {
        var environment = ["XDG_CACHE_HOME": s.path("cache"), "GATEWAY_STATE_DIR": s.path("state")]
        switch backend {
        case "local":
            try FileManager.default.createDirectory(atPath: s.path("src"), withIntermediateDirectories: true)
            return (s.path("src"), environment, nil)
        case "apache":
            environment.merge(try apacheConfig(s)) { $1 }
        default:
            let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_XANDIKOS_URL")
            // sync_collection always: a flat folder is caught up by one REPORT.
            try s.write("config.json", Data("""
                {"remotes": {"xandikos": {"type": "webdav", "url": "\(server.url.absoluteString)", "user": "\(server.user)",
                 "password_env": "DAV_SECRET", "sync_collection": "always"}}}
                """.utf8))
            environment["GATEWAY_CONFIG"] = s.path("config.json")
            environment["DAV_SECRET"] = server.password
        }
        let location = "\(backend):r-\(UUID().uuidString.prefix(8))"
        let made = try await s.runner.run(["mkdir", location], extraEnvironment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        return (location, environment, backend == "xandikos" ? ProcessInfo.processInfo.environment["GATEWAY_TEST_XANDIKOS_LOG"] : nil)
    }

    @Test("mount again after 10 files changed on the remote: it mounts from the saved anchor, catches up (one REPORT on Xandikos, no listing), drops the stale cached contents and keeps the rest",
          .timeLimit(.minutes(3)), arguments: ["local", "apache", "xandikos"])
    func restartCatchesUp(backend: String) async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let (location, environment, log) = try await restartSource(backend, s)
        defer { if !location.hasPrefix("/") { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment) } }
        func contents(_ index: Int, _ round: Int) -> Data { Data("file \(index), round \(round)\n".utf8) + Data(repeating: UInt8(index), count: 20_000) }
        func write(_ index: Int, _ round: Int) async throws {
            let result = try await s.runner.run(["rcat", "\(location)/f\(index).txt"], stdin: contents(index, round), extraEnvironment: environment)
            #expect(result.status == 0, "\(result.stderr)")
        }
        for index in 0..<12 { try await write(index, 1) }
        let files = (0..<12).map { "f\($0).txt" }
        // First mount: everything read (and cached), then unmounted.
        let first = try await Mounted(s, location: location, environment: environment, extra: ["--poll-interval", "60"])
        let read = try await first.blocking { try files.map { try Data(contentsOf: URL(fileURLWithPath: first.mountpoint + "/" + $0)) } }
        #expect(read == (0..<12).map { contents($0, 1) })
        try Mounted.command("/bin/fusermount3", ["-u", first.mountpoint])
        #expect(try await waitForExit(first) == 0)
        let cacheFolder = try #require(try FileManager.default.contentsOfDirectory(atPath: s.path("cache/gateway/mount")).first)
        let readFolder = s.path("cache/gateway/mount/\(cacheFolder)/read")
        #expect(try FileManager.default.contentsOfDirectory(atPath: readFolder).count == 12, "the cache kept what was read")

        // Changed while nothing was mounted (same size: the new version is told by its tag).
        for index in 0..<10 { try await write(index, 2) }
        // Xandikos logs a request once answered: a marker request settles the log.
        func settled(_ log: String) async throws -> [Substring] {
            try await settledLog(log, server: "Xandikos") { marker in
                _ = try await s.runner.run(["stat", "xandikos:/\(marker)"], extraEnvironment: environment)
            }
        }
        var mark: Int?
        if let log { mark = try await settled(log).count }
        let second = try await Mounted(s, location: location, environment: environment, extra: ["--poll-interval", "60"])
        defer { second.forceOff() }
        try await second.gateway.waitForStderr("caught up with ")
        #expect(second.gateway.stderr.contains("caught up with 10 changes made on the remote since the last mount"), "\(second.gateway.stderr)")
        // The ten stale versions are gone from the cache; the two unchanged files are still there,
        // materialized before anyone reads them.
        #expect(try FileManager.default.contentsOfDirectory(atPath: readFolder).count == 2)
        if let log, let mark {
            let folder = String(location.split(separator: ":")[1])
            let lines = try await settled(log).dropFirst(mark).filter { $0.contains("/\(folder)/ ") }
            #expect(lines.filter { $0.contains("\"REPORT ") }.count == 1, "one sync-collection report: \(lines)")
            #expect(lines.filter { $0.contains("\"PROPFIND ") }.count <= 1, "no listing, only the root's attributes: \(lines)")
        }
        let states = try await second.blocking { try files.map { try Self.attributes(second.mountpoint + "/" + $0)["user.gateway.state"] ?? "none" } }
        #expect(states == Array(repeating: "placeholder", count: 10) + ["materialized", "materialized"], "\(states)")
        let after = try await second.blocking { try files.map { try Data(contentsOf: URL(fileURLWithPath: second.mountpoint + "/" + $0)) } }
        #expect(after == (0..<12).map { contents($0, $0 < 10 ? 2 : 1) })
    }
}

extension MountCLITests {
    @Test("offline: with Apache unreachable, cached files are read, an uncached read fails at once, 57 edits/creates/renames/removals wait; back online they land in order and check finds no difference",
          .timeLimit(.minutes(3)))
    func offlineWork() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let (proxy, env, state) = try Self.apacheBehindProxy(s)
        defer { proxy.stop() }
        let folder = "offline-\(UUID().uuidString.prefix(8))"
        let server = state + "/webdav-apache/" + folder
        try s.write("src/cached.bin", Data(repeating: 1, count: 100_000))
        try s.write("src/uncached.bin", Data(repeating: 2, count: 100_000))
        try s.write("src/edit.txt", Data("line 1\n".utf8))
        try s.write("src/gone/old.txt", Data("old\n".utf8))
        try s.write("src/keepdir/k.txt", Data("k\n".utf8))
        let copied = try await s.runner.run(["copy", s.path("src"), "apache:\(folder)"], extraEnvironment: env)
        #expect(copied.status == 0, "\(copied.stderr)")
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "apache:\(folder)"], extraEnvironment: env) }
        try await withMount(s, "apache:\(folder)", environment: env, extra: ["--poll-interval", "1", "--write-back", "0"]) { mount in
            let root = mount.mountpoint
            let warm = try await mount.blocking { try ["cached.bin", "edit.txt"].map { try Data(contentsOf: URL(fileURLWithPath: root + "/" + $0)) } }
            #expect(warm[0].count == 100_000 && warm[1] == Data("line 1\n".utf8))
            // Listed once: the mount knows the folder's names (so a new one can be made offline).
            let listed = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root).sorted() }
            #expect(listed == ["cached.bin", "edit.txt", "gone", "keepdir", "uncached.bin"])
            #expect(try await mount.blocking { try ["gone", "keepdir"].map { try FileManager.default.contentsOfDirectory(atPath: root + "/" + $0) } }
                    == [["old.txt"], ["k.txt"]])

            // The server goes away; the monitor's next look finds out.
            proxy.setRefusing(true)
            proxy.cutAll()
            try await mount.gateway.waitForStderr("working offline")

            let (cached, uncachedErrno, elapsed) = try await mount.blocking { () -> (Data, Int32, Duration) in
                let cached = try Data(contentsOf: URL(fileURLWithPath: root + "/cached.bin"))
                let clock = ContinuousClock()
                let start = clock.now
                let descriptor = open(root + "/uncached.bin", O_RDONLY)
                var buffer = [UInt8](repeating: 0, count: 4096)
                let result = descriptor >= 0 ? read(descriptor, &buffer, 4096) : -1
                let code = result < 0 ? errno : 0
                if descriptor >= 0 { close(descriptor) }
                return (cached, code, clock.now - start)
            }
            #expect(cached == Data(repeating: 1, count: 100_000), "a cached file is read offline")
            #expect(uncachedErrno == EHOSTUNREACH, "an uncached read fails (errno \(uncachedErrno))")
            #expect(elapsed < .seconds(10), "at once, not after retries and time-outs (minutes): \(elapsed)")

            // Edits and a new file wait for the remote.
            try await mount.blocking {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/edit.txt"))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("line 2, offline\n".utf8))
                try handle.close()
                try Data("made offline\n".utf8).write(to: URL(fileURLWithPath: root + "/new.txt"))
            }
            // Folder changes wait too, in order: a folder and a file in it, a rename of a file on
            // the remote (edited offline), of one made offline, a removal. Meanwhile the server
            // changes a file removed here (its change stays) and removes a folder a file is made
            // in here (made again for it).
            try await mount.blocking {
                let files = FileManager.default
                try files.createDirectory(atPath: root + "/offdir", withIntermediateDirectories: false)
                try Data("in a folder made offline\n".utf8).write(to: URL(fileURLWithPath: root + "/offdir/a.txt"))
                try files.moveItem(atPath: root + "/edit.txt", toPath: root + "/renamed.txt")
                try files.moveItem(atPath: root + "/new.txt", toPath: root + "/new2.txt")
                try files.moveItem(atPath: root + "/keepdir", toPath: root + "/moved")
                try files.removeItem(atPath: root + "/cached.bin")
                try files.removeItem(atPath: root + "/uncached.bin")
                try Data("made in a folder removed there\n".utf8).write(to: URL(fileURLWithPath: root + "/gone/x.txt"))
            }
            // A batch of 46 more: a folder, 20 new files, 10 of them edited, the other 10
            // renamed and 5 of those removed.
            try await mount.blocking {
                let files = FileManager.default
                try files.createDirectory(atPath: root + "/batch", withIntermediateDirectories: false)
                for index in 0..<20 { try Data("b\(index)\n".utf8).write(to: URL(fileURLWithPath: root + "/batch/b\(index)")) }
                for index in 0..<10 {
                    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/batch/b\(index)"))
                    try handle.seekToEnd()
                    try handle.write(contentsOf: Data("edit\n".utf8))
                    try handle.close()
                }
                for index in 10..<20 { try files.moveItem(atPath: root + "/batch/b\(index)", toPath: root + "/batch/r\(index)") }
                for index in 15..<20 { try files.removeItem(atPath: root + "/batch/r\(index)") }
            }
            for index in 0..<10 { try s.write("intended/b\(index)", Data("b\(index)\nedit\n".utf8)) }
            for index in 10..<15 { try s.write("intended/r\(index)", Data("b\(index)\n".utf8)) }
            // Listed offline: the kept listing, as the changes made here left it.
            let offlineListing = try await mount.blocking { () -> [[String]] in
                try ["", "/gone", "/offdir", "/moved"].map { try FileManager.default.contentsOfDirectory(atPath: root + $0).sorted() }
            }
            #expect(offlineListing == [["batch", "gone", "moved", "new2.txt", "offdir", "renamed.txt"], ["old.txt", "x.txt"], ["a.txt"], ["k.txt"]],
                    "\(offlineListing)")
            try Data("changed on the server\n".utf8).write(to: URL(fileURLWithPath: server + "/uncached.bin"))
            try FileManager.default.removeItem(atPath: server + "/gone")
            var status = try await mountStatus(s, root, environment: env)
            #expect(status["reachable"] as? Bool == false && status["pending_uploads"] as? Int == 19, "\(status)")
            let shown = try await s.runner.run(["mount-status", root], extraEnvironment: env)
            #expect(String(decoding: shown.stdout, as: UTF8.self).contains("OFFLINE"))
            #expect(!FileManager.default.fileExists(atPath: server + "/new.txt"))

            // Back: both land without anything else done.
            proxy.setRefusing(false)
            try await mount.gateway.waitForStderr("answers again")
            func text(_ name: String) -> String? { try? String(contentsOfFile: server + "/" + name, encoding: .utf8) }
            try await waitUntil("the edits reached the server") {
                text("renamed.txt") == "line 1\nline 2, offline\n" && text("new2.txt") == "made offline\n"
                    && text("offdir/a.txt") == "in a folder made offline\n" && text("gone/x.txt") == "made in a folder removed there\n"
            }
            try await waitUntil("the batch reached the server") {
                (try? FileManager.default.contentsOfDirectory(atPath: server + "/batch").sorted())
                    == (0..<10).map { "b\($0)" } + (10..<15).map { "r\($0)" }
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: server).sorted()
            #expect(names == ["batch", "gone", "moved", "new2.txt", "offdir", "renamed.txt", "uncached.bin"], "\(names) \(mount.gateway.stderr)")
            #expect(text("moved/k.txt") == "k\n", "a folder renamed offline, with what is in it")
            // What was meant, as a local tree, against the remote: no difference.
            let checked = try await s.runner.run(["check", s.path("intended"), "apache:\(folder)/batch"], extraEnvironment: env)
            #expect(checked.status == 0, "\(checked.text) \(checked.stderr)")
            #expect(text("uncached.bin") == "changed on the server\n", "removed here, changed there: the change stays")
            status = try await mountStatus(s, root, environment: env)
            #expect(status["reachable"] as? Bool == true && status["pending_uploads"] as? Int == 0, "\(status)")
        }
    }
}

extension MountCLITests {
    @Test("kill -9 with 20 changes queued offline (a folder, files in it and beside, renames, removals); mounted again online (or offline, then the remote comes back): all 20 applied",
          .timeLimit(.minutes(3)), arguments: ["kill", "kill, start offline", "unmount offline"])
    func offlineChangesSurviveKill(mode: String) async throws {
        let startsOffline = mode == "kill, start offline"
        let s = try CLIScratch()
        defer { s.remove() }
        let (proxy, env, state) = try Self.apacheBehindProxy(s)
        defer { proxy.stop() }
        let folder = "killed-\(UUID().uuidString.prefix(8))"
        let server = state + "/webdav-apache/" + folder
        for index in 0..<10 { try s.write("src/k\(index)", Data("k\(index)\n".utf8)) }
        let copied = try await s.runner.run(["copy", s.path("src"), "apache:\(folder)"], extraEnvironment: env)
        #expect(copied.status == 0, "\(copied.stderr)")
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "apache:\(folder)"], extraEnvironment: env) }

        let mount = try await Mounted(s, location: "apache:\(folder)", environment: env, extra: ["--poll-interval", "1", "--write-back", "0"])
        defer { mount.forceOff() }
        let root = mount.mountpoint
        _ = try await mount.blocking { try FileManager.default.contentsOfDirectory(atPath: root) }
        proxy.setRefusing(true)
        proxy.cutAll()
        try await mount.gateway.waitForStderr("working offline")
        try await mount.blocking {
            let files = FileManager.default
            try files.createDirectory(atPath: root + "/newdir", withIntermediateDirectories: false)                    // 1
            for index in 0..<5 { try Data("n\(index)\n".utf8).write(to: URL(fileURLWithPath: root + "/newdir/n\(index)")) } // 5
            for index in 0..<4 { try Data("m\(index)\n".utf8).write(to: URL(fileURLWithPath: root + "/m\(index)")) }        // 4
            for index in 0..<5 { try files.moveItem(atPath: root + "/k\(index)", toPath: root + "/r\(index)") }             // 5
            for index in 5..<10 { try files.removeItem(atPath: root + "/k\(index)") }                                      // 5
        }
        let status = try await mountStatus(s, root, environment: env)
        #expect(status["reachable"] as? Bool == false && status["pending_uploads"] as? Int == 9, "\(status)")
        if mode == "unmount offline" {
            // Unmounted while offline: nothing is sent (the folder changes can't go first), all
            // stays owed, and the command says so with exit 1.
            try Mounted.command("/bin/fusermount3", ["-u", root])
            #expect(try await waitForExit(mount) == 1)
            #expect(mount.gateway.stderr.contains("stays owed to the next mount"), "\(mount.gateway.stderr)")
        } else {
            kill(mount.gateway.process.processIdentifier, SIGKILL)
            mount.gateway.process.waitUntilExit()
            try Mounted.command("/bin/fusermount3", ["-u", "-z", root])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: server).sorted() == (0..<10).map { "k\($0)" })

        let expected = ((0..<4).map { "m\($0)" } + ["newdir"] + (0..<5).map { "r\($0)" }).sorted()
        func text(_ name: String) -> String? { try? String(contentsOfFile: server + "/" + name, encoding: .utf8) }
        if startsOffline {
            // Still offline: the next mount starts from what the killed one kept, and shows the
            // folder as the changes left it; then the remote comes back and they are applied.
            let offline = try await Mounted(s, location: "apache:\(folder)", environment: env)
            defer { offline.forceOff() }
            try await offline.gateway.waitForStderr("starting offline")
            let (shown, made) = try await offline.blocking { () -> ([String], String) in
                (try FileManager.default.contentsOfDirectory(atPath: offline.mountpoint).sorted(),
                 try String(contentsOfFile: offline.mountpoint + "/m2", encoding: .utf8))
            }
            #expect(shown == expected && made == "m2\n", "\(shown) \(offline.gateway.stderr)")
            proxy.setRefusing(false)
            try await offline.gateway.waitForStderr("answers again")
            try await waitUntil("the 20 changes reached the server") {
                ((try? FileManager.default.contentsOfDirectory(atPath: server).sorted()) == expected) && text("m3") == "m3\n"
                    && text("newdir/n4") == "n4\n"
            }
        } else {
            // Online again: the next mount applies the 11 folder changes, then sends the 9 files.
            proxy.setRefusing(false)
            let again = try await Mounted(s, location: "apache:\(folder)", environment: env)
            again.forceOff()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: server).sorted()
        #expect(names == expected, "\(names)")
        #expect((0..<5).allSatisfy { text("r\($0)") == "k\($0)\n" && text("newdir/n\($0)") == "n\($0)\n" })
        #expect((0..<4).allSatisfy { text("m\($0)") == "m\($0)\n" })
    }
}

extension MountCLITests {
    /// Apache reached through a proxy the test can make refuse connections (the remote "goes
    /// away"): the proxy, the environment of a remote `apache` through it, and the folder where
    /// the test servers keep their state.
    static func apacheBehindProxy(_ s: CLIScratch) throws -> (DroppingProxy, [String: String], String) {
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let url = URL(string: apache), let port = url.port,
              let state = environment["GATEWAY_TEST_STATE"] else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let proxy = try DroppingProxy(targetPort: port, dropAfter: Int.max)
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.port = proxy.port
        try s.write("config.json", Data("""
            {"remotes": {"apache": {"type": "webdav", "url": "\(components.url!.absoluteString)", "user": "\(environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway")",
                                    "password_env": "DAV_SECRET", "connect_timeout": 2}}}
            """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test",
                   "GATEWAY_STATE_DIR": s.path("state"), "XDG_CACHE_HOME": s.path("cache")]
        return (proxy, env, state)
    }
}

extension MountCLITests {
    @Test("mount-status follows a live upload: uploading, bytes sent growing and short of the size while the server stalls; then it lands",
          .timeLimit(.minutes(2)))
    func uploadProgress() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        // Apache behind a proxy that can stop taking what the client sends.
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let proxy = try DroppingProxy(targetPort: try #require(server.url.port), dropAfter: .max, maxDrops: 0)
        defer { proxy.stop() }
        let folder = "p-\(UUID().uuidString.prefix(8))"
        let url = "http://127.0.0.1:\(proxy.port)\(server.url.path.hasSuffix("/") ? server.url.path : server.url.path + "/")\(folder)/"
        try s.write("config.json", Data("""
            {"remotes": {"dav": {"type": "webdav", "url": "\(url)", "user": "\(server.user)", "password_env": "DAV_SECRET"},
                         "top": {"type": "webdav", "url": "\(server.url.absoluteString)", "user": "\(server.user)", "password_env": "DAV_SECRET"}}}
            """.utf8))
        let environment = ["GATEWAY_CONFIG": s.path("config.json"), "GATEWAY_STATE_DIR": s.path("state"), "DAV_SECRET": server.password]
        let made = try await s.runner.run(["mkdir", "top:\(folder)"], extraEnvironment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", "top:\(folder)"], extraEnvironment: environment) }
        let size = 32 << 20
        try await withMount(s, "dav:", environment: environment, extra: ["--write-back", "0", "--poll-interval", "3600"]) { mount in
            proxy.setHolding(after: 1 << 20)
            var released = false
            defer { if !released { proxy.setHolding(after: nil) } }
            try await mount.blocking {
                let descriptor = open(mount.mountpoint + "/big.bin", O_WRONLY | O_CREAT | O_EXCL, 0o644)
                guard descriptor >= 0 else { throw POSIXError(.EIO) }
                let chunk = [UInt8](repeating: 0x5a, count: 1 << 20)
                for _ in 0..<32 { guard Glibc.write(descriptor, chunk, chunk.count) == chunk.count else { throw POSIXError(.EIO) } }
                guard close(descriptor) == 0 else { throw POSIXError(.EIO) }
            }
            // The upload starts at once (write-back 0) and stalls when the socket buffers are full.
            var seen: [Int] = []
            let deadline = ContinuousClock.now + .seconds(30)
            var upload: [String: Any]?
            while ContinuousClock.now < deadline {
                let status = try await mountStatus(s, mount.mountpoint, environment: environment)
                upload = (status["uploads"] as? [[String: Any]])?.first
                if upload?["uploading"] as? Bool == true, let sent = upload?["sent"] as? Int, sent > 0 {
                    seen.append(sent)
                    if seen.count >= 3 { break }
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(seen.count >= 3, "an upload in progress with bytes sent: \(String(describing: upload))")
            #expect(upload?["size"] as? Int == size && (upload?["path"] as? String)?.hasSuffix("/big.bin") == true, "\(String(describing: upload))")
            #expect(seen.allSatisfy { $0 < size }, "held by the server: not all sent \(seen)")
            #expect(seen == seen.sorted(), "sent only grows: \(seen)")
            // Let it through: the upload lands, and the queue is empty.
            proxy.setHolding(after: nil)
            released = true
            var pending = -1
            let end = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < end {
                pending = try await mountStatus(s, mount.mountpoint, environment: environment)["pending_uploads"] as? Int ?? -1
                if pending == 0 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(pending == 0)
        }
        let stat = try await s.runner.run(["stat", "--json", "top:\(folder)/big.bin"], extraEnvironment: environment)
        #expect(stat.status == 0, "\(stat.stderr)")
        let object = try JSONSerialization.jsonObject(with: stat.stdout) as? [String: Any]
        #expect(object?["size"] as? Int == size, "the whole file is on the server: \(String(describing: object))")
    }
}

extension MountCLITests {
    // (Three mounts, each of whose waits may take up to 120 s on a loaded machine: the limit lets a
    // wait that fails print the mount's log, rather than the whole test stop without it.)
    @Test("an anchor that expired between mounts (the monitor's state store removed): a log line, a full listing, and the remote's changes are there",
          .timeLimit(.minutes(5)))
    func expiredAnchor() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let (location, environment, _) = try await restartSource("apache", s)
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "--no-trash", location], extraEnvironment: environment) }
        func write(_ name: String, _ text: String) async throws {
            let result = try await s.runner.run(["rcat", "\(location)/\(name)"], stdin: Data(text.utf8), extraEnvironment: environment)
            #expect(result.status == 0, "\(result.stderr)")
        }
        for index in 0..<3 { try await write("f\(index).txt", "round 1 of \(index)\n") }
        let first = try await Mounted(s, location: location, environment: environment, extra: ["--poll-interval", "60"])
        #expect(try await first.blocking { try String(contentsOfFile: first.mountpoint + "/f0.txt", encoding: .utf8) } == "round 1 of 0\n")
        try Mounted.command("/bin/fusermount3", ["-u", first.mountpoint])
        #expect(try await waitForExit(first) == 0)

        // The monitor's state store goes (as after a cleanup of the state folder): the anchor the
        // mount kept can't be served any more.
        let walker = FileManager.default.enumerator(atPath: s.path("state"))
        var stores: [String] = []
        while let relative = walker?.nextObject() as? String {
            if (relative as NSString).lastPathComponent == "monitor" { stores.append(s.path("state/" + relative)) }
        }
        #expect(!stores.isEmpty, "the monitor's state store was found under \(s.path("state"))")
        for store in stores { try FileManager.default.removeItem(atPath: store) }
        // Changed while nothing was mounted.
        try await write("f0.txt", "round 2 of 0, longer\n")
        try await write("new.txt", "made while unmounted\n")

        let second = try await Mounted(s, location: location, environment: environment, extra: ["--poll-interval", "60"])
        defer { second.forceOff() }
        try await second.gateway.waitForStderr("has expired; listing the remote afresh")
        let seen = try await second.blocking { () -> (String, String, [String]) in
            (try String(contentsOfFile: second.mountpoint + "/f0.txt", encoding: .utf8),
             try String(contentsOfFile: second.mountpoint + "/new.txt", encoding: .utf8),
             try FileManager.default.contentsOfDirectory(atPath: second.mountpoint).sorted())
        }
        #expect(seen.0 == "round 2 of 0, longer\n" && seen.1 == "made while unmounted\n", "\(seen)")
        #expect(seen.2 == ["f0.txt", "f1.txt", "f2.txt", "new.txt"], "\(seen.2)")
        // A fresh anchor is saved once the listing is done (unmounted before, the next mount
        // would start without one): a third mount catches up from it again.
        try await second.gateway.waitForStderr("listed the remote afresh; its changes are followed from here, and the next mount catches up from here")
        try Mounted.command("/bin/fusermount3", ["-u", second.mountpoint])
        #expect(try await waitForExit(second) == 0)
        let third = try await Mounted(s, location: location, environment: environment, extra: ["--poll-interval", "60"])
        defer { third.forceOff() }
        try await third.gateway.waitForStderr("caught up with ")
        #expect(!third.gateway.stderr.contains("has expired"), "\(third.gateway.stderr)")
    }
}
