import Foundation
import Testing
import StorageGateway

/// The servers `scripts/test-servers.sh` starts on 127.0.0.1, found through the environment that
/// `scripts/test.sh` exports. A missing server makes the test fail with this explanation.
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        let variable: String
        var description: String {
            "\(variable) is not set: the test servers are not running. Run ./scripts/test.sh, or start them with "
                + "`scripts/test-servers.sh start` and `source /tmp/gateway-test-servers/env`."
        }
    }

    struct WebDAVServer {
        let url: URL
        let user: String
        let password: String

        func configuration(remoteName: String) -> HTTPClientConfiguration {
            HTTPClientConfiguration(baseURL: url, remoteName: remoteName, user: user, password: password,
                                    connectTimeout: .seconds(5), idleTimeout: .seconds(15))
        }
    }

    static func webdav(urlVariable: String) throws -> WebDAVServer {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment[urlVariable], let url = URL(string: text) else { throw Missing(variable: urlVariable) }
        return WebDAVServer(url: url, user: environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway",
                            password: environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test")
    }

    /// An FTP server started by `scripts/test-servers.sh`: its configuration for a remote.
    static func ftp(urlVariable: String, userVariable: String, tls: FTPClientConfiguration.TLSMode = .none,
                    caFileVariable: String? = nil, remoteName: String) throws -> FTPClientConfiguration {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment[urlVariable], let url = URL(string: text) else { throw Missing(variable: urlVariable) }
        guard let user = environment[userVariable] else { throw Missing(variable: userVariable) }
        guard let password = environment["GATEWAY_TEST_FTP_PASSWORD"] else { throw Missing(variable: "GATEWAY_TEST_FTP_PASSWORD") }
        var caFile: String?
        if let caFileVariable {
            guard let value = environment[caFileVariable] else { throw Missing(variable: caFileVariable) }
            caFile = value
        }
        return FTPClientConfiguration(baseURL: url, remoteName: remoteName, user: user, password: password, tls: tls,
                                      connectTimeout: .seconds(5), idleTimeout: .seconds(15), caFile: caFile)
    }

    /// The SFTP servers `scripts/test-servers.sh` starts: OpenSSH's sshd, `rclone serve sftp`
    /// and AsyncSSH (no OpenSSH extensions).
    enum SFTPServer: String, Sendable {
        case openssh = "OPENSSH", rclone = "RCLONE", asyncssh = "ASYNCSSH", proftpd = "PROFTPD"

        var user: String { self == .openssh ? "gatewaysftp" : "gateway" }
    }

    /// A value of the SFTP servers' environment, or the failure that says the servers are not running.
    static func sftpValue(_ server: SFTPServer, _ suffix: String) throws -> String {
        let variable = "GATEWAY_TEST_SFTP_\(server.rawValue)_\(suffix)"
        guard let value = ProcessInfo.processInfo.environment[variable] else { throw Missing(variable: variable) }
        return value
    }

    /// An SFTP server's configuration for a remote: in process, with the password (or `credentials`),
    /// the server's known_hosts file, and OpenSSH's data folder as the root.
    static func sftp(_ server: SFTPServer, remoteName: String, credentials: [SSHCredential]? = nil,
                     channel: SFTPClientConfiguration.Channel? = nil) throws -> SFTPClientConfiguration {
        guard let password = ProcessInfo.processInfo.environment["GATEWAY_TEST_SFTP_PASSWORD"] else {
            throw Missing(variable: "GATEWAY_TEST_SFTP_PASSWORD")
        }
        guard let port = Int(try sftpValue(server, "PORT")) else { throw Missing(variable: "GATEWAY_TEST_SFTP_\(server.rawValue)_PORT") }
        let knownHosts = try sftpValue(server, "KNOWN_HOSTS")
        let root = server == .openssh ? try sftpValue(server, "ROOT") : nil
        return SFTPClientConfiguration(
            remoteName: remoteName, host: "127.0.0.1", port: port, user: server.user,
            channel: channel ?? .inProcess(credentials: credentials ?? [.password(password)], hostKeys: HostKeyPolicy(knownHostsFiles: [knownHosts])),
            root: root, connectTimeout: .seconds(5), idleTimeout: .seconds(15))
    }
}

/// The test Apache's access log (`METHOD PATH STATUS Content-Range X-OC-Mtime OC-Checksum BODY-BYTES` per line,
/// `-` for an absent header), for tests
/// that check what went over the wire.
enum ApacheAccessLog {
    /// The lines of requests with `method` whose path contains `fragment`, once Apache has written
    /// them (it logs after answering).
    static func requests(_ method: String, containing fragment: String) async throws -> [Substring] {
        // Each line without its last field (the body bytes; see ``bodyBytes(_:containing:)``).
        return try await lines(method, containing: fragment).map { line in
            line.lastIndex(of: " ").map { line[..<$0] } ?? line
        }
    }

    /// The body bytes Apache sent (`%B`) for each request with `method` whose path contains `fragment`.
    static func bodyBytes(_ method: String, containing fragment: String) async throws -> [Int] {
        try await lines(method, containing: fragment).map { line in
            line.split(separator: " ").last.flatMap { Int($0) } ?? 0
        }
    }

    private static func lines(_ method: String, containing fragment: String) async throws -> [Substring] {
        guard let path = ProcessInfo.processInfo.environment["GATEWAY_TEST_APACHE_ACCESS_LOG"] else {
            throw Missing(variable: "GATEWAY_TEST_APACHE_ACCESS_LOG")
        }
        try await waitForEarlierRequests(log: path)
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix(method + " ") && $0.contains(fragment) }
    }

    /// Apache writes a line once it has answered, so the caller's last requests may not be in the
    /// log yet: one more request, a marker, is sent with curl and its line waited for.
    private static func waitForEarlierRequests(log path: String) async throws {
        guard let base = ProcessInfo.processInfo.environment["GATEWAY_TEST_WEBDAV_APACHE_URL"] else {
            throw Missing(variable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        }
        _ = try await settledLog(path, server: "Apache") { marker in
            _ = try ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", base + marker], environment: ProcessInfo.processInfo.environment)
        }
    }

    typealias Missing = TestServers.Missing
}

/// The Apache WebDAV server behind a proxy that cuts connections, and files put on it directly.
enum ApacheFixtures {
    /// A provider (remote name "proxied") reaching Apache through a ``DroppingProxy`` that cuts each
    /// connection after `dropAfter` bytes, at most `maxDrops` times.
    static func proxied(dropAfter: Int, maxDrops: Int) throws -> (WebDAVProvider, DroppingProxy) {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let proxy = try DroppingProxy(targetPort: server.url.port!, dropAfter: dropAfter, maxDrops: maxDrops)
        var components = URLComponents(url: server.url, resolvingAgainstBaseURL: false)!
        components.port = proxy.port
        var configuration = server.configuration(remoteName: "proxied")
        configuration.baseURL = components.url!
        return (WebDAVProvider(configuration: configuration), proxy)
    }

    /// Stores `data` as `big.bin` in a fresh folder on Apache, reached directly but under the same
    /// remote name as ``proxied(dropAfter:maxDrops:)`` (so both name the source alike); returns the
    /// provider and the folder, which the caller removes.
    static func serverFile(_ data: Data) async throws -> (WebDAVProvider, String) {
        let server = try TestServers.webdav(urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
        let direct = WebDAVProvider(configuration: server.configuration(remoteName: "proxied"))
        let folder = "/fault-\(UUID().uuidString.prefix(8))"
        try await direct.createFolder(path: folder, withIntermediateDirectories: false)
        try await direct.writeContents(path: folder + "/big.bin", data: data)
        return (direct, folder)
    }
}

/// The lines of a server's access log once every request sent so far is in it. Servers (Apache,
/// Xandikos) write a line once they have answered, so the last requests may not be there yet:
/// `send` makes one more request for the path `marker`, and its own line is waited for (bounded by
/// a time only a broken run reaches) instead of sleeping a guessed while.
func settledLog(_ path: String, server: String, send: (_ marker: String) async throws -> Void) async throws -> [Substring] {
    let marker = "gateway-log-marker-\(UUID().uuidString)"
    try await send(marker)
    let deadline = ContinuousClock.now + .seconds(20)
    while true {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        if text.contains(marker) { return text.split(separator: "\n") }
        guard ContinuousClock.now < deadline else { throw TestSetupError("\(server) never logged the marker request \(marker) in \(path)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

extension TestServers {
    /// The S3 test servers of `scripts/servers/s3.sh`.
    enum S3Server: String, Sendable {
        case moto = "MOTO", rclone = "RCLONE"
    }

    /// A configuration for `bucket` on an S3 test server, at the backend's defaults.
    static func s3(_ server: S3Server, bucket: String = "gateway", remoteName: String, partSize: Int = 8 << 20,
                   directoryMarkers: Bool = true) throws -> S3Configuration {
        let environment = ProcessInfo.processInfo.environment
        let variable = "GATEWAY_TEST_S3_\(server.rawValue)_URL"
        guard let text = environment[variable], let endpoint = URL(string: text) else { throw Missing(variable: variable) }
        guard let key = environment["GATEWAY_TEST_S3_ACCESS_KEY"] else { throw Missing(variable: "GATEWAY_TEST_S3_ACCESS_KEY") }
        guard let secret = environment["GATEWAY_TEST_S3_SECRET_KEY"] else { throw Missing(variable: "GATEWAY_TEST_S3_SECRET_KEY") }
        return S3Configuration(endpoint: endpoint, region: "us-east-1", bucket: bucket, pathStyle: true,
                               credentials: S3Credentials(accessKeyID: key, secretAccessKey: secret), partSize: partSize,
                               directoryMarkers: directoryMarkers,
                               http: HTTPClientConfiguration(baseURL: endpoint, remoteName: remoteName, maxConnections: 8,
                                                             connectTimeout: .seconds(5), idleTimeout: .seconds(15)))
    }
}
