public import Foundation
public import GatewayCore
import GatewayTransport

extension FTPProvider {
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
        let target = try await serverPath(remote)
        do {
            _ = try await client.execute(["MKD \(target)"], directory: RemotePath.parent(of: target), path: remote)
        } catch let error as FileProviderFTPError where error.replyCode >= 500 {
            let parent = RemotePath.parent(of: remote)
            let parentItem = try await itemIfPresent(path: parent)
            if parentItem == nil, withIntermediateDirectories {
                try await createFolder(path: parent, withIntermediateDirectories: true)
                do {
                    _ = try await client.execute(["MKD \(target)"], directory: RemotePath.parent(of: target), path: remote)
                } catch let again as FileProviderFTPError where again.replyCode >= 500 {
                    // Made meanwhile by another connection (several copies creating one folder).
                    guard let made = try await itemIfPresent(path: remote), made.isDirectory else { throw again }
                }
                return
            }
            if parentItem == nil {
                throw FileProviderFTPError(replyCode: error.replyCode, command: "MKD", path: parent, serverText: error.serverText, kind: .notFound)
            }
            if let existing = try await itemIfPresent(path: remote) {
                // Created meanwhile by someone else.
                if withIntermediateDirectories && existing.isDirectory { return }
                throw existsError(remote)
            }
            throw FileProviderFTPError(replyCode: error.replyCode, command: "MKD", path: remote, serverText: error.serverText,
                                       kind: error.replyCode == 550 ? .permissionDenied : nil)
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
                // RNTO onto a folder fails or nests on most servers: replace it explicitly.
                try await removeItem(path: target, recursive: true)
            }
        }
        do {
            try await rename(source, to: target, replacing: overwrite)
        } catch let error as FileProviderFTPError where error.replyCode >= 500 {
            if try await itemIfPresent(path: RemotePath.parent(of: target)) == nil {
                throw FileProviderFTPError(replyCode: error.replyCode, command: "RNTO", path: RemotePath.parent(of: target),
                                           serverText: error.serverText, kind: .notFound)
            }
            throw error
        }
    }

    /// Copies on the server with `SITE CPFR`/`SITE CPTO` when it announces `SITE COPY` (ProFTPD's
    /// mod_copy); FTP itself has no copy, so otherwise files are streamed down and up again through
    /// the client (two connections at once, so `max_connections` must be at least 2). Folders are
    /// rebuilt item by item either way.
    public func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        _ = try RemotePath.checkTransfer(from: source, to: target, moving: false)
        let item = try await attributesOfItem(path: source)
        if !overwrite, try await itemIfPresent(path: target) != nil { throw existsError(target) }
        try progress.checkCancellation()
        let copiesOnServer = try await features().serverSideCopy
        guard copiesOnServer || client.configuration.maxConnections >= 2 else {
            throw FileProviderError.unsupported(operation: "copying inside an FTP remote with max_connections 1", path: source)
        }
        if !item.isDirectory, copiesOnServer {
            let (from, to) = (try await serverPath(source), try await serverPath(target))
            do {
                _ = try await client.execute(["SITE CPFR \(from)", "SITE CPTO \(to)"], directory: RemotePath.parent(of: to), path: target)
            } catch {
                throw await refine(error, path: target)
            }
            progress?.addBytes(item.size ?? 0)
            progress?.addFile()
            return
        }
        if item.isDirectory {
            try await createFolder(path: target, withIntermediateDirectories: true)
            for child in try await contentsOfDirectory(path: source).collectAll() {
                try await copyItem(path: child.path, to: target.appendingRemoteComponent(child.name), overwrite: overwrite, progress: progress)
            }
            return
        }
        let stream = try await readStream(path: source, options: ReadOptions())
        var options = WriteOptions(overwrite: overwrite, atomically: true, expectedSize: item.size, modificationDate: item.modificationDate,
                                   progress: progress)
        options.returnsStoredAttributes = false
        _ = try await write(path: target, from: stream, options: options)
        progress?.addFile()
    }

    public func removeItem(path: String, recursive: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw FileProviderError.invalidPath(path: remote, reason: "refusing to remove the remote's root") }
        let item = try await attributesOfItem(path: remote)
        let target = try await serverPath(remote)
        guard item.isDirectory else {
            do {
                _ = try await client.execute(["DELE \(target)"], directory: RemotePath.parent(of: target), path: remote)
            } catch {
                throw await refine(error, path: remote)
            }
            return
        }
        // A folder's entries are read in full before anything in it is removed: deleting needs a
        // connection of its own, and with one connection the listing would still hold it.
        let children = try await contentsOfDirectory(path: remote).collectAll()
        if !children.isEmpty {
            guard recursive else { throw CocoaError.posix(ENOTEMPTY, path: remote, remote: name, writing: true) }
            var files: [String] = []
            for child in children {
                if child.isDirectory {
                    try await removeItem(path: child.path, recursive: true)
                } else {
                    files.append("DELE \(try await serverPath(child.path))")
                }
            }
            // Files go in batches: one request carries many DELE commands.
            for start in stride(from: 0, to: files.count, by: 50) {
                try Task.checkCancellation()
                let batch = Array(files[start..<min(start + 50, files.count)])
                do {
                    _ = try await client.execute(batch, directory: target, path: remote)
                } catch {
                    throw await refine(error, path: remote)
                }
            }
        }
        do {
            _ = try await client.execute(["RMD \(target)"], directory: RemotePath.parent(of: target), path: remote)
        } catch {
            throw await refine(error, path: remote)
        }
    }

    public func setModificationDate(_ date: Date, path: String) async throws {
        let remote = try RemotePath.normalize(path)
        guard try await features().setModificationTime else {
            throw FileProviderError.unsupported(operation: "setting modification times (the server has no MFMT)", path: remote)
        }
        let target = try await serverPath(remote)
        let stamp = Self.mfmtStamp(date)
        do {
            _ = try await client.execute(["MFMT \(stamp) \(target)"], directory: RemotePath.parent(of: target), path: remote)
        } catch {
            throw await refine(error, path: remote)
        }
    }

    /// `YYYYMMDDHHMMSS` in UTC, as MFMT wants it.
    static func mfmtStamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02d%02d%02d%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1,
                      parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }
}
