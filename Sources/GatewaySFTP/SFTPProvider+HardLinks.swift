import Foundation
public import GatewayCore
import GatewaySFTPProtocol

/// Hard links with `hardlink@openssh.com` (OpenSSH, ProFTPD's mod_sftp), declared as
/// ``ProviderCapabilities/Features/hardLinks`` once the first session has seen the extension.
extension SFTPProvider: FileProviderHardLinks {
    public func createHardLink(at path: String, to existing: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path), source = try RemotePath.normalize(existing)
        guard let item = try await itemIfPresent(path: source) else { throw CocoaError.posix(ENOENT, path: source, remote: name) }
        // (The look-up above opened a session, so the server's extensions are known.)
        guard has("hardlink@openssh.com") else {
            throw FileProviderError.unsupported(operation: "hard links on this SFTP server (no hardlink@openssh.com)", path: remote)
        }
        guard !item.isDirectory else {
            throw FileProviderError.invalidPath(path: source, reason: "\(source) is a folder; only files have hard links")
        }
        if try await itemIfPresent(path: remote) != nil { throw existsError(remote) }
        do {
            try await withSession { connection in
                let from = try await serverPath(source, on: connection), to = try await serverPath(remote, on: connection)
                let fields = SFTPWriter.fields { writer in
                    writer.write(string: from)
                    writer.write(string: to)
                }
                try await connection.expectOK(.extended(name: "hardlink@openssh.com", data: fields), "LINK", path: remote)
            }
        } catch let error as SFTPStatusError {
            if try await itemIfPresent(path: remote) != nil { throw existsError(remote) }
            if try await itemIfPresent(path: RemotePath.parent(of: remote)) == nil {
                throw CocoaError.posix(ENOENT, path: RemotePath.parent(of: remote), remote: name)
            }
            throw await refine(error, path: remote)
        }
        return try await attributesOfItem(path: remote)
    }
}
