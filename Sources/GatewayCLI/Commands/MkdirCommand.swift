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
        let context = try CommandContext.make(global)
        let target = try context.location(location)
        let provider = try await context.provider(for: target, operation: "mkdir")
        let operations = try context.capability((any FileProviderOperations).self, of: provider, operation: "mkdir", location: target)
        try await context.perform("mkdir", target) {
            try await operations.createFolder(path: target.path, withIntermediateDirectories: true)
        }
    }
}

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove a file, an empty folder, or (with -r) a folder and everything in it."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: [.customShort("r"), .customShort("R"), .long], help: "Remove folders and their contents.") var recursive = false
    @Argument(help: "REMOTE:PATH or a local path.") var location: String

    func run() async throws {
        let context = try CommandContext.make(global)
        let target = try context.location(location)
        let provider = try await context.provider(for: target, operation: "rm")
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

struct AboutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "about",
        abstract: "Show a remote's storage: total, used and free bytes.",
        discussion: """
        --json prints {total, used, free} in bytes, null where the remote does not tell. A remote that
        reports no quota at all is an error (exit 1) with one line saying so.
        """
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Argument(help: "REMOTE: (or a local path).") var location: String

    func run() async throws {
        let context = try CommandContext.make(global)
        let target = try context.location(location)
        let provider = try await context.provider(for: target, operation: "about")
        let volume = try await context.perform("about", target) {
            let volume = try await provider.storageProperties(path: target.path)
            if volume.isEmpty { throw FileProviderError.unsupported(operation: "reporting quota", path: target.path) }
            return volume
        }
        let out = StandardOutput()
        if json {
            struct Output: Encodable {
                var total, used, free: Int64?
                enum CodingKeys: String, CodingKey { case total, used, free }
                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(total, forKey: .total)
                    try container.encode(used, forKey: .used)
                    try container.encode(free, forKey: .free)
                }
            }
            out.line(JSON.encode(Output(total: volume.totalCapacity, used: volume.usedCapacity, free: volume.availableCapacity)))
        } else {
            func show(_ value: Int64?) -> String { value.map { "\(Format.bytes($0)) (\($0))" } ?? "unknown" }
            out.line("Total: \(show(volume.totalCapacity))")
            out.line("Used:  \(show(volume.usedCapacity))")
            out.line("Free:  \(show(volume.availableCapacity))")
        }
        out.flush()
    }
}
