import Foundation
public import GatewayCore

/// One side of a transfer: a provider and a path on it.
public struct TransferEndpoint: Sendable {
    /// The provider.
    public var provider: any FileProviderBasic
    /// The path on it.
    public var path: String
    /// How to name it in messages (`remote:path`).
    public var displayName: String

    /// Creates an endpoint.
    public init(provider: any FileProviderBasic, path: String, displayName: String? = nil) {
        self.provider = provider
        self.path = path
        self.displayName = displayName ?? "\(provider.name):\(path)"
    }

    /// The endpoint one level down.
    public func appending(_ relative: String) throws -> TransferEndpoint {
        let joined = try RemotePath.join(path, relative)
        let separator = displayName.hasSuffix("/") || displayName.hasSuffix(":") ? "" : "/"
        return TransferEndpoint(provider: provider, path: joined, displayName: displayName + separator + relative)
    }

    /// Whether both endpoints are on the same provider instance.
    func isSameProvider(as other: TransferEndpoint) -> Bool {
        guard type(of: provider) == type(of: other.provider) else { return false }
        return (provider as AnyObject) === (other.provider as AnyObject)
    }
}

/// Options for copies and moves.
public struct TransferOptions: Sendable {
    /// Replace existing files at the destination.
    public var overwrite: Bool
    /// Give copies the source's modification time where the destination can set it.
    public var preserveModificationTimes: Bool

    /// Creates options; by default existing files are replaced and times preserved.
    public init(overwrite: Bool = true, preserveModificationTimes: Bool = true) {
        self.overwrite = overwrite
        self.preserveModificationTimes = preserveModificationTimes
    }
}

/// A file or folder that could not be transferred, and why.
public struct TransferFailure: Error, Sendable, CustomStringConvertible {
    /// The operation (`copy`, `mkdir`, `remove`).
    public var operation: String
    /// The item, as `remote:path`.
    public var item: String
    /// The cause.
    public var underlying: any Error

    /// Creates a failure.
    public init(operation: String, item: String, underlying: any Error) {
        self.operation = operation
        self.item = item
        self.underlying = underlying
    }

    public var description: String { "\(operation) \(item): \(ErrorMessage.reason(for: underlying))" }
}

/// What a tree transfer did.
public struct TransferReport: Sendable {
    /// Files copied.
    public var filesCopied = 0
    /// Folders created (or found existing).
    public var foldersCreated = 0
    /// Bytes copied.
    public var bytesCopied: Int64 = 0
    /// Items that failed.
    public var failures: [TransferFailure] = []
    /// Items deliberately left out (for example symbolic links to folders), with the reason.
    public var skipped: [(item: String, reason: String)] = []

    /// Creates an empty report.
    public init() {}
}

/// Moves files and trees between any two providers: server-side when both ends are the same
/// remote and it can, otherwise by streaming the source's read stream into the destination's
/// atomic write, so no temporary local file and no whole file in memory.
///
/// This is the sequential foundation; the parallel, resumable copy engine builds on it.
public enum Transfer {
    /// Copies one file to exactly `destination.path`.
    public static func copyFile(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil) async throws {
        if source.isSameProvider(as: destination),
           source.provider.capabilities.supports(.serverSideCopy),
           let operations = source.provider as? any FileProviderOperations {
            try await operations.copyItem(path: source.path, to: destination.path, overwrite: options.overwrite, progress: progress)
            return
        }
        guard let reader = source.provider as? any FileProviderReadWrite else {
            throw FileProviderError.unsupported(operation: "reading files", path: source.path)
        }
        guard let writer = destination.provider as? any FileProviderReadWrite else {
            throw FileProviderError.unsupported(operation: "writing files", path: destination.path)
        }
        let attributes = try await source.provider.attributesOfItem(path: source.path)
        let stream = try await reader.readStream(path: source.path, options: ReadOptions())
        var write = WriteOptions(overwrite: options.overwrite, atomically: true, expectedSize: stream.expectedLength, progress: progress)
        if options.preserveModificationTimes, destination.provider.capabilities.supports(.setModificationDate) {
            write.modificationDate = attributes.modificationDate
        }
        _ = try await writer.write(path: destination.path, from: stream, options: write)
    }

    /// Copies the contents of the folder `source` into the folder `destination` (created, with its
    /// parents), empty subfolders included. Failures of single items are collected in the report
    /// and passed to `onFailure`; the walk goes on.
    public static func copyTree(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil,
                                onFailure: @Sendable (TransferFailure) -> Void = { _ in },
                                onSkip: @Sendable (_ item: String, _ reason: String) -> Void = { _, _ in }) async throws -> TransferReport {
        try refuseNesting(source: source, destination: destination)
        guard let target = destination.provider as? any FileProviderOperations else {
            throw FileProviderError.unsupported(operation: "creating folders", path: destination.path)
        }
        var report = TransferReport()
        try await target.createFolder(path: destination.path, withIntermediateDirectories: true)
        report.foldersCreated += 1
        for try await item in source.provider.walk(path: source.path) {
            try progress.checkCancellation()
            guard let relative = RemotePath.relative(item.path, to: source.path), !relative.isEmpty else { continue }
            let from = TransferEndpoint(provider: source.provider, path: item.path,
                                        displayName: try source.appending(relative).displayName)
            let to = try destination.appending(relative)
            do {
                switch item.type {
                case .directory:
                    try await target.createFolder(path: to.path, withIntermediateDirectories: true)
                    report.foldersCreated += 1
                case .file, .symbolicLink:
                    progress?.addToTotals(bytes: item.size ?? 0, files: 1)
                    progress?.setCurrentItem(relative)
                    do {
                        try await copyFile(from: from, to: to, options: options, progress: progress)
                    } catch where item.type == .symbolicLink && error.failureKind == .isADirectory {
                        let reason = "symbolic link to a folder is not followed"
                        report.skipped.append((from.displayName, reason))
                        onSkip(from.displayName, reason)
                        continue
                    }
                    progress?.addFile()
                    report.filesCopied += 1
                    report.bytesCopied += item.size ?? 0
                case .other:
                    continue
                }
            } catch let error where error.failureKind == .cancelled {
                throw error
            } catch {
                let failure = TransferFailure(operation: item.type == .directory ? "mkdir" : "copy", item: from.displayName, underlying: error)
                report.failures.append(failure)
                onFailure(failure)
            }
        }
        return report
    }

    /// Refuses to copy a folder into itself, which would never end. Compares the endpoints' URLs, so
    /// two remotes that reach the same place (a named remote and a bare path) are caught too.
    static func refuseNesting(source: TransferEndpoint, destination: TransferEndpoint) throws {
        guard let from = try? source.provider.url(of: source.path).standardizedFileURL,
              let to = try? destination.provider.url(of: destination.path).standardizedFileURL,
              from.scheme == to.scheme, from.host == to.host, from.port == to.port else { return }
        let fromPath = from.path.hasSuffix("/") ? String(from.path.dropLast()) : from.path
        if to.path == fromPath || to.path.hasPrefix(fromPath + "/") || fromPath.isEmpty {
            throw FileProviderError.invalidPath(path: destination.path, reason: "the destination is inside the source folder")
        }
    }

    /// Moves a file: renamed server-side when both ends are the same remote, else copied and the
    /// source removed only after the copy completed.
    public static func moveFile(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil) async throws {
        if source.isSameProvider(as: destination),
           source.provider.capabilities.supports(.serverSideMove),
           let operations = source.provider as? any FileProviderOperations {
            try await operations.moveItem(path: source.path, to: destination.path, overwrite: options.overwrite)
            return
        }
        guard let remover = source.provider as? any FileProviderOperations else {
            throw FileProviderError.unsupported(operation: "removing files", path: source.path)
        }
        try await copyFile(from: source, to: destination, options: options, progress: progress)
        try await remover.removeItem(path: source.path, recursive: false)
    }

    /// Moves a folder tree: renamed server-side when possible, else copied and the source removed
    /// only if every item was copied.
    public static func moveTree(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil,
                                onFailure: @Sendable (TransferFailure) -> Void = { _ in },
                                onSkip: @Sendable (_ item: String, _ reason: String) -> Void = { _, _ in }) async throws -> TransferReport {
        try refuseNesting(source: source, destination: destination)
        if source.isSameProvider(as: destination),
           source.provider.capabilities.supports(.serverSideMove),
           let operations = source.provider as? any FileProviderOperations,
           (try? await destination.provider.attributesOfItem(path: destination.path)) == nil {
            try await operations.moveItem(path: source.path, to: destination.path, overwrite: false)
            return TransferReport()
        }
        guard let remover = source.provider as? any FileProviderOperations else {
            throw FileProviderError.unsupported(operation: "removing files", path: source.path)
        }
        let report = try await copyTree(from: source, to: destination, options: options, progress: progress,
                                        onFailure: onFailure, onSkip: onSkip)
        if report.failures.isEmpty {
            try await remover.removeItem(path: source.path, recursive: true)
        }
        return report
    }
}
