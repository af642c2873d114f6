import Foundation
@testable import GatewaySFTP
@testable import GatewayTestSupport
import StorageGateway
import Testing

/// Setting up SFTP sessions against the real servers of `scripts/test-servers.sh`: host keys
/// (matching, unknown, changed, by fingerprint), credentials (password, Ed25519 and ECDSA keys,
/// a passphrase, a wrong password, an RSA key in process), the system `ssh` channel, and a
/// server that never answers.
@Suite("SFTP sessions", .serialized)
struct SFTPSessionTests {
    /// Lists the root and writes then reads a file: the session works end to end.
    func roundTrip(_ configuration: SFTPClientConfiguration) async throws {
        let provider = SFTPProvider(configuration: configuration)
        defer { Task { await provider.shutdown() } }
        let name = "/session-\(UUID().uuidString.prefix(8)).bin"
        let data = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await provider.writeContents(path: name, data: data)
        #expect(try await provider.contents(path: name) == data)
        #expect(try await provider.contentsOfDirectory(path: "/").collectAll().contains { $0.path == name })
        try await provider.removeItem(path: name, recursive: false)
    }

    func fails(_ configuration: SFTPClientConfiguration, kind: FailureKind, containing fragments: [String],
               sourceLocation: SourceLocation = #_sourceLocation) async {
        let provider = SFTPProvider(configuration: configuration)
        defer { Task { await provider.shutdown() } }
        do {
            _ = try await provider.attributesOfItem(path: "/")
            Issue.record("the session must fail", sourceLocation: sourceLocation)
        } catch {
            #expect(error.failureKind == kind, "got \(error)", sourceLocation: sourceLocation)
            let text = String(describing: error)
            for fragment in fragments {
                #expect(text.contains(fragment), "\"\(text)\" does not mention \(fragment)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("password, Ed25519 and ECDSA keys and a key with a passphrase log in on OpenSSH")
    func credentials() async throws {
        try await roundTrip(try TestServers.sftp(.openssh, remoteName: "password"))
        for (variable, passphrase) in [("KEY", nil), ("KEY_ECDSA", nil), ("KEY_PASS", "gateway-pass")] {
            let file = try TestServers.sftpValue(.openssh, variable)
            let key = try OpenSSHPrivateKey.parse(try String(contentsOfFile: file, encoding: .utf8), passphrase: passphrase)
            try await roundTrip(try TestServers.sftp(.openssh, remoteName: "key", credentials: [.privateKey(key, source: file)]))
        }
    }

    @Test("a wrong password is 'not authenticated', naming the user and what was tried, never the password")
    func wrongPassword() async throws {
        let configuration = try TestServers.sftp(.openssh, remoteName: "wrong", credentials: [.password("not-the-password-42")])
        await fails(configuration, kind: .notAuthenticated, containing: ["gatewaysftp", "password"])
        let provider = SFTPProvider(configuration: configuration)
        defer { Task { await provider.shutdown() } }
        let error = await #expect(throws: (any Error).self) { try await provider.attributesOfItem(path: "/") }
        #expect(!String(describing: error as Any).contains("not-the-password-42"))
    }

    @Test("host keys: an unknown key and a changed key are refused with the offered fingerprint; a matching fingerprint is trusted")
    func hostKeys() async throws {
        let expected = try TestServers.sftpValue(.openssh, "FINGERPRINT")
        #expect(expected.hasPrefix("SHA256:"))
        let folder = try TemporaryFolder.make()
        defer { folder.remove() }
        let empty = folder.path + "/known_hosts"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        var configuration = try TestServers.sftp(.openssh, remoteName: "unknown")
        let password = try #require(ProcessInfo.processInfo.environment["GATEWAY_TEST_SFTP_PASSWORD"])
        configuration.channel = .inProcess(credentials: [.password(password)], hostKeys: HostKeyPolicy(knownHostsFiles: [empty]))
        await fails(configuration, kind: .notAuthenticated, containing: ["not known", expected, "127.0.0.1"])

        // The rclone server's key written down for OpenSSH's address: a changed key.
        let port = try TestServers.sftpValue(.openssh, "PORT")
        let rcloneLines = try String(contentsOfFile: try TestServers.sftpValue(.rclone, "KNOWN_HOSTS"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        let otherKey = try #require(rcloneLines.first?.split(separator: " ").dropFirst().joined(separator: " "))
        let changed = folder.path + "/changed_hosts"
        try "[127.0.0.1]:\(port) \(otherKey)\n".write(toFile: changed, atomically: true, encoding: .utf8)
        configuration.channel = .inProcess(credentials: [.password(password)], hostKeys: HostKeyPolicy(knownHostsFiles: [changed]))
        await fails(configuration, kind: .notAuthenticated, containing: ["CHANGED", expected])

        configuration.channel = .inProcess(credentials: [.password(password)], hostKeys: HostKeyPolicy(knownHostsFiles: [empty], fingerprint: expected))
        try await roundTrip(configuration)
        configuration.channel = .inProcess(credentials: [.password(password)],
                                           hostKeys: HostKeyPolicy(knownHostsFiles: [], fingerprint: "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
        await fails(configuration, kind: .notAuthenticated, containing: [expected])

        // Hashed entries (ssh-keygen -H) are matched as well.
        configuration.channel = .inProcess(credentials: [.password(password)],
                                           hostKeys: HostKeyPolicy(knownHostsFiles: [try TestServers.sftpValue(.openssh, "KNOWN_HOSTS_HASHED")]))
        try await roundTrip(configuration)
    }

    @Test("an RSA key in process fails naming ssh_command; the system ssh channel logs in with it")
    func rsaThroughSSHCommand() async throws {
        let rsa = try TestServers.sftpValue(.openssh, "KEY_RSA")
        #expect {
            _ = try OpenSSHPrivateKey.parse(try String(contentsOfFile: rsa, encoding: .utf8), passphrase: nil)
        } throws: { String(describing: $0).contains("ssh_command") }
        let configuration = try TestServers.sftp(.openssh, remoteName: "command",
                                                 channel: .command("ssh", keyFile: rsa, knownHosts: try TestServers.sftpValue(.openssh, "KNOWN_HOSTS")))
        try await roundTrip(configuration)
        // Hashes run through a second ssh process (`ssh ... HOST sha256sum 'PATH'`).
        let viaSSH = SFTPProvider(configuration: configuration)
        defer { Task { await viaSSH.shutdown() } }
        let name = "/hash-\(UUID().uuidString.prefix(8)) it's.bin"
        let data = Data("hashed by ssh\n".utf8)
        try await viaSSH.writeContents(path: name, data: data)
        #expect(viaSSH.capabilities.hashAlgorithms == Set(HashAlgorithm.allCases))
        for algorithm in HashAlgorithm.allCases {
            #expect(try await viaSSH.hash(of: name, algorithm: algorithm) == ContentHasher.hash(data, algorithm))
        }
        try await viaSSH.removeItem(path: name, recursive: false)
        // The same channel with a known_hosts file that lacks the server: ssh's own refusal is the message.
        let folder = try TemporaryFolder.make()
        defer { folder.remove() }
        _ = FileManager.default.createFile(atPath: folder.path + "/none", contents: Data())
        let refused = try TestServers.sftp(.openssh, remoteName: "command", channel: .command("ssh", keyFile: rsa, knownHosts: folder.path + "/none"))
        await fails(refused, kind: .connectionLost, containing: ["Host key verification failed"])
    }

    @Test("a server that accepts and never speaks SSH times out instead of hanging")
    func stalledServer() async throws {
        let silent = try SilentServer()
        defer { silent.stop() }
        let configuration = SFTPClientConfiguration(
            remoteName: "stall", host: "127.0.0.1", port: silent.port, user: "nobody",
            channel: .inProcess(credentials: [.password("x")], hostKeys: HostKeyPolicy(knownHostsFiles: [])),
            connectTimeout: .seconds(2), idleTimeout: .seconds(2))
        let clock = ContinuousClock()
        let start = clock.now
        await fails(configuration, kind: .timedOut, containing: ["127.0.0.1"])
        #expect(clock.now - start < .seconds(30))
    }

    @Test("OpenSSH announces its extensions; AsyncSSH none of them, and a replacing rename still works there")
    func extensions() async throws {
        let openssh = SFTPProvider(configuration: try TestServers.sftp(.openssh, remoteName: "openssh"))
        defer { Task { await openssh.shutdown() } }
        let names = try await openssh.withSession { $0.extensions.keys.sorted() }
        #expect(names.contains("posix-rename@openssh.com"))
        #expect(names.contains("statvfs@openssh.com"))
        let volume = try await openssh.storageProperties(path: "/")
        #expect((volume.totalCapacity ?? 0) > 0)

        let asyncssh = SFTPProvider(configuration: try TestServers.sftp(.asyncssh, remoteName: "asyncssh"))
        defer { Task { await asyncssh.shutdown() } }
        #expect(try await asyncssh.withSession { $0.supports("posix-rename@openssh.com") } == false)
        let name = "/replace-\(UUID().uuidString.prefix(8))"
        try await asyncssh.writeContents(path: name, data: Data("one".utf8))
        try await asyncssh.writeContents(path: name, data: Data("second".utf8))
        #expect(try await asyncssh.contents(path: name) == Data("second".utf8))
        try await asyncssh.removeItem(path: name, recursive: false)
    }

    @Test("ProFTPD's check-file: the server computes each digest; a folder or a missing file is refused")
    func checkFile() async throws {
        let proftpd = SFTPProvider(configuration: try TestServers.sftp(.proftpd, remoteName: "proftpd"))
        defer { Task { await proftpd.shutdown() } }
        let name = "/check-\(UUID().uuidString.prefix(8)).bin"
        let data = Bytes.pattern(1_000_003, seed: 5)
        try await proftpd.writeContents(path: name, data: data)
        defer { Task { try? await proftpd.removeItem(path: name, recursive: false) } }
        #expect(proftpd.capabilities.hashAlgorithms == Set(HashAlgorithm.allCases))
        // Not announced in version 3, found answering.
        #expect(proftpd.has("check-file-name") && proftpd.has("copy-file"))
        #expect(proftpd.capabilities.supports(.hardLinks))
        #expect(proftpd.capabilities.supports(.serverSideCopy))
        for algorithm in HashAlgorithm.allCases {
            #expect(try await proftpd.hash(of: name, algorithm: algorithm) == ContentHasher.hash(data, algorithm))
        }
        await #expect(throws: (any Error).self) { _ = try await proftpd.hash(of: "/missing-\(UUID().uuidString)", algorithm: .sha256) }
        await #expect(throws: (any Error).self) { _ = try await proftpd.hash(of: "/", algorithm: .sha256) }
    }

    @Test("commands beside the session: OpenSSH runs them; AsyncSSH refuses at once; hashes are claimed only where they work")
    func commands() async throws {
        let openssh = SFTPProvider(configuration: try TestServers.sftp(.openssh, remoteName: "openssh"))
        defer { Task { await openssh.shutdown() } }
        let answer = try await openssh.withSession { try await $0.run("sha256sum /dev/null") }
        #expect(answer?.status == 0)
        #expect(answer.map { String(decoding: $0.output, as: UTF8.self) }?.hasPrefix(SFTPProvider.emptyDigests[.sha256]!) == true)
        #expect(openssh.capabilities.hashAlgorithms == Set(HashAlgorithm.allCases))
        // hardlink@openssh.com announced and answering; rclone announces it and refuses it.
        #expect(openssh.capabilities.supports(.hardLinks))
        let rclone = SFTPProvider(configuration: try TestServers.sftp(.rclone, remoteName: "rclone"))
        defer { Task { await rclone.shutdown() } }
        _ = try await rclone.attributesOfItem(path: "/")
        #expect(!rclone.capabilities.supports(.hardLinks))
        let name = "/hash-\(UUID().uuidString.prefix(8)) it's.bin"
        let data = Data("hash me\n".utf8)
        try await openssh.writeContents(path: name, data: data)
        for algorithm in HashAlgorithm.allCases {
            #expect(try await openssh.hash(of: name, algorithm: algorithm) == ContentHasher.hash(data, algorithm))
        }
        try await openssh.removeItem(path: name, recursive: false)

        let asyncssh = SFTPProvider(configuration: try TestServers.sftp(.asyncssh, remoteName: "asyncssh"))
        defer { Task { await asyncssh.shutdown() } }
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await asyncssh.attributesOfItem(path: "/")
        #expect(clock.now - start < .seconds(5), "a refused exec must not wait for the time-out")
        #expect(asyncssh.capabilities.hashAlgorithms.isEmpty)
    }
}
