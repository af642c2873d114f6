import ArgumentParser
import Foundation
import Synchronization
import GatewayMount
import StorageGateway

struct MountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Show a remote folder as a file system (FUSE) until unmounted.",
        discussion: HelpText.reflow("""
        Runs in the foreground until Ctrl-C, SIGTERM, or an unmount from outside
        (fusermount3 -u MOUNTPOINT, umount MOUNTPOINT), then exits 0:
          mkdir -p ~/dav && gateway mount dav:photos ~/dav

        Items are placeholders: listings show names, sizes and times without fetching contents,
        and a file's bytes are fetched when a program reads them, into a read cache in the cache
        folder (a read-ahead that grows while reads stay sequential), always of the version the
        listing showed: a file changed on the remote while open fails that read with EIO instead
        of mixing two versions. --cache-max-size is a hard limit: room is made before contents
        are kept, least recently used first, never from pinned or open files; --cache-max-age
        drops contents nobody read for that long.

        `gateway pin PATH` keeps items downloaded and current (a folder: everything in it),
        `gateway evict PATH` drops downloaded contents, `gateway mount-status` shows cache use,
        pins, pending uploads and conflicts; `getfattr -d FILE` shows an item's state
        (user.gateway.state: placeholder, partial, materialized, dirty, uploading, conflict).

        Changes made on the remote are followed (inotify on a local folder; on WebDAV and FTP a
        look every --poll-interval seconds, or sync-collection reports where the server has them)
        and pushed into the kernel: ls, cat and inotifywait inside the mount see them within the
        poll interval. Names and attributes are otherwise kept --attr-timeout seconds (60). A file
        changed on the remote while it has changes not yet uploaded keeps both: the remote's
        version keeps the name, the mount's goes to "NAME (conflict YYYY-MM-DD HHMMSS).EXT".

        Writes go to a cache file (in --cache-dir, default $XDG_CACHE_HOME/gateway/mount/) and
        are uploaded with the remote's atomic write --write-back seconds after the file's last
        close; fsync returns once the file is on the remote. Folders, removals and renames
        happen on the remote at once, and a removal is final as on a local disk; with --trash,
        what programs remove or write over goes to the remote's trash first and every change is
        recorded, so `gateway undo` (after the unmount) reverts what they did. chmod and chown
        are accepted and not kept; times are kept where the remote can set them. On unmount, pending uploads finish first ("uploading N
        files", with progress); a second Ctrl-C stops waiting, says which files are still to be
        sent and where they are kept, and exits 130: the next mount with that cache folder sends
        them. A file that cannot be sent stays in the cache folder and the exit code is 1.
        One mount per cache folder: a second one is refused. The uploads owed are listed in the
        state store ($GATEWAY_STATE_DIR, else $XDG_STATE_HOME/gateway): after a crash or kill -9,
        the next mount with the same cache folder sends them before it mounts.

        Needs /dev/fuse and fusermount3 (Debian: fuse3). Prints "mounted LOCATION at MOUNTPOINT"
        on stderr once the mount is usable. --json prints status lines on stderr instead, one
        JSON object each, with an "event" key: mounted {location, mountpoint, read_only,
        cache_dir}, replaying {files}, uploaded {path, size}, upload_failed {path, error,
        will_retry}, conflict {path, copy}, caught_up {changes}, listed_afresh {anchor_saved},
        offline {reason}, online, unmounting {pending}, pending {files, cache_dir} (second Ctrl-C),
        unmounted {failed}.
        Exit codes: 0 unmounted with everything uploaded, 1 failure, 2 usage.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Refuse every change (EROFS).") var readOnly = false
    @Option(name: .long, help: "Seconds after a file's last close before its upload starts.") var writeBack: Double = 2
    @Option(name: .long, help: "Where written files wait for their upload (default: $XDG_CACHE_HOME/gateway/mount/NAME).") var cacheDir: String?
    @Option(name: .long, help: "Seconds between two looks for remote changes on WebDAV and FTP (Local is told at once).") var pollInterval: Double = 10
    @Option(name: .long, help: "Seconds the kernel keeps names and attributes (default 60 while remote changes are followed, else 1).")
    var attrTimeout: Double?
    @Flag(name: .long, help: "Let other users use the mount (FUSE allow_other).") var allowOther = false
    @Option(name: .long, help: "Owner of every item (default: yours).") var uid: UInt32?
    @Option(name: .long, help: "Group of every item (default: yours).") var gid: UInt32?
    @Option(name: .long, help: "Permission bits removed from every item, octal (default 022).") var umask: String = "022"
    @Option(name: .long, help: "Most fetched file contents the cache folder keeps, a hard limit (like 1G, 500M; default 1G).")
    var cacheMaxSize: String = "1G"
    @Option(name: .long, help: "Drop fetched contents nobody read for this long (like 30m, 2h, 7d; pinned items stay).")
    var cacheMaxAge: DurationArgument?
    @Option(name: .customShort("o"), help: "A FUSE mount option, passed through (repeatable).") var fuseOptions: [String] = []
    @Flag(name: .long, help: ArgumentHelp(
        "Removals and overwrites go to the remote's trash, and every change is recorded: `gateway undo` reverts what programs did in the mount.",
        discussion: "Without it a removal is final, as on a local file system."))
    var trash = false
    @Flag(name: .long, help: "Status lines on stderr as JSON objects (mounted, uploaded, conflict, unmounted, ...).") var json = false
    @Argument(help: "REMOTE:PATH of a folder, or a local folder.") var location: String
    @Argument(help: "An existing empty folder to mount at.") var mountpoint: String

    func validate() throws {
        if let attrTimeout, !(attrTimeout.isFinite && attrTimeout >= 0 && attrTimeout <= 86_400) {
            throw ValidationError("--attr-timeout must be between 0 and 86400 seconds")
        }
        guard pollInterval.isFinite, pollInterval >= 0.1, pollInterval <= 86_400 else {
            throw ValidationError("--poll-interval must be between 0.1 and 86400 seconds")
        }
        guard writeBack.isFinite, writeBack >= 0, writeBack <= 86_400 else {
            throw ValidationError("--write-back must be between 0 and 86400 seconds")
        }
        guard let mask = UInt32(umask, radix: 8), mask <= 0o777 else {
            throw ValidationError("--umask must be octal permission bits, such as 022 or 077")
        }
        _ = mask
        guard ByteSize.parse(cacheMaxSize) != nil else {
            throw ValidationError("--cache-max-size must be a size such as 1G, 500M or 0")
        }
    }

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "mount")
        let readable = try context.capability((any FileProviderReadWrite).self, of: provider, operation: "mount", location: target)
        var options = MountOptions()
        options.readOnly = readOnly
        options.writeBack = .seconds(saturating: writeBack)
        options.attributeTimeout = attrTimeout
        options.pollInterval = .seconds(saturating: pollInterval)
        options.allowOther = allowOther
        if let uid { options.uid = uid }
        if let gid { options.gid = gid }
        options.umask = mode_t(UInt32(umask, radix: 8) ?? 0o022)
        options.fuseOptions = fuseOptions
        options.readCacheLimit = ByteSize.parse(cacheMaxSize) ?? options.readCacheLimit
        options.cacheMaxAge = cacheMaxAge.map { .seconds($0.seconds) }
        let journal = trash ? JournalRecorder(context: context) : nil
        journal?.register(provider, location: target)
        defer { journal?.finish() }
        options.undoRecorder = journal
        let cache = cacheDir ?? Self.defaultCacheFolder(for: location)
        let status = MountStatus(json: json)
        let draining = Draining()
        options.events = { event in status.event(event, draining: draining) }
        let mount = try await context.perform("mount", target) {
            try await Mount(provider: readable, path: target.path, at: mountpoint, cacheDirectory: cache,
                            stateDirectory: context.stateDirectory, options: options, logger: context.logger) { owed in
                status.line("uploading \(owed) file\(owed == 1 ? "" : "s") an earlier mount of \(location) left in \(cache)",
                            ["event": .string("replaying"), "files": .integer(Int64(owed))])
            }
        }
        status.line("mounted \(location) at \(mount.mountpoint)\(readOnly ? " (read-only)" : ""); "
            + "Ctrl-C or fusermount3 -u \(mount.mountpoint) to unmount",
            ["event": .string("mounted"), "location": .string(location), "mountpoint": .string(mount.mountpoint),
             "read_only": .boolean(readOnly), "cache_dir": .string(cache)])
        // A second Ctrl-C while uploads finish: say what is left and where, then exit (130).
        InterruptHandler.onSecondInterrupt {
            let pending = mount.pendingPaths
            status.finishProgress()
            status.line("stopped waiting; \(pending.count) file\(pending.count == 1 ? "" : "s") still to upload, kept in "
                + "\(mount.cacheDirectory)/files and sent by the next gateway mount of \(location) with this cache folder"
                + (pending.isEmpty ? "" : ":"),
                ["event": .string("pending"), "files": .array(pending.map { .string($0) }), "cache_dir": .string(mount.cacheDirectory)])
            if !status.json {
                for path in pending.prefix(20) { Diagnostics.printLine("  " + path) }
                if pending.count > 20 { Diagnostics.printLine("  ... and \(pending.count - 20) more") }
            }
        }
        let failed = await mount.run { pending in
            draining.start(pending)
            status.line("unmounted \(mountpoint); uploading \(pending) file\(pending == 1 ? "" : "s") written through it "
                + "(Ctrl-C again to stop waiting)", ["event": .string("unmounting"), "pending": .integer(Int64(pending))])
        }
        status.finishProgress()
        guard failed == 0 else {
            status.line("mount \(location): \(failed) file\(failed == 1 ? "" : "s") could not be uploaded; kept in \(cache)/files",
                        ["event": .string("unmounted"), "failed": .integer(Int64(failed))])
            throw ExitCode(1)
        }
        status.line("unmounted \(mount.mountpoint)", ["event": .string("unmounted"), "failed": .integer(0)])
    }

    /// `$XDG_CACHE_HOME/gateway/mount/NAME` (else `~/.cache/...`): NAME is the location with
    /// anything but letters, digits, `-` and `_` replaced, so each location has its own.
    static func defaultCacheFolder(for location: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (NSHomeDirectory() + "/.cache")
        let name = String(location.unicodeScalars.map { scalar -> Character in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || scalar == "-" || scalar == "_" ? Character(scalar) : "_"
        }.prefix(120))
        return base + "/gateway/mount/" + (name.isEmpty ? "root" : name)
    }
}

/// Files still to upload once the mount ended (for the progress line).
final class Draining: Sendable {
    private let state = Mutex((total: 0, done: 0, active: false))

    func start(_ total: Int) { state.withLock { $0 = (total, 0, true) } }

    /// One more sent; returns the progress while draining.
    func sent() -> (done: Int, total: Int)? {
        state.withLock { state in
            guard state.active else { return nil }
            state.done += 1
            return (state.done, state.total)
        }
    }
}

/// What `gateway mount` says on stderr: text lines, or with `--json` one JSON object per line.
struct MountStatus: Sendable {
    let json: Bool
    private let progress = isatty(STDERR_FILENO) == 1

    init(json: Bool) { self.json = json }

    func line(_ text: String, _ fields: [String: JSONField]) {
        if json { raw(fields) } else { Diagnostics.printLine(text) }
    }

    /// One JSON object on a line of its own (JSON escapes control characters itself).
    private func raw(_ fields: [String: JSONField]) {
        FileHandle.standardError.write(Data((JSON.encode(fields) + "\n").utf8))
    }

    func event(_ event: MountEvent, draining: Draining) {
        switch event {
        case .uploaded(let path, let size):
            let progress = draining.sent()
            if json {
                raw(["event": .string("uploaded"), "path": .string(path), "size": .integer(size)])
            } else if let progress, self.progress {
                FileHandle.standardError.write(Data("\ruploaded \(progress.done)/\(progress.total)".utf8))
            }
        case .uploadFailed(let path, let error, let willRetry):
            if json {
                raw(["event": .string("upload_failed"), "path": .string(path), "error": .string(error), "will_retry": .boolean(willRetry)])
            }
        case .offline(let reason):
            line("the remote does not answer (\(reason)); working offline: cached files can be read, writes wait",
                 ["event": .string("offline"), "reason": .string(reason)])
        case .online:
            line("the remote answers again; waiting uploads go now", ["event": .string("online")])
        case .caughtUp(let changes):
            line("caught up with \(changes) change\(changes == 1 ? "" : "s") made on the remote since the last mount",
                 ["event": .string("caught_up"), "changes": .integer(Int64(changes))])
        case .listedAfresh(let saved):
            line("listed the remote afresh; its changes are followed from here"
                    + (saved ? ", and the next mount catches up from here" : " (the anchor was not saved: the next mount lists afresh too)"),
                 ["event": .string("listed_afresh"), "anchor_saved": .boolean(saved)])
        case .conflict(let path, let copy):
            line("conflict: \(Format.shown(path)) changed on the remote and through the mount; the mount's version is \(Format.shown(copy))",
                 ["event": .string("conflict"), "path": .string(path), "copy": .string(copy)])
        }
    }

    /// Ends the progress line (a terminal only).
    func finishProgress() {
        if progress, !json { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
