public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a hidden name the gateway writes beside its target says about itself, and whether the
/// file under it is a leftover nobody will finish.
///
/// An atomic write's temporary is `.NAME.gateway-HOST-PID-RANDOM.partial`: `HOST` (8 hex digits
/// from the machine's id) and `PID` name the process writing it. A process killed with `kill -9`
/// (or a power cut, or a lost network) cannot remove its temporary; a later run on the same machine
/// sees that the process is gone and removes it at once. A temporary from another machine, or in
/// the format before 2026-11-26 (`.NAME.gateway-RANDOM.partial`), counts as abandoned only by age.
/// Resumable partial files (`.NAME.gateway-resume-KEY.partial`) are kept for resuming and also go
/// only by age; so do the one-byte probes a WebDAV remote leaves if killed mid-probe
/// (`.gateway-probe-…`).
public struct TemporaryName: Sendable, Equatable {
    /// What wrote the file.
    public enum Kind: Sendable, Equatable {
        /// An atomic write's temporary, by a known process on a known machine.
        case write(host: String, pid: Int32)
        /// An atomic write's temporary without an owner (the earlier format).
        case unownedWrite
        /// A resumable partial file.
        case resumable
        /// A WebDAV `Destination` probe.
        case probe
    }

    /// What wrote the file.
    public let kind: Kind

    /// How old an unowned leftover must be before it counts as abandoned, unless told otherwise:
    /// a day, far longer than any upload that is still moving.
    public static let defaultAge: Duration = .seconds(86_400)

    /// The parts of `name` when it is a name the gateway writes beside its targets, else `nil`.
    public init?(_ name: String) {
        if name.hasPrefix(".gateway-probe-") {
            kind = .probe
            return
        }
        guard name.hasPrefix("."), name.hasSuffix(".partial"), let marker = name.range(of: ".gateway-", options: .backwards) else { return nil }
        let tail = name[marker.upperBound..<name.index(name.endIndex, offsetBy: -".partial".count)]
        if tail.hasPrefix("resume-") {
            kind = .resumable
            return
        }
        let parts = tail.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 8, parts[0].allSatisfy(\.isHexDigit), let pid = Int32(parts[1]), pid > 0 {
            kind = .write(host: String(parts[0]), pid: pid)
        } else if parts.count == 1, !tail.isEmpty, tail.allSatisfy({ $0.isLetter || $0.isNumber }) {
            kind = .unownedWrite
        } else {
            return nil
        }
    }

    /// Whether a file under this name, last modified at `modified`, is a leftover nobody will
    /// finish: its writer was a process on this machine that is gone, or it is older than `age`.
    /// Never a temporary of a process that is still running here.
    public func isAbandoned(modified: Date?, age: Duration = Self.defaultAge, now: Date = Date()) -> Bool {
        if case .write(let host, let pid) = kind, host == Self.hostID {
            if pid == getpid() || Self.isRunning(pid) { return false }
            return true
        }
        guard let modified else { return false }
        return now.timeIntervalSince(modified) >= age.inSeconds
    }

    /// The owner part of a new temporary name for this process: `HOST-PID`.
    public static var ownerTag: String { "\(hostID)-\(getpid())" }

    /// 8 hex digits standing for this machine: from `/etc/machine-id` (systemd), else the host name.
    public static let hostID: String = {
        let source = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            .nonEmpty ?? ProcessInfo.processInfo.hostName
        return String(ContentHasher.hash(Data(source.utf8), .sha1).prefix(8))
    }()

    /// Whether a process with this id runs on this machine (`kill(pid, 0)`; one owned by another
    /// user counts as running).
    static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}

private extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
