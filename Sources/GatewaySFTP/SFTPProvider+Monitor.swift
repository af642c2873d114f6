public import GatewayState

/// Change monitoring by snapshots (the shared implementation). SFTP v3 names no file identity
/// (no inode), so a rename is seen as a removal and a creation.
extension SFTPProvider: SnapshotMonitoring {}
