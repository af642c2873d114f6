public import GatewayCore

extension WebDAVProvider: FileProviderUndoable {
    /// The remote's trash, `nil` with `trash: false`. Nextcloud and ownCloud remotes (`vendor`, at
    /// one of the server's WebDAV endpoints) use the server's own trash bin (``ServerTrashbin``)
    /// unless `trash_dir` is set; other servers a trash folder (`trash_dir`, by default
    /// `/.gateway-trash`). Trashing is one server-side `DELETE` or rename.
    public var trash: Trash? {
        guard trashSettings.enabled else { return nil }
        if let serverTrashbin { return Trash(locator: serverTrashbin) }
        guard let folder = try? trashSettings.folderPath() else { return nil }
        return Trash(locator: ProviderTrashVolume(provider: self, folder: folder))
    }
}
