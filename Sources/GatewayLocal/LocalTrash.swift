#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLocalShims
import Foundation
public import GatewayCore

/// The desktop trash a Local remote shares with file managers and `trash-cli`, as the FreeDesktop.org
/// Trash specification lays it out: the home trash (`$XDG_DATA_HOME/Trash`, by default
/// `~/.local/share/Trash`) for items on its file system, and `$topdir/.Trash/$uid` (an
/// administrator's sticky `.Trash`) or `$topdir/.Trash-$uid` at the top of any other file system.
/// Trashing is one `rename(2)`; an item never crosses file systems.
///
/// With `trash_dir` set, one folder below the remote's root is used instead, in the same layout.
struct LocalTrashLocator: TrashLocator {
    let provider: LocalFileProvider
    /// The home trash folder (host path).
    let homeTrash: String
    /// `trash_dir`: a host path below the root that replaces the desktop trashes.
    let configured: String?

    func volume(for path: String) async throws -> any TrashVolume {
        if let configured { return LocalTrashVolume(provider: provider, folder: configured, topdir: nil) }
        // The item's folder decides the file system (a link is renamed, not followed).
        let parent = provider.resolver.lexicalHostPath(RemotePath.parent(of: path))
        guard let device = Self.device(of: parent) else { throw provider.posixError(errno, path) }
        if Self.device(ofNearestExisting: homeTrash) == device {
            return LocalTrashVolume(provider: provider, folder: homeTrash, topdir: nil)
        }
        let topdir = Self.mountPoint(of: parent, device: device)
        return LocalTrashVolume(provider: provider, folder: Self.topdirTrash(topdir), topdir: topdir)
    }

    func volume(identifier: String) async throws -> (any TrashVolume)? {
        if let configured { return identifier == configured ? LocalTrashVolume(provider: provider, folder: configured, topdir: nil) : nil }
        if identifier == homeTrash { return LocalTrashVolume(provider: provider, folder: homeTrash, topdir: nil) }
        let parent = (identifier as NSString).deletingLastPathComponent
        let name = (identifier as NSString).lastPathComponent
        if name == ".Trash-\(getuid())" { return LocalTrashVolume(provider: provider, folder: identifier, topdir: parent) }
        if name == "\(getuid())", (parent as NSString).lastPathComponent == ".Trash" {
            return LocalTrashVolume(provider: provider, folder: identifier, topdir: (parent as NSString).deletingLastPathComponent)
        }
        return nil
    }

    func volumes(under path: String) async throws -> [any TrashVolume] {
        if let configured { return [LocalTrashVolume(provider: provider, folder: configured, topdir: nil)] }
        var volumes: [any TrashVolume] = []
        if Self.isPrivateFolder(homeTrash) {
            volumes.append(LocalTrashVolume(provider: provider, folder: homeTrash, topdir: nil))
        }
        // The file system of the folder asked about (a bare path's provider is rooted at `/`).
        var folder = provider.resolver.lexicalHostPath((try? RemotePath.normalize(path)) ?? "/")
        while Self.device(of: folder) == nil, folder != "/" { folder = (folder as NSString).deletingLastPathComponent }
        if let device = Self.device(of: folder), Self.device(ofNearestExisting: homeTrash) != device {
            let topdir = Self.mountPoint(of: folder, device: device)
            for folder in [topdir == "/" ? "/.Trash/\(getuid())" : "\(topdir)/.Trash/\(getuid())", Self.join(topdir, ".Trash-\(getuid())")]
            where Self.isPrivateFolder(folder) {
                volumes.append(LocalTrashVolume(provider: provider, folder: folder, topdir: topdir))
            }
        }
        return volumes
    }

    /// A `trash_dir` folder, or a top-folder trash (`.Trash-$uid`, `.Trash`) at the top of a file system.
    func isTrashFolder(_ path: String) -> Bool {
        let host = provider.resolver.lexicalHostPath(path)
        if let configured { return host == configured }
        if host == homeTrash { return true }
        let name = (host as NSString).lastPathComponent
        guard name == ".Trash-\(getuid())" || name == ".Trash" else { return false }
        let top = (host as NSString).deletingLastPathComponent
        guard top != "/" else { return true }
        let above = (top as NSString).deletingLastPathComponent
        return Self.device(of: top) != Self.device(of: above.isEmpty ? "/" : above)
    }

    /// `$topdir/.Trash/$uid` when an administrator made `$topdir/.Trash` (a real folder with the
    /// sticky bit), else `$topdir/.Trash-$uid`.
    static func topdirTrash(_ topdir: String) -> String {
        let shared = join(topdir, ".Trash")
        if let info = POSIX.status(shared, followSymlinks: false), POSIX.isDirectory(info), info.st_mode & S_ISVTX != 0 {
            return "\(shared)/\(getuid())"
        }
        return join(topdir, ".Trash-\(getuid())")
    }

    /// The home trash: `$XDG_DATA_HOME/Trash`, or `$HOME/.local/share/Trash`.
    static func homeTrash(environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return join(data, "Trash") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return join(home, ".local/share/Trash")
    }

    /// A real folder (not a link), owned by this user, that no one else can write to: the only
    /// kind of trash folder used, as GIO checks.
    static func isPrivateFolder(_ path: String) -> Bool {
        guard let info = POSIX.status(path, followSymlinks: false), POSIX.isDirectory(info) else { return false }
        return info.st_uid == getuid() && info.st_mode & 0o022 == 0
    }

    static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    static func device(of path: String) -> dev_t? {
        POSIX.status(path, followSymlinks: true)?.st_dev
    }

    /// The device of `path`, or of its nearest existing ancestor (a home trash not made yet).
    static func device(ofNearestExisting path: String) -> dev_t? {
        var probe = path
        while true {
            if let device = device(of: probe) { return device }
            if probe == "/" || probe.isEmpty { return nil }
            probe = (probe as NSString).deletingLastPathComponent
        }
    }

    /// The top folder of the file system holding `path`: the highest ancestor on the same device.
    static func mountPoint(of path: String, device: dev_t) -> String {
        var current = path
        while current != "/" {
            let parent = (current as NSString).deletingLastPathComponent
            guard let parentDevice = Self.device(of: parent.isEmpty ? "/" : parent), parentDevice == device else { return current }
            current = parent.isEmpty ? "/" : parent
        }
        return "/"
    }
}

/// One FreeDesktop trash folder on this machine (host paths), with items moved in and out of the
/// Local remote by `renameat`.
struct LocalTrashVolume: TrashVolume {
    let provider: LocalFileProvider
    /// The trash folder (host path).
    let folder: String
    /// The top folder of the file system for relative `Path`s (`$topdir/.Trash-$uid`); `nil`: absolute.
    let topdir: String?

    var identifier: String { folder }
    var folderPath: String? { provider.resolver.remotePath(ofHostPath: folder) }

    private var files: String { folder + "/files" }
    private var infos: String { folder + "/info" }

    private func fail(_ code: Int32 = errno, _ path: String) -> CocoaError {
        CocoaError.posix(code, path: path, remote: provider.name, writing: true)
    }

    /// Makes the trash folders (mode 0700, as the specification asks); a link in their place is refused.
    private func makeFolders() throws {
        for path in [folder, files, infos] {
            if mkdir(path, 0o700) != 0, errno != EEXIST {
                if errno == ENOENT, path == folder {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])
                    continue
                }
                throw fail(errno, path)
            }
            guard LocalTrashLocator.isPrivateFolder(path) else {
                // Another user may have made it on a shared file system (the sticky .Trash lets
                // anyone): what went there would be theirs to read or swap.
                throw CocoaError.described(.fileWriteUnknown, path: path, remote: provider.name,
                                           reason: "trash folder \(path) is not a folder of this user's own that only they can write to; not using it")
            }
        }
    }

    /// `NAME`, `NAME.2`, …: the record `info/NAME.trashinfo` is created exclusively (`O_EXCL`),
    /// which claims the name, as the specification asks.
    func reserve(_ info: TrashInfo, base: String, attempt: Int) async throws -> String? {
        try makeFolders()
        let name = Trash.candidate(base, attempt: attempt)
        let path = "\(infos)/\(name).trashinfo"
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST { return nil }
            throw fail(errno, path)
        }
        let failure = FileDescriptorIO.writeAll(fd, info.encoded())
        let closed = Glibc.close(fd)
        if failure != 0 || closed != 0 {
            unlink(path)
            throw fail(failure != 0 ? failure : errno, path)
        }
        // A file left in `files/` without its record (another tool's crash) keeps its name.
        if POSIX.status("\(files)/\(name)", followSymlinks: false) != nil {
            unlink(path)
            return nil
        }
        return name
    }

    func info(of name: String) async throws -> TrashInfo {
        let path = "\(infos)/\(name).trashinfo"
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError.posix(errno, path: path, remote: provider.name) }
        defer { Glibc.close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 { throw CocoaError.posix(errno, path: path, remote: provider.name) }
            if count == 0 { return try TrashInfo.parse(data, name: name) }
            data.append(contentsOf: buffer[..<count])
            if data.count > TrashInfo.maximumSize { throw CocoaError(.fileReadTooLarge) }
        }
    }

    func removeInfo(of name: String) async throws {
        if unlink("\(infos)/\(name).trashinfo") != 0, errno != ENOENT { throw fail(errno, infos) }
    }

    /// The records in `info/`, as read (an item is listed by its record, as the specification asks).
    func entries() -> PullSequence<TrashEntry> {
        let infos = infos
        return PullSequence {
            let handle = opendir(infos)
            let cursor = handle.map(DirectoryCursor.init)
            return {
                guard let cursor else { return nil }  // no trash yet
                while let name = try cursor.nextName(folder: "/", provider: provider) {
                    if name.hasSuffix(".trashinfo"), name.count > ".trashinfo".count {
                        return TrashEntry(name: String(name.dropLast(".trashinfo".count)))
                    }
                }
                return nil
            }
        }
    }

    func moveIn(_ path: String, as name: String) async throws -> String {
        let location = try provider.locate(path, followFinalSymlink: false, writing: true)
        guard location.name != "." else { throw FileProviderError.invalidPath(path: path, reason: "cannot trash the folder a link points into") }
        let target = "\(files)/\(name)"
        if clocal_rename_noreplace(location.fd, location.name, AT_FDCWD, target) == 0 { return name }
        var failure = errno
        if failure == EINVAL || failure == ENOSYS {
            if POSIX.status(target, followSymlinks: false) != nil { throw fail(EEXIST, target) }
            if renameat(location.fd, location.name, AT_FDCWD, target) == 0 { return name }
            failure = errno
        }
        if failure == EXDEV {
            throw CocoaError.described(.fileWriteUnknown, path: path, remote: provider.name,
                                       reason: "the trash \(folder) is on another mount; moving there would copy (use --no-trash, or set trash_dir)")
        }
        throw provider.posixError(failure, path, writing: true)
    }

    func moveOut(_ name: String, to path: String) async throws {
        let location = try provider.locate(path, followFinalSymlink: false, writing: true)
        let source = "\(files)/\(name)"
        if clocal_rename_noreplace(AT_FDCWD, source, location.fd, location.name) == 0 { return }
        var failure = errno
        if failure == EINVAL || failure == ENOSYS {
            if location.status() != nil { throw provider.posixError(EEXIST, path, writing: true) }
            if renameat(AT_FDCWD, source, location.fd, location.name) == 0 { return }
            failure = errno
        }
        if failure == ENOENT, POSIX.status(source, followSymlinks: false) == nil {
            throw CocoaError.posix(ENOENT, path: source, remote: provider.name)
        }
        throw provider.posixError(failure, path, writing: true)
    }

    func attributes(of name: String) async throws -> FileObject? {
        guard let info = POSIX.status("\(files)/\(name)", followSymlinks: false) else { return nil }
        return POSIX.fileObject(path: "/" + name, info: info)
    }

    func removeContent(of name: String) async throws {
        let path = "\(files)/\(name)"
        guard LocalTrashLocator.isPrivateFolder(folder), LocalTrashLocator.isPrivateFolder(files) else {
            throw CocoaError.described(.fileWriteUnknown, path: files, remote: provider.name,
                                       reason: "trash folder \(files) is not a folder of this user's own; not removing anything in it")
        }
        guard POSIX.status(path, followSymlinks: false) != nil else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw CocoaError.described(.fileWriteUnknown, path: path, remote: provider.name, reason: ErrorMessage.reason(for: error))
        }
    }

    func recordedPath(for path: String) -> String {
        let host = provider.resolver.lexicalHostPath(path)
        guard let topdir else { return host }
        if topdir == "/" { return String(host.dropFirst()) }
        return RemotePath.relative(host, to: topdir) ?? host
    }

    func providerPath(forRecorded recorded: String) -> String? {
        let host = recorded.hasPrefix("/") ? recorded : LocalTrashLocator.join(topdir ?? "/", recorded)
        return provider.resolver.remotePath(ofHostPath: host)
    }
}

extension LocalFileProvider: FileProviderUndoable {
    /// The desktop trash (FreeDesktop layout, shared with file managers and `trash-cli`), or the
    /// `trash_dir` folder; `nil` with `trash: false`.
    public var trash: Trash? {
        guard trashSettings.enabled else { return nil }
        let configured = trashSettings.folder.flatMap { try? TrashSettings(folder: $0).folderPath() }.map(resolver.lexicalHostPath)
        return Trash(locator: LocalTrashLocator(provider: self, homeTrash: homeTrash, configured: configured))
    }
}
