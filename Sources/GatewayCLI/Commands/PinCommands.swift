import ArgumentParser
import Foundation
import GatewayMount
import StorageGateway

struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Keep items of a running mount downloaded and current (a folder: everything in it, new items too).",
        discussion: HelpText.reflow("""
        PATH is a path inside a running `gateway mount`, or REMOTE:PATH of a mounted remote. The
        mount fetches pinned contents in the background right away, fetches them again when the
        remote changes them, and never evicts them. Pinning more than the mount's --cache-max-size
        can hold is refused (exit 1), so the limit is never overshot. `getfattr -d FILE` shows an
        item's state (user.gateway.state: placeholder, partial, materialized, dirty, uploading,
        conflict) and user.gateway.pinned; `gateway mount-status` shows the fetching.

        Examples:
          gateway pin ~/dav/projects/current
          gateway pin --wait dav:photos/2026
          gateway unpin ~/dav/projects/current
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Wait until the pinned files are downloaded (with their count on a terminal).") var wait = false
    @Argument(help: "Items to pin: paths in a mount, or REMOTE:PATH of a mounted remote.") var paths: [String]

    func run() async throws {
        try await MountedItems.each(paths, command: "pin", verb: "pinned") { path in
            try MountControl.pin(path)
            if wait { try await MountedItems.waitUntilMaterialized(path) }
        }
    }
}

struct UnpinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin",
        abstract: "Stop keeping items of a running mount downloaded (their contents may be evicted again).",
        discussion: HelpText.reflow("""
        PATH is what was pinned (an item pinned through its folder is unpinned with the folder).

        Example:
          gateway unpin ~/dav/projects/current
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Pinned items: paths in a mount, or REMOTE:PATH of a mounted remote.") var paths: [String]

    func run() async throws {
        try await MountedItems.each(paths, command: "unpin", verb: "unpinned") { try MountControl.unpin($0) }
    }
}

struct EvictCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evict",
        abstract: "Drop the downloaded contents of items of a running mount; they stay as placeholders.",
        discussion: HelpText.reflow("""
        Only clean items are evicted: a pinned item, or a file with changes not uploaded yet, is
        refused (exit 1). Contents a program has open stay until it closes them. The next read
        fetches from the remote again.

        Example:
          gateway evict ~/dav/videos
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Items: paths in a mount, or REMOTE:PATH of a mounted remote (a folder: everything in it).") var paths: [String]

    func run() async throws {
        try await MountedItems.each(paths, command: "evict", verb: "evicted") { try MountControl.evict($0) }
    }
}

struct MountStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount-status",
        abstract: "Show what running mounts hold: cache use, pinned bytes, pending uploads, conflicts, reachability.",
        discussion: HelpText.reflow("""
        Without MOUNTPOINT, every gateway mount of this machine. --json prints one object per
        mount (an array): mountpoint, remote, root, cache_dir, cache_used, cache_limit,
        pinned_bytes, pinned_expected, pins, pending_uploads, uploads [{path, size, uploading, sent}],
        conflicts, reachable, following_changes, fetch_queued, fetching, fetched,
        fetch_failures [{path, error}]. Exit 1 when a mount could not be asked.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Argument(help: "A gateway mount's folder (default: all of them).") var mountpoint: String?

    func run() async throws {
        let points = mountpoint.map { [URL(fileURLWithPath: $0).standardizedFileURL.path] } ?? MountedItems.gatewayMounts()
        var reports: [(String, MountStatusReport)] = []
        var failed = false
        for point in points {
            do {
                reports.append((point, try MountedItems.status(of: point)))
            } catch let error as MountedItems.Failure {
                Diagnostics.printLine("mount-status \(Format.shown(point)): \(error.message(for: "asked"))")
                failed = true
            }
        }
        let out = StandardOutput()
        if json {
            let objects = reports.map { point, report -> String in
                let encoded = JSON.encode(report)
                return "{\"mountpoint\":\(JSON.encode(point)),\(encoded.dropFirst())"
            }
            out.line("[" + objects.joined(separator: ",") + "]")
        } else if reports.isEmpty, !failed {
            out.line("no gateway mount is running")
        } else {
            for (point, report) in reports { out.line(Self.text(point, report)) }
        }
        if failed { throw ExitCode(1) }
    }

    static func text(_ point: String, _ report: MountStatusReport) -> String {
        var lines = ["\(Format.shown(point))  \(Format.shown(report.remote)):\(Format.shown(report.root))  "
                     + (report.reachable ? "online" : "OFFLINE (the remote does not answer)")]
        lines.append("  cache       \(Format.bytes(report.cacheUsed)) of \(Format.bytes(report.cacheLimit)), "
                     + "pinned \(Format.bytes(report.pinnedBytes)) of \(Format.bytes(report.pinnedExpected)) expected")
        lines.append("  pinned      " + (report.pins.isEmpty ? "nothing" : report.pins.map(Format.shown).joined(separator: ", ")))
        if report.fetchQueued > 0 || report.fetching != nil {
            lines.append("  fetching    \(report.fetching.map(Format.shown) ?? "-") (\(report.fetchQueued) more waiting, \(report.fetched) fetched)")
        }
        for failure in report.fetchFailures { lines.append("  not fetched \(Format.shown(failure.path)): \(Format.shown(failure.error))") }
        lines.append("  uploads     " + (report.pendingUploads == 0 ? "none pending" : "\(report.pendingUploads) pending"))
        for upload in report.uploads {
            let sending = upload.uploading ? " (uploading, \(Format.bytes(upload.sent)) sent)" : ""
            lines.append("              \(Format.shown(upload.path)) \(Format.bytes(upload.size))\(sending)")
        }
        lines.append("  conflicts   " + (report.conflicts.isEmpty ? "none" : report.conflicts.map(Format.shown).joined(separator: ", ")))
        lines.append("  changes     " + (report.followingChanges ? "followed" : "not followed (attributes refresh after a second)"))
        return lines.joined(separator: "\n")
    }
}

/// Items of running mounts, reached through ``MountControl`` (the attributes the mount answers),
/// with the messages a user reads.
enum MountedItems {
    typealias Failure = MountControl.Failure

    /// Runs `body` on the local path of each argument; a failure is said (`COMMAND ARGUMENT: not
    /// VERB: why`) and the others go on; exit 1 when any failed.
    static func each(_ arguments: [String], command: String, verb: String, _ body: (String) async throws -> Void) async throws {
        var failed = false
        for argument in arguments {
            do {
                try await body(try resolve(argument))
            } catch let error as Failure {
                Diagnostics.printLine("\(command) \(Format.shown(argument)): \(error.message(for: verb))")
                failed = true
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// The local path of `argument`: a path inside a mount, or `REMOTE:PATH` of a mounted remote.
    static func resolve(_ argument: String) throws -> String {
        if FileManager.default.fileExists(atPath: argument) { return argument }
        let location = try? RemoteLocation.parse(argument, currentDirectory: FileManager.default.currentDirectoryPath)
        guard let location, let remote = location.remote else { throw Failure(code: ENOENT, detail: "no such file or folder") }
        if let path = MountControl.localPath(remote: remote, path: location.path) { return path }
        throw Failure(code: ENOENT, detail: "\(remote):\(location.path) is not inside a running gateway mount (mount it first)")
    }

    static func get(_ name: String, at path: String) throws -> Data? { try MountControl.get(name, at: path) }
    static func status(of mountpoint: String) throws -> MountStatusReport { try MountControl.status(of: mountpoint) }
    static func gatewayMounts() -> [String] { MountControl.gatewayMounts() }

    /// Waits until every file at or under `path` is materialized (a failed fetch ends the wait
    /// with its reason).
    static func waitUntilMaterialized(_ path: String) async throws {
        let point = gatewayMounts().filter { path.hasPrefix($0) }.max { $0.count < $1.count }
        while true {
            var waiting = 0
            let files: [String]
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                let walker = FileManager.default.enumerator(atPath: path)
                var found: [String] = []
                while let next = walker?.nextObject() as? String { found.append(path + "/" + next) }
                files = found
            } else {
                files = [path]
            }
            for file in files {
                let state = try get(MountControl.Attribute.state, at: file).map { String(decoding: $0, as: UTF8.self) }
                if state == "placeholder" || state == "partial" { waiting += 1 }
            }
            if waiting == 0 { return }
            // Nothing more is being fetched, and something failed: say why instead of waiting.
            if let point, let report = try? status(of: point), report.fetchQueued == 0, report.fetching == nil,
               let failure = report.fetchFailures.first {
                throw Failure(code: EIO, detail: "pinned, but \(failure.path) could not be fetched: \(failure.error)")
            }
            if isatty(STDERR_FILENO) == 1 { Diagnostics.printLine("\(waiting) file\(waiting == 1 ? "" : "s") still to download…") }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
