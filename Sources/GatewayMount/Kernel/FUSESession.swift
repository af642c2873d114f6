import CFuse
import Foundation
import Synchronization

/// One libfuse session: made and mounted at once, its request loop run on a thread of its own,
/// and unmounted and destroyed when the loop ends (an unmount from inside or outside: Ctrl-C,
/// `fusermount3 -u`, `umount`).
final class FUSESession: Sendable {
    private struct Handle: @unchecked Sendable {
        let raw: OpaquePointer
    }

    private let session: Handle
    let mountpoint: String
    /// Kept alive while the kernel may call into it (libfuse holds an unretained pointer).
    private let fileSystem: MountFileSystem
    private let state = Mutex(State.mounted)

    private enum State {
        case mounted
        case unmounting
        case finished
    }

    /// Makes a session for `fileSystem` with the FUSE `options` (`-o` values) and mounts it.
    init(fileSystem: MountFileSystem, mountpoint: String, options: [String]) throws {
        self.fileSystem = fileSystem
        self.mountpoint = mountpoint
        let arguments = ["gateway"] + options.flatMap { ["-o", $0] }
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        var operations = FUSEOperations.table()
        let made: OpaquePointer? = pointers.withUnsafeMutableBufferPointer { argv in
            var args = fuse_args(argc: Int32(arguments.count), argv: argv.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&args) }
            return fuse_session_new(&args, &operations, MemoryLayout<fuse_lowlevel_ops>.size,
                                    Unmanaged.passUnretained(fileSystem).toOpaque())
        }
        guard let made else {
            throw MountError.refused("libfuse refused the options \(options.joined(separator: ","))")
        }
        guard fuse_session_mount(made, mountpoint) == 0 else {
            fuse_session_destroy(made)
            throw MountError.refused("the kernel refused to mount at \(mountpoint) (is /dev/fuse there, and may this user mount?)")
        }
        session = Handle(raw: made)
    }

    /// Serves the kernel's requests until the file system is unmounted, on a thread of its own
    /// (the loop blocks reading `/dev/fuse`); then unmounts what is left and frees the session.
    func run() async -> Int32 {
        let session = self.session
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let thread = Thread {
                continuation.resume(returning: fuse_session_loop(session.raw))
            }
            thread.name = "gateway-fuse"
            thread.start()
        }
        state.withLock { $0 = .finished }
        // No notification may use the session past this point.
        notifications.sync {}
        fuse_session_unmount(session.raw)
        fuse_session_destroy(session.raw)
        return status
    }

    /// Where notifications are written: a thread of their own. A notification can wait in the
    /// kernel for a folder's lock held by a request whose answer comes from a Swift task; written
    /// from the Swift pool (two threads on two cores) it could starve that answer.
    private let notifications = DispatchQueue(label: "gateway-fuse-notify")

    /// Tells the kernel that `name` in the folder `parent` may have changed: its cached entry (or
    /// cached absence) is dropped, and the next access looks it up again.
    func invalidateEntry(parent: UInt64, name: String) {
        notify { session in
            name.withCString { fuse_lowlevel_notify_inval_entry(session, fuse_ino_t(parent), $0, strlen($0)) }
        }
    }

    /// Tells the kernel that an inode's attributes and contents may have changed: its cached
    /// attributes and pages are dropped.
    func invalidateInode(_ inode: UInt64) {
        notify { session in fuse_lowlevel_notify_inval_inode(session, fuse_ino_t(inode), 0, 0) }
    }

    /// Tells the kernel that `name` (inode `child`) in `parent` is gone: as a local removal, which
    /// `inotify` watchers inside the mount see.
    func notifyDelete(parent: UInt64, child: UInt64, name: String) {
        notify { session in
            name.withCString { fuse_lowlevel_notify_delete(session, fuse_ino_t(parent), fuse_ino_t(child), $0, strlen($0)) }
        }
    }

    /// Runs `body` on the notification thread while the session is mounted (after an unmount the
    /// session may be gone).
    /// (A notification about a name or inode the kernel no longer caches answers `ENOENT`: nothing to drop.)
    private func notify(_ body: @escaping @Sendable (OpaquePointer) -> Int32) {
        let session = self.session
        notifications.async { [self] in
            guard isMounted else { return }
            let status = body(session.raw)
            if status != 0, status != -ENOENT {
                fileSystem.logger.debug("kernel notification failed", metadata: ["errno": .stringConvertible(-status)])
            }
        }
    }

    private var isMounted: Bool { state.withLock { if case .mounted = $0 { return true } else { return false } } }

    /// Asks the kernel to unmount (lazily: programs still inside keep what they hold, nothing
    /// new enters); the loop ends once the kernel lets go. Safe to call more than once.
    func unmount() {
        let proceed = state.withLock { state in
            guard case .mounted = state else { return false }
            state = .unmounting
            return true
        }
        guard proceed else { return }
        if umount2(mountpoint, Int32(MNT_DETACH)) != 0 {
            // Not root: the setuid helper unmounts for the user who mounted.
            let helper = Process()
            helper.executableURL = URL(fileURLWithPath: "/bin/fusermount3")
            helper.arguments = ["-u", "-z", mountpoint]
            try? helper.run()
            helper.waitUntilExit()
        }
    }
}

/// Why a mount could not be made.
public enum MountError: Error, CustomStringConvertible, Sendable {
    /// The kernel or libfuse refused; the text says what to check.
    case refused(String)
    /// The mount point is not an empty folder this user can use.
    case badMountpoint(String)

    public var description: String {
        switch self {
        case .refused(let text): return text
        case .badMountpoint(let text): return text
        }
    }
}
