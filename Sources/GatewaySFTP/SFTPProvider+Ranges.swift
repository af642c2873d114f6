import Foundation
public import GatewayCore
import GatewaySFTPProtocol

/// A large file of a plan written in ranges by several workers, on any machines (see
/// ``FileProviderRangedWrite``): SFTP writes at any offset, so each worker opens the shared
/// partial file `.NAME.gateway-resume-KEY.partial` without truncating it, gives it its planned
/// size (`FSETSTAT` of the size: a file that is already that size keeps every byte, so no writer
/// ever zeroes another's), writes its range, and flushes it (`fsync@openssh.com`, where the server
/// has it) before it says the range is done. A server that writes only in sequence (`rclone serve
/// sftp` at its defaults) is found out when the plan is made, and gets whole files instead.
extension SFTPProvider: FileProviderRangedWrite {
    public func acceptsRangedWrites(below path: String) async throws -> Bool {
        if let known = writesAtOffsets { return known }
        // Tried once, with a small hidden file in the nearest folder that exists.
        let probe = try await rangedWriteProbePath(below: path)
        let works: Bool
        do {
            works = try await withSession { connection in try await extend(probe, to: 2, path: probe, on: connection) }
        } catch {
            await atomicWriteDelete(probe)
            throw error
        }
        await atomicWriteDelete(probe)
        if !works {
            logger.info("SFTP: the server cannot write into a file at an offset; plans copy large files whole",
                        metadata: ["remote": "\(name)"])
        }
        return works
    }

    public func writeRange(path: String, key: String, size: Int64, offset: Int64, length: Int64, from stream: ByteStream,
                           progress: TransferProgress?) async throws {
        let remote = try rangedWriteTarget(path, size: size, offset: offset, length: length)
        let partial = RemotePath.resumablePath(for: remote, key: key)
        let (counted, _) = AtomicWrite.counting(stream.exactly(length, path: remote, what: "the range at \(offset)"), progress: progress)
        try await withSession { connection in
            let file = try await serverPath(partial, on: connection)
            let handle: [UInt8]
            do {
                handle = try await connection.expectHandle(.open(path: file, flags: [.write, .create],
                                                                 attributes: SFTPAttributes(permissions: 0o644)), "OPEN", path: partial)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                throw CocoaError.posix(ENOENT, path: RemotePath.parent(of: remote), remote: name, writing: true)
            } catch {
                throw await refine(error, path: remote, expecting: .file)
            }
            do {
                let stored = try await connection.expectAttributes(.fstat(handle: handle), "FSTAT", path: partial)
                guard stored.kind == .file else { throw CocoaError.posix(EINVAL, path: remote, remote: name, writing: true) }
                let held = Int64(clamping: stored.size ?? 0)
                if held > size {
                    throw FileProviderError.invalidPath(path: remote, reason: "its partial file holds \(held) bytes, more than the \(size) planned")
                }
                if held < size {
                    try await connection.expectOK(.fsetstat(handle: handle, attributes: SFTPAttributes(size: UInt64(size))), "FSETSTAT", path: partial)
                }
            } catch {
                try? await connection.closeHandle(handle, path: partial)
                throw error
            }
            try await sendAndClose(counted, to: handle, from: UInt64(offset), modificationDate: nil, flushing: true, path: partial, on: connection)
        }
    }

    public func rangedWriteSize(path: String, key: String) async throws -> Int64? {
        let remote = try RemotePath.normalize(path)
        guard remote != "/", let stored = try await itemIfPresent(path: RemotePath.resumablePath(for: remote, key: key)), !stored.isDirectory else { return nil }
        return stored.size
    }

    public func commitRanges(path: String, key: String, size: Int64, options: WriteOptions) async throws -> FileObject {
        let remote = try await AtomicWrite.checkTarget(path, options: options, remote: name) { try await itemIfPresent(path: $0) }
        return try await commitFilledFile(RemotePath.resumablePath(for: remote, key: key), remote: remote, size: size, options: options)
    }

    public func discardRanges(path: String, key: String) async throws {
        let remote = try RemotePath.normalize(path)
        guard remote != "/" else { return }
        let partial = RemotePath.resumablePath(for: remote, key: key)
        try await withSession { connection in
            do {
                try await connection.expectOK(.remove(path: try await serverPath(partial, on: connection)), "REMOVE", path: partial)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                return
            }
        }
    }
}
