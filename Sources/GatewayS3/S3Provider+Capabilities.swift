public import Foundation
public import GatewayCore
public import GatewayMedia
public import GatewayState
import GatewayS3Protocol
public import Logging

/// Change monitoring by polling: each round lists every folder and compares size and ETag with the
/// snapshot in the local state store (see ``SnapshotMonitoring``).
extension S3Provider: SnapshotMonitoring {}

/// Thumbnails and metadata (the shared ``RangedMediaProvider``) over ranged `GET`s.
extension S3Provider: RangedMediaProvider {}

extension S3Provider: FileProviderUndoable {
    /// On a bucket that keeps versions, removals and overwrites are undone by copying the previous
    /// versions back (the trash holds only records of which versions they were:
    /// `S3VersionTrashVolume`); otherwise the trash folder (a key prefix, by default
    /// `.gateway-trash/`) takes them with a server-side copy and delete. `nil` with `trash: false`.
    public var trash: Trash? {
        guard trashSettings.enabled, let folder = try? trashSettings.folderPath() else { return nil }
        return Trash(locator: S3TrashLocator(provider: self, folder: folder))
    }
}

/// MD5 digests without a download: the one the writer stored (`x-amz-meta-md5`), or a single-part
/// upload's ETag. A multipart object written without a known MD5 has none (`nil`).
extension S3Provider: FileProviderHashing {
    public func hash(of path: String, algorithm: HashAlgorithm) async throws -> String? {
        let remote = try RemotePath.normalize(path)
        guard algorithm == .md5 else {
            throw FileProviderError.unsupported(operation: "\(algorithm.checksumTypeName) hashes on S3 (only MD5)", path: remote)
        }
        guard let item = try await headObject(remote) else {
            if try await folderExists(remote) { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
            throw notFound(remote)
        }
        return item.hashes[.md5]
    }
}

/// An ``S3Provider`` that shares objects by presigned URLs: anyone with the link can `GET` the
/// object until it expires (at most 7 days, AWS's limit). A presigned URL cannot be revoked short of
/// rotating the key that signed it; for links that can be, configure `links` (the gateway's link
/// server: ``S3ProviderWithLinks``). What the registry makes when the configuration has no `links`.
public final class S3ProviderWithPresignedLinks: S3Provider, FileProviderSharing, @unchecked Sendable {
    public func publicLink(to path: String, expiresAfter: Duration?) async throws -> URL {
        let remote = try RemotePath.normalize(path)
        guard try await headObject(remote) != nil else {
            if try await folderExists(remote) {
                throw FileProviderError.unsupported(operation: "a presigned link to a folder (S3 signs one object per link)", path: remote)
            }
            throw notFound(remote)
        }
        let seconds = expiresAfter.map { Int($0.components.seconds) } ?? 604_800
        guard (1...604_800).contains(seconds) else {
            throw FileProviderError.unsupported(operation: "a presigned link valid for more than 7 days (S3's limit)", path: remote)
        }
        let encodedPath = bucketPath + "/" + S3URIEncoding.encode(key(remote), keepingSlashes: true)
        let query = signer.presignedQuery(method: "GET", path: encodedPath, query: "", host: hostHeader, expires: seconds, date: Date())
        guard let url = URL(string: origin + encodedPath + "?" + query) else {
            throw FileProviderError.invalidPath(path: remote, reason: "no URL can be made for this key")
        }
        return url
    }

    public func revokePublicLinks(to path: String) async throws {
        throw FileProviderError.unsupported(operation: "revoking presigned S3 links (they hold until they expire, unless the signing key is rotated; use the gateway's link server, `links`, for links that can be revoked)", path: path)
    }
}

/// An ``S3Provider`` whose public links go through the gateway's link server (revocable), made when
/// the configuration has a `links` object.
public final class S3ProviderWithLinks: S3Provider, GatewayLinkSharing, @unchecked Sendable {
    public let publicLinks: PublicLinks

    /// A provider whose links are `links`; as ``S3Provider/init(configuration:trash:stateDirectory:logger:)``.
    public init(links: PublicLinks, configuration: S3Configuration, trash: TrashSettings = TrashSettings(),
                stateDirectory: URL = StateLocation.directory(), logger: Logger = Logger(label: "gateway.s3")) {
        self.publicLinks = links
        super.init(configuration: configuration, trash: trash, stateDirectory: stateDirectory, logger: logger)
    }
}
