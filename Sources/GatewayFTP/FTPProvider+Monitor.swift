public import GatewayCore
public import GatewayState

/// Change monitoring by polling: each round sends one `MLSD` (or `LIST`) per folder and compares
/// size and modification time with the snapshot in the local state store (see
/// ``SnapshotMonitoring``). Where `MLSD` lists the `unique` fact (an inode), a removal and a
/// creation of the same item in one round are a rename. `LIST` gives times to the minute, so
/// two same-size writes within one minute look alike.
extension FTPProvider: SnapshotMonitoring {
    public func snapshotIdentity(of item: FileObject) -> String? {
        item.extraProperties["unique"]
    }
}
