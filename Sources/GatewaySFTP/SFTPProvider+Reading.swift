import Foundation
public import GatewayCore
import GatewaySFTPProtocol

extension SFTPProvider {
    public func readStream(path: String, options: ReadOptions) async throws -> ByteStream {
        let remote = try RemotePath.normalize(path)
        let options = try options.checked(path: remote)
        let connection = try await pool.acquire()
        let handle: [UInt8]
        let size: Int64?
        do {
            let target = try await serverPath(remote, on: connection)
            let attributes: SFTPAttributes
            do {
                attributes = try await connection.expectAttributes(.stat(path: target), "STAT", path: remote)
            } catch let error as SFTPStatusError where error.failureKind == .notFound {
                throw CocoaError.posix(ENOENT, path: remote, remote: name)
            }
            if attributes.kind == .directory { throw CocoaError.posix(EISDIR, path: remote, remote: name) }
            if let expected = options.ifVersion, Self.versionTag(attributes) != expected {
                throw FileProviderError.versionMismatch(path: remote, expected: expected, actual: Self.versionTag(attributes))
            }
            size = attributes.size.map { Int64(clamping: $0) }
            if options.length == 0 || (size.map { options.offset >= $0 } ?? false) {
                await pool.release(connection)
                return ByteStream(data: Data())
            }
            handle = try await connection.expectHandle(.open(path: target, flags: .read, attributes: SFTPAttributes()), "OPEN", path: remote)
        } catch {
            await pool.release(connection)
            throw error
        }
        let end = options.length.map { options.offset.saturatingAdding($0) }
        let block = connection.blockSize(writing: false, fallback: configuration.blockSize)
        let reader = PipelinedRead(provider: self, connection: connection, handle: handle, path: remote, offset: options.offset, end: end,
                                   blockSize: block, inFlight: requestsInFlight(blockSize: block, budget: max(options.bufferSize, 2 << 20)),
                                   chunkSize: max(block, min(options.chunkSize, 512 << 10)))
        let expected = end.map { min($0, size ?? $0) - options.offset } ?? size.map { $0 - options.offset }
        return ByteStream(expectedLength: expected) { try await reader.next() }
    }
}

/// One file read with many `READ` requests in flight (as OpenSSH's `sftp -R`): replies come
/// back in order of their offsets and are handed on in order; a short reply (the server gave
/// fewer bytes than asked, as it may) is followed by a request for the rest.
actor PipelinedRead {
    private let provider: SFTPProvider
    private let connection: SFTPConnection
    private let path: String
    private var handle: [UInt8]?
    private var nextOffset: Int64
    private let end: Int64?
    private let blockSize: Int
    private let inFlight: Int
    private let chunkSize: Int
    private var pending: [(offset: Int64, length: Int, reply: ReplySlot<SFTPResponse>)] = []
    private var reachedEnd = false

    init(provider: SFTPProvider, connection: SFTPConnection, handle: [UInt8], path: String, offset: Int64, end: Int64?,
         blockSize: Int, inFlight: Int, chunkSize: Int) {
        self.provider = provider
        self.connection = connection
        self.handle = handle
        self.path = path
        self.nextOffset = offset
        self.end = end
        self.blockSize = blockSize
        self.inFlight = max(1, inFlight)
        self.chunkSize = chunkSize
    }

    deinit {
        // Dropped before the end: close the handle and give the session back.
        if let handle {
            let connection = connection, pool = provider.pool, path = path
            Task {
                try? await connection.closeHandle(handle, path: path)
                await pool.release(connection)
            }
        }
    }

    func next() async throws -> Data? {
        guard let handle else { return nil }
        var chunk = Data()
        chunk.reserveCapacity(chunkSize + blockSize)  // grown once, not by doubling
        do {
            while chunk.count < chunkSize {
                try Task.checkCancellation()
                while !reachedEnd, pending.count < inFlight, end.map({ nextOffset < $0 }) ?? true {
                    let length = end.map { Int(min(Int64(blockSize), $0 - nextOffset)) } ?? blockSize
                    let reply = try await connection.send(.read(handle: handle, offset: UInt64(nextOffset), length: UInt32(length)))
                    pending.append((nextOffset, length, reply))
                    nextOffset += Int64(length)
                }
                guard !pending.isEmpty else { break }
                let request = pending.removeFirst()
                switch try await request.reply.value {
                case .data(_, let bytes):
                    guard bytes.count <= request.length else {
                        throw SFTPClientError.protocolViolation("\(bytes.count) bytes for a READ of \(request.length)")
                    }
                    chunk.append(contentsOf: bytes)
                    if bytes.count < request.length {
                        // A short read: ask for the rest before anything later is handed on.
                        let offset = request.offset + Int64(bytes.count), rest = request.length - bytes.count
                        if bytes.isEmpty {
                            throw SFTPClientError.protocolViolation("an empty DATA reply before the end of the file")
                        }
                        let reply = try await connection.send(.read(handle: handle, offset: UInt64(offset), length: UInt32(rest)))
                        pending.insert((offset, rest, reply), at: 0)
                    }
                case .status(_, .eof, _):
                    // The end of the file: later requests (all beyond it) end the same way.
                    reachedEnd = true
                    for later in pending { _ = try? await later.reply.value }
                    pending.removeAll()
                case .status(_, let code, let message):
                    throw SFTPStatusError(code: code, message: message, operation: "READ", path: path)
                case let other:
                    throw connection.unexpected(other, "READ")
                }
            }
        } catch {
            await finish()
            throw error
        }
        if chunk.isEmpty {
            await finish()
            return nil
        }
        return chunk
    }

    private func finish() async {
        guard let handle else { return }
        self.handle = nil
        for later in pending { _ = try? await later.reply.value }
        pending.removeAll()
        try? await connection.closeHandle(handle, path: path)
        await provider.pool.release(connection)
    }
}
