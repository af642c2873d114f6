import Foundation

/// A mount's cache folder, held with an exclusive lock (`flock` on `DIR/lock`) while the mount
/// runs: a second mount on the same folder is refused, naming the process that holds it.
/// Written files wait for their upload in `DIR/files`; fetched contents are cached in `DIR/read`.
final class CacheFolder: Sendable {
    let path: String
    /// Where dirty files keep their contents.
    let files: String
    private let lockDescriptor: Int32

    private init(path: String, files: String, lockDescriptor: Int32) {
        self.path = path
        self.files = files
        self.lockDescriptor = lockDescriptor
    }

    deinit { close(lockDescriptor) }

    /// Makes (if needed) and locks the cache folder at `path`.
    static func lock(_ path: String) throws -> CacheFolder {
        let files = path + "/files"
        do {
            try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw MountError.refused("cannot make the cache folder \(path): \(error.localizedDescription)")
        }
        let lockPath = path + "/lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw MountError.refused("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(descriptor)
            throw MountError.refused("another gateway mount uses the cache folder \(path)"
                + (holder.isEmpty ? "" : " (process \(holder))") + "; unmount it first, or give this one --cache-dir")
        }
        _ = ftruncate(descriptor, 0)
        let pid = Data("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return CacheFolder(path: path, files: files, lockDescriptor: descriptor)
    }
}
