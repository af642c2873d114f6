import ArgumentParser
import Foundation
import StorageGateway

struct TrashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trash",
        abstract: "List, restore and empty a remote's trash.",
        discussion: HelpText.reflow("""
        Removals and overwrites by the gateway go to the remote's trash: a folder on network remotes
        (`trash_dir`, by default `.gateway-trash` at the remote's root), the desktop trash for local
        files (~/.local/share/Trash, or .Trash-UID at the top of another file system: file managers
        and trash-cli see the same items). A WebDAV remote on Nextcloud or ownCloud (vendor) uses
        the server's own trash bin, shared with its web interface, unless trash_dir is set. Each
        item keeps its original path and deletion time.
        """),
        subcommands: [TrashListCommand.self, TrashRestoreCommand.self, TrashEmptyCommand.self]
    )
}

/// Opens the trash of a location's remote, or fails clearly.
private func openTrash(_ global: GlobalOptions, _ argument: String, operation: String)
    async throws -> (context: CommandContext, location: RemoteLocation, trash: Trash) {
    let (context, location, provider) = try await CommandContext.open(global, argument, for: operation)
    guard let undoable = provider as? any FileProviderUndoable, let trash = undoable.trash else {
        throw Diagnostics.fail(operation: operation, item: location.original,
                               error: FileProviderError.unsupported(operation: "a trash (\"trash\": false in the config)", path: location.path))
    }
    return (context, location, trash)
}

struct TrashListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List what the trash holds from LOCATION and below: deletion time, size, original path.",
        discussion: HelpText.reflow("""
        Examples:
          gateway trash list docs:
          gateway trash list --json docs:reports
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Flag(help: "One JSON array of {original_path, name, type, size, deleted}.") var json = false
    @Argument(help: "REMOTE:PATH (the remote's root shows everything).") var location: String

    func run() async throws {
        let (_, location, trash) = try await openTrash(global, location, operation: "trash list")
        let out = StandardOutput()
        defer { out.flush() }
        var first = true
        if json { out.write("[") }
        do {
            for try await item in trash.items(under: location.path) {
                let original = item.originalPath.map { RemoteLocation(remote: location.remote, path: $0).original }
                if json {
                    let value: JSONField = .object([
                        "original_path": JSONField(original), "name": .string(item.name),
                        "type": JSONField(item.type?.rawValue), "size": JSONField(item.type == .directory ? nil : item.size),
                        "deleted": JSONField(Format.iso8601(item.deletionDate)),
                    ])
                    out.write((first ? "" : ",") + JSON.encode(value))
                } else {
                    let size = item.type == .directory ? "folder" : item.size.map(String.init) ?? "-"
                    out.line("\(Format.listingDate(item.deletionDate))  \(size.leftPadded(12))  \(Format.shown(original ?? "(unreadable record: \(item.name))"))")
                }
                first = false
            }
        } catch {
            if json { out.line("]") }
            out.flush()
            throw Diagnostics.fail(operation: "trash list", item: location.original, error: error)
        }
        if json { out.line("]") }
    }
}

struct TrashRestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a trashed item back where it was (or --to elsewhere on the same remote).",
        discussion: HelpText.reflow("""
        PATH is the item's original path (as `gateway trash list` shows it); when the trash holds it
        more than once, the most recently deleted comes back. Nothing is replaced: an item at the
        original path must be moved away first.

        Example:
          gateway trash restore docs: /reports/2026.pdf
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "Restore to this path on the same remote instead.") var to: String?
    @Argument(help: "REMOTE: (the remote whose trash holds the item).") var location: String
    @Argument(help: "The item's original path.") var path: String

    func run() async throws {
        let (_, location, trash) = try await openTrash(global, location, operation: "trash restore")
        let original = try RemotePath.normalize(path)
        var newest: TrashedItem?
        do {
            for try await item in trash.items(under: original) where item.originalPath == original {
                if newest == nil || (item.deletionDate ?? .distantPast) > (newest?.deletionDate ?? .distantPast) { newest = item }
            }
            guard let newest else {
                throw CocoaError.described(.fileNoSuchFile, path: original, reason: "the trash holds nothing from \(original)")
            }
            let target = try to.map(RemotePath.normalize) ?? original
            try await trash.restore(newest, to: target)
            if !global.quiet {
                Diagnostics.printLine("restored \(RemoteLocation(remote: location.remote, path: target).original)")
            }
        } catch {
            throw Diagnostics.fail(operation: "trash restore", item: RemoteLocation(remote: location.remote, path: original).original, error: error)
        }
    }
}

struct TrashEmptyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "empty",
        abstract: "Remove for good what the trash holds from LOCATION and below (--older-than: only older items).",
        discussion: HelpText.reflow("""
        Examples:
          gateway trash empty --older-than 30d docs:
          gateway trash empty docs:
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Only items deleted longer ago than this: 30s, 15m, 2h, 7d.", valueName: "duration"))
    var olderThan: DurationArgument?
    @Argument(help: "REMOTE:PATH (the remote's root empties everything).") var location: String

    func run() async throws {
        let (_, location, trash) = try await openTrash(global, location, operation: "trash empty")
        let cutoff = olderThan.map { Date().addingTimeInterval(-TimeInterval($0.seconds)) }
        var doomed: [TrashedItem] = []
        do {
            for try await item in trash.items(under: location.path) {
                if let cutoff {
                    guard let deleted = item.deletionDate, deleted < cutoff else { continue }
                }
                doomed.append(item)
            }
        } catch {
            throw Diagnostics.fail(operation: "trash empty", item: location.original, error: error)
        }
        var failures = 0
        for item in doomed {
            do {
                try await trash.delete(item)
            } catch {
                failures += 1
                Diagnostics.printLine("trash empty \(Format.shown(item.originalPath ?? item.name)): \(ErrorMessage.reason(for: error))")
            }
        }
        if !global.quiet { Diagnostics.printLine("trash: removed \(doomed.count - failures) item(s) for good") }
        if failures > 0 { throw ExitCode(1) }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
