import ArgumentParser
import Foundation
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
        and a file's bytes are fetched when a program reads them (a sequential read streams the
        rest of the file; a read elsewhere starts where it asks), always of the version the
        listing showed: a file changed on the remote while open fails that read with EIO instead
        of mixing two versions.

        Changes made on the remote are followed (inotify on a local folder; on WebDAV and FTP a
        look every --poll-interval seconds, or sync-collection reports where the server has them)
        and pushed into the kernel: ls, cat and inotifywait inside the mount see them within the
        poll interval. Names and attributes are otherwise kept --attr-timeout seconds (60). A file
        changed on the remote while it has changes not yet uploaded keeps both: the remote's
        version keeps the name, the mount's goes to "NAME (conflict YYYY-MM-DD HHMMSS).EXT".

        Writes go to a cache file (in --cache-dir, default $XDG_CACHE_HOME/gateway/mount/) and
        are uploaded with the remote's atomic write --write-back seconds after the file's last
        close; fsync returns once the file is on the remote. Folders, removals and renames
        happen on the remote at once. chmod and chown are accepted and not kept; times are kept
        where the remote can set them. On unmount, pending uploads finish first ("uploading N
        files"); a file that cannot be sent stays in the cache folder and the exit code is 1.
        One mount per cache folder: a second one is refused. The uploads owed are listed in the
        state store ($GATEWAY_STATE_DIR, else $XDG_STATE_HOME/gateway): after a crash or kill -9,
        the next mount with the same cache folder sends them before it mounts.

        Needs /dev/fuse and fusermount3 (Debian: fuse3). Prints "mounted LOCATION at MOUNTPOINT"
        on stderr once the mount is usable.
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
    @Option(name: .long, help: "Fetched file contents kept in the cache folder once no open file uses them (like 1G, 500M; default 1G).")
    var cacheMaxSize: String = "1G"
    @Option(name: .customShort("o"), help: "A FUSE mount option, passed through (repeatable).") var fuseOptions: [String] = []
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
        let cache = cacheDir ?? Self.defaultCacheFolder(for: location)
        let mount = try await context.perform("mount", target) {
            try await Mount(provider: readable, path: target.path, at: mountpoint, cacheDirectory: cache,
                            stateDirectory: context.stateDirectory, options: options, logger: context.logger) { owed in
                Diagnostics.printLine("uploading \(owed) file\(owed == 1 ? "" : "s") an earlier mount of \(location) left in \(cache)")
            }
        }
        Diagnostics.printLine("mounted \(location) at \(mount.mountpoint)\(readOnly ? " (read-only)" : ""); "
            + "Ctrl-C or fusermount3 -u \(mount.mountpoint) to unmount")
        let failed = await mount.run { pending in
            Diagnostics.printLine("unmounted \(mountpoint); uploading \(pending) file\(pending == 1 ? "" : "s") written through it")
        }
        guard failed == 0 else {
            Diagnostics.printLine("mount \(location): \(failed) file\(failed == 1 ? "" : "s") could not be uploaded; kept in \(cache)/files")
            throw ExitCode(1)
        }
        Diagnostics.printLine("unmounted \(mount.mountpoint)")
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
