import Foundation
import NIOSSH

/// How the in-process channel decides whether to trust a server's host key: the entries of
/// known_hosts files (OpenSSH's format: hashed names, `[host]:port`, wildcards, `@revoked`), or a
/// fingerprint given in the config. An unknown or changed key is refused, its fingerprint in the
/// message; never accepted silently.
public struct HostKeyPolicy: Sendable {
    /// known_hosts files, read at each connection (so an entry added meanwhile counts).
    public var knownHostsFiles: [String]
    /// `SHA256:...` as `ssh-keygen -lf` prints it: trusted on its own, without known_hosts.
    public var fingerprint: String?

    public init(knownHostsFiles: [String], fingerprint: String? = nil) {
        self.knownHostsFiles = knownHostsFiles
        self.fingerprint = fingerprint
    }

    /// The user's known_hosts file (`~/.ssh/known_hosts`).
    public static var userKnownHosts: String {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + "/.ssh/known_hosts"
    }

    /// `nil` when the key is trusted, else the error that says why not.
    func check(_ key: NIOSSHPublicKey, host: String, port: Int, displayHost: String) -> (any Error)? {
        let offered = HostKeyFingerprint(key).description
        let type = HostKeyFingerprint.keyType(of: key)
        if let fingerprint {
            if HostKeyFingerprint(key).matches(fingerprint) { return nil }
            return SFTPClientError.hostKeyChanged(host: displayHost, keyType: type, fingerprint: offered, known: [fingerprint],
                                                  knownHosts: "host_key_fingerprint")
        }
        var changed: [String] = []
        for file in knownHostsFiles {
            guard let data = FileManager.default.contents(atPath: file), data.count <= 16 << 20 else { continue }
            switch KnownHosts(String(decoding: data, as: UTF8.self)).check(host: host, port: port, key: key) {
            case .trusted: return nil
            case .revoked: return SFTPClientError.hostKeyRevoked(host: displayHost, fingerprint: offered)
            case .changed(let known): changed += known
            case .unknown: continue
            }
        }
        if !changed.isEmpty {
            return SFTPClientError.hostKeyChanged(host: displayHost, keyType: type, fingerprint: offered, known: changed,
                                                  knownHosts: knownHostsFiles.joined(separator: ", "))
        }
        return SFTPClientError.hostKeyUnknown(host: displayHost, keyType: type, fingerprint: offered,
                                              knownHosts: knownHostsFiles.isEmpty ? nil : knownHostsFiles.joined(separator: ", "))
    }
}
