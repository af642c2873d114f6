import Foundation
public import GatewayCore
import GatewayS3Protocol
import GatewayTransport

extension S3Provider {
    /// Stores a directory marker (an empty object `folder/`) with `directory_markers` (the
    /// default); without, nothing is stored and the folder exists once something is written in it.
    public func createFolder(path: String, withIntermediateDirectories: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw existsError(remote) }
        if try await headObject(remote) != nil { throw existsError(remote) }
        if try await folderExists(remote) {
            if withIntermediateDirectories { return }
            throw existsError(remote)
        }
        let parent = RemotePath.parent(of: remote)
        if !withIntermediateDirectories, parent != "/", configuration.directoryMarkers {
            if try await headObject(parent) != nil { throw CocoaError.posix(ENOTDIR, path: parent, remote: name, writing: true) }
            guard try await folderExists(parent) else { throw notFound(parent) }
        }
        guard configuration.directoryMarkers else { return }
        try await storeMarker(remote)
    }

    public func removeItem(path: String, recursive: Bool) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EPERM, path: remote, remote: name, writing: true) }
        if try await headObject(remote) != nil {
            try await deleteObject(key(remote), path: remote)
            try await keepParent(of: remote)
            return
        }
        let prefix = folderPrefix(remote)
        var keys: [String] = []
        var token: String?
        var any = false
        repeat {
            let page = try await listPage(prefix: prefix, delimiter: nil, token: token, maxKeys: 1000, path: remote)
            token = page.isTruncated ? page.continuationToken : nil
            for object in page.objects {
                any = true
                if !(Self.isMarker(object.key) && Self.markedPrefix(object.key) == prefix), !recursive { throw CocoaError.posix(ENOTEMPTY, path: remote, remote: name, writing: true) }
                keys.append(object.key)
            }
            if keys.count >= 1000 || token == nil {
                try await deleteObjects(keys, path: remote)
                keys.removeAll()
            }
        } while token != nil
        if !any { throw notFound(remote) }
        try await keepParent(of: remote)
    }

    /// With directory markers, a folder whose last item went away stays a folder (a marker is
    /// stored for it), as on a file system.
    func keepParent(of remote: String) async throws {
        let parent = RemotePath.parent(of: remote)
        guard configuration.directoryMarkers, parent != "/", try await !folderExists(parent) else { return }
        try await storeMarker(parent)
    }

    /// Deletes one object; a missing one is not an error (S3 answers 204 either way).
    func deleteObject(_ objectKey: String, path remote: String) async throws {
        let (head, body) = try await send("DELETE", key: objectKey, path: remote)
        guard head.isSuccess || head.status == 404 else { throw failure(head, body: body, path: remote) }
    }

    /// Deletes objects, up to 8 requests at once, children before their markers.
    func deleteObjects(_ keys: [String], path remote: String) async throws {
        let ordered = keys.sorted { $0.count > $1.count }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var running = 0
            for objectKey in ordered {
                if running >= 8 { try await group.next(); running -= 1 }
                group.addTask { [self] in try await deleteObject(objectKey, path: remote) }
                running += 1
            }
            try await group.waitForAll()
        }
    }

    /// `CopyObject` of one object with its metadata (up to 5 GiB; larger ones are streamed through
    /// this process).
    func copyObject(from source: String, item: FileObject, to destination: String, progress: TransferProgress?) async throws {
        if (item.size ?? 0) > S3Limits.maximumCopySize {
            var options = WriteOptions()
            options.modificationDate = item.sourceStamp?.modificationDate
            options.progress = progress
            _ = try await write(path: destination, from: try await readStream(path: source, options: ReadOptions(ifVersion: item.versionTag)), options: options)
            return
        }
        let copySource = "/" + S3URIEncoding.encode(configuration.bucket) + "/" + S3URIEncoding.encode(key(source), keepingSlashes: true)
        var headers: [(name: String, value: String)] = [(name: "x-amz-copy-source", value: copySource)]
        if let etag = item.versionTag { headers.append((name: "x-amz-copy-source-if-match", value: etag)) }
        if let storageClass = configuration.storageClass { headers.append((name: "x-amz-storage-class", value: storageClass)) }
        _ = try await sendXML("PUT", key: key(destination), headers: headers, path: destination)
        progress?.addBytes(item.size ?? 0)
    }

    public func copyItem(path: String, to destination: String, overwrite: Bool, progress: TransferProgress?) async throws {
        try await copyTree(from: try RemotePath.normalize(path), to: try RemotePath.normalize(destination), overwrite: overwrite,
                           removingSource: false, progress: progress)
    }

    /// Copy and delete: S3 has no rename.
    public func moveItem(path: String, to destination: String, overwrite: Bool) async throws {
        try await copyTree(from: try RemotePath.normalize(path), to: try RemotePath.normalize(destination), overwrite: overwrite,
                           removingSource: true, progress: nil)
    }

    /// Copies a file, or a folder's every key, server-side; then removes the source when moving.
    private func copyTree(from source: String, to destination: String, overwrite: Bool, removingSource: Bool, progress: TransferProgress?) async throws {
        guard source != "/", destination != "/" else { throw CocoaError.posix(EPERM, path: source == "/" ? source : destination, remote: name, writing: true) }
        guard source != destination else { return }
        if destination.hasPrefix(source + "/") { throw CocoaError.posix(EINVAL, path: destination, remote: name, writing: true) }
        let item = try await attributesOfItem(path: source)
        if let existing = try await itemIfPresent(path: destination) {
            guard overwrite else { throw existsError(destination) }
            if existing.isDirectory != item.isDirectory {
                throw CocoaError.posix(existing.isDirectory ? EISDIR : ENOTDIR, path: destination, remote: name, writing: true)
            }
            if existing.isDirectory { try await removeItem(path: destination, recursive: true) }
        }
        guard item.isDirectory else {
            let object = try await headObject(source) ?? item
            try await copyObject(from: source, item: object, to: destination, progress: progress)
            if removingSource {
                try await deleteObject(key(source), path: source)
                try await keepParent(of: source)
            }
            return
        }
        let sourcePrefix = folderPrefix(source)
        let destinationPrefix = folderPrefix(destination)
        var token: String?
        var copied: [String] = []
        repeat {
            let page = try await listPage(prefix: sourcePrefix, delimiter: nil, token: token, maxKeys: 1000, path: source)
            token = page.isTruncated ? page.continuationToken : nil
            for object in page.objects {
                let marker = Self.isMarker(object.key)
                let sourceKey = marker ? Self.markedPrefix(object.key) : object.key
                let target = destinationPrefix + sourceKey.dropFirst(sourcePrefix.count)
                guard let from = remotePath(ofKey: sourceKey), let to = remotePath(ofKey: target) else { skipped(object.key); continue }
                if marker {
                    if to != "/" { try await storeMarker(to) }
                } else {
                    try await copyObject(from: from, item: self.item(object, path: from), to: to, progress: progress)
                }
                if removingSource { copied.append(object.key) }
            }
        } while token != nil
        if removingSource {
            try await deleteObjects(copied, path: source)
            try await keepParent(of: source)
        }
    }
}
