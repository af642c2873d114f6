import CFuse
public import Foundation

/// Items of running `gateway mount`s, reached from any process through the extended attributes
/// the mount answers (``Attribute``): pin, unpin and evict an item, read its state, and read a
/// mount's status. `gateway pin`, `unpin`, `evict` and `mount-status` are built on it.
///
/// ```swift
/// try MountControl.pin("/mnt/dav/projects")           // fetched in the background, kept current
/// MountControl.state(of: "/mnt/dav/projects/a.txt")   // "materialized", once fetched
/// try MountControl.status(of: "/mnt/dav").cacheUsed
/// ```
public enum MountControl {
    /// The attribute names, in the `user.gateway.` namespace.
    public enum Attribute {
        /// An item's state: `placeholder`, `partial`, `materialized`, `dirty`, `uploading`, `conflict`.
        public static let state = "user.gateway.state"
        /// `1` on a pinned item (itself or a folder above it); set to pin, removed to unpin.
        public static let pinned = "user.gateway.pinned"
        /// Set to drop an item's downloaded contents; never read.
        public static let evict = "user.gateway.evict"
        /// On a mount's root: its ``MountStatusReport`` as JSON.
        public static let status = "user.gateway.status"
    }

    /// Why an item could not be handled: the `errno` the mount answered (`ENOSPC`: the pins would
    /// need more than the cache's limit; `EBUSY`: pinned, or changes not uploaded; `EPERM`:
    /// pinned through a folder above it; `ENODATA`: not pinned; `ENOTSUP`: not in a gateway
    /// mount), or a message.
    public struct Failure: Error, Sendable {
        public let code: Int32
        public let detail: String?

        public init(code: Int32, detail: String?) {
            self.code = code
            self.detail = detail
        }

        /// A sentence for a user: what was not done (`verb`: "pinned", "evicted", ...) and why.
        public func message(for verb: String) -> String {
            if let detail { return detail }
            switch code {
            case ENOSPC:
                return "not \(verb): pinned contents would need more than the mount's cache can hold (--cache-max-size); "
                    + "`gateway mount-status` shows what is pinned"
            case EBUSY:
                return "not \(verb): it is pinned, or has changes not uploaded yet"
            case EPERM:
                return "not \(verb): it is pinned through a folder above it; unpin that folder"
            case ENODATA:
                return "not \(verb): it is not pinned"
            case ENOTSUP:
                return "not inside a running gateway mount"
            default:
                return String(cString: strerror(code))
            }
        }
    }

    /// Pins `path` (in a running mount): fetched in the background and kept current.
    public static func pin(_ path: String) throws {
        try requireMounted(path)
        try set(Attribute.pinned, "1", at: path)
    }

    /// Unpins `path`.
    public static func unpin(_ path: String) throws {
        try requireMounted(path)
        try remove(Attribute.pinned, at: path)
    }

    /// Drops the downloaded contents of `path` (placeholders stay).
    public static func evict(_ path: String) throws {
        try requireMounted(path)
        try set(Attribute.evict, "1", at: path)
    }

    /// Throws `ENOTSUP` unless `path` is in a gateway mount (only one answers an item's state;
    /// other file systems would keep a `user.` attribute as any other and do nothing).
    static func requireMounted(_ path: String) throws {
        do {
            if try get(Attribute.state, at: path) != nil { return }
        } catch let failure as Failure where failure.code == ENOENT {
            throw failure
        } catch {}
        throw Failure(code: ENOTSUP, detail: nil)
    }

    /// The state of the item at `path`, or `nil` outside a gateway mount.
    public static func state(of path: String) -> String? {
        (try? get(Attribute.state, at: path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The status of the mount at `mountpoint`.
    public static func status(of mountpoint: String) throws -> MountStatusReport {
        guard let data = try get(Attribute.status, at: mountpoint) else { throw Failure(code: ENOTSUP, detail: nil) }
        do {
            return try JSONDecoder().decode(MountStatusReport.self, from: data)
        } catch {
            throw Failure(code: EIO, detail: "the mount's status could not be read: \(error)")
        }
    }

    /// The folders of this machine's gateway mounts (`/proc/self/mounts`, type `fuse.gateway`).
    public static func gatewayMounts() -> [String] {
        guard let table = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return [] }
        return table.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[2] == "fuse.gateway" else { return nil }
            return unescaped(String(fields[1]))
        }
    }

    /// Where `path` of the remote `remote` is in a running mount of it, if one shows it.
    public static func localPath(remote: String, path: String) -> String? {
        for point in gatewayMounts() {
            guard let report = try? status(of: point), report.remote == remote else { continue }
            let root = report.root == "/" ? "" : report.root
            if path == report.root || report.root == "/" || path.hasPrefix(root + "/") {
                return point + String(path.dropFirst(root.count))
            }
        }
        return nil
    }

    /// A mounts-table field with its octal escapes (`\040` for a space) undone.
    static func unescaped(_ field: String) -> String {
        var bytes: [UInt8] = []
        var rest = Array(field.utf8)[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "\\"), rest.count >= 3, let value = UInt8(String(decoding: rest.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                rest = rest.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Sets the attribute `name` of `path` to `value`.
    public static func set(_ name: String, _ value: String, at path: String) throws {
        let status = value.withCString { setxattr(path, name, $0, strlen($0), 0) }
        if status != 0 { throw Failure(code: errno, detail: nil) }
    }

    /// Removes the attribute `name` of `path`.
    public static func remove(_ name: String, at path: String) throws {
        if removexattr(path, name) != 0 { throw Failure(code: errno, detail: nil) }
    }

    /// The attribute `name` of `path` (`nil` when the item has none).
    public static func get(_ name: String, at path: String) throws -> Data? {
        while true {
            let size = getxattr(path, name, nil, 0)
            if size < 0 {
                if errno == ENODATA { return nil }
                throw Failure(code: errno, detail: nil)
            }
            var data = Data(count: size)
            let read = data.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, size) }
            if read < 0 {
                if errno == ERANGE { continue }   // it grew meanwhile
                if errno == ENODATA { return nil }
                throw Failure(code: errno, detail: nil)
            }
            return data.prefix(read)
        }
    }
}
