import CFuse
import Foundation
import GatewayCore
import GatewayState

/// An open folder: its listing read a page at a time as the kernel asks (`readdirplus`), never
/// held whole.
///
/// Positions: 0 is `.`, 1 is `..`, and `2 + i` the listing's `i`-th entry; each entry handed to
/// the kernel carries the position after it, where the next request starts. A request for a
/// position before the page at hand (a program that rewinds) lists the folder again from the
/// start. Requests of one handle run one at a time (``AsyncLock``).
final class FolderReader: @unchecked Sendable {
    static let pageSize = 512

    let provider: any FileProviderBasic
    let path: String
    let inode: UInt64

    /// Held while a request uses the state below (which nothing else touches).
    private let lock = AsyncLock()
    private var pages: DirectoryListing.AsyncIterator?
    private var page: [FileObject] = []
    /// The listing index of `page[0]`.
    private var pageStart = 0
    private var finished = false
    /// Whether a name was left out of this listing already (said once).
    private var refusedNames = false
    /// The names of the pass that started at the listing's first entry (`nil` past the limit, or
    /// for a pass that started elsewhere), and the count of remote changes applied when it began.
    private var passNames: Set<String>?
    private var passItems: [FileObject] = []
    private var passChanges: UInt64 = 0
    /// Offline: the folder's stored listing (``FolderListings``), read instead of the remote's.
    private var stored: [FileObject]?

    init(provider: any FileProviderBasic, path: String, inode: UInt64) {
        self.provider = provider
        self.path = path
        self.inode = inode
    }

    /// Entries from `offset` for a reply of at most `size` bytes, each with its attributes; the
    /// kernel gains a reference to each entry's inode (`.` and `..` aside).
    func fill(request: FUSERequest, offset: Int64, size: Int, plus: Bool, fileSystem: MountFileSystem) async throws -> Data {
        try await lock.withLock { try await locked(request: request, offset: offset, size: size, plus: plus, fileSystem: fileSystem) }
    }

    private func locked(request: FUSERequest, offset: Int64, size: Int, plus: Bool, fileSystem: MountFileSystem) async throws -> Data {
        self.fileSystem = fileSystem
        var buffer = [CChar](repeating: 0, count: size)
        var used = 0
        var position = Int(clamping: max(0, offset))
        let timeout = fileSystem.timeout
        while true {
            var entry = fuse_entry_param()
            let name: String
            var item: FileObject?
            if position < 2 {
                name = position == 0 ? "." : ".."
                entry.attr.st_ino = __ino_t(position == 0 ? inode : 1)
                entry.attr.st_mode = S_IFDIR
            } else {
                guard let next = try await listed(at: position - 2) else { break }
                // A name no Linux file can have, or one with control characters (a newline in a
                // name breaks scripts and terminals), is left out: a remote cannot make programs see it.
                guard Self.isAcceptableName(next.name) else {
                    if !refusedNames {
                        refusedNames = true
                        fileSystem.logger.warning("left out names with a control character or '/' in this folder",
                                                  metadata: ["folder": .string(path.debugDescription), "first": .string(next.name.debugDescription)])
                    }
                    position += 1
                    continue
                }
                name = next.name
                item = next
            }
            if let item {
                // Made (or given one more reference) only once it fits: the kernel counts what it receives.
                entry.attr = fileSystem.attributes(of: item, inode: 0)
                if let known = fileSystem.table.withLock({ $0.inode(of: item.name, in: inode) }) {
                    entry.attr = fileSystem.attributes(of: known)
                }
            }
            if !plus {
                // Names and types only: no inode is made (the number shown is the known one, or
                // one derived from the name, never 0, which some programs skip).
                var attributes = stat()
                if let item {
                    let known = fileSystem.table.withLock { $0.inode(of: item.name, in: inode) }
                    attributes.st_ino = __ino_t(known ?? (UInt64(truncatingIfNeeded: item.name.hashValue) | 1 << 63))
                    attributes.st_mode = item.isDirectory ? S_IFDIR : item.isSymbolicLink ? S_IFLNK : S_IFREG
                } else {
                    attributes = entry.attr
                }
                let needed = fuse_add_direntry(request.raw, nil, 0, name, &attributes, off_t(position + 1))
                guard used + needed <= size else { break }
                buffer.withUnsafeMutableBufferPointer { pointer in
                    _ = fuse_add_direntry(request.raw, pointer.baseAddress! + used, size - used, name, &attributes, off_t(position + 1))
                }
                used += needed
                position += 1
                continue
            }
            let needed = fuse_add_direntry_plus(request.raw, nil, 0, name, &entry, off_t(position + 1))
            guard used + needed <= size else { break }
            if let item {
                let child = fileSystem.table.withLock { table -> UInt64 in
                    // A file written through the mount keeps what the mount knows of it.
                    if let known = table.inode(of: item.name, in: inode), fileSystem.dirty.withLock({ $0[known] }) != nil {
                        return table.remember(table.node(known)!.item, as: item.name, in: inode)
                    }
                    return table.remember(item, as: item.name, in: inode)
                }
                entry.ino = fuse_ino_t(child)
                entry.attr.st_ino = __ino_t(child)
                entry.attr_timeout = timeout
                entry.entry_timeout = timeout
            }
            buffer.withUnsafeMutableBufferPointer { pointer in
                _ = fuse_add_direntry_plus(request.raw, pointer.baseAddress! + used, size - used, name, &entry, off_t(position + 1))
            }
            used += needed
            position += 1
        }
        return buffer.withUnsafeBufferPointer { Data(buffer: UnsafeBufferPointer(start: $0.baseAddress, count: used)) }
    }

    /// Whether the mount shows this name: not empty, `.` or `..`, at most 255 bytes, no `/` and
    /// no control characters (C0 and DEL).
    static func isAcceptableName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && name.utf8.count <= 255
            && !name.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "/") }
    }

    /// The listing's entry `index`, reading pages up to it (from the start again for an earlier
    /// one); `nil` past the end.
    /// Files created through the mount and not yet uploaded, listed after the remote's entries.
    private var localOnly: [FileObject]?
    private var fileSystem: MountFileSystem?

    private func listed(at index: Int) async throws -> FileObject? {
        if let entry = try await remote(at: index) { return entry }
        // Past the remote's listing: the files only the mount has so far, taken once per pass.
        if localOnly == nil, let fileSystem {
            let folder = inode
            let dirty = fileSystem.dirty.withLock { Array($0.values) }.filter { !$0.snapshot.existsRemotely && !$0.snapshot.removed }
            localOnly = fileSystem.table.withLock { table in
                dirty.compactMap { file in
                    table.node(file.inode).flatMap { node in
                        guard node.parent == folder else { return nil }
                        var item = node.item
                        item.name = node.name
                        return item
                    }
                }
            }
        }
        let local = index - (pageStart + page.count)
        guard let localOnly, local >= 0, local < localOnly.count else { return nil }
        return localOnly[local]
    }

    /// The remote's listing ended: a full pass with no remote change applied meanwhile tells the
    /// folder's names (with the files only the mount has so far), while changes are followed.
    private func passEnded() {
        guard let fileSystem, fileSystem.followingChanges, var names = passNames,
              fileSystem.remoteChanges.withLock({ $0 }) == passChanges else { return }
        passNames = nil
        // Kept for work offline (the monitor keeps it true from now on), written in order with
        // the monitor's changes but not before this reply.
        if let listings = fileSystem.listings {
            let (folder, items, logger) = (path, passItems, fileSystem.logger)
            fileSystem.listingWrites.async {
                do {
                    try listings.replace(folder: folder, with: items)
                } catch {
                    logger.debug("a listing was not kept", metadata: ["folder": .string(folder), "error": .string("\(error)")])
                }
            }
        }
        passItems = []
        let folder = inode
        let dirty = fileSystem.dirty.withLock { Array($0.values) }.filter { !$0.snapshot.existsRemotely && !$0.snapshot.removed }
        fileSystem.table.withLock { table in
            for file in dirty { if let node = table.node(file.inode), node.parent == folder { names.insert(node.name) } }
        }
        fileSystem.known.withLock { $0.listed(folder, names: names) }
    }

    private func remote(at index: Int) async throws -> FileObject? {
        if index < pageStart || (pages == nil && stored == nil) {
            page = []
            pageStart = 0
            finished = false
            localOnly = nil
            passItems = []
            if let fileSystem, !fileSystem.connectivity.isOnline {
                // Offline: the last listing the mount kept, as the mount's own changes left it.
                guard let kept = try fileSystem.listings?.items(in: path) else { throw POSIXError(.EHOSTUNREACH) }
                stored = kept
                page = kept
                finished = true
                pages = nil
                passNames = nil
            } else {
                stored = nil
                pages = provider.contentsOfDirectory(path: path, pageSize: Self.pageSize, details: .sourceStamps).makeAsyncIterator()
                passNames = index == 0 ? [] : nil
                passChanges = fileSystem?.remoteChanges.withLock { $0 } ?? 0
            }
        }
        while index >= pageStart + page.count {
            if finished { return nil }
            guard let next = try await pages?.next() else {
                finished = true
                passEnded()
                return nil
            }
            pageStart += page.count
            page = next.entries
            if passNames != nil {
                passNames?.formUnion(next.entries.map(\.name))
                passItems += next.entries.filter { Self.isAcceptableName($0.name) }
                if passNames?.count ?? 0 > KnownFolders.limit {
                    passNames = nil
                    passItems = []
                }
            }
            if next.isLast {
                finished = true
                passEnded()
            }
        }
        return page[index - pageStart]
    }
}
