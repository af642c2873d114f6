import Foundation
public import GatewayCore
import GatewaySFTPProtocol

extension SFTPProvider {
    /// Writes atomically (by default): the bytes go to a temporary name beside the target with
    /// many `WRITE`s in flight, the modification time is set on the open handle, then the
    /// temporary is renamed over the target (`posix-rename@openssh.com`, which replaces).
    public func write(path: String, from stream: ByteStream, options: WriteOptions) async throws -> FileObject {
        try await atomicWrite(path: path, from: stream, options: options)
    }

    public func atomicWriteLookUp(_ path: String) async throws -> FileObject? {
        try await itemIfPresent(path: path)
    }

    public func atomicWritePut(_ stream: ByteStream, to path: String, options: WriteOptions) async throws {
        try await put(stream, to: path, at: 0, modificationDate: options.modificationDate)
    }

    /// Sends `stream` into the file at `path` from `offset` (created, and truncated when `offset` is
    /// 0), sets its modification time on the open handle, and closes it.
    func put(_ stream: ByteStream, to path: String, at offset: Int64, modificationDate: Date?) async throws {
        try await withSession { connection in
            let target = try await serverPath(path, on: connection)
            let handle: [UInt8]
            let flags: SFTPOpenFlags = offset == 0 ? [.write, .create, .truncate] : [.write, .create]
            do {
                handle = try await connection.expectHandle(.open(path: target, flags: flags,
                                                                 attributes: SFTPAttributes(permissions: 0o644)), "OPEN", path: path)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                throw CocoaError.posix(ENOENT, path: RemotePath.parent(of: path), remote: name)
            } catch {
                throw await refine(error, path: path, expecting: .file)
            }
            do {
                try await sendAll(stream, to: handle, from: UInt64(offset), path: path, on: connection)
                if let date = modificationDate {
                    try await connection.expectOK(.fsetstat(handle: handle, attributes: .times(secondsSince1970: date.timeIntervalSince1970)),
                                                  "FSETSTAT", path: path)
                }
            } catch {
                try? await connection.closeHandle(handle, path: path)
                throw error
            }
            try await connection.closeHandle(handle, path: path)
        }
    }

    public func atomicWriteRename(_ from: String, to: String, replacing: Bool) async throws {
        try await withSession { connection in
            try await rename(from, to: to, replacing: replacing, on: connection)
        }
    }

    public func atomicWriteDelete(_ path: String) async {
        _ = try? await withSession { connection in
            try await connection.expectOK(.remove(path: try await serverPath(path, on: connection)), "REMOVE", path: path)
        }
    }

    /// Renames on the server. Replacing uses `posix-rename@openssh.com` (one atomic step); a server
    /// without it gets the target removed first, then a plain `RENAME` (which refuses to replace).
    func rename(_ from: String, to: String, replacing: Bool, on connection: SFTPConnection) async throws {
        let source = try await serverPath(from, on: connection), target = try await serverPath(to, on: connection)
        if replacing, connection.supports("posix-rename@openssh.com") {
            let fields = SFTPWriter.fields { writer in
                writer.write(string: source)
                writer.write(string: target)
            }
            try await connection.expectOK(.extended(name: "posix-rename@openssh.com", data: fields), "RENAME", path: to)
            return
        }
        if replacing, let existing = try await itemIfPresent(path: to), !existing.isDirectory {
            try await connection.expectOK(.remove(path: target), "REMOVE", path: to)
        }
        do {
            try await connection.expectOK(.rename(from: source, to: target), "RENAME", path: to)
        } catch let error as SFTPStatusError where error.failureKind == .other {
            if try await itemIfPresent(path: to) != nil { throw existsError(to) }
            throw await refine(error, path: from)
        }
    }

    /// Sends the stream's bytes as `WRITE` requests at increasing offsets from `start`, up to
    /// `requestsInFlight` of them unanswered at once.
    private func sendAll(_ stream: ByteStream, to handle: [UInt8], from start: UInt64, path: String, on connection: SFTPConnection) async throws {
        var pending: [ReplySlot<SFTPResponse>] = []
        pending.reserveCapacity(configuration.requestsInFlight)
        var head = 0
        var offset = start
        let block = connection.blockSize(writing: true, fallback: configuration.blockSize)
        func settle(_ reply: ReplySlot<SFTPResponse>) async throws {
            let answer = try await reply.value
            guard case .status(_, let code, let message) = answer else { throw connection.unexpected(answer, "WRITE") }
            guard code == .ok else { throw SFTPStatusError(code: code, message: message, operation: "WRITE", path: path) }
        }
        do {
            for try await chunk in stream {
                var start = chunk.startIndex
                while start < chunk.endIndex {
                    let stop = chunk.index(start, offsetBy: block, limitedBy: chunk.endIndex) ?? chunk.endIndex
                    let piece = [UInt8](chunk[start..<stop])
                    if pending.count - head >= configuration.requestsInFlight {
                        try await settle(pending[head])
                        head += 1
                        if head > 256 {
                            pending.removeFirst(head)
                            head = 0
                        }
                    }
                    pending.append(try await connection.send(.write(handle: handle, offset: offset, data: piece)))
                    offset += UInt64(piece.count)
                    start = stop
                }
            }
            while head < pending.count {
                try await settle(pending[head])
                head += 1
            }
        } catch {
            // Every reply is still awaited, so none arrives for a request nobody waits on.
            while head < pending.count {
                _ = try? await pending[head].value
                head += 1
            }
            throw error
        }
    }
}
