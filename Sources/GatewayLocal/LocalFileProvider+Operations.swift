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
            let host = try resolver.hostPath(folder, followFinalSymlink: true)
            if mkdir(host, 0o777) == 0 { continue }
            let code = errno
            if code == EEXIST, withIntermediateDirectories || count < components.count {
                guard let info = POSIX.status(host, followSymlinks: true), POSIX.isDirectory(info) else {
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
        guard source != "/" else { throw FileProviderError.invalidPath(path: source, reason: "cannot move the remote's root") }
        if source == target { return }
        if target.hasPrefix(source + "/") {
            throw FileProviderError.invalidPath(path: target, reason: "cannot move a folder into itself")
        }
        let sourceHost = try resolver.hostPath(source, followFinalSymlink: false)
        let targetHost = try resolver.hostPath(target, followFinalSymlink: false)
        guard let info = POSIX.status(sourceHost, followSymlinks: false) else { throw posixError(errno, source) }
        if !overwrite, POSIX.status(targetHost, followSymlinks: false) != nil {
            throw posixError(EEXIST, target, writing: true)
        }
        if !overwrite, !POSIX.isDirectory(info) {
            // Atomic "fail if it exists" for files: hard-link, then drop the old name.
            if link(sourceHost, targetHost) == 0 {
                unlink(sourceHost)
                return
            }
            if errno == EEXIST { throw posixError(EEXIST, target, writing: true) }
        }
        if rename(sourceHost, targetHost) == 0 {
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
        if target == source || target.hasPrefix(source == "/" ? "/" : source + "/") {
            throw FileProviderError.invalidPath(path: target, reason: "cannot copy an item into itself")
        }
        let sourceHost = try resolver.hostPath(source, followFinalSymlink: true)
        guard let info = POSIX.status(sourceHost, followSymlinks: true) else { throw posixError(errno, source) }
        if POSIX.isDirectory(info) {
            try await copyFolder(source, to: target, overwrite: overwrite, progress: progress)
        } else {
            try await copyFile(source, to: target, overwrite: overwrite, progress: progress)
        }
    }

    /// Copies a file inside the root with `sendfile`, so the bytes never pass through user space;
    /// atomically, preserving the modification time.
    private func copyFile(_ source: String, to target: String, overwrite: Bool, progress: TransferProgress?) async throws {
        let sourceHost = try resolver.hostPath(source, followFinalSymlink: true)
        let input = open(sourceHost, O_RDONLY | O_CLOEXEC)
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
        let targetHost = try resolver.hostPath(target, followFinalSymlink: true)
        if let existing = POSIX.status(targetHost, followSymlinks: true) {
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
        let host = try resolver.hostPath(remote, followFinalSymlink: false)
        guard let info = POSIX.status(host, followSymlinks: false) else { throw posixError(errno, remote, writing: true) }
        if !POSIX.isDirectory(info) {
            guard unlink(host) == 0 else { throw posixError(errno, remote, writing: true) }
            return
        }
        if recursive { try removeContents(ofFolder: host, remote: remote) }
        guard rmdir(host) == 0 else { throw posixError(errno, remote, writing: true) }
        logger.debug("removed folder", metadata: ["path": .string(remote), "recursive": .stringConvertible(recursive)])
    }

    /// Removes everything inside a folder without following symbolic links.
    private func removeContents(ofFolder host: String, remote: String) throws {
        guard let handle = opendir(host) else { throw posixError(errno, remote, writing: true) }
        let cursor = DirectoryCursor(handle)
        var folders: [(host: String, remote: String)] = []
        while true {
            try Task.checkCancellation()
            let (entries, finished) = try cursor.nextPage(limit: 256, folder: remote, provider: self)
            for entry in entries {
                let childHost = host + "/" + entry.name
                if entry.type == .directory {
                    folders.append((childHost, entry.path))
                } else if unlink(childHost) != 0, errno != ENOENT {
                    throw posixError(errno, entry.path, writing: true)
                }
            }
            if finished { break }
        }
        cursor.close()
        for folder in folders {
            try removeContents(ofFolder: folder.host, remote: folder.remote)
            guard rmdir(folder.host) == 0 || errno == ENOENT else { throw posixError(errno, folder.remote, writing: true) }
        }
    }

    public func setModificationDate(_ date: Date, path: String) async throws {
        let remote = try RemotePath.normalize(path)
        let host = try resolver.hostPath(remote, followFinalSymlink: true)
        let times = POSIX.times(modification: date)
        guard utimensat(AT_FDCWD, host, times, 0) == 0 else { throw posixError(errno, remote, writing: true) }
    }
}
