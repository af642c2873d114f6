import ArgumentParser
import Foundation
import StorageGateway

struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a file or a folder's contents between any two remotes.",
        discussion: """
        A file goes to DST, or into DST when DST ends with '/' or is an existing folder. A folder's
        contents, empty subfolders included, are copied into DST (created if missing). Every file is
        written under a temporary name and renamed into place when complete, so an interrupted copy
        never leaves a truncated file under its final name. Modification times are preserved where the
        destination can set them (local folders; Nextcloud/ownCloud WebDAV).

        Examples:
          gateway copy report.pdf docs:reports/
          gateway copy ./photos backup:photos
        """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Source: REMOTE:PATH or a local path.") var source: String
    @Argument(help: "Destination: REMOTE:PATH or a local path.") var destination: String

    func run() async throws {
        try await TransferCommand.run(.copy, global: global, source: source, destination: destination)
    }
}

struct MoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move a file or a folder between any two remotes.",
        discussion: """
        Within one remote this is a rename. Between remotes the item is copied (see `gateway copy`)
        and the source removed only after every file arrived; on any failure the source stays.
        """
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Source: REMOTE:PATH or a local path.") var source: String
    @Argument(help: "Destination: REMOTE:PATH or a local path.") var destination: String

    func run() async throws {
        try await TransferCommand.run(.move, global: global, source: source, destination: destination)
    }
}

/// The shared body of `copy` and `move`.
enum TransferCommand {
    enum Kind: String { case copy, move }

    static func run(_ kind: Kind, global: GlobalOptions, source: String, destination: String) async throws {
        let context = try CommandContext.make(global)
        let from = try context.location(source)
        let to = try context.location(destination)
        let sourceProvider = try await context.provider(for: from, operation: kind.rawValue)
        let destinationProvider = try await context.provider(for: to, operation: kind.rawValue)
        let item = try await context.perform(kind.rawValue, from) { try await sourceProvider.attributesOfItem(path: from.path) }
        let sourceEndpoint = TransferEndpoint(provider: sourceProvider, path: from.path, displayName: from.original)
        let sameRemote = (sourceProvider as AnyObject) === (destinationProvider as AnyObject)
        context.logger.debug("\(kind.rawValue) plan", metadata: [
            "source": .string("\(sourceProvider.typeName) \(from.original)"),
            "destination": .string("\(destinationProvider.typeName) \(to.original)"),
            "mode": .string(sameRemote && sourceProvider.capabilities.supports(kind == .copy ? .serverSideCopy : .serverSideMove)
                ? "server-side" : "streamed"),
        ])
        let progress = TransferProgress()
        let renderer = ProgressRenderer(progress: progress, enabled: context.showsProgress)

        if item.isDirectory {
            let target = TransferEndpoint(provider: destinationProvider, path: to.path, displayName: to.original)
            let report: TransferReport
            do {
                let onFailure: @Sendable (TransferFailure) -> Void = { Diagnostics.printLine($0.description) }
                let quiet = global.quiet
                let onSkip: @Sendable (String, String) -> Void = { item, reason in
                    if !quiet { Diagnostics.printLine("\(kind.rawValue) \(item): skipped: \(reason)") }
                }
                switch kind {
                case .copy:
                    report = try await Transfer.copyTree(from: sourceEndpoint, to: target, progress: progress,
                                                         onFailure: onFailure, onSkip: onSkip)
                case .move:
                    report = try await Transfer.moveTree(from: sourceEndpoint, to: target, progress: progress,
                                                         onFailure: onFailure, onSkip: onSkip)
                }
            } catch {
                renderer.finish()
                throw Diagnostics.fail(operation: kind.rawValue, item: from.original, error: error)
            }
            renderer.finish()
            if context.showsProgress {
                let verb = kind == .copy ? "copied" : "moved"
                Diagnostics.printLine("\(verb) \(report.filesCopied) files (\(Format.bytes(report.bytesCopied))), "
                                      + "\(report.skipped.count) skipped, \(report.failures.count) failed")
            }
            if !report.failures.isEmpty {
                if kind == .move { Diagnostics.printLine("move \(from.original): source kept because some items failed") }
                throw ExitCode(1)
            }
            return
        }

        defer { renderer.finish() }
        let targetPath = try await context.perform(kind.rawValue, to) { () -> String in
            if to.hasTrailingSlash { return try RemotePath.join(to.path, item.name) }
            if let existing = try? await destinationProvider.attributesOfItem(path: to.path), existing.isDirectory {
                return try RemotePath.join(to.path, item.name)
            }
            return to.path
        }
        let targetName = targetPath == to.path ? to.original : (to.original.hasSuffix("/") ? to.original + item.name : to.original + "/" + item.name)
        let target = TransferEndpoint(provider: destinationProvider, path: targetPath, displayName: targetName)
        progress.setTotalBytes(item.size)
        progress.setCurrentItem(item.name)
        let location = RemoteLocation(remote: to.remote, path: targetPath, original: targetName)
        try await context.perform(kind.rawValue, location) {
            switch kind {
            case .copy: try await Transfer.copyFile(from: sourceEndpoint, to: target, progress: progress)
            case .move: try await Transfer.moveFile(from: sourceEndpoint, to: target, progress: progress)
            }
        }
    }
}
