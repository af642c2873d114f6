import Crypto
import Foundation
public import NIOSSH

/// What a known_hosts file says about a server's host key.
public enum HostKeyCheck: Sendable, Equatable {
    /// A line for this host holds this very key.
    case trusted
    /// No line for this host holds a host key.
    case unknown
    /// Lines for this host hold other keys (their SHA256 fingerprints, in file order), not this
    /// one: the server's key changed, or someone is in the middle. Stricter than OpenSSH, which
    /// asks the server for a key type it knows: a key of a type not on file counts as changed too.
    case changed(known: [String])
    /// A `@revoked` line for this host holds this key: refuse it, whatever else the file says.
    case revoked
}

/// A known_hosts file (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"): `[marker] hostnames keytype
/// base64key [comment]` lines. Host patterns are comma-separated, with `*` and `?` wildcards
/// and `!` negation; `[host]:port` for ports other than 22; `|1|salt|hash` for names hashed by
/// `ssh-keygen -H`. `@revoked` marks a key never to accept; `@cert-authority` lines (host
/// certificates' signers) never match a plain host key. Comments, blank lines, overlong and
/// malformed lines are skipped.
public struct KnownHosts: Sendable {
    /// Lines longer than this are skipped (sshd(8): "up to a limit of 8 kilobytes").
    static let maximumLineLength = 8192

    private enum Marker { case none, revoked, certificateAuthority }

    private enum Hosts {
        case patterns([Substring])
        case hashed(salt: [UInt8], hash: [UInt8])
    }

    private struct Entry {
        let marker: Marker
        let hosts: Hosts
        let keyBlob: [UInt8]
    }

    private let entries: [Entry]

    /// Parses a known_hosts file's text. Never fails: lines it can't read are left out.
    public init(_ text: String) {
        entries = text.split(whereSeparator: \.isNewline).compactMap(Self.entry)
    }

    private static func entry(_ line: Substring) -> Entry? {
        guard line.utf8.count <= maximumLineLength else { return nil }
        var fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        guard let first = fields.first, !first.hasPrefix("#") else { return nil }
        var marker = Marker.none
        if first.hasPrefix("@") {
            switch first {
            case "@revoked": marker = .revoked
            case "@cert-authority": marker = .certificateAuthority
            default: return nil
            }
            fields = fields.dropFirst()
        }
        guard fields.count >= 3 else { return nil }
        let names = fields[fields.startIndex]
        let encodedKey = fields[fields.startIndex + 2]
        guard let keyBlob = Data(base64Encoded: String(encodedKey)), !keyBlob.isEmpty else { return nil }
        let hosts: Hosts
        if names.hasPrefix("|1|") {
            let parts = names.dropFirst(3).split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 2, let salt = Data(base64Encoded: String(parts[0])), let hash = Data(base64Encoded: String(parts[1])),
                  salt.count == Insecure.SHA1.byteCount, hash.count == Insecure.SHA1.byteCount else { return nil }
            hosts = .hashed(salt: Array(salt), hash: Array(hash))
        } else {
            hosts = .patterns(names.split(separator: ",").map { Substring($0.lowercased()) })
        }
        return Entry(marker: marker, hosts: hosts, keyBlob: Array(keyBlob))
    }

    /// What the file says about `key`, offered by `host` on `port`. The name looked up is
    /// `host` for port 22 and `[host]:port` otherwise, lower-cased, as OpenSSH does; give the
    /// name (or address) the connection was made to.
    public func check(host: String, port: Int, key: NIOSSHPublicKey) -> HostKeyCheck {
        let name = Self.lookupName(host: host, port: port)
        let blob = HostKeyFingerprint.wireBlob(of: key)
        var trusted = false
        var known: [String] = []
        for entry in entries where entry.marker != .certificateAuthority && Self.matches(entry.hosts, name: name) {
            if entry.keyBlob == blob {
                if entry.marker == .revoked { return .revoked }
                trusted = true
            } else if entry.marker == .none {
                let fingerprint = HostKeyFingerprint(wireBlob: entry.keyBlob).description
                if !known.contains(fingerprint) { known.append(fingerprint) }
            }
        }
        if trusted { return .trusted }
        return known.isEmpty ? .unknown : .changed(known: known)
    }

    /// `host`, or `[host]:port` when the port isn't 22; lower-cased, brackets around an IPv6
    /// address given with them dropped first.
    static func lookupName(host: String, port: Int) -> String {
        var bare = host.lowercased()
        if bare.hasPrefix("["), bare.hasSuffix("]"), bare.count >= 2 { bare = String(bare.dropFirst().dropLast()) }
        return port == 22 ? bare : "[\(bare)]:\(port)"
    }

    /// OpenSSH's `match_hostname`: a negated pattern that matches rules the line out; otherwise
    /// any plain pattern matching is a match. A hashed name matches when HMAC-SHA1 keyed by the
    /// salt over the name is the hash.
    private static func matches(_ hosts: Hosts, name: String) -> Bool {
        switch hosts {
        case .hashed(let salt, let hash):
            let code = HMAC<Insecure.SHA1>.authenticationCode(for: Array(name.utf8), using: SymmetricKey(data: salt))
            return Array(code) == hash
        case .patterns(let patterns):
            var positive = false
            for pattern in patterns {
                if pattern.hasPrefix("!") {
                    if wildcardMatch(Array(pattern.dropFirst().utf8), Array(name.utf8)) { return false }
                } else if !positive, wildcardMatch(Array(pattern.utf8), Array(name.utf8)) {
                    positive = true
                }
            }
            return positive
        }
    }

    /// `*` matches any run of bytes (none too), `?` exactly one; everything else itself. Iterative,
    /// backtracking only to the last `*`, so time is bounded by the two lengths' product.
    static func wildcardMatch(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        var p = 0, t = 0
        var star: Int?, starText = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                star = p
                starText = t
                p += 1
            } else if p < pattern.count, pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star {
                p = star + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
