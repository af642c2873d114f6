import Foundation
import GatewayCore

/// What a snapshot monitor's ``SyncAnchor`` holds: which store (remote, folder, recursion) and
/// which position in its change log.
struct MonitorAnchor: Codable, Hashable {
    /// Encoding version; anchors of another version are expired.
    var version = 1
    /// The remote's identity (a hash; see ``SnapshotMonitoring/monitorIdentity``).
    var remote: String
    /// The watched folder (remote path).
    var folder: String
    var recursive: Bool
    /// The store's random id: a store made again after removal has another.
    var store: String
    /// The last change delivered.
    var position: Int64
    /// `true` when the caller has everything the log held: the next call compares the remote again
    /// first. `false` in the middle of a catch-up (more pages are already logged).
    var caughtUp: Bool

    func encoded() -> SyncAnchor {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a struct of strings, numbers and flags cannot fail.
        return SyncAnchor(rawValue: (try? encoder.encode(self)) ?? Data())
    }

    static func decode(_ anchor: SyncAnchor) throws -> MonitorAnchor {
        guard anchor.rawValue.count <= 64 * 1024,
              let decoded = try? JSONDecoder().decode(MonitorAnchor.self, from: anchor.rawValue), decoded.version == 1 else {
            throw FileProviderError.anchorExpired(path: "/", reason: "not an anchor this version of the gateway can read")
        }
        return decoded
    }
}
