import Crypto
import Foundation
public import NIOSSH

/// A public key's SHA-256 fingerprint as OpenSSH prints it (`ssh-keygen -l`, `ssh`'s prompts):
/// `SHA256:` and the unpadded base64 of SHA-256 over the key's wire encoding.
public struct HostKeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest of the key's wire encoding.
    public let digest: [UInt8]

    /// The fingerprint of `key`.
    public init(_ key: NIOSSHPublicKey) {
        self.init(wireBlob: Self.wireBlob(of: key))
    }

    /// The fingerprint of a key given in its wire encoding (RFC 4253 §6.6), as in a known_hosts
    /// line's base64 field; any key type, RSA too.
    public init(wireBlob: [UInt8]) {
        digest = Array(SHA256.hash(data: wireBlob))
    }

    /// `SHA256:` followed by the digest in base64 without `=` padding, as OpenSSH prints it.
    public var description: String {
        "SHA256:" + unpaddedBase64
    }

    private var unpaddedBase64: String {
        String(Data(digest).base64EncodedString().prefix { $0 != "=" })
    }

    /// Whether `text` names this fingerprint: `SHA256:xxx` or just `xxx` (the base64, with or
    /// without its `=` padding), surrounding white space ignored. The base64 is case-sensitive.
    public func matches(_ text: String) -> Bool {
        var candidate = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        if candidate.prefix(7).lowercased() == "sha256:" { candidate = candidate.dropFirst(7) }
        while candidate.last == "=" { candidate = candidate.dropLast() }
        return !candidate.isEmpty && candidate == unpaddedBase64
    }

    /// The key's wire encoding (RFC 4253 §6.6: its type name, then its fields), which SSH signs,
    /// known_hosts stores in base64 and fingerprints are taken over.
    public static func wireBlob(of key: NIOSSHPublicKey) -> [UInt8] {
        let fields = String(openSSHPublicKey: key).split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, let blob = Data(base64Encoded: String(fields[1])) else { return [] }
        return Array(blob)
    }

    /// The key's type name as OpenSSH writes it: `ssh-ed25519`, `ecdsa-sha2-nistp256`,
    /// `ecdsa-sha2-nistp384`, `ecdsa-sha2-nistp521` (or a certificate's type).
    public static func keyType(of key: NIOSSHPublicKey) -> String {
        String(String(openSSHPublicKey: key).prefix { $0 != " " })
    }
}
