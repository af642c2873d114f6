import Foundation
import StorageGateway
import Testing

/// Changes made from outside the gateway: the file system for Local, the `curl` tool for WebDAV
/// and FTP (its own connections, its own requests).
struct OutsideClient: Sendable {
    let write: @Sendable (_ path: String, _ data: Data) throws -> Void
    let remove: @Sendable (_ path: String, _ isFolder: Bool) throws -> Void
    let rename: @Sendable (_ from: String, _ to: String) throws -> Void
    let makeFolder: @Sendable (_ path: String) throws -> Void

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static func local(root: String) -> OutsideClient {
        OutsideClient(
            write: { path, data in try data.write(to: URL(fileURLWithPath: root + path)) },
            remove: { path, _ in try FileManager.default.removeItem(atPath: root + path) },
            rename: { from, to in try FileManager.default.moveItem(atPath: root + from, toPath: root + to) },
            makeFolder: { path in try FileManager.default.createDirectory(atPath: root + path, withIntermediateDirectories: false) }
        )
    }

    /// Runs `curl` with `arguments`, failing on an HTTP or FTP error.
    static func curl(_ arguments: [String], input: Data? = nil) throws {
        var all = ["-sS", "--fail", "--max-time", "20"] + arguments
        var inputFile: String?
        if let input {
            let file = NSTemporaryDirectory() + "/gateway-outside-\(UUID().uuidString)"
            try input.write(to: URL(fileURLWithPath: file))
            inputFile = file
            all += ["-T", file]
        }
        defer { if let inputFile { try? FileManager.default.removeItem(atPath: inputFile) } }
        let result = try ChildProcess.run("/usr/bin/curl", all, environment: ProcessInfo.processInfo.environment)
        guard result.status == 0 else {
            let text = String(decoding: result.stderr, as: UTF8.self)
            throw Failed(description: "curl \(arguments.filter { !$0.contains(":") || $0.hasPrefix("http") || $0.hasPrefix("ftp") }) failed (\(result.status)): \(text)")
        }
    }

    static func escaped(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;?#"))) ?? String($0) }
            .joined(separator: "/")
    }

    static func webdav(base: URL, user: String, password: String) -> OutsideClient {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        let login = ["-u", "\(user):\(password)"]
        return OutsideClient(
            write: { path, data in try curl(login + [root + escaped(path)], input: data) },
            remove: { path, isFolder in try curl(login + ["-X", "DELETE", root + escaped(path) + (isFolder ? "/" : "")]) },
            rename: { from, to in try curl(login + ["-X", "MOVE", "-H", "Destination: \(root + escaped(to))", root + escaped(from)]) },
            makeFolder: { path in try curl(login + ["-X", "MKCOL", root + escaped(path) + "/"]) }
        )
    }

    static func ftp(base: URL, user: String, password: String) -> OutsideClient {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        let login = ["-u", "\(user):\(password)"]
        return OutsideClient(
            write: { path, data in try curl(login + [root + escaped(path)], input: data) },
            // Quoted commands take paths relative to the login folder, as the provider's paths are.
            remove: { path, isFolder in try curl(login + ["-Q", (isFolder ? "RMD " : "DELE ") + path.dropFirst(), root + "/"]) },
            rename: { from, to in try curl(login + ["-Q", "RNFR \(from.dropFirst())", "-Q", "RNTO \(to.dropFirst())", root + "/"]) },
            makeFolder: { path in try curl(login + ["-Q", "MKD \(path.dropFirst())", root + "/"]) }
        )
    }

    /// curl's SFTP (libssh2): its own SSH connection, paths absolute on the server (`root` is the
    /// remote's root there). Host keys are not checked: a loopback test server.
    static func sftp(port: Int, user: String, password: String, root: String) -> OutsideClient {
        let base = "sftp://127.0.0.1:\(port)"
        let login = ["-k", "-u", "\(user):\(password)"]
        @Sendable func quoted(_ path: String) -> String { "\"" + (root + path).replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return OutsideClient(
            write: { path, data in try curl(login + [base + escaped(root + path)], input: data) },
            remove: { path, isFolder in try curl(login + ["-Q", (isFolder ? "rmdir " : "rm ") + quoted(path), base + "/"]) },
            rename: { from, to in try curl(login + ["-Q", "rename \(quoted(from)) \(quoted(to))", base + "/"]) },
            makeFolder: { path in try curl(login + ["-Q", "mkdir " + quoted(path), base + "/"]) }
        )
    }
}

extension OutsideClient {
    /// The AWS CLI (its own connections and signatures); keys are paths without the leading `/`,
    /// folders are `folder/` markers.
    static func s3(endpoint: URL, bucket: String, accessKey: String, secret: String) -> OutsideClient {
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory(),
                           "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secret, "AWS_DEFAULT_REGION": "us-east-1",
                           "AWS_EC2_METADATA_DISABLED": "true"]
        @Sendable func aws(_ arguments: [String], input: Data? = nil) throws {
            let result = try ChildProcess.run("/usr/bin/env", ["aws", "--endpoint-url", endpoint.absoluteString, "s3api"] + arguments,
                                              environment: environment, stdin: input)
            guard result.status == 0 else { throw Failed(description: "aws s3api \(arguments.first ?? ""): \(String(decoding: result.stderr, as: UTF8.self))") }
        }
        @Sendable func put(_ key: String, _ data: Data) throws {
            let file = NSTemporaryDirectory() + "gateway-outside-\(UUID().uuidString)"
            try data.write(to: URL(fileURLWithPath: file))
            defer { try? FileManager.default.removeItem(atPath: file) }
            try aws(["put-object", "--bucket", bucket, "--key", key, "--body", file])
        }
        return OutsideClient(
            write: { path, data in try put(String(path.dropFirst()), data) },
            remove: { path, isFolder in try aws(["delete-object", "--bucket", bucket, "--key", String(path.dropFirst()) + (isFolder ? "/" : "")]) },
            rename: { from, to in
                // A file is one key; a folder every key below it (`aws s3 mv --recursive`).
                let file = try? ChildProcess.run("/usr/bin/env", ["aws", "--endpoint-url", endpoint.absoluteString, "s3api", "head-object",
                                                             "--bucket", bucket, "--key", String(from.dropFirst())], environment: environment)
                let arguments = file?.status == 0
                    ? ["mv", "s3://\(bucket)/\(from.dropFirst())", "s3://\(bucket)/\(to.dropFirst())"]
                    : ["mv", "--recursive", "s3://\(bucket)/\(from.dropFirst())/", "s3://\(bucket)/\(to.dropFirst())/"]
                let result = try ChildProcess.run("/usr/bin/env", ["aws", "--endpoint-url", endpoint.absoluteString, "s3"] + arguments,
                                                  environment: environment)
                guard result.status == 0 else { throw Failed(description: "aws s3 mv: \(String(decoding: result.stderr, as: UTF8.self))") }
                if file?.status != 0 {
                    // `aws s3 mv --recursive` leaves the folder's own marker behind: move it too.
                    try aws(["delete-object", "--bucket", bucket, "--key", String(from.dropFirst()) + "/"])
                    try put(String(to.dropFirst()) + "/", Data())
                }
            },
            makeFolder: { path in try put(String(path.dropFirst()) + "/", Data()) }
        )
    }
}

/// A backend the monitor behaviour suite runs against: a provider with a private state folder, an
/// empty scratch folder, and a client that changes files from outside.
struct MonitorFixture: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether a file's rename is reported as one (inotify, or identities the listing carries);
    /// otherwise as a removal and a creation. Each fixture's answer is asserted both ways.
    let reportsRenames: Bool
    /// The same for a folder (a polled listing rarely pairs a folder's two names).
    var reportsFolderRenames: Bool = false
    let setUp: @Sendable () async throws -> (MonitorScratch, @Sendable () async -> Void)

    var testDescription: String { name }

    static let all: [MonitorFixture] = [.local, .webdavApache, .webdavRclone, .webdavXandikos, .ftpVsftpd, .ftpPyftpdlib, .ftpLegacy,
                                        .sftpOpenSSH, .s3Moto]

    /// S3 on moto, changed from outside by the AWS CLI. S3 has no rename: a move is a copy and a
    /// delete, seen as a removal and a creation.
    static let s3Moto = MonitorFixture(name: "s3-moto", reportsRenames: false) {
        let configuration = try TestServers.s3(.moto, remoteName: "s3-moto")
        let state = try TemporaryFolder.make(prefix: "gateway-state")
        let provider = S3Provider(configuration: configuration, stateDirectory: URL(fileURLWithPath: state.path))
        let base = "/w-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: base, withIntermediateDirectories: false)
        let outside = OutsideClient.s3(endpoint: configuration.endpoint, bucket: configuration.bucket,
                                       accessKey: configuration.credentials.accessKeyID, secret: configuration.credentials.secretAccessKey)
        return (MonitorScratch(provider: provider, base: base, outside: outside, stateDirectory: state.path),
                { try? await provider.removeItem(path: base, recursive: true); state.remove() })
    }

    /// SFTP on OpenSSH, changed from outside by curl's SFTP. SFTP v3 names no identity, so renames
    /// are a removal and a creation.
    static let sftpOpenSSH = MonitorFixture(name: "sftp-openssh", reportsRenames: false) {
        let configuration = try TestServers.sftp(.openssh, remoteName: "sftp-openssh")
        let password = try #require(ProcessInfo.processInfo.environment["GATEWAY_TEST_SFTP_PASSWORD"])
        let state = try TemporaryFolder.make(prefix: "gateway-state")
        let provider = SFTPProvider(configuration: configuration, stateDirectory: URL(fileURLWithPath: state.path))
        let base = "/w-\(UUID().uuidString.prefix(8))"
        try await provider.createFolder(path: base, withIntermediateDirectories: false)
        let outside = OutsideClient.sftp(port: configuration.port, user: configuration.user, password: password,
                                         root: try TestServers.sftpValue(.openssh, "ROOT"))
        return (MonitorScratch(provider: provider, base: base, outside: outside, stateDirectory: state.path),
                { try? await provider.removeItem(path: base, recursive: true); await provider.shutdown(); state.remove() })
    }

    static let local = MonitorFixture(name: "local", reportsRenames: true, reportsFolderRenames: true) {
        let root = try TemporaryFolder.make()
        let state = try TemporaryFolder.make(prefix: "gateway-state")
        let provider = try LocalFileProvider(name: "watched", root: root.path, stateDirectory: URL(fileURLWithPath: state.path))
        try FileManager.default.createDirectory(atPath: root.path + "/scratch", withIntermediateDirectories: false)
        return (MonitorScratch(provider: provider, base: "/scratch", outside: .local(root: provider.rootPath), stateDirectory: state.path),
                { root.remove(); state.remove() })
    }

    static let webdavApache = webdav("webdav-apache", urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL", reportsRenames: true)
    static let webdavRclone = webdav("webdav-rclone", urlVariable: "GATEWAY_TEST_WEBDAV_RCLONE_URL", reportsRenames: true)
    /// Xandikos: RFC 6578 sync-collection (its ETags are content hashes, so renames pair up).
    static let webdavXandikos = webdav("webdav-xandikos-sync-collection", urlVariable: "GATEWAY_TEST_WEBDAV_XANDIKOS_URL", reportsRenames: true)

    static func webdav(_ name: String, urlVariable: String, reportsRenames: Bool, reportsFolderRenames: Bool = false) -> MonitorFixture {
        MonitorFixture(name: name, reportsRenames: reportsRenames, reportsFolderRenames: reportsFolderRenames) {
            let server = try TestServers.webdav(urlVariable: urlVariable)
            let state = try TemporaryFolder.make(prefix: "gateway-state")
            let provider = WebDAVProvider(configuration: server.configuration(remoteName: name), stateDirectory: URL(fileURLWithPath: state.path))
            let base = "/w-\(UUID().uuidString.prefix(8))"
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            let outside = OutsideClient.webdav(base: server.url, user: server.user, password: server.password)
            return (MonitorScratch(provider: provider, base: base, outside: outside, stateDirectory: state.path),
                    { try? await provider.removeItem(path: base, recursive: true); state.remove() })
        }
    }

    static let ftpVsftpd = ftp("ftp-vsftpd-list", urlVariable: "GATEWAY_TEST_FTP_VSFTPD_URL", userVariable: "GATEWAY_TEST_FTP_VSFTPD_USER",
                               reportsRenames: false)
    static let ftpPyftpdlib = ftp("ftp-pyftpdlib-mlsd", urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER",
                                  reportsRenames: true, reportsFolderRenames: true)
    static let ftpLegacy = ftp("ftp-legacy-list-only", urlVariable: "GATEWAY_TEST_FTP_LEGACY_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER",
                               reportsRenames: false)

    static func ftp(_ name: String, urlVariable: String, userVariable: String, reportsRenames: Bool,
                    reportsFolderRenames: Bool = false) -> MonitorFixture {
        MonitorFixture(name: name, reportsRenames: reportsRenames, reportsFolderRenames: reportsFolderRenames) {
            let configuration = try TestServers.ftp(urlVariable: urlVariable, userVariable: userVariable, remoteName: name)
            let state = try TemporaryFolder.make(prefix: "gateway-state")
            let provider = FTPProvider(configuration: configuration, stateDirectory: URL(fileURLWithPath: state.path))
            let base = "/w-\(UUID().uuidString.prefix(8))"
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            let outside = OutsideClient.ftp(base: configuration.baseURL, user: configuration.user ?? "", password: configuration.password ?? "")
            return (MonitorScratch(provider: provider, base: base, outside: outside, stateDirectory: state.path),
                    { try? await provider.removeItem(path: base, recursive: true); state.remove() })
        }
    }

    func run(_ body: (MonitorScratch) async throws -> Void) async throws {
        try await withScratch(setUp, body)
    }
}

struct MonitorScratch: Sendable {
    let provider: any FileProviderMonitor & FileProviderOperations & FileProviderReadWrite
    let base: String
    let outside: OutsideClient
    let stateDirectory: String

    func path(_ relative: String) -> String { base + "/" + relative }
}

/// An event as the tests compare it: kind, path relative to the watched folder, previous path.
struct SeenChange: Hashable, CustomStringConvertible {
    let kind: FileChangeEvent.Kind
    let path: String
    let previous: String?

    init(_ kind: FileChangeEvent.Kind, _ path: String, from previous: String? = nil) {
        self.kind = kind
        self.path = path
        self.previous = previous
    }

    init(_ event: FileChangeEvent, base: String) {
        kind = event.kind
        path = String(event.path.dropFirst(base.count + 1))
        previous = event.previousPath.map { String($0.dropFirst(base.count + 1)) }
    }

    var description: String { previous.map { "\(kind.rawValue) \($0) -> \(path)" } ?? "\(kind.rawValue) \(path)" }
}

/// Checks shared by the monitor suites.
enum MonitorChecks {
    /// Every change since `anchor`, page by page (with `pageSize` per page); checks the pages' flags.
    static func catchUp(_ monitor: any FileProviderMonitor, since anchor: SyncAnchor, pageSize: Int = 1000,
                        base: String) async throws -> (changes: [SeenChange], anchor: SyncAnchor, pages: Int) {
        var anchor = anchor
        var changes: [SeenChange] = []
        var pages = 0
        while true {
            let page = try await monitor.changes(since: anchor, pageSize: pageSize)
            pages += 1
            #expect(page.events.count <= pageSize)
            if page.moreComing { #expect(page.events.count == pageSize) }
            changes += page.events.map { SeenChange($0, base: base) }
            anchor = page.anchor
            if !page.moreComing { break }
            if pages > 10_000 { Issue.record("pages never end"); break }
        }
        return (changes, anchor, pages)
    }

    /// Whether `changes` holds a rename of `from` to `to`, or (where `strict` is false) its removal
    /// and creation instead.
    /// A rename is reported as one when `asRename` (the fixture says so), else as a removal and a
    /// creation and not as a rename: a change either way shows.
    static func expectRename(_ changes: [SeenChange], from: String, to: String, asRename: Bool,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        let renamed = changes.contains(SeenChange(.renamed, to, from: from))
        if asRename {
            #expect(renamed, "expected renamed \(from) -> \(to) in \(changes)", sourceLocation: sourceLocation)
        } else {
            #expect(!renamed, "\(from) -> \(to) is reported as a rename now: the fixture should say so", sourceLocation: sourceLocation)
            #expect(changes.contains(SeenChange(.removed, from)), "\(changes)", sourceLocation: sourceLocation)
            #expect(changes.contains(SeenChange(.created, to)), "\(changes)", sourceLocation: sourceLocation)
        }
    }
}

/// Waits until `condition` holds for the collected changes, or fails after `timeout`.
func waitFor(_ collected: Locked<[SeenChange]>, timeout: Duration, sourceLocation: SourceLocation = #_sourceLocation,
             _ condition: ([SeenChange]) -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition(collected.value) { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    let changes = collected.value
    Issue.record("not seen within \(timeout): got \(changes.count) changes: \(changes.prefix(20))", sourceLocation: sourceLocation)
}

/// Waits until a live stream watches: `write(round)` changes `probe` (a new size each round)
/// until the stream reports it, bounded by `timeout` (a pause of fixed length instead would be
/// too short on a loaded machine, or the stream might take its first look after the change).
func waitUntilWatching(_ collected: Locked<[SeenChange]>, probe: String, timeout: Duration = .seconds(60),
                       sourceLocation: SourceLocation = #_sourceLocation, write: (Int) throws -> Void) async throws {
    guard try await probeUntilSeen(timeout: timeout, write: write, seen: { collected.value.contains { $0.path == probe } }) else {
        Issue.record("the stream never reported \(probe) within \(timeout)", sourceLocation: sourceLocation)
        return
    }
}

func expectExpired(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected an expired anchor", sourceLocation: sourceLocation)
    } catch let error as FileProviderError {
        guard case .anchorExpired = error else {
            Issue.record("expected anchorExpired, got \(error)", sourceLocation: sourceLocation)
            return
        }
    } catch {
        Issue.record("expected anchorExpired, got \(error)", sourceLocation: sourceLocation)
    }
}

/// Creates a file with `contents` in place (FileManager's `createFile` writes a temporary file
/// and renames it, which a watcher rightly reports as such).
func create(_ path: String, _ contents: Data) throws {
    try contents.write(to: URL(fileURLWithPath: path))
}

/// Checks that `changes` create exactly `paths`, each once. A file seen while still empty and again
/// once written may add a `modified`; nothing else may appear.
func expectCreations(_ changes: [SeenChange], _ paths: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    let created = changes.filter { $0.kind == .created }.map(\.path)
    let expected = Set(paths)
    let missing = expected.subtracting(created)
    let unexpected = Set(created).subtracting(expected)
    #expect(missing.isEmpty, "missing \(missing.count): \(missing.sorted().prefix(10))", sourceLocation: sourceLocation)
    #expect(unexpected.isEmpty, "unexpected: \(unexpected.sorted().prefix(10))", sourceLocation: sourceLocation)
    #expect(created.count == paths.count, "\(created.count) created events for \(paths.count) items", sourceLocation: sourceLocation)
    let others = changes.filter { $0.kind != .created && !($0.kind == .modified && expected.contains($0.path)) }
    #expect(others.isEmpty, "\(others.prefix(10))", sourceLocation: sourceLocation)
}
