import ArgumentParser
import Foundation
import StorageGateway

struct MkdirCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mkdir",
        abstract: "Create a folder and any missing parents (an existing folder is fine).",
        discussion: "`gateway undo` removes the folders it made, as long as nothing was put in them since."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "mkdir")
        let operations = try context.capability((any FileProviderOperations).self, of: provider, operation: "mkdir", location: target)
        let journal = JournalRecorder(context: context)
        journal.register(provider, location: target)
        defer { journal.finish() }
        try await context.perform("mkdir", target) {
            if let undoable = operations as? any FileProviderUndoable {
                for record in try await undoable.createFolderUndoably(path: target.path) { journal.record(record, on: provider) }
            } else {
                try await operations.createFolder(path: target.path, withIntermediateDirectories: true)
            }
        }
    }
}
