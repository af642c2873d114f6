import Foundation
@testable import GatewayTestSupport
import Testing

/// The link server's share page in a real browser: `Tests/Browser/share_page.py` starts the built
/// `gateway serve links` over fixtures it makes and drives headless Chromium through chromedriver
/// (Selenium) over the folder, gallery, file, phone, dark-mode and error pages, then downloads a
/// folder of 5 GiB as one ZIP while watching the server's memory. Chromium, chromedriver and
/// Selenium come from `scripts/setup-deps.sh`: a missing one fails the test, it is not skipped.
/// The screenshots of every page and the server's log are kept in `.build/test-artifacts/share-page/`.
@Suite("Share page in a browser")
struct SharePageBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What a program printed (stdout, then stderr) and its exit status.
    struct Ran: Sendable {
        let status: Int32
        let output: String
    }

    /// Runs a program to its end on a thread of its own, so that the minutes it takes hold none of
    /// the Swift concurrency pool's threads (as ``GatewayRunner/run(_:stdin:extraEnvironment:)``).
    static func run(_ executable: String, _ arguments: [String]) async throws -> Ran {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Swift.Result {
                    let done = try ChildProcess.run(executable, arguments, environment: ProcessInfo.processInfo.environment,
                                                    directory: repository.path)
                    return Ran(status: done.status, output: String(decoding: done.stdout + done.stderr, as: UTF8.self))
                })
            }.start()
        }
    }

    @Test("folder, gallery, file, phone, dark and error pages in headless Chromium; a 5 GiB folder as one ZIP in bounded memory",
          .timeLimit(.minutes(20)))
    func sharePage() async throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(FileManager.default.isExecutableFile(atPath: tool),
                         "\(tool) is missing: run scripts/setup-deps.sh (Debian's chromium and chromium-driver)")
        }
        let selenium = try await Self.run("/usr/bin/env", ["python3", "-c", "import selenium"])
        try #require(selenium.status == 0, "Selenium is missing for python3: run scripts/setup-deps.sh (pip install selenium): \(selenium.output)")
        // Absolute: the script runs in the repository's folder.
        let gateway = URL(fileURLWithPath: GatewayRunner.binary).standardizedFileURL.path
        try #require(FileManager.default.isExecutableFile(atPath: gateway), "gateway binary not found at \(gateway)")

        let artifacts = Self.repository.appendingPathComponent(".build/test-artifacts/share-page")
        try? FileManager.default.removeItem(at: artifacts)
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        // At 15 minutes `timeout` sends SIGTERM (the script then stops its server and browser and
        // removes its files), and SIGKILL 30 s later; it exits 124.
        let ran = try await Self.run("/usr/bin/timeout", ["--kill-after=30", "900", "/usr/bin/env", "python3", "Tests/Browser/share_page.py",
                                                          "--gateway", gateway, "--out", artifacts.path])
        #expect(ran.status == 0, "Tests/Browser/share_page.py exited \(ran.status) (124: after 15 minutes); screenshots in \(artifacts.path):\n\(ran.output)")
    }
}
