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

    /// The bytes, to the temporary name (the time follows with the rename: see
    /// ``atomicWriteCommit(_:to:replacing:options:)``), or in place with its time.
    public func atomicWritePut(_ stream: ByteStream, to path: String, options: WriteOptions) async throws {
        try await put(stream, to: path, at: 0, modificationDate: options.atomically ? nil : options.modificationDate)
    }

    /// `SETSTAT` of the temporary's time and the rename, sent together: one round trip. Both are
    /// path requests, which every server runs in order; the bytes are complete (the `CLOSE` was
    /// answered), so a refused time leaves a correct file, reported as failed.
    public func atomicWriteCommit(_ from: String, to: String, replacing: Bool, options: WriteOptions) async throws {
        try await withSession { connection in
            var times: ReplySlot<SFTPResponse>?
            if let date = options.modificationDate {
                times = try await connection.send(.setstat(path: try await serverPath(from, on: connection),
                                                           attributes: .times(secondsSince1970: date.timeIntervalSince1970)))
            }
            do {
                try await rename(from, to: to, replacing: replacing, on: connection)
            } catch {
                _ = try? await times?.value
                throw error
            }
            if let times {
                let answer = try await times.value
                guard case .status(_, let code, let message) = answer else { throw connection.unexpected(answer, "SETSTAT") }
                guard code == .ok else { throw SFTPStatusError(code: code, message: message, operation: "SETSTAT", path: to) }
            }
        }
    }

    /// Sends `stream` into the file at `path` from `offset` (created, and truncated when
    /// `truncating`), sets its modification time on the open handle, and closes it.
    func put(_ stream: ByteStream, to path: String, at offset: Int64, truncating: Bool? = nil, creating: Bool = true,
             modificationDate: Date?, budget: Int = 4 << 20) async throws {
        try await withSession { connection in
            let target = try await serverPath(path, on: connection)
            let handle: [UInt8]
            var flags: SFTPOpenFlags = creating ? [.write, .create] : [.write]
            if truncating ?? (offset == 0) { flags.insert(.truncate) }
            do {
                handle = try await connection.expectHandle(.open(path: target, flags: flags,
                                                                 attributes: SFTPAttributes(permissions: 0o644)), "OPEN", path: path)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                throw CocoaError.posix(ENOENT, path: creating ? RemotePath.parent(of: path) : path, remote: name)
            } catch {
                throw await refine(error, path: path, expecting: .file)
            }
            try await sendAndClose(stream, to: handle, from: UInt64(offset), modificationDate: modificationDate, budget: budget,
                                   path: path, on: connection)
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

    /// Sends the stream's bytes as `WRITE` requests at increasing offsets from `start`, at most
    /// `budget` bytes of them unanswered at once (``requestsInFlight(blockSize:budget:)``), and `CLOSE` right behind the
    /// last one (every server finishes a handle's writes before its close). With a modification
    /// time, `FSETSTAT` goes first, but only once every write is answered: servers built on Go's
    /// pkg/sftp, `rclone serve sftp` among them, run writes beside other requests and would set the
    /// time before the last write. With `flushing`, the bytes are flushed to the server's stable
    /// storage (`fsync@openssh.com`, where the server has it) once every write is answered. The
    /// handle is closed whatever fails.
    func sendAndClose(_ stream: ByteStream, to handle: [UInt8], from start: UInt64, modificationDate: Date?, flushing: Bool = false,
                      budget: Int = 4 << 20, path: String, on connection: SFTPConnection) async throws {
        var pending: [(reply: ReplySlot<SFTPResponse>, operation: String)] = []
        var head = 0
        var offset = start
        var closeSent = false
        let block = connection.blockSize(writing: true, fallback: configuration.blockSize)
        let inFlight = requestsInFlight(blockSize: block, budget: budget)
        pending.reserveCapacity(inFlight + 2)
        func settle(_ request: (reply: ReplySlot<SFTPResponse>, operation: String)) async throws {
            let answer = try await request.reply.value
            guard case .status(_, let code, let message) = answer else { throw connection.unexpected(answer, request.operation) }
            guard code == .ok else { throw SFTPStatusError(code: code, message: message, operation: request.operation, path: path) }
        }
        func write(_ piece: [UInt8]) async throws {
            if pending.count - head >= inFlight {
                try await settle(pending[head])
                head += 1
                if head > 256 {
                    pending.removeFirst(head)
                    head = 0
                }
            }
            pending.append((try await connection.send(.write(handle: handle, offset: offset, data: piece)), "WRITE"))
            offset += UInt64(piece.count)
        }
        do {
            // Whole blocks only, whatever the chunks' sizes (a 1 MiB chunk is not 4 blocks of
            // 255 KiB and a 4 KiB one): what is left of a chunk waits for the next one.
            var carry: [UInt8] = []
            for try await chunk in stream {
                var start = chunk.startIndex
                if !carry.isEmpty {
                    let take = chunk.index(start, offsetBy: block - carry.count, limitedBy: chunk.endIndex) ?? chunk.endIndex
                    carry.append(contentsOf: chunk[start..<take])
                    start = take
                    guard carry.count == block else { continue }
                    try await write(carry)
                    carry.removeAll(keepingCapacity: true)
                }
                while start < chunk.endIndex {
                    guard let stop = chunk.index(start, offsetBy: block, limitedBy: chunk.endIndex) else {
                        carry.append(contentsOf: chunk[start...])
                        break
                    }
                    try await write([UInt8](chunk[start..<stop]))
                    start = stop
                }
            }
            if !carry.isEmpty { try await write(carry) }
            if modificationDate != nil || flushing {
                while head < pending.count {
                    try await settle(pending[head])
                    head += 1
                }
            }
            if let date = modificationDate {
                pending.append((try await connection.send(.fsetstat(handle: handle, attributes: .times(secondsSince1970: date.timeIntervalSince1970))),
                                "FSETSTAT"))
            }
            if flushing, connection.supports("fsync@openssh.com") {
                let fields = SFTPWriter.fields { $0.write(string: handle) }
                pending.append((try await connection.send(.extended(name: "fsync@openssh.com", data: fields)), "FSYNC"))
            }
            closeSent = true
            pending.append((try await connection.send(.close(handle: handle)), "CLOSE"))
            while head < pending.count {
                try await settle(pending[head])
                head += 1
            }
        } catch {
            // Every reply is still awaited, so none arrives for a request nobody waits on.
            while head < pending.count {
                _ = try? await pending[head].reply.value
                head += 1
            }
            if !closeSent { try? await connection.closeHandle(handle, path: path) }
            throw error
        }
    }

    /// Requests of `blockSize` bytes one transfer keeps unanswered: the configured number, but no
    /// more than `budget` bytes in flight (several transfers at once share the process's memory;
    /// 4 MiB still fills 200 MiB/s at a 20 ms round trip). Reads pass their buffer size (4 MiB, or
    /// a share of it for each range of a multi-stream copy), at least 2 MiB.
    func requestsInFlight(blockSize: Int, budget: Int = 4 << 20) -> Int {
        min(configuration.requestsInFlight, max(2, budget / max(1, blockSize)))
    }
}
