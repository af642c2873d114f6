import Foundation
@testable import GatewayTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `gateway` process left running (for `watch`): its output is read as it comes.
final class BackgroundGateway: @unchecked Sendable {
    let process: ChildProcess.Spawned
    private let out: Locked<Data>
    private let err: Locked<Data>

    init(_ runner: GatewayRunner, _ arguments: [String], extraEnvironment: [String: String] = [:]) throws {
        process = try ChildProcess.spawn(GatewayRunner.binary, arguments, environment: runner.environment.merging(extraEnvironment) { $1 },
                                         directory: runner.workingDirectory, stdout: .pipe, stderr: .pipe)
        out = ChildProcess.Spawned.collect(process.output)
        err = ChildProcess.Spawned.collect(process.errors)
    }

    var stdout: String { String(decoding: out.value, as: UTF8.self) }
    var stderr: String { String(decoding: err.value, as: UTF8.self) }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Waits until the output holds every line in `expected`.
    func waitForLines(_ expected: [String], timeout: Duration, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if Set(lines).isSuperset(of: expected) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("not printed within \(timeout): \(Set(expected).subtracting(lines).sorted()); stdout: \(stdout); stderr: \(stderr)",
                     sourceLocation: sourceLocation)
    }

    /// Waits until stderr holds `text` (a readiness line), bounded by a time only a broken run reaches
    /// (two minutes: under a CPU hog, beside the other shard and the side builds, a mount of a large
    /// tree once took more than 20 s to say it was up).
    func waitForStderr(_ text: String, timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if stderr.contains(text) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\"\(text)\" not on stderr within \(timeout): \(stderr)", sourceLocation: sourceLocation)
    }

    /// Sends SIGINT and waits for the exit; returns the status and how long it took.
    func interrupt() async throws -> (status: Int32, took: Duration) {
        let started = ContinuousClock.now
        process.signal(SIGINT)
        while process.isRunning {
            if ContinuousClock.now - started > .seconds(10) {
                process.terminate()
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (process.terminationStatus, ContinuousClock.now - started)
    }

    deinit { if process.isRunning { process.terminate() } }
}

/// `gateway watch`: live lines, --json, --state catch-up, --once, expired anchors, outages, Ctrl-C.
@Suite("gateway watch", .serialized)
struct WatchCLITests {
    @Test("reaching the inotify watch limit is a clear error naming the setting (in a user namespace whose own limit is 5: the machine's stays)",
          .timeLimit(.minutes(1)))
    func watchLimit() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        for index in 0..<20 { try FileManager.default.createDirectory(atPath: s.path("tree/d\(index)"), withIntermediateDirectories: true) }
        let machine = try String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8)
        // A user namespace has a watch limit of its own (/proc/sys/user/max_inotify_watches): the
        // gateway runs inside one limited to 5, and no other test on the machine is touched.
        let process = try ChildProcess.spawn("/usr/bin/unshare", ["--user", "--map-root-user", "/bin/sh", "-c",
                                             #"echo 5 > /proc/sys/user/max_inotify_watches && exec "$0" watch -R "$1""#,
                                             GatewayRunner.binary, s.path("tree")],
                                             environment: s.runner.environment.merging(["GATEWAY_STATE_DIR": s.path("state")]) { $1 },
                                             directory: s.runner.workingDirectory, stderr: .pipe)
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            process.terminate()
        }
        defer { watchdog.cancel() }
        let stderr = String(decoding: process.readOutputs().stderr, as: UTF8.self)
        await process.exited()
        #expect(process.terminationStatus != 0 && process.terminationStatus != 15, "watching 21 folders with a limit of 5 watches must fail: \(stderr)")
        #expect(stderr.contains("max_user_watches = 5"), "the limit that applied is named: \(stderr)")
        #expect(try String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8) == machine)
    }

    @Test("live lines for a local folder, relative paths, renames; Ctrl-C exits 130 promptly")
    func liveLocal() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        try FileManager.default.createDirectory(atPath: s.path("tree/sub"), withIntermediateDirectories: true)
        try s.write("tree/old.txt", Data("o".utf8))
        let state = ["GATEWAY_STATE_DIR": s.path("state")]
        let watch = try BackgroundGateway(s.runner, ["-v", "watch", "-R", s.path("tree")], extraEnvironment: state)
        // -v says "watching LOCATION" once the anchor is taken: every change after it is reported.
        try await watch.waitForStderr("watching ")
        try s.write("tree/new.txt", Data("n".utf8))
        try s.write("tree/sub/inner.txt", Data("i".utf8))
        try await watch.waitForLines(["created new.txt", "created sub/inner.txt"], timeout: .seconds(60))
        try FileManager.default.moveItem(atPath: s.path("tree/old.txt"), toPath: s.path("tree/sub/moved.txt"))
        try FileManager.default.removeItem(atPath: s.path("tree/new.txt"))
        try await watch.waitForLines(["renamed old.txt -> sub/moved.txt", "removed new.txt"], timeout: .seconds(60))
        let (status, took) = try await watch.interrupt()
        #expect(status == 130)
        #expect(took < .seconds(10), "took \(took)")  // (without the handler: never)
        #expect(!watch.lines.contains { $0.contains("old.txt") && !$0.hasPrefix("renamed") }, "\(watch.lines)")
    }

    @Test("--state and --once on WebDAV: record, catch up exactly once, JSON lines, then expired")
    func stateAndOnce() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"] else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        try s.write("config.json", Data("""
            {"remotes": {"dav": {"type": "webdav", "url": "\(apache)", "user": "\(user)", "password_env": "DAV_SECRET"}}}
            """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test",
                   "GATEWAY_STATE_DIR": s.path("state")]
        let folder = "watch-\(UUID().uuidString.prefix(8))"
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "dav:\(folder)"], extraEnvironment: env) }
        try await s.runner.run(["mkdir", "dav:\(folder)/inbox"], extraEnvironment: env)
        try s.write("one.txt", Data("1".utf8))
        try await s.runner.run(["copy", s.path("one.txt"), "dav:\(folder)/inbox/one.txt"], extraEnvironment: env)

        // First run: records the state, prints nothing.
        let anchorFile = s.path("inbox.anchor")
        let first = try await s.runner.run(["watch", "--once", "--state", anchorFile, "dav:\(folder)/inbox"], extraEnvironment: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.text.isEmpty, "\(first.text)")
        #expect(FileManager.default.fileExists(atPath: anchorFile))

        try s.write("two.txt", Data("22".utf8))
        try await s.runner.run(["copy", s.path("two.txt"), "dav:\(folder)/inbox/two.txt"], extraEnvironment: env)
        try await s.runner.run(["rm", "dav:\(folder)/inbox/one.txt"], extraEnvironment: env)
        let second = try await s.runner.run(["watch", "--once", "--json", "--state", anchorFile, "dav:\(folder)/inbox"], extraEnvironment: env)
        #expect(second.status == 0, "\(second.stderr)")
        let objects = second.text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 2, "\(second.text)")
        let created = objects.first { $0["kind"] as? String == "created" }
        #expect(created?["path"] as? String == "two.txt")
        #expect(created?["type"] as? String == "file")
        #expect(created?["size"] as? Int == 2)
        #expect(created?["modified"] is String)
        #expect(created?.keys.contains("previous_path") == true)
        let removed = objects.first { $0["kind"] as? String == "removed" }
        #expect(removed?["path"] as? String == "one.txt")

        // Caught up: nothing again.
        let third = try await s.runner.run(["watch", "--once", "--state", anchorFile, "dav:\(folder)/inbox"], extraEnvironment: env)
        #expect(third.status == 0 && third.text.isEmpty, "\(third.text) \(third.stderr)")

        // The state file belongs to its location.
        let other = try await s.runner.run(["watch", "--once", "--state", anchorFile, "dav:\(folder)"], extraEnvironment: env)
        #expect(other.status == 2, "\(other.stderr)")

        // State lost: the anchor is expired, FILE is reset, and the next run starts over.
        try FileManager.default.removeItem(atPath: s.path("state"))
        let expired = try await s.runner.run(["watch", "--once", "--state", anchorFile, "dav:\(folder)/inbox"], extraEnvironment: env)
        #expect(expired.status == 1)
        #expect(expired.stderr == "gateway: watch dav:\(folder)/inbox: anchor expired; run again to start over\n", "\(expired.stderr)")
        #expect(!FileManager.default.fileExists(atPath: anchorFile))
        let restart = try await s.runner.run(["watch", "--once", "--state", anchorFile, "dav:\(folder)/inbox"], extraEnvironment: env)
        #expect(restart.status == 0 && restart.text.isEmpty, "\(restart.stderr)")
    }

    @Test("an outage is reported once and retried; changes made meanwhile arrive afterwards")
    func outage() async throws {
        let s = try CLIScratch()
        defer { s.remove() }
        let environment = ProcessInfo.processInfo.environment
        guard let apache = environment["GATEWAY_TEST_WEBDAV_APACHE_URL"], let url = URL(string: apache), let port = url.port else {
            throw CLITestSetupError("GATEWAY_TEST_WEBDAV_APACHE_URL not set: run ./scripts/test.sh (it starts the WebDAV servers)")
        }
        let proxy = try DroppingProxy(targetPort: port, dropAfter: Int.max)
        defer { proxy.stop() }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.port = proxy.port
        let user = environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway"
        try s.write("config.json", Data("""
            {"remotes": {"dav": {"type": "webdav", "url": "\(components.url!.absoluteString)", "user": "\(user)", "password_env": "DAV_SECRET",
                                 "connect_timeout": 2}}}
            """.utf8))
        let env = ["GATEWAY_CONFIG": s.path("config.json"), "DAV_SECRET": environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test",
                   "GATEWAY_STATE_DIR": s.path("state")]
        let folder = "watch-\(UUID().uuidString.prefix(8))"
        defer { _ = try? s.runner.runBlocking(["rm", "-r", "dav:\(folder)"], extraEnvironment: env) }
        try await s.runner.run(["mkdir", "dav:\(folder)"], extraEnvironment: env)
        let watch = try BackgroundGateway(s.runner, ["watch", "--interval", "0.3", "dav:\(folder)"], extraEnvironment: env)
        // Watching once it has looked twice (Apache's log): past its start, in its polling loop.
        // (An outage during the start fails the command at once: see `watch` for a remote that
        // is not there.)
        let accessLog = try #require(environment["GATEWAY_TEST_APACHE_ACCESS_LOG"])
        try await waitUntil("two looks of the watch in \(accessLog)") {
            let log = (try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? ""
            return log.components(separatedBy: "PROPFIND /dav/\(folder)").count - 1 >= 2
        }
        proxy.setRefusing(true)
        // The outage met several times (each refused try) and reported.
        // The outage met several times (each a refused try) and reported.
        try await waitUntil("the outage reported after several tries (refused \(proxy.refused)): \(watch.stderr)",
                                 timeout: .seconds(60)) { proxy.refused >= 3 && watch.stderr.contains("retrying") }
        try s.write("during.txt", Data("d".utf8))
        let direct = ["GATEWAY_REMOTE_DAV_URL": apache]
        try await s.runner.run(["copy", s.path("during.txt"), "dav:\(folder)/during.txt"], extraEnvironment: env.merging(direct) { $1 })
        proxy.setRefusing(false)
        try await watch.waitForLines(["created during.txt"], timeout: .seconds(60))
        let reports = watch.stderr.split(separator: "\n").filter { $0.contains("retrying") }
        #expect(reports.count == 1, "one report per outage: \(watch.stderr)")
        #expect(watch.stderr.contains("reachable again"), "\(watch.stderr)")
        let (status, _) = try await watch.interrupt()
        #expect(status == 130)
    }
}
