public import Foundation
import Crypto

/// Computes one content hash incrementally, chunk by chunk, as bytes stream past (swift-crypto).
public struct ContentHasher: Sendable {
    private enum State: Sendable {
        case md5(Insecure.MD5)
        case sha1(Insecure.SHA1)
        case sha256(SHA256)
    }

    /// The algorithm computed.
    public let algorithm: HashAlgorithm
    private var state: State

    /// Starts a hash.
    public init(_ algorithm: HashAlgorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .md5: state = .md5(Insecure.MD5())
        case .sha1: state = .sha1(Insecure.SHA1())
        case .sha256: state = .sha256(SHA256())
        }
    }

    /// Adds bytes.
    public mutating func update(_ data: Data) {
        switch state {
        case .md5(var hash): hash.update(data: data); state = .md5(hash)
        case .sha1(var hash): hash.update(data: data); state = .sha1(hash)
        case .sha256(var hash): hash.update(data: data); state = .sha256(hash)
        }
    }

    /// The digest of everything added, as lowercase hexadecimal.
    public func finalize() -> String {
        switch state {
        case .md5(let hash): Self.hex(hash.finalize())
        case .sha1(let hash): Self.hex(hash.finalize())
        case .sha256(let hash): Self.hex(hash.finalize())
        }
    }

    /// The digest of bytes in memory.
    public static func hash(_ data: Data, _ algorithm: HashAlgorithm) -> String {
        var hasher = ContentHasher(algorithm)
        hasher.update(data)
        return hasher.finalize()
    }

    /// The digest of a whole stream, read once.
    public static func hash(_ stream: ByteStream, _ algorithm: HashAlgorithm) async throws -> String {
        var hasher = ContentHasher(algorithm)
        for try await chunk in stream { hasher.update(chunk) }
        return hasher.finalize()
    }

    /// Bytes as lowercase hexadecimal, as digests are written.
    public static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
