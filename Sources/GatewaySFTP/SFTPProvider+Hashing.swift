import Foundation
public import GatewayCore
import GatewaySFTPProtocol
import Synchronization

/// Hashes without a download, in the order rclone and the SFTP drafts give:
///
/// 1. the server's own `check-file` extension (draft-ietf-secsh-filexfer-extensions-00, ProFTPD's
///    mod_sftp among others): the server reads the file and answers with its digest;
/// 2. where the account can run commands, `md5sum`, `sha1sum` and `sha256sum` over an SSH `exec`
///    channel beside the SFTP one (as rclone does), or with `ssh_command` in a second `ssh`
///    process. Which of them work is found out once per remote, on its first session, by running
///    them on `/dev/null` and comparing with the digests of nothing; only those are claimed.
///    Servers without a shell (AsyncSSH, an `internal-sftp` chroot, `rclone serve sftp` outside
///    its own files) claim none, nor does `hash_command` `none`.
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

    /// The extension that computes digests on the server, as servers announce it.
    static let checkFileExtensions = ["check-file", "check-file-name"]

    /// A `check-file-name` request's fields: the whole file (offset 0, length 0 = to the end) as one block.
    static func checkFileFields(_ target: String, algorithm: HashAlgorithm) -> [UInt8] {
        SFTPWriter.fields { writer in
            writer.write(string: target)
            writer.write(string: checkFileAlgorithmName(algorithm))
            writer.write(UInt64(0))
            writer.write(UInt64(0))
            writer.write(UInt32(0))
        }
    }

    public func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        let remote = try RemotePath.normalize(path)
        return try await withSession { connection in
            guard hashAlgorithms.contains(algorithm) else {
                throw FileProviderError.unsupported(operation: "\(algorithm.checksumTypeName) hashes on this SFTP server (no check-file, no \(Self.hashCommand(algorithm)) to run)",
                                                    path: remote)
            }
            let item = try await attributesOfItem(path: remote)
            guard item.type == .file else { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
            let target = try await serverPath(remote, on: connection)
            if usesCheckFile {
                return try await checkFile(target, algorithm: algorithm, path: remote, on: connection)
            }
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

    /// `check-file-name`: the server's digest of the whole file.
    private func checkFile(_ target: String, algorithm: HashAlgorithm, path: String, on connection: SFTPConnection) async throws -> String {
        let name = Self.checkFileAlgorithmName(algorithm)
        let reply: [UInt8]
        do {
            reply = try await connection.expectExtendedReply(.extended(name: "check-file-name", data: Self.checkFileFields(target, algorithm: algorithm)),
                                                             "CHECK-FILE", path: path)
        } catch let error as SFTPStatusError {
            throw await refine(error, path: path, expecting: .file)
        }
        var reader = SFTPReader(reply)
        do {
            // The algorithm used, then the digest; some servers put the name "check-file" first.
            var used = try reader.readText()
            if used == "check-file" { used = try reader.readText() }
            let digest = reader.readRest()
            guard used == name, digest.count == algorithm.hexLength / 2 else {
                throw FileProviderError.malformedResponse(path: path, detail: "check-file answered \(used) with \(digest.count) bytes for \(name)")
            }
            return ContentHasher.hex(digest)
        } catch let error as SFTPDecodingError {
            throw FileProviderError.malformedResponse(path: path, detail: "check-file: \(error.reason)")
        }
    }

    /// The draft's name of an algorithm.
    static func checkFileAlgorithmName(_ algorithm: HashAlgorithm) -> String {
        switch algorithm {
        case .md5: "md5"
        case .sha1: "sha1"
        case .sha256: "sha256"
        }
    }
}
