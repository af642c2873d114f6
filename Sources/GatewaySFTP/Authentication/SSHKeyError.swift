/// Why a private key file could not be used by the in-process SSH channel, in one line that says
/// what to do. Never holds the passphrase or any key bytes.
public enum SSHKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is encrypted and no (or an empty) passphrase was given.
    case passphraseRequired(key: String)
    /// The passphrase does not decrypt the key (OpenSSH's two check integers differ, the
    /// authentication tag or the padding is wrong).
    case wrongPassphrase(key: String)
    /// An RSA or DSA key (`algorithm` is `RSA` or `DSA`): swift-nio-ssh signs with neither.
    case needsSystemSSH(key: String, algorithm: String)
    /// Another kind of key the in-process channel cannot sign with (a security key, a certificate).
    case unsupportedKeyType(key: String, type: String)
    /// The key is encrypted with a cipher this reader does not implement.
    case unsupportedCipher(key: String, cipher: String)
    /// The key's passphrase is stretched with a key derivation this reader does not implement.
    case unsupportedKDF(key: String, kdf: String)
    /// The file is not a private key in a format this reader knows.
    case unsupportedFormat(key: String, detail: String)
    /// The file is truncated or damaged; `reason` names what was wrong, never its bytes.
    case malformed(key: String, reason: String)

    /// One line for the user: what is wrong with which key, and what to do about it.
    public var description: String {
        switch self {
        case .passphraseRequired(let key):
            return "\(key) is encrypted: set key_passphrase_env"
        case .wrongPassphrase(let key):
            return "wrong passphrase for \(key)"
        case .needsSystemSSH(let key, let algorithm):
            return "\(key) is a\(algorithm == "RSA" ? "n" : "") \(algorithm) key. \(algorithm) keys need the system ssh client: "
                + "set ssh_command (the in-process SSH channel signs with Ed25519 and ECDSA keys only)"
        case .unsupportedKeyType(let key, let type):
            return "\(key) holds a key of type \(type), which the in-process SSH channel cannot sign with: set ssh_command "
                + "(the in-process SSH channel signs with Ed25519 and ECDSA keys only)"
        case .unsupportedCipher(let key, let cipher):
            return "\(key) is encrypted with the cipher \(cipher), which is not supported (use aes256-ctr, OpenSSH's default: "
                + "ssh-keygen -p -Z aes256-ctr -f FILE)"
        case .unsupportedKDF(let key, let kdf):
            return "\(key) protects its passphrase with the key derivation \(kdf), which is not supported (only bcrypt, "
                + "OpenSSH's)"
        case .unsupportedFormat(let key, let detail):
            return "\(key) is not a private key this program can read: \(detail)"
        case .malformed(let key, let reason):
            return "\(key) is damaged or not a private key: \(reason)"
        }
    }

    /// A name read from the file (a cipher, a KDF, a key type), quoted if it looks like one:
    /// printable ASCII of at most 40 bytes. Anything else, which a damaged length could make
    /// reach into key bytes, is not shown.
    static func printable(_ bytes: some Collection<UInt8>) -> String {
        guard !bytes.isEmpty, bytes.count <= 40, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return "(an unreadable name)"
        }
        return "\"" + String(decoding: Array(bytes), as: UTF8.self) + "\""
    }
}
