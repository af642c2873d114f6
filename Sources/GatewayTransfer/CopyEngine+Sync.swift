import GatewayCore
import Synchronization

extension CopyEngine {
    /// Deletes what the destination has and the source lacks, only when every copy succeeded.
    func deleteExtras(from source: TransferEndpoint, to destination: TransferEndpoint, state: RunState) async throws {
        let failures = state.summary.failed
        guard failures == 0 else {
            state.event(.notice("not deleting anything at the destination: \(failures) item(s) failed in this run"))
            return
        }
        guard let remover = destination.provider as? any FileProviderOperations else { return }
        // First find the extras (a folder counts once, its contents go with it), then delete them:
        // deleting while walking would pull folders from under the walk. The source is looked up
        // through a folder index: one listing per source folder, not one request per item.
        let sourceIndex = FolderIndex(provider: source.provider, root: source.path) { state.event(.detail($0)) }
        // The destination's trash (and temporaries) stay: never extras.
        var filter = await TreeFilter([destination.provider])
        var extras: [FileObject] = []
        var extraFolders: Set<String> = []
        do {
            for try await item in destination.provider.walk(path: destination.path) {
                try Task.checkCancellation()
                guard let relative = RemotePath.relative(item.path, to: destination.path), !relative.isEmpty else { continue }
                if filter.skips(item) || Self.lies(relative, inAnyOf: extraFolders) { continue }
                let counterpart = try await sourceIndex.item(at: relative)
                if let counterpart, counterpart.isDirectory == item.isDirectory { continue }
                if item.isDirectory { extraFolders.insert(relative) }
                // With --hash-shard, each worker deletes the extras whose path falls into its shard
                // (a folder with its contents).
                if let shard = options.hashShard, !shard.contains(relative) { continue }
                extras.append(item)
            }
        } catch where error.failureKind == .notFound {
            return  // no destination folder yet: nothing to delete
        }
        for item in extras {
            let relative = RemotePath.relative(item.path, to: destination.path) ?? item.path
            if options.dryRun {
                state.deleted(relative, planned: true)
                continue
            }
            do {
                try await removeExtra(item, on: remover)
                state.deleted(relative)
            } catch where error.failureKind == .notFound {
                continue
            } catch {
                state.fail(relative, operation: "delete", side: .destination, error: error)
            }
        }
    }

    /// Whether the relative path `relative` lies below one of `folders` (relative paths too).
    static func lies(_ relative: String, inAnyOf folders: Set<String>) -> Bool {
        guard !folders.isEmpty else { return false }
        var ancestor = Substring(relative)
        while let slash = ancestor.lastIndex(of: "/") {
            ancestor = ancestor[..<slash]
            if folders.contains(String(ancestor)) { return true }
        }
        return false
    }

    /// Compares two trees (or files): what is missing, extra or different at the destination.
    /// Files are compared by size, and by modification time too when both sides keep exact times;
    /// with ``CopyOptions/checksum``, files of the same size by content hash instead. Each side is
    /// looked up through a folder index (one listing per folder), never one request per file, and
    /// ``CopyOptions/checkers`` files are compared at once (hashing is a request or a read per file).
    /// The report's lists are sorted.
    public func check(source: TransferEndpoint, destination: TransferEndpoint) async throws -> CheckReport {
        let root = try await source.provider.attributesOfItem(path: source.path)
        guard root.isDirectory else {
            var report = CheckReport()
            if let notice = checksumNotice(source, destination) { report.notices.append(notice) }
            let comparer = FileComparer(engine: self, source: source, destination: destination, index: nil)
            comparer.record(await comparer.compare(root, relative: root.name, at: destination.path), root.name, into: &report)
            return report
        }
        let filter = await TreeFilter([source.provider])
        let landingFilter = await TreeFilter([destination.provider])
        let shard = options.hashShard
        var report = try await compareFiles(source: source, destination: destination) { queue in
            var sourceFilter = filter
            var landing = landingFilter
            for try await item in source.provider.walk(path: source.path) {
                try Task.checkCancellation()
                guard let relative = RemotePath.relative(item.path, to: source.path) else { continue }
                if sourceFilter.skips(item, relative: relative, landingIn: destination.path, on: &landing) || item.isDirectory || item.isLinkToFolder {
                    continue
                }
                if let shard, !shard.contains(relative) { continue }
                await queue.send((item, relative))
            }
        }
        let extras = try await findExtraFiles(source: source, destination: destination)
        report.extra = extras.extra
        report.details += extras.details.filter { !report.details.contains($0) }
        report.extra.sort()
        return report
    }

    /// Compares the files `feed` sends (source items with their paths relative to the source)
    /// with the destination: `checkers` at once, each looked up through a folder index. The
    /// report has no extras; its lists are sorted.
    func compareFiles(source: TransferEndpoint, destination: TransferEndpoint,
                      feed: @escaping @Sendable (WorkQueue<(item: FileObject, relative: String)>) async throws -> Void) async throws -> CheckReport {
        var report = CheckReport()
        if let notice = checksumNotice(source, destination) { report.notices.append(notice) }
        let details = Details()
        let destinationIndex = FolderIndex(provider: destination.provider, root: destination.path, details: .sourceStamps, onUnlisted: details.add)
        let comparer = FileComparer(engine: self, source: source, destination: destination, index: destinationIndex)
        let queue = WorkQueue<(item: FileObject, relative: String)>(capacity: options.checkers * 32)
        try await withThrowingTaskGroup(of: CheckReport.self) { group in
            group.addTask {
                defer { queue.finish() }
                try await feed(queue)
                return CheckReport()
            }
            // Each checker keeps a partial report: a count of the matching files, and only the
            // paths worth reporting, so memory does not grow with the tree.
            for _ in 0..<max(1, options.checkers) {
                group.addTask {
                    var part = CheckReport()
                    while let (item, relative) = await queue.next() {
                        let path = try RemotePath.join(destination.path, relative)
                        comparer.record(await comparer.compare(item, relative: relative, at: path), relative, into: &part)
                    }
                    return part
                }
            }
            for try await part in group {
                report.matching += part.matching
                report.missing += part.missing
                report.different += part.different
                report.errors += part.errors
            }
        }
        report.details = details.lines
        report.missing.sort()
        report.different.sort()
        report.errors.sort()
        return report
    }

    /// The files the destination has and the source lacks (with `hashShard`, only those in the
    /// shard), unsorted, looked up in the source folder by folder.
    func findExtraFiles(source: TransferEndpoint, destination: TransferEndpoint) async throws -> (extra: [String], details: [String]) {
        let details = Details()
        let sourceIndex = FolderIndex(provider: source.provider, root: source.path, onUnlisted: details.add)
        var destinationFilter = await TreeFilter([destination.provider])
        var extra: [String] = []
        do {
            for try await item in destination.provider.walk(path: destination.path) {
                try Task.checkCancellation()
                if destinationFilter.skips(item) || item.isDirectory || item.isLinkToFolder { continue }
                guard let relative = RemotePath.relative(item.path, to: destination.path) else { continue }
                if let shard = options.hashShard, !shard.contains(relative) { continue }
                if try await sourceIndex.item(at: relative) == nil {
                    extra.append(relative)
                }
            }
        } catch where error.failureKind == .notFound {
            // No destination folder at all: everything is missing, nothing extra.
        }
        return (extra, details.lines)
    }
}

/// Compares one source file with the destination's, as `check` does.
struct FileComparer: Sendable {
    let engine: CopyEngine
    let source: TransferEndpoint
    let destination: TransferEndpoint
    let index: FolderIndex?
    let comparesTimes: Bool
    let precision: Duration

    init(engine: CopyEngine, source: TransferEndpoint, destination: TransferEndpoint, index: FolderIndex?) {
        self.engine = engine
        self.source = source
        self.destination = destination
        self.index = index
        comparesTimes = destination.provider.capabilities.supports(.setModificationDate)
            && source.provider.capabilities.supports(.modificationTimes)
        precision = max(source.provider.capabilities.modificationTimePrecision, destination.provider.capabilities.modificationTimePrecision)
    }

    func compare(_ item: FileObject, relative: String, at path: String) async -> CheckVerdict {
        do {
            let found = if let index { try await index.item(at: relative) } else { try await destination.provider.itemIfPresent(path: path) }
            guard let other = found, !other.isDirectory else { return .missing }
            let endpoint = TransferEndpoint(provider: source.provider, path: item.path)
            let checksum = try await engine.compareChecksums(item, on: endpoint, with: other, on: destination, forCopy: false).verdict
            let decision = CopyDecision.decide(source: item, destination: other, options: CopyOptions(sizeOnly: engine.options.sizeOnly),
                                               precision: precision, comparesTimes: comparesTimes, checksum: checksum)
            if case .skip = decision { return .matching }
            return .different
        } catch {
            return .failed(ErrorMessage.reason(for: error))
        }
    }

    func record(_ verdict: CheckVerdict, _ relative: String, into report: inout CheckReport) {
        switch verdict {
        case .matching: report.matching += 1
        case .missing: report.missing.append(relative)
        case .different: report.different.append(relative)
        case .failed(let reason): report.errors.append("\(relative): \(reason)")
        }
    }
}

/// What `check` found for one source file.
enum CheckVerdict: Sendable {
    case matching
    case missing
    case different
    case failed(String)
}

/// Detail lines gathered from concurrent tasks (each text once, in order).
final class Details: Sendable {
    private let gathered = Mutex<[String]>([])

    @Sendable func add(_ line: String) { gathered.withLock { if !$0.contains(line) { $0.append(line) } } }

    var lines: [String] { gathered.withLock { $0 } }
}
