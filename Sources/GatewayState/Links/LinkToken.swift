import Crypto
import GatewayCore
public import Foundation

/// What a public link's token carries, encrypted and signed: the remote, the path, when it was made
/// and when it expires. The server checks a token with the secret alone (HMAC-SHA256), no lookup,
/// and whoever holds a link learns nothing from it but the file name at its end (not the remote,
/// the folders above the item, or the times).
///
/// The text form is `PAYLOAD.MAC`, both base64url without padding. The payload is a version byte
/// (2) and the fields sealed with ChaChaPoly (a random 12-byte nonce, the ciphertext, its 16-byte
/// tag) under a key derived from the secret with HKDF-SHA256; the fields are the issue and expiry
/// times (milliseconds since 1970, big-endian; expiry 0 for never), the remote's name
/// (length-prefixed) and the path (UTF-8). The MAC is HMAC-SHA256 with the secret over a fixed
/// label and the payload (encrypt, then sign). Version 1 tokens (the fields in clear) still verify.
public struct LinkToken: Sendable, Equatable {
    /// The remote's name in the configuration.
    public var remote: String
    /// The item's path on the remote.
    public var path: String
    /// When the link was made, in milliseconds since 1970.
    public var issuedMilliseconds: UInt64
    /// When it stops working, in milliseconds since 1970; `nil` for never.
    public var expiresMilliseconds: UInt64?

    /// A token.
    public init(remote: String, path: String, issuedMilliseconds: UInt64, expiresMilliseconds: UInt64?) {
        self.remote = remote
        self.path = path
        self.issuedMilliseconds = issuedMilliseconds
        self.expiresMilliseconds = expiresMilliseconds
    }

    /// Why a token is not honoured.
    public enum Refusal: Error, Sendable, Equatable {
        /// Not a token, or a signature that does not match (tampered, or another secret): 403.
        case badSignature
        /// Past its expiry: 410.
        case expired
    }

    /// The longest token text read or made, in characters.
    public static let maximumLength = 4096
    private static let version: UInt8 = 2
    /// Tokens made before the fields were encrypted: still honoured until they expire.
    private static let clearVersion: UInt8 = 1
    private static let label = Array("gateway public link\u{0}".utf8)
    private static let encryptionInfo = Array("gateway public link encryption".utf8)

    /// The token's text, signed with `secret`.
    ///
    /// - Throws: ``FileProviderError/invalidPath(path:reason:)`` when the path is too long for a link.
    public func encoded(secret: [UInt8]) throws -> String {
        var fields = Self.bigEndian(issuedMilliseconds)
        fields += Self.bigEndian(expiresMilliseconds ?? 0)
        let remoteBytes = Array(remote.utf8)
        guard remoteBytes.count <= 255 else { throw FileProviderError.invalidPath(path: path, reason: "the remote's name is too long for a link") }
        fields.append(UInt8(remoteBytes.count))
        fields += remoteBytes
        fields += Array(path.utf8)
        let sealed = try ChaChaPoly.seal(fields, using: Self.encryptionKey(secret))
        let payload = [Self.version] + Array(sealed.combined)
        let text = Self.base64URL(payload) + "." + Self.base64URL(Self.mac(payload, secret: secret))
        guard text.count <= Self.maximumLength else { throw FileProviderError.invalidPath(path: path, reason: "the path is too long for a link") }
        return text
    }

    /// The token `text` names, when `secret` signed it and it has not expired at `now`.
    public static func verify(_ text: String, secret: [UInt8], now: Date = Date()) -> Result<LinkToken, Refusal> {
        guard text.utf8.count <= maximumLength else { return .failure(.badSignature) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = bytes(base64URL: parts[0]), let mac = bytes(base64URL: parts[1]),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: label + payload, using: SymmetricKey(data: secret)) else {
            return .failure(.badSignature)
        }
        // Signed by us, so well-formed; checked all the same.
        let fields: [UInt8]
        switch payload.first {
        case version:
            guard let box = try? ChaChaPoly.SealedBox(combined: payload.dropFirst()),
                  let opened = try? ChaChaPoly.open(box, using: encryptionKey(secret)) else { return .failure(.badSignature) }
            fields = Array(opened)
        case clearVersion:
            fields = Array(payload.dropFirst())
        default:
            return .failure(.badSignature)
        }
        guard fields.count >= 17 else { return .failure(.badSignature) }
        let issued = integer(fields[0..<8]), expires = integer(fields[8..<16])
        let remoteLength = Int(fields[16])
        guard fields.count >= 17 + remoteLength,
              let remote = String(validating: fields[17..<(17 + remoteLength)], as: UTF8.self),
              let path = String(validating: fields[(17 + remoteLength)...], as: UTF8.self) else { return .failure(.badSignature) }
        if expires != 0, milliseconds(now) >= expires { return .failure(.expired) }
        return .success(LinkToken(remote: remote, path: path, issuedMilliseconds: issued, expiresMilliseconds: expires == 0 ? nil : expires))
    }

    /// `date` in milliseconds since 1970 (0 before it, clamped far in the future).
    public static func milliseconds(_ date: Date) -> UInt64 {
        let value = date.timeIntervalSince1970 * 1000
        guard value.isFinite, value > 0 else { return 0 }
        return value >= 1.8e19 ? UInt64.max : UInt64(value)
    }

    /// The fields' encryption key: HKDF-SHA256 of the secret, apart from the signing key.
    private static func encryptionKey(_ secret: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), info: encryptionInfo, outputByteCount: 32)
    }

    private static func mac(_ payload: [UInt8], secret: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: label + payload, using: SymmetricKey(data: secret)))
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }

    private static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func bytes(base64URL text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
