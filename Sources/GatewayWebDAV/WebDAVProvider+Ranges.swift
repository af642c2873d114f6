import Foundation
public import GatewayCore

/// A large file of a plan written in ranges by several workers, on any machines (see
/// ``FileProviderRangedWrite``): each worker sends its range as a `PUT` with `Content-Range` into
/// the shared partial file `.NAME.gateway-resume-KEY.partial` (Apache mod_dav writes such a `PUT`
/// into the file in place, without truncating it, and a range past the end makes the file that
/// long), then reads back the first and last 4 KiB of its range before it says the range is done.
/// `gateway finalize` compares both ends of every range with the source once more, then the commit
/// checks the size and `MOVE`s the file into place.
///
/// Whether the server can is tried once, when the plan is made, with a hidden 2-byte file written
/// as two one-byte ranges, the second byte first, then read back. A server that refuses
/// `Content-Range` (nginx: 501), ignores it (stores the range as the whole file) or truncates the
/// file at each `PUT` fails the probe, and its plans copy large files whole. The same switches as
/// the ranged uploads of one copy apply: `ranged_uploads: false`, and Nextcloud and ownCloud
/// remotes, never split.
extension WebDAVProvider: FileProviderRangedWrite {
    public func acceptsRangedWrites(below path: String) async throws -> Bool {
        guard rangedUploads, vendor == .other, !rangedUploadsRefused.withLock({ $0 }) else { return false }
        let probe = try await rangedWriteProbePath(below: path)
        let works: Bool
        do {
            works = try await probeRanges(probe)
        } catch {
            await discard(probe)
            throw error
        }
        await discard(probe)
        if !works {
            refuseRangedUploads("server does not write PUTs with Content-Range into a file in place; plans copy large files whole")
        }
        return works
    }

    /// Writes "b" at offset 1, then "a" at offset 0, of `probe` as ranged `PUT`s, and tells whether
    /// the file then reads "ab".
    private func probeRanges(_ probe: String) async throws -> Bool {
        for (offset, byte) in [(Int64(1), UInt8(ascii: "b")), (0, UInt8(ascii: "a"))] {
            let (head, _) = try await send("PUT", probe, headers: [
                (name: "Content-Range", value: "bytes \(offset)-\(offset)/2"),
                (name: "Content-Type", value: ""),
            ], body: .data(Data([byte])))
            guard head.isSuccess else { return false }
        }
        return try await contents(path: probe) == Data("ab".utf8)
    }

    public func writeRange(path: String, key: String, size: Int64, offset: Int64, length: Int64, from stream: ByteStream,
                           progress: TransferProgress?) async throws {
        let remote = try rangedWriteTarget(path, size: size, offset: offset, length: length)
        // (An empty range has no Content-Range to say it; plans make none.)
        guard length > 0 else { return }
        let partial = RemotePath.resumablePath(for: remote, key: key)
        let samples = try await putRange(partial, remote: remote, offset: offset, length: length, size: size, from: stream,
                                         progress: progress)
        try await checkSamples(samples, in: partial, remote: remote)
    }

    public func rangedWriteSize(path: String, key: String) async throws -> Int64? {
        let remote = try RemotePath.normalize(path)
        guard remote != "/", let stored = try await itemIfPresent(path: RemotePath.resumablePath(for: remote, key: key)),
              !stored.isDirectory else { return nil }
        return stored.size ?? 0
    }

    public func commitRanges(path: String, key: String, size: Int64, options: WriteOptions) async throws -> FileObject {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { throw CocoaError.posix(EISDIR, path: remote, remote: name, writing: true) }
        // Each range was read back by its writer, and both ends of each again by finalize.
        return try await finishRangedUpload(RemotePath.resumablePath(for: remote, key: key), remote: remote, size: size,
                                            samples: [], options: options)
    }

    public func discardRanges(path: String, key: String) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { return }
        await discard(RemotePath.resumablePath(for: remote, key: key))
    }
}
