/// Folders whose every name the mount knows, because it made them or listed them in full: a
/// folder created through the mount starts empty, and while the remote's changes are followed,
/// every name that appears in it comes through the mount or through the monitor. A lookup of any other name there is answered
/// "absent" at once, without a request: what makes `git clone`, `cp -r` and `tar x` into a new
/// folder cost one request per file (the upload) instead of two. Offline, it is what lets a
/// program create a file in a folder it listed (the kernel asks whether the name exists first).
///
/// A value type behind the file system's lock. Folders with more than ``limit`` names are let go
/// (lookups there ask the remote again), so memory stays bounded.
struct KnownFolders {
    static let limit = 10_000
    private var names: [UInt64: Set<String>] = [:]

    /// Whether `name` is known to be absent from the folder `inode`.
    func isAbsent(_ name: String, in inode: UInt64) -> Bool {
        names[inode].map { !$0.contains(name) } ?? false
    }

    /// The names known in the folder `inode` (`nil`: not known).
    func names(of inode: UInt64) -> Set<String>? { names[inode] }

    /// The mount made the folder `inode` (empty).
    mutating func made(_ inode: UInt64) { names[inode] = [] }

    /// The folder `inode` was listed in full, with no remote change applied meanwhile: these are
    /// its names (from now on kept true by the mount and the monitor, as for a folder it made).
    mutating func listed(_ inode: UInt64, names listed: Set<String>) {
        guard listed.count <= Self.limit else { return }
        names[inode] = listed
    }

    /// `name` now exists in `folder`.
    mutating func add(_ name: String, in folder: UInt64) {
        guard names[folder] != nil else { return }
        names[folder]?.insert(name)
        if names[folder]?.count ?? 0 > Self.limit { names[folder] = nil }
    }

    /// `name` is gone from `folder`.
    mutating func remove(_ name: String, in folder: UInt64) {
        names[folder]?.remove(name)
    }

    /// Nothing is known of `inode` any more (removed, forgotten, or changed in a way not followed).
    mutating func forget(_ inode: UInt64) { names[inode] = nil }
}
