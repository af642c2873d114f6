#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
public import GatewayCore

extension LocalFileProvider {
    public func contentsOfDirectory(path: String, pageSize: Int) -> DirectoryListing {
        let remote: String
        do {
            remote = try RemotePath.normalize(path)
        } catch {
            return DirectoryListing(path: path, failure: error)
        }
        let pageSize = max(1, pageSize)
        return DirectoryListing(path: remote, pageSize: pageSize) { [self] in
            var cursor: DirectoryCursor?
            var opened = false
            return {
                if !opened {
                    opened = true
                    let location = try self.locate(remote, followFinalSymlink: true)
                    cursor = try DirectoryCursor(location, remote: remote, provider: self)
                }
                guard let current = cursor else { return nil }
                let (entries, finished) = try current.nextPage(limit: pageSize, folder: remote, provider: self)
                if finished { cursor = nil }
                return ListingPage(entries: entries, isLast: finished)
            }
        }
    }
}

/// An open `DIR*`, closed when the listing finishes or is dropped.
///
/// Pages come in name order (byte order of the UTF-8 names, as `LC_ALL=C ls` sorts), so that a
/// folder lists the same way every time: the names (not the entries) are read first and sorted.
/// A folder of more than ``sortLimit`` entries would hold too many names at once; it is listed in
/// the file system's own order instead (stable while the folder is unchanged), keeping memory bounded.
final class DirectoryCursor {
    private var handle: OpaquePointer?
    /// Names read ahead, handed out before `readdir` goes on (all of them, sorted, in a folder of
    /// at most ``sortLimit`` entries).
    private var readAhead: [String] = []
    private var readAheadIndex = 0
    private var preparedPages = false
    /// Whether `readdir` reached the end while reading ahead.
    private var exhausted = false
    /// The most names sorted: about 6 MB of names.
    static let sortLimit = 100_000

    init(_ handle: OpaquePointer) { self.handle = handle }

    /// Opens the folder at a location (`O_NOFOLLOW`: never a link swapped in since it was resolved).
    convenience init(_ location: LocalLocation, remote: String, provider: LocalFileProvider, writing: Bool = false) throws {
        let fd = location.open(O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw provider.posixError(errno, remote, writing: writing) }
        guard let handle = fdopendir(fd) else {
            let code = errno
            Glibc.close(fd)
            throw provider.posixError(code, remote, writing: writing)
        }
        self.init(handle)
    }

    /// The descriptor of the open folder, for `*at()` calls on its entries (`-1` once closed).
    var fd: Int32 { handle.map { dirfd($0) } ?? -1 }

    /// The next entry's name (without `.` and `..`), or `nil` at the end.
    func nextName(folder: String, provider: LocalFileProvider) throws -> String? {
        guard let handle else { return nil }
        while true {
            errno = 0
            guard let entry = readdir(handle) else {
                if errno != 0 { throw provider.posixError(errno, folder) }
                return nil
            }
            let name = Self.name(of: entry)
            if name != "." && name != ".." { return name }
        }
    }

    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafePointer(to: entry.pointee.d_name) { pointer in
            pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
        }
    }

    deinit { close() }

    func close() {
        if let handle { closedir(handle) }
        handle = nil
    }

    /// Reads the names ahead: all of them, sorted, or (past ``sortLimit``) the first ones as they come.
    private func prepareNames(folder: String, provider: LocalFileProvider) throws {
        preparedPages = true
        var names: [String] = []
        while names.count <= Self.sortLimit {
            guard let name = try nextName(folder: folder, provider: provider) else {
                exhausted = true
                names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                break
            }
            names.append(name)
        }
        readAhead = names
    }

    /// The next name for a page: read ahead first, then from `readdir`.
    private func nextPageName(folder: String, provider: LocalFileProvider) throws -> String? {
        if readAheadIndex < readAhead.count {
            defer { readAheadIndex += 1 }
            return readAhead[readAheadIndex]
        }
        if !readAhead.isEmpty { readAhead = [] }
        return exhausted ? nil : try nextName(folder: folder, provider: provider)
    }

    /// Reads up to `limit` entries; `finished` is `true` once the end of the folder was reached.
    func nextPage(limit: Int, folder: String, provider: LocalFileProvider) throws -> (entries: [FileObject], finished: Bool) {
        guard let handle else { return ([], true) }
        if !preparedPages { try prepareNames(folder: folder, provider: provider) }
        let directoryFD = dirfd(handle)
        var entries: [FileObject] = []
        entries.reserveCapacity(min(limit, 1024))
        while entries.count < limit {
            guard let name = try nextPageName(folder: folder, provider: provider) else {
                close()
                return (entries, true)
            }
            var info = stat()
            guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { continue }  // removed while we were listing
                throw provider.posixError(errno, folder == "/" ? "/" + name : folder + "/" + name)
            }
            let path = folder == "/" ? "/" + name : folder + "/" + name
            if POSIX.isSymlink(info) {
                entries.append(provider.linkObject(path: path, info: info, link: POSIX.readLink(at: directoryFD, name)))
            } else {
                entries.append(POSIX.fileObject(path: path, info: info))
            }
        }
        return (entries, false)
    }
}
