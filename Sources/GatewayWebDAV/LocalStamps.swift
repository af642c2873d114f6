import Foundation
import GatewayState
import Logging
import Synchronization

/// What this machine's uploads wrote on one remote, kept in the local state store
/// (``DeadPropertyStore``, `properties.sqlite`) instead of on the server: the source stamp of each
/// file uploaded from here, under the property a server would hold (`source-stamp`), for the scope
/// `source-stamps URL user`.
///
/// Recording one costs no request: records are kept in memory and written in batches, one
/// transaction per 256 records or per half second, whichever comes first, and before any read of
/// the records and when the process exits. (A process killed outright loses at most the last
/// half second's records: those files are then compared by size and upload time, as files
/// without a stamp are.) A record counts only while the file on the server still matches it (the same size, and
/// the same ETag, or a time no later than the write: ``WebDAVProvider/StoredStamp``), so a file
/// changed by anyone since, from any machine, drops it. Records follow the moves, copies and
/// removals made through this provider; a record of a file removed by someone else stays until
/// that name is written or removed from here again, and describes nothing meanwhile.
///
/// The store is opened on first use; where it cannot be (a read-only home), nothing is recorded,
/// said once in the debug log, and copies compare by size and upload time as without stamps.
final class LocalStamps: Sendable {
    private enum State: Sendable {
        case unopened
        case open(DeadPropertyStore)
        case unavailable
    }

    private let directory: URL
    private let scope: String
    private let logger: Logger
    private let state = Mutex(State.unopened)
    /// Records not yet written, in order, and whether a timed write is scheduled.
    private let pending = Mutex(Pending())

    private struct Pending {
        var records: [(path: String, property: DeadProperty)] = []
        var flushScheduled = false
    }

    /// The most records written in one transaction, and how long a record waits at most.
    static let batchSize = 256
    static let batchDelay = Duration.milliseconds(500)

    /// Every instance with records, flushed when the process exits.
    private static let live = Mutex<[ObjectIdentifier: WeakStamps]>([:])
    private static let exitHook: Void = { atexit { LocalStamps.flushAll() } }()

    private struct WeakStamps: @unchecked Sendable {
        weak var stamps: LocalStamps?
    }

    /// Records for the remote `identity` (its URL and user) in the state folder `directory`.
    init(directory: URL, identity: String, logger: Logger) {
        self.directory = directory
        self.scope = "source-stamps " + identity
        self.logger = logger
    }

    private var store: DeadPropertyStore? {
        state.withLock { state in
            switch state {
            case .open(let store): return store
            case .unavailable: return nil
            case .unopened:
                do {
                    let store = try DeadPropertyStore.open(directory: directory, scope: scope)
                    state = .open(store)
                    return store
                } catch {
                    logger.debug("source stamps are not recorded locally", metadata: ["error": .string("\(error)")])
                    state = .unavailable
                    return nil
                }
            }
        }
    }

    deinit {
        flush()
        Self.live.withLock { $0[ObjectIdentifier(self)] = nil }
    }

    /// Records `stamp` as what was written at `path` (written with the next batch).
    func record(_ stamp: WebDAVProvider.StoredStamp, at path: String) {
        let property = DeadProperty(namespace: WebDAVProvider.stampNamespace, name: WebDAVProvider.stampProperty, value: stamp.encoded)
        let (full, schedule) = pending.withLock { pending in
            pending.records.append((path: path, property: property))
            let schedule = !pending.flushScheduled
            pending.flushScheduled = true
            return (pending.records.count >= Self.batchSize, schedule)
        }
        if schedule {
            _ = Self.exitHook
            Self.live.withLock { $0[ObjectIdentifier(self)] = WeakStamps(stamps: self) }
            Task { [weak self] in
                try? await Task.sleep(for: Self.batchDelay)
                self?.flush()
            }
        }
        if full { flush() }
    }

    /// Writes the records kept in memory, in one transaction.
    func flush() {
        let records = pending.withLock { pending in
            defer {
                pending.records = []
                pending.flushScheduled = false
            }
            return pending.records
        }
        guard !records.isEmpty else { return }
        attempt("record") { try $0.set(records) }
    }

    /// Flushes every instance's records (at exit).
    static func flushAll() {
        let all = live.withLock { $0.values.compactMap(\.stamps) }
        for stamps in all { stamps.flush() }
    }

    /// The records of those of `paths` that have one, by path.
    func stamps(of paths: some Sequence<String>) -> [String: WebDAVProvider.StoredStamp] {
        flush()
        let texts = attempt("read") {
            try $0.values(namespace: WebDAVProvider.stampNamespace, name: WebDAVProvider.stampProperty, of: paths)
        } ?? [:]
        return texts.compactMapValues(WebDAVProvider.StoredStamp.init(parsing:))
    }

    /// The record of `path`, if any.
    func stamp(of path: String) -> WebDAVProvider.StoredStamp? {
        stamps(of: [path])[path]
    }

    /// After a `MOVE` on the server: the records of `source` and below now describe `target`.
    func moved(from source: String, to target: String) {
        flush()
        attempt("move") { try $0.transfer(from: source, to: target, keepSource: false) }
    }

    /// After a removal, or a replacement by something this provider did not record (a server-side
    /// `COPY`, whose copy has a time and ETag of its own): nothing describes `path` or below.
    func removed(_ path: String) {
        flush()
        attempt("remove") { try $0.removeAll(under: path) }
    }

    /// Runs `body` on the store; a failure is logged (records are a cache of what was written:
    /// without one, a file is compared by size and upload time).
    @discardableResult
    private func attempt<T>(_ what: String, _ body: (DeadPropertyStore) throws -> T) -> T? {
        guard let store else { return nil }
        do {
            return try body(store)
        } catch {
            logger.debug("local source stamps: \(what) failed", metadata: ["error": .string("\(error)")])
            return nil
        }
    }
}
