import Foundation
import GatewayCore
import StorageGateway
@testable import GatewayWebDAV
@testable import GatewayFTP
import Testing

/// Values from servers, users and configs: escaped, redacted, range-checked, never trapping.
@Suite("Hardening: terminal text, secrets, arithmetic, config ranges")
struct HardeningTests {
    @Test("control characters are escaped as GNU ls -b does; plain text stays as it is")
    func terminalText() {
        #expect(TerminalText.escaped("plain name ü 🚀 \\ back") == "plain name ü 🚀 \\ back")
        #expect(TerminalText.escaped("a\u{1B}[2Jb") == "a\\e[2Jb")
        #expect(TerminalText.escaped("x\ny\rz\t\u{07}\u{7F}\u{0}") == "x\\ny\\rz\\t\\a\\x7F\\x00")
        #expect(TerminalText.escaped("c1\u{9B}31m") == "c1\\u{009B}31m")
        #expect(TerminalText.escaped("mixed\\\n") == "mixed\\\\\\n")
        // Escaping twice changes nothing more.
        let once = TerminalText.escaped("\u{1B}]0;title\u{07}")
        #expect(TerminalText.escaped(once) == once)
        #expect(!TerminalText.needsEscaping("é and ñ and ¿"))
    }

    @Test("registered secrets, their Basic and percent-encoded forms are masked in any message")
    func secrets() {
        let secret = "S3cret/pa ss-\(UUID().uuidString.prefix(6))"
        SecretRedaction.register(secret, user: "alice")
        SecretRedaction.register("ab")  // too short to mask: messages stay readable
        let basic = Data("alice:\(secret)".utf8).base64EncodedString()
        let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let text = SecretRedaction.redact("530 Login incorrect for alice/\(secret); Authorization: Basic \(basic); url ?p=\(encoded); ab")
        #expect(!text.contains(secret) && !text.contains(basic) && !text.contains(encoded), "\(text)")
        #expect(text.contains("***") && text.hasSuffix("; ab"))
        let error = FileProviderFTPError(replyCode: 530, command: "PASS", path: "/", serverText: "no user alice with password \(secret)")
        #expect(!ErrorMessage.reason(for: error).contains(secret))
    }

    @Test("sums and ranges from hostile values saturate instead of trapping")
    func arithmetic() throws {
        #expect(Int64.max.saturatingAdding(5) == .max)
        #expect(Int64.min.saturatingAdding(-5) == .min)
        #expect(Int64(40).saturatingAdding(2) == 42)
        let progress = TransferProgress()
        progress.addToTotals(bytes: .max, files: 1)
        progress.addToTotals(bytes: .max, files: 1)
        progress.addBytes(.max)
        progress.addBytes(.max)
        #expect(progress.snapshot.totalBytes == .max)
        #expect(progress.snapshot.completedBytes == .max)
        let slow = TransferProgress(totalBytes: .max)
        slow.addBytes(1)
        _ = slow.snapshot.estimatedTimeRemaining  // a huge remainder over a tiny rate: no trap
        let options = try ReadOptions(offset: 10, length: .max).checked(path: "/f")
        #expect(options.length == nil)
        #expect(options.lastByte == nil)
        #expect(try ReadOptions(offset: 10, length: 5).checked(path: "/f").lastByte == 14)
        #expect(throws: FileProviderError.self) { try ReadOptions(offset: -1).checked(path: "/f") }
        #expect(throws: FileProviderError.self) { try ReadOptions(length: -1).checked(path: "/f") }
    }

    @Test("timeouts and speed limits are validated in range, and never overflow when used",
          arguments: ["webdav", "ftp", "s3"])
    func timeoutRanges(type: String) throws {
        let registry = Gateway.makeRegistry()
        let site = switch type {
        case "ftp": #""url": "ftp://127.0.0.1/""#
        case "s3": #""bucket": "b", "endpoint": "http://127.0.0.1/""#
        default: #""url": "http://127.0.0.1/""#
        }
        for (key, value) in [("idle_timeout", "1e16"), ("connect_timeout", "0"), ("low_speed_time", "-1"), ("idle_timeout", "3000000"),
                             ("low_speed_limit", "-5"), ("low_speed_limit", "9999999999")] {
            let json = #"{"remotes": {"r": {"type": "\#(type)", \#(site), "\#(key)": \#(value)}}}"#
            do {
                _ = try GatewayConfiguration.parse(data: Data(json.utf8), source: "t.json", registry: registry)
                Issue.record("\(key) = \(value) was accepted")
            } catch let error as ConfigError {
                #expect(error.problems.contains { $0.description.contains(key) }, "\(error.problems)")
            }
        }
        let remote = RemoteConfiguration(name: "r", type: type, values: ["idle_timeout": .number(1e300), "connect_timeout": .number(-3)], source: "t")
        #expect(remote.duration("idle_timeout", default: 60) == .seconds(86_400))
        #expect(remote.duration("connect_timeout", default: 15) == .milliseconds(1))
        #expect(remote.duration("low_speed_time", default: 60) == .seconds(60))
    }

    @Test("the servers whose PUT is atomic are recognised by their DAV and Server headers only")
    func atomicPutServers() {
        let fs = "1,2, <http://apache.org/dav/propset/fs/1>"
        #expect(WebDAVProvider.isAtomicPutServer(dav: fs, server: "Apache/2.4.62 (Debian)"))
        #expect(WebDAVProvider.isAtomicPutServer(dav: fs, server: "Apache/3.0"))
        #expect(!WebDAVProvider.isAtomicPutServer(dav: fs, server: "Apache/2.2.34"))
        #expect(!WebDAVProvider.isAtomicPutServer(dav: fs, server: "Apache"))
        #expect(!WebDAVProvider.isAtomicPutServer(dav: "1,2", server: "Apache/2.4.62"))
        #expect(!WebDAVProvider.isAtomicPutServer(dav: fs, server: "nginx/1.24"))
        #expect(!WebDAVProvider.isAtomicPutServer(dav: nil, server: nil))
        #expect(WebDAVProvider.isAtomicPutServer(dav: "1, 2, <urn:gateway:dav:atomic-put>", server: "gateway"), "gateway serve webdav")
        #expect(!WebDAVProvider.isAtomicPutServer(dav: "1, 2", server: "gateway"), "a read-only gateway server says nothing")
    }
}

@Suite("Library names")
struct LibraryNameTests {
    @Test("module-qualified names resolve: the entry enum is Gateway, not the module's name")
    func moduleQualified() {
        let engine: StorageGateway.CopyEngine = StorageGateway.CopyEngine()
        #expect(engine.options.transfers == 4)
        let registry: StorageGateway.ProviderRegistry = StorageGateway.Gateway.makeRegistry()
        #expect(registry.allDescriptors.map(\.type).sorted() == ["ftp", "local", "s3", "sftp", "webdav"])
    }
}

@Suite("Errors an app can show")
struct ShowableErrorTests {
    @Test("every error type the library builds has a useful localizedDescription")
    func localizedDescriptions() {
        let config = ConfigError(source: "/etc/g.json", remote: "docs", key: "rot", message: "unknown key \"rot\"")
        #expect(config.localizedDescription == #"config /etc/g.json: remote "docs": unknown key "rot""#)
        let missing = CocoaError.posix(ENOENT, path: "/a.txt", remote: "docs")
        #expect(missing.localizedDescription == "docs:/a.txt: No such file or directory")
        let described = CocoaError.described(.fileWriteUnknown, path: "/d", reason: "folder is not empty (use rm -r)")
        #expect(described.localizedDescription == "/d: folder is not empty (use rm -r)")
        // The CLI's short reasons are unchanged.
        #expect(ErrorMessage.reason(for: missing) == "no such file or directory")
        #expect(ErrorMessage.reason(for: described) == "folder is not empty (use rm -r)")
        #expect(FileProviderHTTPError(statusCode: 507, path: "/x").localizedDescription == "HTTP 507 insufficient storage")
    }
}

@Suite("Progress observed")
struct ProgressObservationTests {
    @Test("snapshots(every:) delivers snapshots as work goes on, and ends when the consumer stops")
    func snapshots() async throws {
        let progress = TransferProgress(totalBytes: 100)
        let feeder = Task {
            for _ in 0..<10 {
                try await Task.sleep(for: .milliseconds(20))
                progress.addBytes(10)
            }
        }
        var seen: [Int64] = []
        for await snapshot in progress.snapshots(every: .milliseconds(10)) {
            seen.append(snapshot.completedBytes)
            if snapshot.completedBytes == 100 { break }
        }
        try await feeder.value
        #expect(seen.last == 100)
        #expect(seen.count >= 3, "\(seen)")
        #expect(seen == seen.sorted())
    }
}

extension ProgressObservationTests {
    @Test("Transfer.copyFile sets the total, so a fraction is known from the start")
    func copyFileTotal() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("total-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: base + "/a", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: base + "/b", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: base + "/a/f"))
        let source = try LocalFileProvider(name: "a", root: base + "/a")
        let destination = try LocalFileProvider(name: "b", root: base + "/b")
        let progress = TransferProgress()
        try await Transfer.copyFile(from: TransferEndpoint(provider: source, path: "/f"), to: TransferEndpoint(provider: destination, path: "/f"),
                                    progress: progress)
        #expect(progress.snapshot.totalBytes == 5000)
        #expect(progress.snapshot.fractionCompleted == 1)
    }
}

@Suite("Connections follow --transfers")
struct ConcurrencyTests {
    /// Helper 6's finding on issue 33: `copy --transfers 16` to a WebDAV remote ran 4 at once (the
    /// default `max_connections`), silently. Without `max_connections` in the config, a remote now
    /// keeps as many connections as the caller runs transfers (at most 64); a configured value wins.
    @Test("max_connections: the configured value, else the default raised to the caller's concurrency, at most 64")
    func connections() {
        let bare = RemoteConfiguration(name: "r", type: "webdav", values: [:], source: "t")
        let set = RemoteConfiguration(name: "r", type: "webdav", values: ["max_connections": .integer(2)], source: "t")
        #expect(ProviderContext().maxConnections(bare) == 4)
        #expect(ProviderContext(concurrency: 2).maxConnections(bare) == 4)
        #expect(ProviderContext(concurrency: 16).maxConnections(bare) == 16)
        #expect(ProviderContext(concurrency: 500).maxConnections(bare) == 64)
        #expect(ProviderContext(concurrency: 16).maxConnections(set) == 2)
    }

    @Test("WebDAV, FTP, SFTP and S3 providers made with a concurrency of 12 keep 12 connections", arguments: ["webdav", "ftp", "sftp", "s3"])
    func providers(type: String) async throws {
        let registry = Gateway.makeRegistry()
        let values: [String: ConfigValue] = switch type {
        case "sftp": ["host": .string("127.0.0.1"), "user": .string("u"), "password": .string("p"), "known_hosts": .string("/dev/null")]
        case "ftp": ["url": .string("ftp://127.0.0.1/"), "password": .string("p")]
        case "s3": ["bucket": .string("b"), "endpoint": .string("http://127.0.0.1/"), "access_key_id": .string("k"), "secret_access_key": .string("s")]
        default: ["url": .string("http://127.0.0.1/")]
        }
        let remote = RemoteConfiguration(name: "r", type: type, values: values, source: "t")
        let descriptor = try #require(registry.descriptor(forType: type))
        let provider = try await descriptor.make(remote, ProviderContext(concurrency: 12))
        let limit: Int? = switch provider {
        case let webdav as WebDAVProvider: webdav.client.configuration.maxConnections
        case let ftp as FTPProvider: ftp.client.configuration.maxConnections
        case let sftp as SFTPProvider: sftp.configuration.maxConnections
        case let s3 as S3Provider: s3.configuration.http.maxConnections
        default: nil
        }
        #expect(limit == 12)
    }
}
