import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import GatewayTestSupport
import Testing

/// Runs the built `gateway` binary, as a user would.
struct GatewayRunner: Sendable {
    struct Result: Sendable {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The binary: `$GATEWAY_BIN`, else `gateway` beside the test bundle in the build folder.
    static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["GATEWAY_BIN"] { return explicit }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("gateway").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder.deleteLastPathComponent()
        }
        return "/nonexistent/gateway (build it with `swift build`; or set GATEWAY_BIN)"
    }()

    /// The working folder and environment every run gets: no user config is picked up.
    let workingDirectory: String
    var environment: [String: String]

    init(workingDirectory: String, configHome: String) {
        self.workingDirectory = workingDirectory
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_") || $0.key.hasPrefix("GATEWAY_TEST_") }
        environment["XDG_CONFIG_HOME"] = configHome
        // The undo journal and the desktop trash of this run's user, kept apart from the machine's.
        environment["XDG_STATE_HOME"] = configHome + "/state"
        environment["XDG_DATA_HOME"] = configHome + "/data"
        self.environment = environment
    }

    /// Runs the binary on a thread of its own and waits for it without holding one of the Swift
    /// concurrency pool's few threads (which other suites, run in parallel, need meanwhile).
    @discardableResult
    func run(_ arguments: [String], stdin: Data? = nil, extraEnvironment: [String: String] = [:]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try runBlocking(arguments, stdin: stdin, extraEnvironment: extraEnvironment) }) }.start()
        }
    }

    /// A run started in the background (output discarded), to be killed.
    struct Running: Sendable {
        let process: ChildProcess.Spawned

        /// Kills it outright (SIGKILL: no clean-up runs) and reaps it.
        func kill() {
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Starts the binary without waiting for it; its stderr goes to `stderrFile` when given.
    func start(_ arguments: [String], extraEnvironment: [String: String] = [:], stderrFile: String? = nil) throws -> Running {
        let process = try ChildProcess.spawn(Self.binary, arguments, environment: environment.merging(extraEnvironment) { $1 },
                                             directory: workingDirectory, stderr: stderrFile.map { .file($0) } ?? .null)
        return Running(process: process)
    }

    /// Runs the binary and waits for it, blocking the calling thread (for clean-ups in `defer`).
    /// Spawned and reaped by ``ChildProcess`` (not Foundation's `Process`, whose wait can miss
    /// a child's exit under load).
    @discardableResult
    func runBlocking(_ arguments: [String], stdin: Data? = nil, extraEnvironment: [String: String] = [:]) throws -> Result {
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary), "gateway binary not found at \(Self.binary)")
        let output = try ChildProcess.run(Self.binary, arguments, environment: environment.merging(extraEnvironment) { $1 },
                                          directory: workingDirectory, stdin: stdin)
        return Result(status: output.status, stdout: output.stdout, stderr: String(decoding: output.stderr, as: UTF8.self))
    }
}

/// A scratch area for one CLI test: a working folder and an empty config home.
struct CLIScratch: Sendable {
    let base: String
    let runner: GatewayRunner

    init() throws {
        var template = Array("/tmp/gateway-cli.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        base = String(cString: made)
        try FileManager.default.createDirectory(atPath: base + "/config-home", withIntermediateDirectories: true)
        runner = GatewayRunner(workingDirectory: base, configHome: base + "/config-home")
    }

    func path(_ relative: String) -> String { base + "/" + relative }

    func write(_ relative: String, _ data: Data) throws {
        let url = URL(fileURLWithPath: path(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    func read(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(relative))) }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: path(relative)) }

    func remove() { try? FileManager.default.removeItem(atPath: base) }

    /// Every file and folder below `relative`, as relative paths (folders end with '/').
    func tree(_ relative: String) throws -> [String] {
        let root = path(relative)
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var items: [String] = []
        while let item = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + item, isDirectory: &isDirectory)
            items.append(item + (isDirectory.boolValue ? "/" : ""))
        }
        return items.sorted()
    }
}
