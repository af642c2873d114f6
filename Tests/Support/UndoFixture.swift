import Foundation
import StorageGateway
import Testing

/// A provider with its trash, in a fresh scratch folder: network remotes keep the trash inside the
/// scratch (`trash_dir`), so tests running at once never share one; Local uses a desktop-style home
/// trash in a temporary folder of its own.
struct UndoScratch: Sendable {
    let provider: any FileProviderUndoable
    /// A provider on the same remote with the trash turned off (`trash: false`).
    let withoutTrash: any FileProviderUndoable
    let base: String

    func path(_ relative: String) -> String { base + "/" + relative }
}

/// A backend the undo suite runs against.
struct UndoFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let setUp: @Sendable () async throws -> (UndoScratch, @Sendable () async -> Void)

    var testDescription: String { name }

    /// Local, WebDAV on Apache and rclone, FTP on vsftpd (LIST), pyftpdlib (MLSD), ProFTPD and an old
    /// server, S3 on moto (a plain bucket and one that keeps versions) and rclone.
    static let all: [UndoFixture] = [
        .local,
        webdav("webdav-apache", urlVariable: "GATEWAY_TEST_WEBDAV_APACHE_URL"),
        webdav("webdav-rclone", urlVariable: "GATEWAY_TEST_WEBDAV_RCLONE_URL"),
        ftp("ftp-vsftpd", urlVariable: "GATEWAY_TEST_FTP_VSFTPD_URL", userVariable: "GATEWAY_TEST_FTP_VSFTPD_USER"),
        ftp("ftp-pyftpdlib", urlVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
        ftp("ftp-proftpd", urlVariable: "GATEWAY_TEST_FTP_PROFTPD_URL", userVariable: "GATEWAY_TEST_FTP_PROFTPD_USER"),
        ftp("ftp-legacy-no-mlsd-no-list-a", urlVariable: "GATEWAY_TEST_FTP_LEGACY_URL", userVariable: "GATEWAY_TEST_FTP_PYFTPDLIB_USER"),
        s3("s3-moto", server: .moto),
        s3("s3-moto-versioned", server: .moto, bucket: "gateway-versioned"),
        s3("s3-rclone", server: .rclone),
    ]

    /// S3 on `bucket`: `gateway-versioned` keeps versions, so undo restores older versions there
    /// instead of copying into the trash prefix.
    static func s3(_ name: String, server: TestServers.S3Server, bucket: String = "gateway") -> UndoFixture {
        UndoFixture(name: name) {
            let configuration = try TestServers.s3(server, bucket: bucket, remoteName: name)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            let provider = S3Provider(configuration: configuration, trash: TrashSettings(folder: base + "/.gateway-trash"))
            let plain = S3Provider(configuration: configuration, trash: TrashSettings(enabled: false))
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            return (UndoScratch(provider: provider, withoutTrash: plain, base: base), { try? await provider.removeItem(path: base, recursive: true) })
        }
    }

    static let local = UndoFixture(name: "local") {
        let root = try TemporaryFolder.make()
        let home = try TemporaryFolder.make(prefix: "gateway-trash-home")
        let provider = try LocalFileProvider(name: "undo", root: root.path, homeTrash: home.path + "/Trash")
        let plain = try LocalFileProvider(name: "undo", root: root.path, trash: TrashSettings(enabled: false), homeTrash: home.path + "/Trash")
        try await provider.createFolder(path: "/scratch", withIntermediateDirectories: false)
        return (UndoScratch(provider: provider, withoutTrash: plain, base: "/scratch"), {
            root.remove()
            home.remove()
        })
    }

    static func webdav(_ name: String, urlVariable: String) -> UndoFixture {
        UndoFixture(name: name) {
            let configuration = try TestServers.webdav(urlVariable: urlVariable).configuration(remoteName: name)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            let provider = WebDAVProvider(configuration: configuration, trash: TrashSettings(folder: base + "/.gateway-trash"))
            let plain = WebDAVProvider(configuration: configuration, trash: TrashSettings(enabled: false))
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            return (UndoScratch(provider: provider, withoutTrash: plain, base: base), { try? await provider.removeItem(path: base, recursive: true) })
        }
    }

    static func ftp(_ name: String, urlVariable: String, userVariable: String) -> UndoFixture {
        UndoFixture(name: name) {
            let configuration = try TestServers.ftp(urlVariable: urlVariable, userVariable: userVariable, remoteName: name)
            let base = "/t-\(UUID().uuidString.prefix(8))"
            let provider = FTPProvider(configuration: configuration, trash: TrashSettings(folder: base + "/.gateway-trash"))
            let plain = FTPProvider(configuration: configuration, trash: TrashSettings(enabled: false))
            try await provider.createFolder(path: base, withIntermediateDirectories: false)
            return (UndoScratch(provider: provider, withoutTrash: plain, base: base), { try? await provider.removeItem(path: base, recursive: true) })
        }
    }

    func run(_ body: (UndoScratch) async throws -> Void) async throws {
        try await withScratch(setUp, body)
    }
}
