import Foundation
import GatewayCore

/// The items the kernel knows by inode number, as `(parent, name)` links with the kernel's lookup
/// counts: a value type, kept behind the file system's lock.
///
/// An inode is made when the kernel first learns a name (a `lookup`, or an entry of `readdirplus`)
/// and lives while the kernel holds references to it: every reply that hands out an entry adds one,
/// the kernel's `forget` takes them back, and at zero the inode is dropped. So the table holds what
/// the kernel caches, not the tree: a walk of a 100,000-item tree keeps only what the kernel
/// keeps. The mount itself holds the inodes of files it still has to upload (``hold(_:)``), and a
/// folder stays while anything below it does, so such a file's path is known until it is sent,
/// even once the kernel forgot it (after a conflict renamed it, or at unmount). The root (inode 1)
/// is never dropped. Paths are derived from the links, so renaming a
/// folder moves everything below it in one step.
struct InodeTable {
    /// The root's inode number, fixed by FUSE.
    static let root: UInt64 = 1

    struct Node {
        /// The folder holding it (the root is its own parent).
        var parent: UInt64
        /// Its name in that folder (empty for the root).
        var name: String
        /// What the remote last said of it, kept small (``Placeholder``).
        var placeholder: Placeholder
        /// The placeholder as an item (without path or name: those come from the links).
        var item: FileObject {
            get { placeholder.item }
            set { placeholder = Placeholder(newValue) }
        }
        /// References the kernel holds (lookups not yet forgotten).
        var lookups: UInt64
        /// References the mount holds (``hold(_:)``).
        var holds: Int32 = 0
        /// Inodes in the table whose parent this is.
        var children: Int32 = 0
    }

    private struct Link: Hashable {
        var parent: UInt64
        var name: String
    }

    private var nodes: [UInt64: Node] = [:]
    private var links: [Link: UInt64] = [:]
    private var next: UInt64 = 2
    /// The remote path the mount shows at its root.
    let rootPath: String

    /// A table whose root shows `rootItem` (a folder) at `rootPath`.
    init(rootPath: String, rootItem: FileObject) {
        self.rootPath = rootPath
        nodes[Self.root] = Node(parent: Self.root, name: "", placeholder: Placeholder(rootItem), lookups: 1)
    }

    /// How many inodes are known (the root included).
    var count: Int { nodes.count }

    func node(_ inode: UInt64) -> Node? { nodes[inode] }

    /// The remote path of an inode, from its links (`nil` once dropped).
    func path(of inode: UInt64) -> String? {
        var names: [String] = []
        var current = inode
        while current != Self.root {
            guard let node = nodes[current] else { return nil }
            names.append(node.name)
            current = node.parent
        }
        var path = rootPath
        for name in names.reversed() { path = path == "/" ? "/" + name : path + "/" + name }
        return path
    }

    /// The remote path of `name` in the folder `parent`.
    func path(of name: String, in parent: UInt64) -> String? {
        path(of: parent).map { $0 == "/" ? "/" + name : $0 + "/" + name }
    }

    /// The inode of `name` in `parent`, if the kernel knows it.
    func inode(of name: String, in parent: UInt64) -> UInt64? {
        links[Link(parent: parent, name: name)]
    }

    /// The known inodes along a remote path: the folder holding its last name (if the kernel
    /// knows it), that name, and the item's own inode (if known). `nil` for a path outside the
    /// mount or for the root itself.
    func resolve(_ path: String) -> (parent: UInt64?, name: String, inode: UInt64?)? {
        let prefix = rootPath == "/" ? "/" : rootPath + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        let names = path.dropFirst(prefix.count).split(separator: "/").map(String.init)
        guard let last = names.last else { return nil }
        var current: UInt64? = Self.root
        for name in names.dropLast() {
            current = current.flatMap { links[Link(parent: $0, name: name)] }
        }
        return (current, last, current.flatMap { links[Link(parent: $0, name: last)] })
    }

    /// The kernel's file type of an item type (a file and an unknown item are both files).
    static func kind(_ type: FileObjectType) -> Int {
        switch type {
        case .directory: 1
        case .symbolicLink: 2
        case .file, .other: 0
        }
    }

    /// Records that the kernel was handed `item` as `name` in `parent`: its inode (made if new,
    /// remade if the name now holds an item of another type), with one more lookup.
    mutating func remember(_ item: FileObject, as name: String, in parent: UInt64) -> UInt64 {
        let link = Link(parent: parent, name: name)
        let placeholder = Placeholder(item)
        // The kernel's inode keeps its type (a file, a folder, a link) for life.
        if let existing = links[link], var node = nodes[existing], Self.kind(node.placeholder.type) == Self.kind(item.type) {
            node.placeholder = placeholder
            node.lookups &+= 1
            nodes[existing] = node
            return existing
        }
        if let stale = links[link] { unlink(stale) }
        let inode = next
        next += 1
        nodes[inode] = Node(parent: parent, name: name, placeholder: placeholder, lookups: 1)
        nodes[parent]?.children += 1
        links[link] = inode
        return inode
    }

    /// Replaces what is known of an inode's item (after a `getattr` asked the remote).
    mutating func update(_ inode: UInt64, item: FileObject) {
        nodes[inode]?.placeholder = Placeholder(item)
    }

    /// The kernel's `forget`: drops `count` references; an inode without any is dropped.
    mutating func forget(_ inode: UInt64, count: UInt64) {
        guard inode != Self.root, var node = nodes[inode] else { return }
        node.lookups = node.lookups > count ? node.lookups - count : 0
        nodes[inode] = node
        dropIfUnused(inode)
    }

    /// The inode of `path` (under the root), made if needed with its folders, held by the mount
    /// (``hold(_:)``) rather than looked up by the kernel: a file an earlier mount still has to
    /// upload, when this one starts offline. `nil` for a path outside the root.
    mutating func holdPath(_ path: String, item: FileObject) -> UInt64? {
        let prefix = rootPath == "/" ? "/" : rootPath + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        let names = path.dropFirst(prefix.count).split(separator: "/").map(String.init)
        var parent = Self.root
        var walked = rootPath == "/" ? "" : rootPath
        for name in names.dropLast() {
            walked += "/" + name
            if let existing = links[Link(parent: parent, name: name)] {
                parent = existing
                continue
            }
            let inode = next
            next += 1
            nodes[inode] = Node(parent: parent, name: name, placeholder: Placeholder(FileObject(path: walked, type: .directory)), lookups: 0)
            nodes[parent]?.children += 1
            links[Link(parent: parent, name: name)] = inode
            parent = inode
        }
        let name = names.last!
        let inode: UInt64
        if let existing = links[Link(parent: parent, name: name)] {
            inode = existing
            nodes[inode]?.placeholder = Placeholder(item)
        } else {
            inode = next
            next += 1
            nodes[inode] = Node(parent: parent, name: name, placeholder: Placeholder(item), lookups: 0)
            nodes[parent]?.children += 1
            links[Link(parent: parent, name: name)] = inode
        }
        hold(inode)
        return inode
    }

    /// The mount needs `inode`'s path until ``release(_:)`` (a file it still has to upload).
    mutating func hold(_ inode: UInt64) {
        nodes[inode]?.holds += 1
    }

    /// Undoes one ``hold(_:)``.
    mutating func release(_ inode: UInt64) {
        guard let node = nodes[inode], node.holds > 0 else { return }
        nodes[inode]?.holds -= 1
        dropIfUnused(inode)
    }

    /// Drops an inode nobody references (the kernel, the mount, an inode below it), then its
    /// folder if that was all that kept it.
    private mutating func dropIfUnused(_ inode: UInt64) {
        var current = inode
        while current != Self.root, let node = nodes[current], node.lookups == 0, node.holds == 0, node.children <= 0 {
            nodes[current] = nil
            let link = Link(parent: node.parent, name: node.name)
            if links[link] == current { links[link] = nil }
            nodes[node.parent]?.children -= 1
            current = node.parent
        }
    }

    /// Gives an inode a new name (a rename through the mount); whatever held that name before
    /// loses it. Everything below a folder moves with it.
    mutating func move(_ inode: UInt64, to name: String, in parent: UInt64) {
        guard var node = nodes[inode] else { return }
        let old = Link(parent: node.parent, name: node.name)
        if links[old] == inode { links[old] = nil }
        let new = Link(parent: parent, name: name)
        if let previous = links[new], previous != inode { unlink(previous) }
        let oldParent = node.parent
        node.parent = parent
        node.name = name
        nodes[inode] = node
        links[new] = inode
        if oldParent != parent {
            nodes[parent]?.children += 1
            nodes[oldParent]?.children -= 1
            dropIfUnused(oldParent)
        }
    }

    /// Removes the name of an inode (the item is gone or replaced): the kernel may still hold
    /// the inode until it forgets it, but lookups of the name no longer find it.
    mutating func unlink(_ inode: UInt64) {
        guard let node = nodes[inode] else { return }
        let link = Link(parent: node.parent, name: node.name)
        if links[link] == inode { links[link] = nil }
    }
}

/// What the mount keeps of an item: its type, size, modification time, version tag and stamped
/// time (the source stamp's time), in 48 bytes (numbers with sentinels, no optionals). Its path
/// and name come from the table's links; a listing's extras (hashes, properties, content type)
/// are not kept, so a walk of a large tree holds little per item the kernel keeps.
struct Placeholder {
    private var kind: UInt8
    /// The size, -1 where unknown.
    private var bytes: Int64
    /// Seconds since 1970, NaN where unknown.
    private var modifiedSeconds: Double
    private var stampedSeconds: Double
    private var version: String?

    init(_ item: FileObject) {
        kind = switch item.type {
        case .file: 0
        case .directory: 1
        case .symbolicLink: 2
        case .other: 3
        }
        bytes = item.sizeShown.map { max($0, -1) } ?? -1
        modifiedSeconds = item.modificationDate?.timeIntervalSince1970 ?? .nan
        stampedSeconds = item.sourceStamp?.modificationDate?.timeIntervalSince1970 ?? .nan
        version = item.versionTag
    }

    var type: FileObjectType {
        switch kind {
        case 0: .file
        case 1: .directory
        case 2: .symbolicLink
        default: .other
        }
    }

    var item: FileObject {
        FileObject(path: "", type: type, size: bytes >= 0 ? bytes : nil,
                   modificationDate: modifiedSeconds.isNaN ? nil : Date(timeIntervalSince1970: modifiedSeconds), versionTag: version,
                   sourceStamp: stampedSeconds.isNaN ? nil : SourceStamp(modificationDate: Date(timeIntervalSince1970: stampedSeconds)))
    }
}

extension FileObject {
    /// The size the kernel is shown: a symbolic link's is its target's length (what `lstat` says
    /// on a local file system) where the listing gave the target, not the size of what it leads
    /// to; anything else's is its size.
    var sizeShown: Int64? {
        guard isSymbolicLink, let target = extraProperties["symlink_target"] else { return size }
        return Int64(target.utf8.count)
    }
}
