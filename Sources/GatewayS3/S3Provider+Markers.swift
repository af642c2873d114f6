import Foundation
import GatewayCore
import GatewayTransport
import Synchronization

/// Directory markers: how a folder with nothing in it is kept in a bucket.
///
/// The usual marker is an empty object named `folder/` (what the AWS console, rclone and s3fs make).
/// Some servers store such a key as a file named `folder` instead: `rclone serve s3` over a file
/// system does, and a later `PUT folder/x` then fails. The first marker a provider stores is
/// checked for that; on such a server every marker is an empty hidden object
/// `folder/.gateway-folder` instead, which makes the folder there too. Listings hide
/// `.gateway-folder` objects and take them as markers on every server, so a bucket written either
/// way reads the same.
extension S3Provider {
    /// The hidden marker's name.
    static let hiddenMarkerName = ".gateway-folder"

    /// Which marker this provider stores, learned from the first one.
    enum MarkerStyle: Int {
        case unknown, slash, hidden
    }

    /// Whether `key` is a directory marker (of either kind), and so no item of its own.
    static func isMarker(_ key: String) -> Bool {
        key.utf8.last == UInt8(ascii: "/") || sameKey(key, hiddenMarkerName) || key.utf8.reversed().starts(with: ("/" + hiddenMarkerName).utf8.reversed())
    }

    /// The folder key prefix a marker key stands for (`a/b/` for `a/b/` and `a/b/.gateway-folder`).
    static func markedPrefix(_ key: String) -> String {
        key.utf8.last == UInt8(ascii: "/") ? key : String(decoding: key.utf8.dropLast(hiddenMarkerName.utf8.count), as: UTF8.self)
    }

    /// Stores the marker of the folder `remote` (not the root).
    func storeMarker(_ remote: String) async throws {
        let prefix = folderPrefix(remote)
        switch MarkerStyle(rawValue: markerStyle.load(ordering: .relaxed)) ?? .unknown {
        case .hidden:
            try await putEmpty(prefix + Self.hiddenMarkerName, path: remote)
        case .slash:
            try await putEmpty(prefix, path: remote)
        case .unknown:
            try await learnMarkerStyle(near: remote)
            try await storeMarker(remote)
        }
    }

    /// Learns which marker this server keeps by storing one under a hidden name of this process's
    /// own (`.gateway-probe-…/`, beside `remote`) and looking for a file under the bare name, then
    /// removing it. Never on the folder itself: workers of a plan make the same folders at once,
    /// and a marker stored as a file for a moment under the folder's own name made another worker's
    /// `mkdir` find a file there ("already exists"), or decide wrongly when the file went again.
    private func learnMarkerStyle(near remote: String) async throws {
        let parent = RemotePath.parent(of: remote)
        let probe = (parent == "/" ? "/" : parent + "/") + ".gateway-probe-" + UUID().uuidString.prefix(12).lowercased()
        let prefix = folderPrefix(probe)
        let bare = String(prefix.dropLast())
        let style: MarkerStyle
        do {
            try await putEmpty(prefix, path: remote)
            style = try await headKey(bare, path: remote) == nil ? .slash : .hidden
        } catch {
            try? await deleteObjects([prefix, bare], path: remote)
            throw error
        }
        try? await deleteObject(style == .slash ? prefix : bare, path: remote)
        if style == .hidden {
            logger.notice("this server stores directory markers (keys ending in /) as files; folders are marked with \(Self.hiddenMarkerName) objects",
                          metadata: ["remote": .string(name)])
        }
        markerStyle.store(style.rawValue, ordering: .relaxed)
    }

    /// The `HEAD` answer of object `key`, `nil` when there is none.
    func headKey(_ key: String, path remote: String) async throws -> HTTPResponseHead? {
        let (head, body) = try await send("HEAD", key: key, path: remote)
        if head.status == 404 { return nil }
        guard head.isSuccess else { throw failure(head, body: body, path: remote) }
        return head
    }

    /// Stores an empty object; returns its ETag.
    @discardableResult
    private func putEmpty(_ key: String, path remote: String) async throws -> String? {
        let (head, body) = try await send("PUT", key: key, headers: [(name: "Content-Type", value: "application/x-directory")],
                                          body: .data(Data()), path: remote)
        guard head.isSuccess else { throw failure(head, body: body, path: remote) }
        return head.header("etag")
    }
}
