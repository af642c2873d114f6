import GatewayCore

extension CopyEngine {
    /// The hash a `--checksum` run compares with: the preferred one both sides answer for, or `nil`
    /// (then files of the same size count as unchanged).
    func checksumAlgorithm(_ source: TransferEndpoint, _ destination: TransferEndpoint) -> HashAlgorithm? {
        guard options.checksum else { return nil }
        return HashAlgorithm.common(source.provider.capabilities.hashAlgorithms, destination.provider.capabilities.hashAlgorithms)
    }

    /// The operator's note when a `--checksum` run has no hash to compare with.
    func checksumNotice(_ source: TransferEndpoint, _ destination: TransferEndpoint) -> String? {
        guard options.checksum, checksumAlgorithm(source, destination) == nil else { return nil }
        return "checksum: \(source.provider.name) and \(destination.provider.name) have no hash type in common; comparing by size only"
    }

    /// Compares a source file with the destination's file of the same size by content hash (only
    /// with ``CopyOptions/checksum``). Returns the verdict (`nil` when there is nothing to compare:
    /// no checksum run, no destination file, or different sizes) and the source's hash. With
    /// `forCopy`, the source's hash is looked up for a file about to be copied too, so that the copy
    /// verifies it while streaming and the destination can store it (Nextcloud); a local source file
    /// is then read twice, once to hash it.
    func compareChecksums(_ item: FileObject, on source: TransferEndpoint, with existing: FileObject?,
                          on destination: TransferEndpoint, forCopy: Bool = true) async throws -> (verdict: ChecksumVerdict?, sourceHashes: [HashAlgorithm: String]) {
        guard options.checksum else { return (nil, [:]) }
        let comparable = existing.map { !$0.isDirectory && $0.size == item.size } ?? false
        // Without an algorithm both sides answer for, a hash the destination's source stamp recorded
        // (plain WebDAV) is compared where the source can compute it.
        let stamped = existing?.sourceStamp?.hashes ?? [:]
        let reported = comparable ? HashAlgorithm.preference.first {
            stamped[$0] != nil && source.provider.capabilities.hashAlgorithms.contains($0)
        } : nil
        guard let algorithm = checksumAlgorithm(source, destination) ?? reported else { return (comparable ? .unavailable : nil, [:]) }
        guard comparable, let existing else {
            guard forCopy, !options.dryRun else { return (nil, [:]) }
            return (nil, try await source.provider.contentHash(of: item, algorithm: algorithm).map { [algorithm: $0] } ?? [:])
        }
        async let mine = source.provider.contentHash(of: item, algorithm: algorithm)
        async let theirs = Self.destinationHash(existing, stamped: stamped[algorithm], on: destination, algorithm: algorithm)
        let (sourceHash, destinationHash) = try await (mine, theirs)
        let known = sourceHash.map { [algorithm: $0] } ?? [:]
        guard let sourceHash, let destinationHash else { return (.unavailable, known) }
        return (sourceHash.lowercased() == destinationHash.lowercased() ? .same : .different, known)
    }

    /// The destination file's hash: its source stamp's, else what the destination answers.
    private static func destinationHash(_ item: FileObject, stamped: String?, on destination: TransferEndpoint,
                                        algorithm: HashAlgorithm) async throws -> String? {
        if let stamped { return stamped }
        return try await destination.provider.contentHash(of: item, algorithm: algorithm)
    }
}
