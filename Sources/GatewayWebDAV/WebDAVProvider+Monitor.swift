public import GatewayCore
public import GatewayState

/// Change monitoring by polling: each round sends one `Depth: 1` PROPFIND per folder and compares
/// ETag, size and modification time with the snapshot in the local state store (see
/// ``SnapshotMonitoring``). A file whose ETag stays the same across a removal and a creation in one
/// round (Apache and Go servers derive it from size and time, which a `MOVE` keeps) is a rename.
extension WebDAVProvider: SnapshotMonitoring {
    public func snapshotIdentity(of item: FileObject) -> String? {
        item.type == .file ? item.versionTag : nil
    }
}
