import ArgumentParser
import Foundation
import StorageGateway

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a file, an empty folder, or (with -r) a folder and everything in it.",
        discussion: HelpText.reflow("""
        What is removed goes to the remote's trash: one rename, however large the folder (a folder
        `.gateway-trash` at a network remote's root; the desktop trash for local files, which file
        managers and trash-cli share). `gateway undo` puts it back; `gateway trash list` shows it.
        With --no-trash, or `"trash": false` in the remote's config, removal is permanent.

        Examples:
          gateway rm -r docs:old-reports
          gateway undo
        """)
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var trash: TrashFlags
    @Flag(name: [.customShort("r"), .customShort("R"), .long], help: "Remove folders and their contents.") var recursive = false
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "rm")
        let operations = try context.capability((any FileProviderOperations).self, of: provider, operation: "rm", location: target)
        let journal = JournalRecorder(context: context)
        journal.register(provider, location: target)
        defer { journal.finish() }
        try await context.perform("rm", target) {
            do {
                if let undoable = operations as? any FileProviderUndoable {
                    let record = try await undoable.removeItemUndoably(path: target.path, recursive: recursive, useTrash: !trash.noTrash)
                    journal.record(record, on: provider)
                } else {
                    try await operations.removeItem(path: target.path, recursive: recursive)
                }
            } catch where !recursive && error.failureKind == .directoryNotEmpty {
                throw CocoaError.described(.fileWriteUnknown, path: target.path, reason: "folder is not empty (use rm -r)")
            }
        }
    }
}
