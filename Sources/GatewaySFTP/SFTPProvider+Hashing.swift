import Foundation
public import GatewayCore
import Synchronization

/// Hashes without a download, where the account can run commands: `md5sum`, `sha1sum` and
/// `sha256sum` over an SSH `exec` channel beside the SFTP one (as rclone does). Which of them work
/// is found out once per remote, on its first session, by running them on `/dev/null` and comparing
/// with the digests of nothing; only those are claimed. Servers without a shell (AsyncSSH, an
/// `internal-sftp` chroot, `rclone serve sftp` outside its own files) claim none, nor does the
/// `ssh_command` channel, nor `hash_command` `none`.
extension SFTPProvider: FileProviderHashing {
    static func hashCommand(_ algorithm: HashAlgorithm) -> String {
        switch algorithm {
        case .md5: "md5sum"
        case .sha1: "sha1sum"
        case .sha256: "sha256sum"
        }
    }

    /// The digests of zero bytes, which the probe compares with.
    static let emptyDigests: [HashAlgorithm: String] = [
        .md5: "d41d8cd98f00b204e9800998ecf8427e",
        .sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        .sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]

    /// The algorithms whose commands answered correctly on `connection`: one `exec` running all three.
    func probeHashCommands(on connection: SFTPConnection) async -> Set<HashAlgorithm> {
        guard configuration.runsHashCommands else { return [] }
        let command = HashAlgorithm.allCases.map { "\(Self.hashCommand($0)) /dev/null" }.joined(separator: "; ")
        guard let answer = try? await connection.run(command), answer.status == 0 || !answer.output.isEmpty else { return [] }
        let text = String(decoding: answer.output, as: UTF8.self)
        let words = Set(text.split(whereSeparator: \.isWhitespace).map(String.init))
        return Set(HashAlgorithm.allCases.filter { Self.emptyDigests[$0].map(words.contains) ?? false })
    }

    public func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        let remote = try RemotePath.normalize(path)
        return try await withSession { connection in
            guard hashAlgorithms.contains(algorithm) else {
                throw FileProviderError.unsupported(operation: "\(algorithm.checksumTypeName) hashes on this SFTP server (no \(Self.hashCommand(algorithm)) to run)",
                                                    path: remote)
            }
            let item = try await attributesOfItem(path: remote)
            guard item.type == .file else { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
            let target = try await serverPath(remote, on: connection)
            // Single quotes: the shell takes every byte inside literally, but a quote itself.
            let quoted = "'" + target.replacingOccurrences(of: "'", with: "'\\''") + "'"
            guard let answer = try await connection.run("\(Self.hashCommand(algorithm)) \(quoted)") else {
                throw FileProviderError.unsupported(operation: "running commands over this SSH channel", path: remote)
            }
            let text = String(decoding: answer.output, as: UTF8.self)
            guard answer.status == 0, let word = text.split(whereSeparator: \.isWhitespace).first,
                  word.count == algorithm.hexLength, word.allSatisfy(\.isHexDigit) else {
                throw FileProviderError.malformedResponse(path: remote, detail: "\(Self.hashCommand(algorithm)) on the server gave no digest (exit \(answer.status))")
            }
            return word.lowercased()
        }
    }
}
