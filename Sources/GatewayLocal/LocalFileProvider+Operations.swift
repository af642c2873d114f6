#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation
public import GatewayCore

extension LocalFileProvider {
    public func createFolder(path: String, withIntermediateDirectories: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else {
            if withIntermediateDirectories { return }
            throw posixError(EEXIST, remote, writing: true)
        }
        let components = RemotePath.components(of: remote)
        let prefixes = withIntermediateDirectories ? Array(1...components.count) : [components.count]
        for count in prefixes {
            let folder = "/" + components[..<count].joined(separator: "/")
            let location = try locate(folder, followFinalSymlink: true, writing: true)
            if mkdirat(location.fd, location.name, 0o777) == 0 { continue }
            let code = errno
            if code == EEXIST, withIntermediateDirectories || count < components.count {
                guard let info = location.status(), POSIX.isDirectory(info) else {
                    throw CocoaError.described(.fileWriteFileExists, path: folder, remote: name, reason: "\(folder) exists and is not a folder")
                }
                continue
            }
            throw posixError(code, folder, writing: true)
        }
    }

    public func moveItem(path: String, to destination: String, overwrite: Bool) async throws {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        guard try RemotePath.checkTransfer(from: source, to: target, moving: true) else { return }
        let from = try locate(source, followFinalSymlink: false, writing: true)
        let to = try locate(target, followFinalSymlink: false, writing: true)
        guard let info = from.status() else { throw posixError(errno, source) }
        if !overwrite, to.status() != nil {
            throw posixError(EEXIST, target, writing: true)
        }
        if !overwrite, !POSIX.isDirectory(info) {
            // Atomic "fail if it exists" for files: hard-link, then drop the old name.
            if linkat(from.fd, from.name, to.fd, to.name, 0) == 0 {
                unlinkat(from.fd, from.name, 0)
                return
            }
            if errno == EEXIST { throw posixError(EEXIST, target, writing: true) }
        }
        if renameat(from.fd, from.name, to.fd, to.name) == 0 {
            logger.debug("renamed", metadata: ["from": .string(source), "to": .string(target)])
            return
        }
        let code = errno
        guard code == EXDEV else { throw posixError(code, code == ENOENT ? source : target, writing: true) }
        // Different file systems under one root: copy, then remove the source.
        try await copyItem(path: source, to: target, overwrite: overwrite, progress: nil)
        try await removeItem(path: source, recursive: true)
    }

    public func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        let source = try RemotePath.normalize(path)
        let target = try RemotePath.normalize(destination)
        _ = try RemotePath.checkTransfer(from: source, to: target, moving: false)
        guard let info = try locate(source, followFinalSymlink: true).status() else { throw posixError(errno, source) }
        if POSIX.isDirectory(info) {
            try await copyFolder(source, to: target, overwrite: overwrite, progress: progress)
        } else {
            try await copyFile(source, to: target, overwrite: overwrite, progress: progress)
        }
    }

    /// Copies a file inside the root with `sendfile`, so the bytes never pass through user space;
    /// atomically, preserving the modification time.
    private func copyFile(_ source: String, to target: String, overwrite: Bool, progress: TransferProgress?) async throws {
        let input = try locate(source, followFinalSymlink: true).open(O_RDONLY)
        guard input >= 0 else { throw posixError(errno, source) }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw posixError(errno, source) }
        guard !POSIX.isDirectory(info) else { throw posixError(EISDIR, source) }
        let size = Int64(info.st_size)
        let options = WriteOptions(overwrite: overwrite, atomically: true, expectedSize: size,
                                   modificationDate: POSIX.date(info.st_mtim), progress: progress)
        _ = try await writeFile(path: target, options: options, announcedSize: size) { output, remote in
            var copied: Int64 = 0
            while copied < size {
                try progress.checkCancellation()
                let count = sendfile(output, input, nil, Int(min(size - copied, 16 << 20)))
                if count < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    throw posixError(code, code == ENOSPC || code == EDQUOT ? remote : source, writing: true)
                }
                if count == 0 { break }
                copied += Int64(count)
                progress?.addBytes(Int64(count))
            }
            return copied
        }
    }

    private func copyFolder(_ source: String, to target: String, overwrite: Bool, progress: TransferProgress?) async throws {
        if let existing = try locate(target, followFinalSymlink: true, writing: true).status() {
            guard POSIX.isDirectory(existing) else { throw posixError(EEXIST, target, writing: true) }
            guard overwrite else { throw posixError(EEXIST, target, writing: true) }
        } else {
            try await createFolder(path: target, withIntermediateDirectories: false)
        }
        for try await item in walk(path: source) {
            try progress.checkCancellation()
            guard let relative = RemotePath.relative(item.path, to: source) else { continue }
            let destination = try RemotePath.join(target, relative)
            switch item.type {
            case .directory:
                try await createFolder(path: destination, withIntermediateDirectories: true)
            case .file, .symbolicLink:
                try await copyFile(item.path, to: destination, overwrite: overwrite, progress: progress)
                progress?.addFile()
            case .other:
                logger.warning("skipping special file", metadata: ["path": .string(item.path)])
            }
        }
    }

    public func removeItem(path: String, recursive: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else {
            throw FileProviderError.invalidPath(path: remote, reason: "refusing to remove the remote's root")
        }
        let location = try locate(remote, followFinalSymlink: false, writing: true)
        guard let info = location.status() else { throw posixError(errno, remote, writing: true) }
        if !POSIX.isDirectory(info) {
            guard unlinkat(location.fd, location.name, 0) == 0 else { throw posixError(errno, remote, writing: true) }
            return
        }
        if recursive { try removeContents(ofFolder: location, remote: remote) }
        guard unlinkat(location.fd, location.name, AT_REMOVEDIR) == 0 else { throw posixError(errno, remote, writing: true) }
        logger.debug("removed folder", metadata: ["path": .string(remote), "recursive": .stringConvertible(recursive)])
    }

    /// Removes everything inside a folder without following symbolic links: each folder is opened
    /// with `O_NOFOLLOW` relative to its parent's descriptor, and its entries removed with `unlinkat`.
    private func removeContents(ofFolder location: LocalLocation, remote: String) throws {
        let cursor = try DirectoryCursor(location, remote: remote, provider: self, writing: true)
        let folder = LocalLocation(folder: Descriptor(dup(cursor.fd)), name: ".")
        guard folder.fd >= 0 else { throw posixError(errno, remote, writing: true) }
        var folders: [String] = []
        while let name = try cursor.nextName(folder: remote, provider: self) {
            try Task.checkCancellation()
            let child = folder.sibling(name)
            if let info = child.status(), POSIX.isDirectory(info) {
                folders.append(name)
            } else if unlinkat(folder.fd, name, 0) != 0 {
                let code = errno
                if code == EISDIR {  // replaced by a folder since it was checked
                    folders.append(name)
                } else if code != ENOENT {
                    throw posixError(code, remote == "/" ? "/" + name : remote + "/" + name, writing: true)
                }
            }
        }
        cursor.close()
        for name in folders {
            let path = remote == "/" ? "/" + name : remote + "/" + name
            try removeContents(ofFolder: folder.sibling(name), remote: path)
            guard unlinkat(folder.fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT else { throw posixError(errno, path, writing: true) }
        }
    }

    public func setModificationDate(_ date: Date, path: String) async throws {
        let remote = try RemotePath.normalize(path)
        let location = try locate(remote, followFinalSymlink: true, writing: true)
        let times = POSIX.times(modification: date)
        guard utimensat(location.fd, location.name, times, AT_SYMLINK_NOFOLLOW) == 0 else { throw posixError(errno, remote, writing: true) }
    }
}
