#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GatewayCore

/// Maps remote paths to host paths under a root and guarantees they stay there.
///
/// Remote paths are normalized first (`..` may not climb above `/`). Then every component that
/// exists is checked on disk: a symbolic link is followed only if its target (resolved by
/// `realpath`, or lexically for a dangling link) lies inside the root; otherwise the path is refused
/// with ``FileProviderError/pathEscapesRoot(path:)``.
struct LocalPathResolver: Sendable {
    /// The root as resolved by `realpath`, without a trailing slash (except `/` itself).
    let root: String

    init(root: String) {
        self.root = root
    }

    /// Whether a host path lies at or below the root.
    func contains(_ hostPath: String) -> Bool {
        root == "/" || hostPath == root || hostPath.hasPrefix(root + "/")
    }

    /// The host path of a normalized remote path, lexically (no symlink checks).
    func lexicalHostPath(_ remotePath: String) -> String {
        if remotePath == "/" { return root }
        return root == "/" ? remotePath : root + remotePath
    }

    /// The host path of a remote path, with every existing component checked.
    ///
    /// - Parameters:
    ///   - remotePath: a remote path (normalized here).
    ///   - followFinalSymlink: whether a symbolic link in the last component is followed (reading,
    ///     writing through it) or left alone (removing, renaming, describing the link itself).
    func hostPath(_ remotePath: String, followFinalSymlink: Bool) throws -> String {
        let normalized = try RemotePath.normalize(remotePath)
        if root == "/" { return normalized }
        let components = RemotePath.components(of: normalized)
        var current = root
        for (index, component) in components.enumerated() {
            let candidate = current == "/" ? "/" + component : current + "/" + component
            guard let info = POSIX.status(candidate, followSymlinks: false) else {
                // Does not exist (yet): the rest is appended lexically below a checked folder.
                return ([candidate] + components[(index + 1)...]).joined(separator: "/")
            }
            let isLast = index == components.count - 1
            if POSIX.isSymlink(info), !isLast || followFinalSymlink {
                if let resolved = POSIX.realPath(candidate) {
                    guard contains(resolved) else { throw FileProviderError.pathEscapesRoot(path: normalized) }
                    current = resolved
                } else {
                    // A dangling link: check where it would point, lexically.
                    guard let target = POSIX.readLink(at: AT_FDCWD, candidate) else {
                        throw FileProviderError.pathEscapesRoot(path: normalized)
                    }
                    let absolute = target.hasPrefix("/") ? target : current + "/" + target
                    guard let lexical = try? RemotePath.normalize(absolute), contains(lexical) else {
                        throw FileProviderError.pathEscapesRoot(path: normalized)
                    }
                    current = lexical
                }
            } else {
                current = candidate
            }
        }
        return current
    }

    /// The remote path of a host path inside the root, or `nil` when it lies outside.
    func remotePath(ofHostPath hostPath: String) -> String? {
        guard let normalized = try? RemotePath.normalize(hostPath), contains(normalized) else { return nil }
        if root == "/" { return normalized }
        return normalized == root ? "/" : String(normalized.dropFirst(root.count))
    }
}
