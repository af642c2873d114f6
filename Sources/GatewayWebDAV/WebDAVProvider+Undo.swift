public import GatewayCore

extension WebDAVProvider: FileProviderUndoable {
    /// The trash folder on the server (`trash_dir`, by default `/.gateway-trash`); trashing is one
    /// server-side rename. `nil` with `trash: false`.
    public var trash: Trash? {
        guard trashSettings.enabled, let folder = try? trashSettings.folderPath() else { return nil }
        return Trash(locator: ProviderTrashVolume(provider: self, folder: folder))
    }
}
