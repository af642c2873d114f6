/// A content hash: a digest of a file's bytes that two sides can compare without comparing the bytes.
///
/// Digests are written as lowercase hexadecimal everywhere in the library (``FileObject/hashes``,
/// ``FileProviderHashing``, ``ContentHasher``).
public enum HashAlgorithm: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case md5, sha1, sha256

    /// The preferred order when two sides share several: the strongest the other side is likely to
    /// store first (SHA-1 is what Nextcloud keeps; MD5 what most FTP servers compute).
    public static let preference: [HashAlgorithm] = [.sha256, .sha1, .md5]

    /// The name used by `OC-Checksum` headers and Nextcloud's `oc:checksums`: `MD5`, `SHA1`, `SHA256`.
    public var checksumTypeName: String { rawValue.uppercased() }

    /// The number of hexadecimal digits in a digest.
    public var hexLength: Int {
        switch self {
        case .md5: 32
        case .sha1: 40
        case .sha256: 64
        }
    }

    /// The first of ``preference`` that both sets contain.
    public static func common(_ one: Set<HashAlgorithm>, _ other: Set<HashAlgorithm>) -> HashAlgorithm? {
        preference.first { one.contains($0) && other.contains($0) }
    }

    /// Reads `MD5`, `SHA1`, `SHA-1`, `sha256` and the like.
    public init?(checksumTypeName name: String) {
        let folded = name.lowercased().replacingOccurrences(of: "-", with: "")
        self.init(rawValue: folded)
    }

    public static func < (lhs: HashAlgorithm, rhs: HashAlgorithm) -> Bool { lhs.rawValue < rhs.rawValue }
}
