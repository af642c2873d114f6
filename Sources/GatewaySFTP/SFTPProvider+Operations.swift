public import Foundation
public import GatewayCore
import GatewaySFTPProtocol

extension SFTPProvider {
    public func createFolder(path: String, withIntermediateDirectories: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else {
            if withIntermediateDirectories { return }
            throw existsError(remote)
        }
        if let existing = try await itemIfPresent(path: remote) {
            if withIntermediateDirectories && existing.isDirectory { return }
            throw existsError(remote)
        }
        if withIntermediateDirectories, try await itemIfPresent(path: RemotePath.parent(of: remote)) == nil {
            try await createFolder(path: RemotePath.parent(of: remote), withIntermediateDirectories: true)
        }
        do {
            try await withSession { connection in
                try await connection.expectOK(.mkdir(path: try await serverPath(remote, on: connection), attributes: SFTPAttributes()),
                                              "MKDIR", path: remote)
            }
        } catch let error as SFTPStatusError {
            if let existing = try await itemIfPresent(path: remote) {
                // Made meanwhile by someone else (several copies creating one folder).
                if withIntermediateDirectories && existing.isDirectory { return }
                throw existsError(remote)
            }
            throw await refine(error, path: remote)
        }
    }

    public func moveItem(path: String, to destination: String, overwrite: Bool) async throws {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        guard try RemotePath.checkTransfer(from: source, to: target, moving: true) else { return }
        guard let item = try await itemIfPresent(path: source) else { throw CocoaError.posix(ENOENT, path: source, remote: name) }
        if let existing = try await itemIfPresent(path: target) {
            guard overwrite else { throw existsError(target) }
            if existing.isDirectory || item.isDirectory {
                // A rename onto a folder fails on POSIX servers unless it is empty: replace it explicitly.
                try await removeItem(path: target, recursive: true)
            }
        }
        try await withSession { connection in
            try await rename(source, to: target, replacing: overwrite, on: connection)
        }
    }

    /// Copies on the server with `copy-data` (OpenSSH 9.0 and later) or `copy-file` (ProFTPD) where
    /// offered; otherwise files are streamed down and up again through the client. Folders are
    /// rebuilt item by item.
    public func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        _ = try RemotePath.checkTransfer(from: source, to: target, moving: false)
        let item = try await attributesOfItem(path: source)
        if !overwrite, try await itemIfPresent(path: target) != nil { throw existsError(target) }
        try progress.checkCancellation()
        if item.isDirectory {
            try await createFolder(path: target, withIntermediateDirectories: true)
            for child in try await contentsOfDirectory(path: source).collectAll() {
                try await copyItem(path: child.path, to: target == "/" ? "/" + child.name : target + "/" + child.name,
                                   overwrite: overwrite, progress: progress)
            }
            return
        }
        let copiedOnServer = try await withSession { connection -> Bool in
            if connection.supports("copy-data") {
                try await copyOnServer(source, to: target, item: item, on: connection)
            } else if has("copy-file") {
                try await copyFileOnServer(source, to: target, item: item, on: connection)
            } else {
                return false
            }
            return true
        }
        if copiedOnServer {
            progress?.addBytes(item.size ?? 0)
            progress?.addFile()
            return
        }
        let stream = try await readStream(path: source, options: ReadOptions())
        var options = WriteOptions(overwrite: overwrite, atomically: true, expectedSize: item.size, modificationDate: item.modificationDate,
                                   progress: progress)
        options.returnsStoredAttributes = false
        _ = try await write(path: target, from: stream, options: options)
        progress?.addFile()
    }

    /// `copy-data`: the server copies from one open handle to another; written to a temporary
    /// name and renamed into place, as every write.
    private func copyOnServer(_ source: String, to target: String, item: FileObject, on connection: SFTPConnection) async throws {
        let temporary = RemotePath.temporaryPath(for: target)
        let from = try await serverPath(source, on: connection), to = try await serverPath(temporary, on: connection)
        let input = try await connection.expectHandle(.open(path: from, flags: .read, attributes: SFTPAttributes()), "OPEN", path: source)
        do {
            let output = try await connection.expectHandle(.open(path: to, flags: [.write, .create, .truncate], attributes: SFTPAttributes(permissions: 0o644)),
                                                           "OPEN", path: target)
            do {
                let fields = SFTPWriter.fields { writer in
                    writer.write(string: input)
                    writer.write(UInt64(0))
                    writer.write(UInt64(0))  // 0: to the end of the file
                    writer.write(string: output)
                    writer.write(UInt64(0))
                }
                try await connection.expectOK(.extended(name: "copy-data", data: fields), "COPY", path: target)
                if let date = item.modificationDate {
                    try await connection.expectOK(.fsetstat(handle: output, attributes: .times(secondsSince1970: date.timeIntervalSince1970)),
                                                  "FSETSTAT", path: target)
                }
                try await connection.closeHandle(output, path: target)
            } catch {
                try? await connection.closeHandle(output, path: target)
                try? await connection.expectOK(.remove(path: to), "REMOVE", path: temporary)
                throw error
            }
            try? await connection.closeHandle(input, path: source)
        } catch {
            try? await connection.closeHandle(input, path: source)
            throw error
        }
        do {
            try await rename(temporary, to: target, replacing: true, on: connection)
        } catch {
            try? await connection.expectOK(.remove(path: to), "REMOVE", path: temporary)
            throw error
        }
    }

    /// `copy-file` (draft-ietf-secsh-filexfer-extensions-00): the server copies one path to
    /// another; to a temporary name, given the source's time, then renamed into place.
    private func copyFileOnServer(_ source: String, to target: String, item: FileObject, on connection: SFTPConnection) async throws {
        let temporary = RemotePath.temporaryPath(for: target)
        let from = try await serverPath(source, on: connection), to = try await serverPath(temporary, on: connection)
        let fields = SFTPWriter.fields { writer in
            writer.write(string: from)
            writer.write(string: to)
            writer.write(UInt8(1))  // overwrite a stale temporary
        }
        do {
            try await connection.expectOK(.extended(name: "copy-file", data: fields), "COPY", path: target)
            if let date = item.modificationDate {
                try await connection.expectOK(.setstat(path: to, attributes: .times(secondsSince1970: date.timeIntervalSince1970)),
                                              "SETSTAT", path: target)
            }
            try await rename(temporary, to: target, replacing: true, on: connection)
        } catch {
            try? await connection.expectOK(.remove(path: to), "REMOVE", path: temporary)
            throw await refine(error, path: source)
        }
    }

    public func removeItem(path: String, recursive: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw FileProviderError.invalidPath(path: remote, reason: "refusing to remove the remote's root") }
        let item = try await attributesOfItem(path: remote)
        if item.isDirectory {
            let children = try await contentsOfDirectory(path: remote).collectAll()
            if !children.isEmpty {
                guard recursive else { throw CocoaError.posix(ENOTEMPTY, path: remote, remote: name, writing: true) }
                for child in children {
                    try Task.checkCancellation()
                    try await removeItem(path: child.path, recursive: true)
                }
            }
        }
        do {
            try await withSession { connection in
                let target = try await serverPath(remote, on: connection)
                if item.isDirectory {
                    try await connection.expectOK(.rmdir(path: target), "RMDIR", path: remote)
                } else {
                    try await connection.expectOK(.remove(path: target), "REMOVE", path: remote)
                }
            }
        } catch {
            throw await refine(error, path: remote)
        }
    }

    /// `SETSTAT` with the access and modification times (seconds: SFTP v3 has no finer times).
    public func setModificationDate(_ date: Date, path: String) async throws {
        let remote = try RemotePath.normalize(path)
        do {
            try await withSession { connection in
                try await connection.expectOK(.setstat(path: try await serverPath(remote, on: connection),
                                                       attributes: .times(secondsSince1970: date.timeIntervalSince1970)),
                                              "SETSTAT", path: remote)
            }
        } catch let error as SFTPStatusError where error.failureKind == .notFound {
            throw CocoaError.posix(ENOENT, path: remote, remote: name)
        }
    }
}
