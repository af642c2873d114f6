import Foundation
public import GatewayCore
import GatewayTransport

/// Digests computed by the server, for servers that offer them (ProFTPD's mod_digest, and others
/// with `XSHA1`/`XMD5`/`XSHA256` or the draft `HASH` command); see ``FTPFeatures/hashCommand(for:)``.
extension FTPProvider: FileProviderHashing {
    /// The server's name for an algorithm in `HASH` (and, without the dash, in its `X` command).
    static func hashName(_ algorithm: HashAlgorithm) -> String {
        switch algorithm {
        case .md5: "MD5"
        case .sha1: "SHA-1"
        case .sha256: "SHA-256"
        }
    }

    /// The algorithms a server with `features` computes.
    static func hashAlgorithms(_ features: FTPFeatures) -> Set<HashAlgorithm> {
        Set(HashAlgorithm.allCases.filter { features.hashCommand(for: hashName($0)) != nil })
    }

    public func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        let remote = try RemotePath.normalize(path)
        guard let (command, select) = try await features().hashCommand(for: Self.hashName(algorithm)) else {
            throw FileProviderError.unsupported(operation: "\(algorithm.checksumTypeName) hashes on this FTP server", path: remote)
        }
        let target = try await serverPath(remote)
        let replies: [FTPReply]
        do {
            replies = try await client.execute((select.map { [$0] } ?? []) + ["\(command) \(target)"], directory: RemotePath.parent(of: target), path: remote)
        } catch {
            throw await refine(error, path: remote, expecting: .file)
        }
        guard let digest = Self.digest(in: replies, length: algorithm.hexLength) else {
            throw FileProviderError.malformedResponse(path: remote, detail: "the server's \(command) answer holds no \(algorithm.checksumTypeName) digest")
        }
        return digest
    }

    /// The digest in the final line of an `X…` (`250 <hex>`) or `HASH` (`213 SHA-1 0-6 <hex> /path`)
    /// reply: the first word of `length` hexadecimal digits, lower-cased. The latest such reply
    /// wins (a `CWD` after the command answers 250 too, without a digest).
    static func digest(in replies: [FTPReply], length: Int) -> String? {
        for reply in replies.reversed() where reply.code == 250 || reply.code == 213 {
            guard let line = reply.lines.last else { continue }
            let words: [Substring] = line.split(separator: " ")
            if let word = words.dropFirst().first(where: { $0.count == length && $0.allSatisfy(\.isHexDigit) }) {
                return word.lowercased()
            }
        }
        return nil
    }
}
