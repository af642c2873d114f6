import Foundation
public import GatewayCore
import GatewaySFTPProtocol

extension SFTPProvider {
    public func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing {
        let remote: String
        do {
            remote = try RemotePath.normalize(path)
        } catch {
            return DirectoryListing(path: path, failure: error)
        }
        let provider = self
        return DirectoryListing(path: remote, pageSize: pageSize) {
            let folder = FolderPages(provider: provider, path: remote)
            return { try await folder.next() }
        }
    }

    public func attributesOfItem(path: String) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        return try await withSession { connection in
            let target = try await serverPath(remote, on: connection)
            let attributes: SFTPAttributes
            do {
                attributes = try await connection.expectAttributes(.lstat(path: target), "LSTAT", path: remote)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                throw CocoaError.posix(ENOENT, path: remote, remote: name)
            }
            return try await fileObject(remote, attributes, on: connection)
        }
    }

    /// Quota and free space from `statvfs@openssh.com`; servers without it have none to tell.
    public func storageProperties(path: String) async throws -> VolumeObject {
        let remote = try RemotePath.normalize(path)
        return try await withSession { connection in
            guard connection.supports("statvfs@openssh.com") else {
                throw FileProviderError.unavailable(reason: "this SFTP server does not report space (no statvfs@openssh.com)", path: remote)
            }
            let folder = try await serverPath(remote, on: connection)
            let data = try await connection.expectExtendedReply(.extended(name: "statvfs@openssh.com", data: SFTPWriter.fields { $0.write(string: folder) }),
                                                                "STATVFS", path: remote)
            var reader = SFTPReader(data)
            // f_bsize, f_frsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_favail, f_fsid, f_flag, f_namemax.
            _ = try reader.readUInt64()
            let fragment = try reader.readUInt64()
            let blocks = try reader.readUInt64(), _ = try reader.readUInt64(), available = try reader.readUInt64()
            let total = Int64(clamping: blocks.multipliedReportingOverflow(by: fragment).overflow ? UInt64.max : blocks &* fragment)
            let free = Int64(clamping: available.multipliedReportingOverflow(by: fragment).overflow ? UInt64.max : available &* fragment)
            return VolumeObject(totalCapacity: total, availableCapacity: free, usedCapacity: max(0, total - free))
        }
    }

    /// A file object from a name's attributes. A symbolic link is reported as one, with its
    /// target's type (one `STAT`) in `target_type`.
    func fileObject(_ remote: String, _ attributes: SFTPAttributes, on connection: SFTPConnection) async throws -> FileObject {
        let date = attributes.modificationTime.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let size = attributes.size.map { Int64(clamping: $0) }
        switch attributes.kind {
        case .directory:
            return FileObject(path: remote, type: .directory, modificationDate: date, isReadOnly: isReadOnly(attributes))
        case .symbolicLink:
            var properties: [String: String] = [:]
            let target = try await serverPath(remote, on: connection)
            if let followed = try? await connection.expectAttributes(.stat(path: target), "STAT", path: remote) {
                properties["target_type"] = (followed.kind == .directory ? FileObjectType.directory : .file).rawValue
            }
            if let names = try? await connection.expectNames(.readlink(path: target), "READLINK", path: remote), let first = names.first {
                properties["target"] = first.text
            }
            return FileObject(path: remote, type: .symbolicLink, size: size, modificationDate: date, extraProperties: properties)
        default:
            return FileObject(path: remote, type: .file, size: size, modificationDate: date, isReadOnly: isReadOnly(attributes),
                              versionTag: Self.versionTag(attributes))
        }
    }

    private func isReadOnly(_ attributes: SFTPAttributes) -> Bool {
        guard let permissions = attributes.permissions else { return false }
        return permissions & 0o222 == 0
    }

    /// Why a folder could not be listed, made precise: servers answer a file's `OPENDIR` with "no
    /// such file" (OpenSSH) or fail its `READDIR` (AsyncSSH), so the path is looked up.
    func folderError(_ error: SFTPStatusError, path: String) async -> any Error {
        do {
            guard let item = try await itemIfPresent(path: path) else { return CocoaError.posix(ENOENT, path: path, remote: name) }
            if !item.isDirectory && !item.isLinkToFolder { return CocoaError.posix(ENOTDIR, path: path, remote: name) }
            return error
        } catch {
            return error
        }
    }

    /// Size and modification second: what SFTP v3 tells of a version.
    static func versionTag(_ attributes: SFTPAttributes) -> String? {
        guard let size = attributes.size, let time = attributes.modificationTime else { return nil }
        return "\(size)-\(time)"
    }
}

/// One pass over a folder: `OPENDIR`, a `READDIR` per page, `CLOSE` at the end (or when dropped).
private actor FolderPages {
    let provider: SFTPProvider
    let path: String
    private var connection: SFTPConnection?
    private var handle: [UInt8]?
    private var serverFolder = ""
    private var done = false

    init(provider: SFTPProvider, path: String) {
        self.provider = provider
        self.path = path
    }

    deinit {
        if let connection, let handle {
            let pool = provider.pool, path = path
            Task {
                try? await connection.closeHandle(handle, path: path)
                await pool.release(connection)
            }
        } else if let connection {
            let pool = provider.pool
            Task { await pool.release(connection) }
        }
    }

    func next() async throws -> ListingPage? {
        if done { return nil }
        do {
            if handle == nil { try await open() }
            guard let connection, let handle else { return nil }
            let page: [SFTPName]?
            do {
                page = try await connection.expectNames(.readdir(handle: handle), "READDIR", path: path)
            } catch let error as SFTPStatusError {
                // AsyncSSH opens a file as a folder and fails at the first READDIR.
                throw await provider.folderError(error, path: path)
            }
            guard let names = page else {
                try await finish()
                return ListingPage(entries: [], isLast: true)
            }
            var entries: [FileObject] = []
            entries.reserveCapacity(names.count)
            for entry in names {
                guard let name = entry.text else {
                    provider.logger.warning("SFTP: a name that is not UTF-8 is left out",
                                            metadata: ["folder": "\(RemotePath.printable(path))", "bytes": "\(entry.filename.count)"])
                    continue
                }
                if name == "." || name == ".." || name.isEmpty || name.contains("/") { continue }
                let child = path == "/" ? "/" + name : path + "/" + name
                entries.append(try await provider.fileObject(child, entry.attributes, on: connection))
            }
            return ListingPage(entries: entries, isLast: false)
        } catch {
            done = true
            if let connection { await provider.pool.release(connection) }
            connection = nil
            handle = nil
            throw error
        }
    }

    private func open() async throws {
        let connection = try await provider.pool.acquire()
        self.connection = connection
        serverFolder = try await provider.serverPath(path, on: connection)
        do {
            handle = try await connection.expectHandle(.opendir(path: serverFolder), "OPENDIR", path: path)
        } catch let error as SFTPStatusError {
            throw await provider.folderError(error, path: path)
        }
    }

    private func finish() async throws {
        done = true
        guard let connection, let handle else { return }
        self.handle = nil
        self.connection = nil
        defer { Task { await provider.pool.release(connection) } }
        try await connection.closeHandle(handle, path: path)
    }
}
