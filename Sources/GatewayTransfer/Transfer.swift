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
    /// Content hashes the source file is known to have (from its listing, or compared by
    /// `--checksum`). A streamed copy hashes the bytes as they pass and fails with
    /// ``FileProviderError/checksumMismatch(path:algorithm:expected:actual:)``, storing nothing, when
    /// they differ; the destination is also told the hashes (``WriteOptions/contentHashes``).
    public var sourceHashes: [HashAlgorithm: String]

    /// Creates options; by default existing files are replaced and times preserved.
    public init(overwrite: Bool = true, preserveModificationTimes: Bool = true, sourceHashes: [HashAlgorithm: String] = [:]) {
        self.overwrite = overwrite
        self.preserveModificationTimes = preserveModificationTimes
        self.sourceHashes = sourceHashes
    }
}

/// Moves single files between any two providers: server-side when both ends are the same remote and
/// it can, otherwise by streaming the source's read stream into the destination's atomic write, so no
/// temporary local file and no whole file in memory. ``CopyEngine`` runs it over whole trees.
public enum Transfer {
    /// Copies one file to exactly `destination.path`.
    public static func copyFile(from source: TransferEndpoint, to destination: TransferEndpoint,
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil,
                                sourceAttributes: FileObject? = nil) async throws {
        if source.isSameProvider(as: destination), sourceAttributes?.isSymbolicLink != true,
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
        let attributes: FileObject
        if let sourceAttributes {
            attributes = sourceAttributes
        } else {
            attributes = try await source.provider.attributesOfItem(path: source.path)
        }
        var stream = try await reader.readStream(path: source.path, options: ReadOptions())
        var write = WriteOptions(overwrite: options.overwrite, atomically: true, expectedSize: stream.expectedLength, progress: progress)
        write.returnsStoredAttributes = false
        let hashes = options.sourceHashes.merging(attributes.hashes) { known, _ in known }
        if let algorithm = HashAlgorithm.preference.first(where: { hashes[$0] != nil }), let expected = hashes[algorithm] {
            stream = stream.verifying(algorithm, expected: expected, path: source.path)
            write.contentHashes = hashes
        }
        if options.preserveModificationTimes, destination.provider.capabilities.supports(.setModificationDate) {
            write.modificationDate = attributes.modificationDate
        }
        _ = try await writer.write(path: destination.path, from: stream, options: write)
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
                                options: TransferOptions = TransferOptions(), progress: TransferProgress? = nil,
                                sourceAttributes: FileObject? = nil) async throws {
        if source.isSameProvider(as: destination),
           source.provider.capabilities.supports(.serverSideMove),
           let operations = source.provider as? any FileProviderOperations {
            try await operations.moveItem(path: source.path, to: destination.path, overwrite: options.overwrite)
            return
        }
        guard let remover = source.provider as? any FileProviderOperations else {
            throw FileProviderError.unsupported(operation: "removing files", path: source.path)
        }
        try await copyFile(from: source, to: destination, options: options, progress: progress, sourceAttributes: sourceAttributes)
        try await remover.removeItem(path: source.path, recursive: false)
    }
}
