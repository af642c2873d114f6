#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLocalShims
import GatewayCore
import Synchronization

/// An open file descriptor owned by Swift: closed when the last reference goes away.
final class Descriptor: Sendable {
    /// The descriptor number.
    let fd: Int32

    init(_ fd: Int32) { self.fd = fd }

    deinit { close(fd) }
}

/// Where an item lives on disk: an open folder and the item's name in it. Every operation acts on
/// it with `*at()` calls, so nothing that happens to the path above that folder afterwards can
/// redirect it.
struct LocalLocation: Sendable {
    /// The folder holding the item.
    let folder: Descriptor
    /// The item's name in ``folder``: one path component, never `..`; `.` when the item is the folder
    /// itself (the remote's root, or a folder reached through a link ending in `.` or `..`).
    let name: String

    /// The folder's descriptor.
    var fd: Int32 { folder.fd }

    /// `fstatat` of the item without following a link in ``name``; `nil` with `errno` set when it fails.
    func status() -> stat? {
        var info = stat()
        return fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    /// Opens the item (`O_NOFOLLOW`: a link swapped in since it was resolved is refused with `ELOOP`).
    /// Returns `-1` with `errno` set when it fails.
    func open(_ flags: Int32, mode: mode_t = 0) -> Int32 {
        openat(folder.fd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }

    /// A sibling of the item in the same folder (a temporary or partial file).
    func sibling(_ name: String) -> LocalLocation {
        LocalLocation(folder: folder, name: name)
    }
}

/// Resolves remote paths to ``LocalLocation``s below an open root folder, and guarantees they stay
/// there, even while the tree changes underneath.
///
/// Rules:
/// - Remote paths are normalized first (`..` may not climb above `/`).
/// - Every component is resolved relative to a descriptor of the root opened once, never through
///   a host path: the folder holding the item is opened with `openat2(RESOLVE_BENEATH |
///   RESOLVE_NO_MAGICLINKS)`, which makes the kernel refuse, atomically, anything that leaves the
///   root. Where the kernel has no `openat2` (`ENOSYS`), or refuses a path the rules below allow,
///   the path is walked one component at a time with `openat(O_PATH | O_NOFOLLOW)` from the root
///   descriptor, resolving links by hand with the same rules. The item itself is then only ever
///   used through `*at()` calls on that folder, with `O_NOFOLLOW`/`AT_SYMLINK_NOFOLLOW`.
/// - A symbolic link with a relative target is followed when the target stays inside the root
///   (its `..` are resolved against the folders actually walked through, and may not climb above
///   the root).
/// - A symbolic link with an absolute target is followed only when the target, as written, starts
///   with the root's real path (``root``, as `realpath` gave it when the provider was made); it is
///   then resolved from the root descriptor. Any other absolute target (including another spelling
///   of the root, through a link above it) is refused.
/// - A dangling link in the last component leads to where it points (so a write through it
///   creates the target), under the same rules.
/// - Anything that would leave the root is refused with ``FileProviderError/pathEscapesRoot(path:)``;
///   other failures are ``SystemFailure``s carrying `errno`.
final class LocalPathResolver: Sendable {
    /// A failed system call while resolving a path, with its `errno`.
    struct SystemFailure: Error {
        let code: Int32
    }

    /// The root as resolved by `realpath`, without a trailing slash (except `/` itself).
    let root: String
    /// The root's components (empty for `/`), to recognise absolute link targets inside it.
    private let rootComponents: [String]
    /// An `O_PATH` descriptor of the root folder, opened once: every path is resolved from it.
    let rootFolder: Descriptor
    /// Whether `openat2` is tried first (cleared once the kernel says it has none).
    private let tryOpenat2: Atomic<Bool>

    /// The most symbolic links one path may go through (as the kernel's `MAXSYMLINKS`).
    static let maximumLinks = 40

    /// Opens the root folder.
    ///
    /// - Parameters:
    ///   - root: the root's real path (`realpath`).
    ///   - useOpenat2: `false` always walks component by component (for tests of that path).
    /// - Throws: ``SystemFailure`` when the root cannot be opened as a folder.
    init(root: String, useOpenat2: Bool = true) throws {
        let fd = openat(AT_FDCWD, root, CLOCAL_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemFailure(code: errno) }
        self.root = root
        self.rootComponents = RemotePath.components(of: root)
        self.rootFolder = Descriptor(fd)
        self.tryOpenat2 = Atomic(useOpenat2)
    }

    /// Whether a host path lies at or below the root.
    func contains(_ hostPath: String) -> Bool {
        root == "/" || hostPath == root || hostPath.hasPrefix(root + "/")
    }

    /// The host path of a normalized remote path, lexically (no symlink checks; for display and URLs only).
    func lexicalHostPath(_ remotePath: String) -> String {
        if remotePath == "/" { return root }
        return root == "/" ? remotePath : root + remotePath
    }

    /// The remote path of a host path inside the root, or `nil` when it lies outside.
    func remotePath(ofHostPath hostPath: String) -> String? {
        guard let normalized = try? RemotePath.normalize(hostPath), contains(normalized) else { return nil }
        if root == "/" { return normalized }
        return normalized == root ? "/" : String(normalized.dropFirst(root.count))
    }

    /// The location of a normalized remote path, with every link on the way checked.
    ///
    /// - Parameters:
    ///   - remotePath: a normalized remote path.
    ///   - followFinalSymlink: whether a symbolic link in the last component is followed (reading,
    ///     writing through it) or left alone (removing, renaming, describing the link itself).
    /// - Returns: the folder holding the item and its name there; the item need not exist (its
    ///   folder must).
    /// - Throws: ``FileProviderError/pathEscapesRoot(path:)``, or a ``SystemFailure``.
    func locate(_ remotePath: String, followFinalSymlink: Bool) throws -> LocalLocation {
        let components = RemotePath.components(of: remotePath)
        guard let last = components.last else { return LocalLocation(folder: rootFolder, name: ".") }
        if tryOpenat2.load(ordering: .relaxed) {
            let folder: Descriptor?
            if components.count == 1 {
                folder = rootFolder
            } else {
                let parent = components.dropLast().joined(separator: "/")
                let fd = clocal_openat2(rootFolder.fd, parent, UInt64(CLOCAL_O_PATH | O_DIRECTORY | O_CLOEXEC), 0,
                                        UInt64(CLOCAL_RESOLVE_BENEATH | CLOCAL_RESOLVE_NO_MAGICLINKS))
                if fd >= 0 {
                    folder = Descriptor(fd)
                } else {
                    switch errno {
                    case ENOSYS:
                        // No openat2 here: walk from now on.
                        tryOpenat2.store(false, ordering: .relaxed)
                        folder = nil
                    case EXDEV, EAGAIN, EPERM:
                        // An absolute link (maybe inside the root), a concurrent rename during
                        // `..`, or a sandbox refusing the call: the walk decides.
                        folder = nil
                    case let code:
                        throw SystemFailure(code: code)
                    }
                }
            }
            if let folder {
                let location = LocalLocation(folder: folder, name: last)
                // A link in the last component, to follow: the walk resolves it.
                guard followFinalSymlink, let info = location.status(), POSIX.isSymlink(info) else { return location }
            }
        }
        return try walk(components, followFinalSymlink: followFinalSymlink, remotePath: remotePath)
    }

    /// Resolves a path one component at a time with `openat(O_PATH | O_NOFOLLOW)` from the root,
    /// following links by hand (see the type's rules). `..` inside link targets pops the folders
    /// actually walked through, and may not pop the root.
    private func walk(_ components: [String], followFinalSymlink: Bool, remotePath: String) throws -> LocalLocation {
        var folders = [rootFolder]
        // Still to resolve, last first.
        var pending = Array(components.reversed())
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                guard folders.count > 1 else { throw FileProviderError.pathEscapesRoot(path: remotePath) }
                folders.removeLast()
                continue
            }
            let folder = folders[folders.count - 1]
            let isLast = pending.isEmpty
            if isLast, !followFinalSymlink { return LocalLocation(folder: folder, name: component) }
            let fd = openat(folder.fd, component, CLOCAL_O_PATH | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                if code == ENOENT, isLast { return LocalLocation(folder: folder, name: component) }
                throw SystemFailure(code: code)
            }
            let item = Descriptor(fd)
            var info = stat()
            guard fstat(item.fd, &info) == 0 else { throw SystemFailure(code: errno) }
            if POSIX.isSymlink(info) {
                links += 1
                guard links <= Self.maximumLinks else { throw SystemFailure(code: ELOOP) }
                guard let target = POSIX.readLink(at: item.fd, "") else { throw SystemFailure(code: errno) }
                var parts = target.split(separator: "/").map(String.init)
                if target.hasPrefix("/") {
                    guard parts.starts(with: rootComponents) else { throw FileProviderError.pathEscapesRoot(path: remotePath) }
                    parts.removeFirst(rootComponents.count)
                    folders = [rootFolder]
                }
                pending.append(contentsOf: parts.reversed())
                continue
            }
            if isLast { return LocalLocation(folder: folder, name: component) }
            guard POSIX.isDirectory(info) else { throw SystemFailure(code: ENOTDIR) }
            folders.append(item)
        }
        // The path ended on a folder reached through `.` or `..` in a link target.
        return LocalLocation(folder: folders[folders.count - 1], name: ".")
    }
}
