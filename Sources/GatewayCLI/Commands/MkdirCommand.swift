import ArgumentParser
import Foundation
import StorageGateway

struct MkdirCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mkdir",
        abstract: "Create a folder and any missing parents (an existing folder is fine)."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let (context, target, provider) = try await CommandContext.open(global, location, for: "mkdir")
        let operations = try context.capability((any FileProviderOperations).self, of: provider, operation: "mkdir", location: target)
        try await context.perform("mkdir", target) {
            try await operations.createFolder(path: target.path, withIntermediateDirectories: true)
        }
    }
}
