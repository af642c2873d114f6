#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GatewayCore

/// `UTIME_OMIT` from `<sys/stat.h>` (a macro Swift does not import): leave that time unchanged.
let utimeOmit = 1_073_741_822

/// Small helpers over POSIX calls, shared by the local provider's files.
enum POSIX {
    /// `lstat`/`stat` a host path; `nil` with `errno` set when it fails.
    static func status(_ hostPath: String, followSymlinks: Bool) -> stat? {
        var info = stat()
        let result = followSymlinks ? stat(hostPath, &info) : lstat(hostPath, &info)
        return result == 0 ? info : nil
    }

    /// The file type bits of a mode.
    static func type(of mode: mode_t) -> FileObjectType {
        switch mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .file
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    static func isDirectory(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }
    static func isSymlink(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFLNK }
    static func isRegularFile(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }

    static func date(_ time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// A version tag that changes whenever size or modification time does.
    static func versionTag(_ info: stat) -> String {
        "\(info.st_size)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// Whether the effective user may write the item, from its mode bits.
    static func isReadOnly(_ info: stat) -> Bool {
        let uid = geteuid()
        if uid == 0 { return false }
        if info.st_uid == uid { return info.st_mode & S_IWUSR == 0 }
        if info.st_gid == getegid() { return info.st_mode & S_IWGRP == 0 }
        return info.st_mode & S_IWOTH == 0
    }

    /// Builds a ``FileObject`` from `stat` data. For a symbolic link, `target` is the `stat` of what
    /// it points to (when that lies inside the root): the link then reports the target's size and
    /// time, and `extra["target_type"]` says whether it leads to a file or a folder.
    static func fileObject(path: String, info: stat, symlinkTarget: String? = nil, target: stat? = nil) -> FileObject {
        let type = type(of: info.st_mode)
        var extra: [String: String] = ["mode": String(info.st_mode & 0o7777, radix: 8), "inode": "\(info.st_dev):\(info.st_ino)"]
        if let symlinkTarget { extra["symlink_target"] = symlinkTarget }
        var described = info
        if let target {
            described = target
            extra["target_type"] = Self.type(of: target.st_mode).rawValue
        }
        let describedType = Self.type(of: described.st_mode)
        return FileObject(
            path: path,
            type: type,
            size: describedType == .directory ? nil : Int64(described.st_size),
            modificationDate: date(described.st_mtim),
            isReadOnly: isReadOnly(info),
            versionTag: type == .file ? versionTag(info) : nil,
            extraProperties: extra
        )
    }

    /// The target of a symbolic link, read relative to a directory descriptor (or a path with `AT_FDCWD`).
    static func readLink(at directory: Int32, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(directory, name, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { pointer in
            String(decoding: UnsafeRawBufferPointer(start: pointer.baseAddress, count: count), as: UTF8.self)
        }
    }

    /// `realpath(3)`, or `nil` with `errno` set.
    static func realPath(_ hostPath: String) -> String? {
        guard let resolved = realpath(hostPath, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A `timespec` pair for `futimens`/`utimensat` that sets the modification time only.
    static func times(modification date: Date) -> [timespec] {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanoseconds = seconds.isFinite ? Int(saturating: (date.timeIntervalSince1970 - seconds) * 1e9) : 0
        return [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(tv_sec: Int(saturating: seconds), tv_nsec: nanoseconds)]
    }
}
