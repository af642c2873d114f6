public import GatewayCore

extension SFTPProvider: FileProviderUndoable {
    /// The remote's trash folder (`trash` and `trash_dir` keys), or `nil` when the trash is off.
    public var trash: Trash? {
        guard trashSettings.enabled, let folder = try? trashSettings.folderPath() else { return nil }
        return Trash(locator: ProviderTrashVolume(provider: self, folder: folder))
    }
}
