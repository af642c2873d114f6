import GatewayCore

/// What a tree holds, folder by folder: one listing per folder instead of one lookup per file
/// (rclone's approach), so a tree of small files costs a request per folder, not per file. The copy
/// engine asks it what the destination holds for each source file, and what the source holds for
/// each destination item when it looks for extras (`sync`, `check`).
///
/// Only the most recently used folders are kept (parents-first walks touch a folder's files
/// together), and a folder with more than ``entryLimit`` entries is not kept at all: its files are
/// looked up one by one, so memory stays bounded whatever the folder sizes.
///
/// A name starting with `.` that a listing lacks is looked up directly before it counts as
/// missing: some servers leave such names out of listings (nginx's dav-ext module) though they
/// answer for them, and a copy would otherwise upload them again every time, and a sync delete
/// them as extras. The first one found this way is reported once (``init(provider:root:details:onUnlisted:)``).
actor FolderIndex {
    private let provider: any FileProviderBasic
    private let root: String
    private let details: ListingDetails
    private var folders: [String: Task<[String: FileObject]?, any Error>] = [:]
    private var order: [String] = []
    private let capacity = 16
    static let entryLimit = 50_000
    private let onUnlisted: (@Sendable (String) -> Void)?
    /// Told of each abandoned temporary a listing shows (``TemporaryName``), once per listing.
    private let onLeftover: (@Sendable (FileObject) async -> Void)?
    private var reportedUnlisted = false
    /// Whether a listing here has shown a name starting with `.`: the server lists them, so one
    /// missing from a listing is missing, and needs no look-up of its own.
    private var listsDotNames = false

    /// An index of the tree at `root`; `details` are asked of every listing (a destination's
    /// ``ListingDetails/sourceStamps``, which the comparisons use). `onUnlisted` is told, once,
    /// that a listing left out a name starting with `.` which exists.
    /// `onLeftover` is handed every abandoned temporary (an upload's, left by a run that was
    /// killed) a listing shows.
    init(provider: any FileProviderBasic, root: String, details: ListingDetails = [], onUnlisted: (@Sendable (String) -> Void)? = nil,
         onLeftover: (@Sendable (FileObject) async -> Void)? = nil) {
        self.provider = provider
        self.root = root
        self.details = details
        self.onUnlisted = onUnlisted
        self.onLeftover = onLeftover
    }

    /// The item at `relative` (below the root), or `nil` when there is none.
    func item(at relative: String) async throws -> FileObject? {
        let folder = relative.lastIndex(of: "/").map { String(relative[..<$0]) } ?? ""
        let name = RemotePath.lastComponent(of: "/" + relative)
        if let entries = try await listing(of: folder) {
            if let found = entries[name] { return found }
            guard name.hasPrefix("."), !listsDotNames else { return nil }
            if entries.keys.contains(where: { $0.hasPrefix(".") }) {
                listsDotNames = true
                return nil
            }
            // Not listed, yet perhaps there (a listing without dot files): ask.
            let found = try await lookUp(relative)
            if found != nil, !reportedUnlisted {
                reportedUnlisted = true
                onUnlisted?("\(provider.name): the server's listings leave out names starting with '.'; "
                    + "such names are looked up one by one (docs/backends/webdav.md)")
            }
            return found
        }
        // Too large to keep: ask for this one item.
        return try await lookUp(relative)
    }

    /// The item at `relative` by one lookup, `nil` when there is none.
    private func lookUp(_ relative: String) async throws -> FileObject? {
        do {
            return try await provider.attributesOfItem(path: try RemotePath.join(root, relative))
        } catch where error.failureKind == .notFound || error.failureKind == .notADirectory {
            return nil
        }
    }

    private func listing(of folder: String) async throws -> [String: FileObject]? {
        let task: Task<[String: FileObject]?, any Error>
        if let known = folders[folder] {
            task = known
        } else {
            let provider = self.provider
            let path = try RemotePath.join(root, folder)
            let details = self.details
            let onLeftover = self.onLeftover
            task = Task { () throws -> [String: FileObject]? in
                var entries: [String: FileObject] = [:]
                do {
                    for try await page in provider.contentsOfDirectory(path: path, pageSize: 1000, details: details) {
                        for item in page.entries {
                            if let onLeftover, !item.isDirectory, let temporary = TemporaryName(item.name),
                               temporary.isAbandoned(modified: item.modificationDate) {
                                await onLeftover(item)
                                continue
                            }
                            entries[item.name] = item
                        }
                        if entries.count > Self.entryLimit { return nil }
                    }
                } catch where error.failureKind == .notFound || error.failureKind == .notADirectory {
                    // Nothing there, or a file where the folder would be: it holds nothing.
                    return [:]
                }
                return entries
            }
            folders[folder] = task
            if order.count >= capacity {
                let evicted = order.removeFirst()
                folders[evicted] = nil
            }
        }
        touch(folder)
        do {
            // A waiter that is cancelled stops the listing (which every waiter of this folder shares:
            // they are all in the cancelled run).
            return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        } catch {
            // Not kept: the next look-up in this folder lists it again (a passing failure, say).
            if folders[folder] == task { forget(folder) }
            throw error
        }
    }

    private func forget(_ folder: String) {
        folders[folder] = nil
        order.removeAll { $0 == folder }
    }

    private func touch(_ folder: String) {
        order.removeAll { $0 == folder }
        order.append(folder)
    }
}
