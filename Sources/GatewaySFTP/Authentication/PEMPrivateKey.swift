import Crypto
import Foundation
import NIOSSH
import _CryptoExtras

/// A key file's text armor (RFC 7468, with RFC 1421's `Proc-Type`/`DEK-Info` headers): the
/// label of its first `-----BEGIN ...-----` line, the headers and the base64 body, decoded.
struct PEMArmor {
    let label: String
    let headers: [String: String]
    let body: [UInt8]

    init(_ text: String, key: String) throws {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") && $0.count >= 16 }) else {
            let start = text.drop { $0.isWhitespace }
            if start.hasPrefix("ssh-") || start.hasPrefix("ecdsa-") || start.hasPrefix("sk-") {
                throw SSHKeyError.unsupportedFormat(key: key, detail: "it is a public key; give the private key (the file without .pub)")
            }
            if start.hasPrefix("PuTTY-User-Key-File") {
                throw SSHKeyError.unsupportedFormat(
                    key: key, detail: "it is a PuTTY key; convert it with puttygen KEY -O private-openssh -o FILE")
            }
            throw KeyFormatFailure("no -----BEGIN ... PRIVATE KEY----- line")
        }
        label = String(lines[begin].dropFirst(11).dropLast(5))
        guard let end = lines[(begin + 1)...].firstIndex(of: "-----END \(label)-----") else {
            throw KeyFormatFailure("truncated (no -----END \(label)----- line)")
        }
        var headers: [String: String] = [:]
        var bodyLines = lines[(begin + 1)..<end].drop { $0.isEmpty }
        while let line = bodyLines.first, let colon = line.firstIndex(of: ":") {
            headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            bodyLines = bodyLines.dropFirst()
        }
        self.headers = headers
        guard let body = Data(base64Encoded: bodyLines.joined()), !body.isEmpty else {
            throw KeyFormatFailure("its base64 is damaged")
        }
        self.body = Array(body)
    }
}

/// ECDSA (and Ed25519) keys in the PEM forms OpenSSL writes, which `ssh-keygen -m PEM` and
/// `-m PKCS8` produce: SEC1 `EC PRIVATE KEY` (unencrypted, or with OpenSSL's legacy AES-CBC
/// passphrase encryption) and unencrypted PKCS#8 `PRIVATE KEY`.
enum PEMPrivateKey {
    // DER encodings of the object identifiers that tell the key's algorithm and curve.
    private static let p256 = oid(0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07)  // 1.2.840.10045.3.1.7
    private static let p384 = oid(0x2B, 0x81, 0x04, 0x00, 0x22)  // 1.3.132.0.34
    private static let p521 = oid(0x2B, 0x81, 0x04, 0x00, 0x23)  // 1.3.132.0.35
    private static let rsa = oid(0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01)  // 1.2.840.113549.1.1.1
    private static let dsa = oid(0x2A, 0x86, 0x48, 0xCE, 0x38, 0x04, 0x01)  // 1.2.840.10040.4.1
    /// PKCS#8 v1 of an Ed25519 key (RFC 8410): everything before the 32-byte seed.
    private static let ed25519Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70,
                                                  0x04, 0x22, 0x04, 0x20]

    private static func oid(_ bytes: UInt8...) -> [UInt8] { [0x06, UInt8(bytes.count)] + bytes }

    static func parse(_ armor: PEMArmor, passphrase: String?, key: String) throws -> NIOSSHPrivateKey {
        var der = armor.body
        let encrypted = armor.headers["Proc-Type"]?.hasSuffix("ENCRYPTED") == true
        if encrypted {
            der = try decryptLegacy(der, dekInfo: armor.headers["DEK-Info"], passphrase: passphrase, key: key)
        }
        if armor.label == "PRIVATE KEY", der.count == 48, der.starts(with: ed25519Prefix),
           let signing = try? Curve25519.Signing.PrivateKey(rawRepresentation: der.suffix(32)) {
            return NIOSSHPrivateKey(ed25519Key: signing)
        }
        if der.contains(rsa) { throw SSHKeyError.needsSystemSSH(key: key, algorithm: "RSA") }
        if der.contains(dsa) { throw SSHKeyError.needsSystemSSH(key: key, algorithm: "DSA") }
        let curves = [(p256, "nistp256"), (p384, "nistp384"), (p521, "nistp521")].filter { der.contains($0.0) }
        guard curves.count == 1, let curve = curves.first?.1 else {
            if encrypted { throw SSHKeyError.wrongPassphrase(key: key) }
            throw SSHKeyError.unsupportedFormat(key: key, detail: "not an Ed25519 key, nor an ECDSA key on P-256, P-384 or P-521")
        }
        let parsed: (key: NIOSSHPrivateKey, point: Data)?
        switch curve {
        case "nistp256": parsed = (try? P256.Signing.PrivateKey(derRepresentation: der)).map { (NIOSSHPrivateKey(p256Key: $0), $0.publicKey.x963Representation) }
        case "nistp384": parsed = (try? P384.Signing.PrivateKey(derRepresentation: der)).map { (NIOSSHPrivateKey(p384Key: $0), $0.publicKey.x963Representation) }
        default: parsed = (try? P521.Signing.PrivateKey(derRepresentation: der)).map { (NIOSSHPrivateKey(p521Key: $0), $0.publicKey.x963Representation) }
        }
        guard let parsed else {
            if encrypted { throw SSHKeyError.wrongPassphrase(key: key) }
            throw KeyFormatFailure("its EC key structure is invalid")
        }
        // The format has no checksum: the public point it carries is what tells a damaged scalar.
        if let point = embeddedPoint(der), !point.elementsEqual(parsed.point) {
            throw KeyFormatFailure("its private key does not match its public key")
        }
        return parsed.key
    }

    /// The public point a SEC1 ECPrivateKey (RFC 5915) carries in its optional `[1]` field, or the
    /// SEC1 key inside a PKCS#8 one (one level only) carries.
    private static func embeddedPoint(_ der: [UInt8], insidePKCS8: Bool = false) -> ArraySlice<UInt8>? {
        guard let top = derElements(der[...]), top.count == 1, top[0].tag == 0x30,
              let fields = derElements(top[0].contents) else { return nil }
        // PKCS#8: version, algorithm identifier, then the SEC1 key in an octet string.
        if !insidePKCS8, fields.count >= 3, fields[1].tag == 0x30, fields[2].tag == 0x04 {
            return embeddedPoint(Array(fields[2].contents), insidePKCS8: true)
        }
        guard let tagged = fields.first(where: { $0.tag == 0xA1 }), let bitString = derElements(tagged.contents),
              bitString.count == 1, bitString[0].tag == 0x03, bitString[0].contents.first == 0 else { return nil }
        return bitString[0].contents.dropFirst()
    }

    /// The DER elements one after another in `bytes`, as tag and contents; nil when a length runs
    /// past the end. Definite lengths of up to four bytes only (all a key needs).
    private static func derElements(_ bytes: ArraySlice<UInt8>) -> [(tag: UInt8, contents: ArraySlice<UInt8>)]? {
        var elements: [(tag: UInt8, contents: ArraySlice<UInt8>)] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let tag = bytes[index]
            index += 1
            guard index < bytes.endIndex else { return nil }
            var length = Int(bytes[index])
            index += 1
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard (1...4).contains(count), bytes.endIndex - index >= count else { return nil }
                length = 0
                for _ in 0..<count {
                    length = length << 8 | Int(bytes[index])
                    index += 1
                }
            }
            guard length <= bytes.endIndex - index else { return nil }
            elements.append((tag, bytes[index..<index + length]))
            index += length
        }
        return elements
    }

    /// OpenSSL's legacy PEM encryption: `DEK-Info: AES-128-CBC,<IV in hex>`, the key made by
    /// `EVP_BytesToKey` (MD5, one iteration, the IV's first 8 bytes as salt), PKCS#7 padding.
    private static func decryptLegacy(_ sealed: [UInt8], dekInfo: String?, passphrase: String?, key: String) throws -> [UInt8] {
        let parts = (dekInfo ?? "").split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2 else { throw KeyFormatFailure("its DEK-Info header is missing or damaged") }
        let keyLength: Int
        switch parts[0].uppercased() {
        case "AES-128-CBC": keyLength = 16
        case "AES-192-CBC": keyLength = 24
        case "AES-256-CBC": keyLength = 32
        default: throw SSHKeyError.unsupportedCipher(key: key, cipher: SSHKeyError.printable(parts[0].utf8))
        }
        guard let iv = hexBytes(parts[1]), iv.count == 16 else { throw KeyFormatFailure("its DEK-Info IV is damaged") }
        guard let passphrase, !passphrase.isEmpty else { throw SSHKeyError.passphraseRequired(key: key) }
        guard !sealed.isEmpty, sealed.count % 16 == 0 else { throw KeyFormatFailure("its body is not whole AES blocks") }
        var material: [UInt8] = []
        var previous: [UInt8] = []
        while material.count < keyLength {
            previous = Array(Insecure.MD5.hash(data: previous + Array(passphrase.utf8) + iv.prefix(8)))
            material += previous
        }
        let aesKey = SymmetricKey(data: material.prefix(keyLength))
        guard let plain = try? AES._CBC.decrypt(sealed, using: aesKey, iv: AES._CBC.IV(ivBytes: iv)) else {
            throw SSHKeyError.wrongPassphrase(key: key)
        }
        return Array(plain)
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
