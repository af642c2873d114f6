/// Content hashes of stored files, for comparing two copies without moving their bytes
/// (`gateway copy --checksum`, `gateway check --checksum`) and for verifying transfers.
///
/// ``ProviderCapabilities/hashAlgorithms`` lists the algorithms a provider can answer for. A
/// provider either reads the hash the server stored (Nextcloud's `oc:checksums`) or computes it from
/// a file it can read cheaply (Local); it never downloads a remote file to hash it.
///
/// Whether hashes are there can depend on the remote, not only on its type: a WebDAV provider
/// conforms, but only a Nextcloud or ownCloud server (`vendor`) stores them. So `as?` finds the
/// method, and ``ProviderCapabilities/hashAlgorithms`` is the one place that says whether this
/// remote answers: empty means every call throws ``FileProviderError/unsupported(operation:path:)``.
public protocol FileProviderHashing: FileProviderBasic {
    /// The `algorithm` digest of the file at `path` as lowercase hexadecimal, or `nil` when the
    /// backend has none stored for this file (a file uploaded without a checksum).
    ///
    /// - Throws: not found, is a folder, or ``FileProviderError/unsupported(operation:path:)`` for an
    ///   algorithm outside ``ProviderCapabilities/hashAlgorithms``.
    func hash(of path: String, algorithm: HashAlgorithm) async throws -> String?
}

extension FileProviderBasic {
    /// The `algorithm` hash of `item` (a file on this provider): the one its listing carried in
    /// ``FileObject/hashes``, else the one ``FileProviderHashing`` answers, else `nil`.
    public func contentHash(of item: FileObject, algorithm: HashAlgorithm) async throws -> String? {
        if let known = item.hashes[algorithm] { return known }
        guard capabilities.hashAlgorithms.contains(algorithm), let hashing = self as? any FileProviderHashing else { return nil }
        return try await hashing.hash(of: item.path, algorithm: algorithm)
    }
}
