import Foundation
public import GatewayCore
public import GatewayState

/// Change monitoring through inotify: rounds list only the folders the kernel named (each watched
/// as a round meets it), a queue overflow compares the whole tree, and catch-up from an anchor
/// compares the tree with the snapshot in the local state store (see ``SnapshotMonitoring``).
/// Items keep their inode across a rename, so renames of files and folders are reported as such.
extension LocalFileProvider: SnapshotMonitoring {
    public var monitorIdentity: String { "local \(rootPath)" }

    public var pushesChanges: Bool {
#if canImport(Glibc)
        true
#else
        false
#endif
    }

    public func snapshotIdentity(of item: FileObject) -> String? {
        item.extraProperties["inode"]
    }

    public func makeChangeSignal(at path: String, recursive: Bool) throws -> (any ChangeSignal)? {
#if canImport(Glibc)
        try InotifySignal(hostRoot: rootPath, folder: RemotePath.normalize(path), recursive: recursive)
#else
        nil
#endif
    }
}
