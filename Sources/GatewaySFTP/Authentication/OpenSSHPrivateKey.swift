import Crypto
import Foundation
public import NIOSSH
import _CryptoExtras

/// Reads the private key files `ssh-keygen` writes, for the in-process SSH channel: OpenSSH's own
/// format (`-----BEGIN OPENSSH PRIVATE KEY-----`, "openssh-key-v1", PROTOCOL.key in OpenSSH's
/// source), unencrypted or encrypted with a passphrase (bcrypt KDF; AES-CTR, AES-CBC or
/// AES-GCM), and the PEM forms of ECDSA keys (SEC1 `EC PRIVATE KEY`, also with OpenSSL's legacy
/// passphrase encryption, and unencrypted PKCS#8 `PRIVATE KEY`). Ed25519 and ECDSA
/// P-256/P-384/P-521 keys only: swift-nio-ssh signs with nothing else.
public enum OpenSSHPrivateKey {
    /// The largest file read (a 16384-bit RSA key is about 13 KB).
    static let maximumTextLength = 1 << 20
    /// The most bcrypt rounds accepted (`ssh-keygen -a`; its default is 16). A round costs about
    /// 10 ms in a release build (1024: some 10 s), so a damaged rounds field can't hang a
    /// connection for hours.
    static let maximumRounds = 1024

    /// Parses `text`, a private key file's contents, decrypting it with `passphrase` if it is
    /// encrypted. `source` (the file's path) names the key in errors.
    ///
    /// - Throws: ``SSHKeyError``; never traps on damaged or hostile input.
    public static func parse(_ text: String, passphrase: String?, source: String? = nil) throws(SSHKeyError) -> NIOSSHPrivateKey {
        let key = source.map { "the private key \($0)" } ?? "the private key"
        guard text.utf8.count <= maximumTextLength else {
            throw .malformed(key: key, reason: "the file is larger than 1 MiB")
        }
        do {
            let armor = try PEMArmor(text, key: key)
            switch armor.label {
            case "OPENSSH PRIVATE KEY":
                return try parseOpenSSH(armor.body, passphrase: passphrase, key: key)
            case "EC PRIVATE KEY", "PRIVATE KEY":
                return try PEMPrivateKey.parse(armor, passphrase: passphrase, key: key)
            case "RSA PRIVATE KEY":
                throw SSHKeyError.needsSystemSSH(key: key, algorithm: "RSA")
            case "DSA PRIVATE KEY":
                throw SSHKeyError.needsSystemSSH(key: key, algorithm: "DSA")
            case "ENCRYPTED PRIVATE KEY":
                throw SSHKeyError.unsupportedFormat(
                    key: key, detail: "an encrypted PKCS#8 key; rewrite it in OpenSSH's format with ssh-keygen -p -f FILE")
            default:
                throw SSHKeyError.unsupportedFormat(key: key, detail: "a PEM block labelled \(SSHKeyError.printable(armor.label.utf8))")
            }
        } catch let error as SSHKeyError {
            throw error
        } catch let failure as KeyFormatFailure {
            throw .malformed(key: key, reason: failure.reason)
        } catch {
            throw .malformed(key: key, reason: "it could not be read")
        }
    }

    /// Checks the type named in the file before anything is decrypted, so an RSA key says so
    /// whether or not a passphrase was given.
    static func checkSupported(_ type: [UInt8], key: String) throws {
        switch String(decoding: type, as: UTF8.self) {
        case "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
            return
        case "ssh-rsa":
            throw SSHKeyError.needsSystemSSH(key: key, algorithm: "RSA")
        case "ssh-dss":
            throw SSHKeyError.needsSystemSSH(key: key, algorithm: "DSA")
        default:
            throw SSHKeyError.unsupportedKeyType(key: key, type: SSHKeyError.printable(type))
        }
    }

    /// "openssh-key-v1": magic, cipher, KDF and its options, one public key, then the private
    /// section (encrypted unless the cipher is `none`; an AEAD cipher's tag follows it).
    private static func parseOpenSSH(_ blob: [UInt8], passphrase: String?, key: String) throws -> NIOSSHPrivateKey {
        var reader = SSHWireReader(blob)
        guard try reader.readBytes(15, "format name").elementsEqual("openssh-key-v1\0".utf8) else {
            throw KeyFormatFailure("it does not start with \"openssh-key-v1\"")
        }
        let cipherName = try reader.readString("cipher name")
        let kdfName = try reader.readString("KDF name")
        let kdfOptions = try reader.readString("KDF options")
        guard try reader.readUInt32("key count") == 1 else { throw KeyFormatFailure("it does not hold exactly one key") }
        let publicBlob = try reader.readString("public key")
        var publicReader = SSHWireReader(publicBlob)
        let keyType = try publicReader.readString("key type")
        try checkSupported(keyType, key: key)
        let sealed = try reader.readString("private section")
        guard let cipher = KeyCipher(name: cipherName) else {
            throw SSHKeyError.unsupportedCipher(key: key, cipher: SSHKeyError.printable(cipherName))
        }
        let tag = try reader.readBytes(cipher.tagLength, "authentication tag")
        guard reader.isAtEnd else { throw KeyFormatFailure("bytes follow the private section") }
        guard !sealed.isEmpty, sealed.count % cipher.blockSize == 0 else {
            throw KeyFormatFailure("the private section is not a whole number of cipher blocks")
        }
        let kdf = String(decoding: kdfName, as: UTF8.self)
        guard cipher.mode != .none else {
            guard kdf == "none", kdfOptions.isEmpty else { throw KeyFormatFailure("an unencrypted key names a KDF") }
            return try parsePrivateSection(sealed, keyType: keyType, publicBlob: publicBlob, encrypted: false, key: key)
        }
        guard kdf == "bcrypt" else {
            if kdf == "none" { throw KeyFormatFailure("an encrypted key names no KDF") }
            throw SSHKeyError.unsupportedKDF(key: key, kdf: SSHKeyError.printable(kdfName))
        }
        guard let passphrase, !passphrase.isEmpty else { throw SSHKeyError.passphraseRequired(key: key) }
        var options = SSHWireReader(kdfOptions)
        let salt = try options.readString("bcrypt salt")
        let rounds = try options.readUInt32("bcrypt rounds")
        guard options.isAtEnd, (1...1024).contains(salt.count), rounds >= 1 else {
            throw KeyFormatFailure("its bcrypt parameters are invalid")
        }
        guard rounds <= maximumRounds else {
            throw SSHKeyError.unsupportedFormat(
                key: key, detail: "it asks for \(rounds) bcrypt rounds, more than the \(maximumRounds) allowed "
                    + "(re-encrypt it with ssh-keygen -p -a 64 -f FILE)")
        }
        guard let material = BcryptPBKDF.deriveKey(passphrase: Array(passphrase.utf8), salt: salt, rounds: Int(rounds),
                                                   keyLength: cipher.keyLength + cipher.ivLength) else {
            throw KeyFormatFailure("its bcrypt parameters are invalid")
        }
        guard let plain = try cipher.decrypt(sealed, tag: tag, material: material) else {
            throw SSHKeyError.wrongPassphrase(key: key)
        }
        return try parsePrivateSection(plain, keyType: keyType, publicBlob: publicBlob, encrypted: true, key: key)
    }

    /// The decrypted section: two equal check integers, the key, its comment, padding 1, 2, 3...
    private static func parsePrivateSection(_ plain: [UInt8], keyType: [UInt8], publicBlob: [UInt8], encrypted: Bool,
                                            key: String) throws -> NIOSSHPrivateKey {
        var reader = SSHWireReader(plain)
        guard try reader.readUInt32("check integer") == reader.readUInt32("check integer") else {
            if encrypted { throw SSHKeyError.wrongPassphrase(key: key) }
            throw KeyFormatFailure("its check integers differ")
        }
        guard try reader.readString("key type") == keyType else {
            throw KeyFormatFailure("the private key's type differs from the public key's")
        }
        let privateKey: NIOSSHPrivateKey
        switch String(decoding: keyType, as: UTF8.self) {
        case "ssh-ed25519":
            let publicKey = try reader.readString("Ed25519 public key")
            let secret = try reader.readString("Ed25519 private key")
            guard publicKey.count == 32, secret.count == 64, secret.suffix(32).elementsEqual(publicKey),
                  let signing = try? Curve25519.Signing.PrivateKey(rawRepresentation: secret.prefix(32)),
                  signing.publicKey.rawRepresentation.elementsEqual(publicKey) else {
                throw KeyFormatFailure("its Ed25519 key is invalid")
            }
            privateKey = NIOSSHPrivateKey(ed25519Key: signing)
        case let type:
            let curve = String(type.dropFirst("ecdsa-sha2-".count))
            guard String(decoding: try reader.readString("curve name"), as: UTF8.self) == curve else {
                throw KeyFormatFailure("its curve differs from its key type")
            }
            let point = try reader.readString("ECDSA public point")
            let scalar = try reader.readString("ECDSA private scalar")
            guard let ecdsa = ecdsaKey(curve: curve, scalar: scalar, point: point) else {
                throw KeyFormatFailure("its ECDSA key is invalid")
            }
            privateKey = ecdsa
        }
        _ = try reader.readString("comment")
        guard reader.remainder.enumerated().allSatisfy({ $0.element == UInt8(truncatingIfNeeded: $0.offset + 1) }) else {
            throw KeyFormatFailure("its padding is wrong")
        }
        guard HostKeyFingerprint.wireBlob(of: privateKey.publicKey) == publicBlob else {
            throw KeyFormatFailure("its private key does not match its public key")
        }
        return privateKey
    }

    /// An ECDSA key from its scalar (an mpint: a leading zero byte possible, leading zeros
    /// possibly dropped) and public point, which must agree.
    static func ecdsaKey(curve: String, scalar: [UInt8], point: [UInt8]) -> NIOSSHPrivateKey? {
        let size: Int
        switch curve {
        case "nistp256": size = 32
        case "nistp384": size = 48
        case "nistp521": size = 66
        default: return nil
        }
        let significant = scalar.drop { $0 == 0 }
        guard significant.count <= size else { return nil }
        let raw = [UInt8](repeating: 0, count: size - significant.count) + significant
        switch curve {
        case "nistp256":
            guard let key = try? P256.Signing.PrivateKey(rawRepresentation: raw),
                  key.publicKey.x963Representation.elementsEqual(point) else { return nil }
            return NIOSSHPrivateKey(p256Key: key)
        case "nistp384":
            guard let key = try? P384.Signing.PrivateKey(rawRepresentation: raw),
                  key.publicKey.x963Representation.elementsEqual(point) else { return nil }
            return NIOSSHPrivateKey(p384Key: key)
        default:
            guard let key = try? P521.Signing.PrivateKey(rawRepresentation: raw),
                  key.publicKey.x963Representation.elementsEqual(point) else { return nil }
            return NIOSSHPrivateKey(p521Key: key)
        }
    }
}

/// The ciphers OpenSSH encrypts private keys with that this reader implements (`ssh-keygen -Z`);
/// chacha20-poly1305@openssh.com and 3des-cbc are not among them.
private struct KeyCipher {
    enum Mode { case none, ctr, cbc, gcm }
    let mode: Mode
    let keyLength: Int
    var ivLength: Int { mode == .gcm ? 12 : (mode == .none ? 0 : 16) }
    var blockSize: Int { mode == .none ? 8 : 16 }
    var tagLength: Int { mode == .gcm ? 16 : 0 }

    init?(name: [UInt8]) {
        switch String(decoding: name, as: UTF8.self) {
        case "none": (mode, keyLength) = (.none, 0)
        case "aes128-ctr": (mode, keyLength) = (.ctr, 16)
        case "aes192-ctr": (mode, keyLength) = (.ctr, 24)
        case "aes256-ctr": (mode, keyLength) = (.ctr, 32)
        case "aes128-cbc": (mode, keyLength) = (.cbc, 16)
        case "aes192-cbc": (mode, keyLength) = (.cbc, 24)
        case "aes256-cbc": (mode, keyLength) = (.cbc, 32)
        case "aes128-gcm@openssh.com": (mode, keyLength) = (.gcm, 16)
        case "aes256-gcm@openssh.com": (mode, keyLength) = (.gcm, 32)
        default: return nil
        }
    }

    /// The plaintext; nil when GCM's tag does not verify (a wrong passphrase).
    func decrypt(_ sealed: [UInt8], tag: [UInt8], material: [UInt8]) throws -> [UInt8]? {
        guard material.count == keyLength + ivLength else { throw KeyFormatFailure("its key derivation failed") }
        let key = SymmetricKey(data: material.prefix(keyLength))
        let iv = material.suffix(ivLength)
        do {
            switch mode {
            case .none:
                return sealed
            case .ctr:
                return Array(try AES._CTR.decrypt(sealed, using: key, nonce: AES._CTR.Nonce(nonceBytes: iv)))
            case .cbc:
                return Array(try AES._CBC.decrypt(sealed, using: key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true))
            case .gcm:
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: sealed, tag: tag)
                guard let plain = try? AES.GCM.open(box, using: key) else { return nil }
                return Array(plain)
            }
        } catch {
            throw KeyFormatFailure("its private section could not be decrypted")
        }
    }
}

/// A format problem found while reading a key file; becomes ``SSHKeyError/malformed(key:reason:)``.
struct KeyFormatFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Reads SSH's wire encoding (RFC 4251 §5) from untrusted bytes: every length is checked against
/// what is left before it is used, so a short or lying file ends in an error, never a trap.
struct SSHWireReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == bytes.count }

    /// The bytes not read yet.
    var remainder: ArraySlice<UInt8> { bytes[offset...] }

    /// The next `count` bytes.
    mutating func readBytes(_ count: Int, _ what: String) throws(KeyFormatFailure) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw KeyFormatFailure("truncated (in its \(what))") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A big-endian `uint32`.
    mutating func readUInt32(_ what: String) throws(KeyFormatFailure) -> UInt32 {
        try readBytes(4, what).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A `string`: a `uint32` length, then that many bytes.
    mutating func readString(_ what: String) throws(KeyFormatFailure) -> [UInt8] {
        let length = try readUInt32(what)
        guard let count = Int(exactly: length) else { throw KeyFormatFailure("truncated (in its \(what))") }
        return try readBytes(count, what)
    }
}
