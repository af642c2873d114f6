public import GatewayCore

extension WebDAVProvider: FileProviderUndoable {
    /// The remote's trash, `nil` with `trash: false`. Nextcloud and ownCloud remotes (`vendor`, at
    /// a `remote.php/dav/files/USER/` URL) use the server's own trash bin (``ServerTrashbin``)
    /// unless `trash_dir` is set; other servers a trash folder (`trash_dir`, by default
    /// `/.gateway-trash`). Trashing is one server-side `DELETE` or rename.
    public var trash: Trash? {
        guard trashSettings.enabled, let folder = try? trashSettings.folderPath() else { return nil }
        let volume = ProviderTrashVolume(provider: self, folder: folder)
        if let serverTrashbin { return Trash(locator: ServerTrashLocator(bin: serverTrashbin, folder: volume)) }
        return Trash(locator: volume)
    }
}

/// The server's trash bin, beside the gateway's trash folder a remote may have used before it was
/// set to its vendor: undo records naming the folder still restore, `gateway trash list` shows
/// what it holds, and copies still skip it. New items go to the trash bin.
struct ServerTrashLocator: TrashLocator {
    let bin: ServerTrashbin
    let folder: ProviderTrashVolume

    func volume(for path: String) async throws -> any TrashVolume { bin }

    /// The trash bin, and the folder when it exists (one request).
    func volumes(under path: String) async throws -> [any TrashVolume] {
        try await folder.provider.itemIfPresent(path: folder.folder) != nil ? [bin, folder] : [bin]
    }

    func volume(identifier: String) async throws -> (any TrashVolume)? {
        identifier == bin.identifier ? bin : identifier == folder.identifier ? folder : nil
    }

    func isTrashFolder(_ path: String) -> Bool { path == folder.folder }
}
