import ArgumentParser
import Foundation
import StorageGateway

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a file, an empty folder, or (with -r) a folder and everything in it."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: [.customShort("r"), .customShort("R"), .long], help: "Remove folders and their contents.") var recursive = false
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "rm")
        let operations = try context.capability((any FileProviderOperations).self, of: provider, operation: "rm", location: target)
        try await context.perform("rm", target) {
            do {
                try await operations.removeItem(path: target.path, recursive: recursive)
            } catch where !recursive && error.failureKind == .directoryNotEmpty {
                throw CocoaError.described(.fileWriteUnknown, path: target.path, reason: "folder is not empty (use rm -r)")
            }
        }
    }
}
