import Foundation
import StorageGateway
import Testing

/// A provider under test with a private, empty folder to work in.
struct ProviderScratch: Sendable {
    /// The provider, with the capabilities every full backend has.
    let provider: any FileProviderOperations & FileProviderReadWrite
    /// An empty folder on the remote reserved for one test.
    let base: String

    /// A path below the scratch folder.
    func path(_ relative: String) -> String { base + "/" + relative }
}

/// One backend the behaviour suite runs against. Every backend added to the project adds a
/// fixture here; the suite is the same for all of them.
struct ProviderFixture: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether names may hold control characters such as a tab (FTP cannot carry them: libcurl
    /// refuses them in FTP paths, and FTP commands are lines of text).
    var controlCharactersInNames = true
    /// Whether listings show names that start with a dot (nginx's dav-ext leaves them out, though
    /// each answers on its own: the gateway looks such names up directly where it matters).
    var listsDotFiles = true
    /// Whether a write makes the folders above it (object storage: a key's prefixes are its
    /// folders) instead of failing where they are missing.
    var writesMakeFolders = false
    /// Whether the backend shares without the gateway's link server (S3's presigned URLs), so
    /// `as? FileProviderSharing` succeeds without `links` too.
    var sharesWithoutLinks = false
    /// Creates a provider and an empty scratch folder, and returns a cleanup. With links, the
    /// provider is the backend's `…WithLinks` variant (what the registry makes when the
    /// configuration has a `links` object).
    let setUp: @Sendable (PublicLinks?) async throws -> (ProviderScratch, @Sendable () async -> Void)

    var testDescription: String { name }

    /// Every backend the suite runs against.
    /// (`GATEWAY_TEST_FIXTURES=s3-moto,s3-rclone` narrows it to those names while working on one
    /// backend; CI never sets it.)
    static let all: [ProviderFixture] = selected([.local, .webdavApache, .webdavApacheDigest, .webdavApacheBearer, .webdavApacheTLS, .webdavRclone,
                                         .webdavNginx, .webdavLighttpd, .webdavWsgiDAV,
                                         .ftpVsftpd, .ftpVsftpdTLS, .ftpPyftpdlib, .ftpProftpd, .ftpLegacy,
                                         .sftpOpenSSH, .sftpRclone, .sftpAsyncSSH, .sftpProftpd,
                                         .s3Moto, .s3Rclone])

    /// `fixtures`, narrowed to the names in `GATEWAY_TEST_FIXTURES` when it is set.
    static func selected(_ fixtures: [ProviderFixture]) -> [ProviderFixture] {
        guard let names = ProcessInfo.processInfo.environment["GATEWAY_TEST_FIXTURES"]?.split(separator: ",").map(String.init),
              !names.isEmpty else { return fixtures }
        return fixtures.filter { names.contains($0.name) }
    }

    /// SFTP on OpenSSH's sshd (Debian's defaults: `sftp-server` with posix-rename, statvfs,
    /// limits, copy-data...), password login, the in-process SSH channel.
    static let sftpOpenSSH = sftp("sftp-openssh", server: .openssh)
    /// SFTP on `rclone serve sftp`.
    static let sftpRclone = sftp("sftp-rclone", server: .rclone)
    /// SFTP on AsyncSSH's server: none of OpenSSH's extensions (plain RENAME, no statvfs).
    static let sftpAsyncSSH = sftp("sftp-asyncssh", server: .asyncssh)
    /// SFTP on ProFTPD's mod_sftp: hashes by `check-file`, copies by `copy-file`, an ECDSA host key.
    static let sftpProftpd = sftp("sftp-proftpd", server: .proftpd)

    /// An SFTP fixture: each test works in a fresh folder on the server, removed afterwards.
    static func sftp(_ name: String, server: TestServers.SFTPServer) -> ProviderFixture {
        ProviderFixture(name: name) { links in
            let configuration = try TestServers.sftp(server, remoteName: name)
            let provider = links.map { SFTPProviderWithLinks(links: $0, configuration: configuration) } ?? SFTPProvider(configuration: configuration)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            do {
                try await provider.createFolder(path: base, withIntermediateDirectories: false)
            } catch {
                await provider.shutdown()
                throw error
            }
            return (ProviderScratch(provider: provider, base: base), {
                try? await provider.removeItem(path: base, recursive: true)
                await provider.shutdown()
            })
        }
    }

    /// S3 on moto's server mode (AWS's behaviour: conditional writes, multipart uploads).
    static let s3Moto = s3("s3-moto", server: .moto)
    /// S3 on `rclone serve s3` (gofakes3 over rclone's VFS; checks signatures).
    static let s3Rclone = s3("s3-rclone", server: .rclone)

    /// An S3 fixture: each test works below a fresh prefix, removed afterwards.
    static func s3(_ name: String, server: TestServers.S3Server) -> ProviderFixture {
        ProviderFixture(name: name, writesMakeFolders: true, sharesWithoutLinks: true) { links in
            let configuration = try TestServers.s3(server, remoteName: name)
            let provider = links.map { S3ProviderWithLinks(links: $0, configuration: configuration) } ?? S3ProviderWithPresignedLinks(configuration: configuration)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            return (ProviderScratch(provider: provider, base: base), { try? await provider.removeItem(path: base, recursive: true) })
        }
    }

    /// FTP on vsftpd (LIST only, no MLSD), started by `scripts/test-servers.sh`.
    static let ftpVsftpd = ftp("ftp-vsftpd", urlVariable: "GATEWAY_TEST_FTP_VSFTPD_URL", userVariable: "GATEWAY_TEST_FTP_VSFTPD_USER")
    /// The same files through vsftpd's explicit FTPS instance (TLS required, session reuse required).
    static let ftpVsftpdTLS = ftp("ftp-vsftpd-explicit-tls", urlVariable: "GATEWAY_TEST_FTP_VSFTPD_TLS_URL",
                                  userVariable: "GATEWAY_TEST_FTP_VSFTPD_USER", tls: .explicit, caFileVariable: "GATEWAY_TEST_FTP_VSFTPD_TLS_CA")
    /// FTP on pyftpdlib (MLSD, MLST, MFMT, UTF8).
    static let ftpPyftpdlib = ftp("ftp-pyftpdlib", urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER")
    /// FTP on pyftpdlib playing an old server: no MLSD/MLST, and `LIST -a` refused (501), so
    /// listings fall back to a plain `LIST`.
    static let ftpLegacy = ftp("ftp-legacy-no-mlsd-no-list-a", urlVariable: "GATEWAY_TEST_FTP_LEGACY_URL",
                               userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER")
    /// FTP on ProFTPD (MLSD, MFMT, server-side copies with SITE CPFR/CPTO, HASH/XSHA1), jailed in its folder.
    static let ftpProftpd = ftp("ftp-proftpd", urlVariable: "GATEWAY_TEST_FTP_PROFTPD_URL", userVariable: "GATEWAY_TEST_FTP_PROFTPD_USER")

    /// An FTP fixture: each test works in a fresh folder on the server, removed afterwards.
    static func ftp(_ name: String, urlVariable: String, userVariable: String, tls: FTPClientConfiguration.TLSMode = .none,
                    caFileVariable: String? = nil) -> ProviderFixture {
        ProviderFixture(name: name, controlCharactersInNames: false) { links in
            let configuration = try TestServers.ftp(urlVariable: urlVariable, userVariable: userVariable, tls: tls,
                                                    caFileVariable: caFileVariable, remoteName: name)
            let provider = links.map { FTPProviderWithLinks(links: $0, configuration: configuration) } ?? FTPProvider(configuration: configuration)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            return (ProviderScratch(provider: provider, base: base), { try? await provider.removeItem(path: base, recursive: true) })
        }
    }

    /// WebDAV on Apache httpd + mod_dav, started by `scripts/test-servers.sh`.
    static let webdavApache = webdav("webdav-apache", urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL")
    /// The same Apache server behind Digest authentication.
    static let webdavApacheDigest = webdav("webdav-apache-digest", urlVariable: "GATEWAY_TEST_WEBDAV_DIGEST_URL")
    /// The same Apache server requiring a Bearer token instead of a password.
    static let webdavApacheBearer = webdav("webdav-apache-bearer", urlVariable: "GATEWAY_TEST_WEBDAV_BEARER_URL",
                                           bearerTokenVariable: "GATEWAY_TEST_WEBDAV_BEARER_TOKEN")
    /// The same Apache server over HTTPS, trusting its self-signed certificate through `ca_file`.
    static let webdavApacheTLS = webdav("webdav-apache-https", urlVariable: "GATEWAY_TEST_WEBDAV_TLS_URL",
                                        caFileVariable: "GATEWAY_TEST_WEBDAV_TLS_CA")
    /// The Apache server as a `vendor` `nextcloud` remote: PROPFIND asks for `oc:checksums` (which
    /// Apache keeps as a dead property) and uploads send `OC-Checksum`. Not in ``all``: Apache
    /// ignores Nextcloud's modification-time headers, which the vendor declares it can set; that
    /// claim is exercised against ``TrashbinDAVServer`` (`ServerTrashbinTests.modificationTimes`).
    static let webdavApacheNextcloud = webdav("webdav-apache-vendor-nextcloud", urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL",
                                              vendor: .nextcloud)
    /// WebDAV on `rclone serve webdav` (Go's x/net/webdav), started by `scripts/test-servers.sh`.
    static let webdavRclone = webdav("webdav-rclone", urlVariable: "GATEWAY_TEST_WEBDAV_RCLONE_URL")

    /// WebDAV on nginx with its dav module and dav-ext (Debian's defaults: Depth infinity refused,
    /// no dead properties, no ETags in listings, folders only with their trailing slash).
    static let webdavNginx = webdav("webdav-nginx", urlVariable: "GATEWAY_TEST_WEBDAV_NGINX_URL", listsDotFiles: false)
    /// WebDAV on lighttpd's mod_webdav (folder URLs without a slash redirected with 308; names with
    /// control characters refused with 400).
    static let webdavLighttpd = webdav("webdav-lighttpd", urlVariable: "GATEWAY_TEST_WEBDAV_LIGHTTPD_URL", controlCharactersInNames: false)
    /// WebDAV on WsgiDAV (Python; cuts Destination at ';' and '?', refuses dead properties).
    static let webdavWsgiDAV = webdav("webdav-wsgidav", urlVariable: "GATEWAY_TEST_WEBDAV_WSGIDAV_URL")

    /// A WebDAV fixture: each test works in a fresh folder on the server, removed afterwards.
    /// A missing server is a failure, never a skip.
    static func webdav(_ name: String, urlVariable: String, caFileVariable: String? = nil,
                       bearerTokenVariable: String? = nil, vendor: WebDAVProvider.Vendor = .other,
                       controlCharactersInNames: Bool = true, listsDotFiles: Bool = true) -> ProviderFixture {
        ProviderFixture(name: name, controlCharactersInNames: controlCharactersInNames, listsDotFiles: listsDotFiles) { links in
            let server = try TestServers.webdav(urlVariable: urlVariable)
            var configuration = server.configuration(remoteName: name)
            if let bearerTokenVariable {
                guard let token = ProcessInfo.processInfo.environment[bearerTokenVariable] else {
                    throw TestServers.Missing(variable: bearerTokenVariable)
                }
                configuration.user = nil
                configuration.password = nil
                configuration.bearerToken = token
            }
            if let caFileVariable {
                guard let caFile = ProcessInfo.processInfo.environment[caFileVariable] else {
                    throw TestServers.Missing(variable: caFileVariable)
                }
                configuration.caFile = caFile
            }
            let provider = links.map { WebDAVProviderWithLinks(links: $0, configuration: configuration, vendor: vendor) }
                ?? WebDAVProvider(configuration: configuration, vendor: vendor)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            return (ProviderScratch(provider: provider, base: base), { try? await provider.removeItem(path: base, recursive: true) })
        }
    }

    /// The local provider, rooted at a fresh temporary folder.
    static let local = ProviderFixture(name: "local") { links in
        let root = try TemporaryFolder.make()
        let provider = try links.map { try LocalFileProviderWithLinks(links: $0, name: "behaviour", root: root.path) }
            ?? LocalFileProvider(name: "behaviour", root: root.path)
        try await provider.createFolder(path: "/scratch", withIntermediateDirectories: false)
        return (ProviderScratch(provider: provider, base: "/scratch"), { root.remove() })
    }

    /// Runs `body` with a fresh scratch folder and cleans up afterwards, whatever happens; with
    /// `links`, on the backend's `…WithLinks` variant.
    func run(links: PublicLinks? = nil, _ body: (ProviderScratch) async throws -> Void) async throws {
        try await withScratch({ try await setUp(links) }, body)
    }
}

/// Sets up a scratch, runs `body` with it, and always runs the cleanup `setUp` returned.
func withScratch<Scratch>(_ setUp: () async throws -> (Scratch, @Sendable () async -> Void),
                          _ body: (Scratch) async throws -> Void) async throws {
    let (scratch, cleanup) = try await setUp()
    do {
        try await body(scratch)
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
}

/// A temporary folder on the local disk.
struct TemporaryFolder: Sendable {
    let path: String

    static func make(prefix: String = "gateway-test") throws -> TemporaryFolder {
        let folder = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        var template = Array((folder + "/\(prefix).XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return TemporaryFolder(path: String(cString: made))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Test data helpers.
enum Bytes {
    /// Deterministic pseudo-random bytes.
    static func pattern(_ count: Int, seed: UInt64 = 42) -> Data {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return Data(bytes)
    }
}

/// Asserts that `body` throws an error of the given ``FailureKind``.
func expectFailure(_ kind: FailureKind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected a \(kind) failure, but the call succeeded", sourceLocation: sourceLocation)
    } catch {
        #expect(error.failureKind == kind, "expected \(kind), got \(error.failureKind): \(error)", sourceLocation: sourceLocation)
    }
}
