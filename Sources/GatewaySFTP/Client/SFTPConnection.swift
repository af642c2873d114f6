import Foundation
import GatewayCore
public import GatewaySFTPProtocol
import Synchronization

/// One SFTP session over a transport: the version handshake, request ids, and replies matched to
/// their requests as they arrive, so that many requests can be in flight at once (pipelining).
///
/// Thread-safe: any number of tasks send requests; one reader task delivers replies. A transport
/// failure, a malformed packet or a reply that matches no request fails every pending request
/// and every later one with the same error; the connection is then dropped by its pool.
public final class SFTPConnection: Sendable {
    /// The extensions the server announced, by name (`posix-rename@openssh.com` → `"1"`).
    public var extensions: [String: [UInt8]] { state.withLock { $0.extensions } }

    private let transport: any SFTPTransport
    private let idleTimeout: Duration
    private struct State {
        var nextID: UInt32 = 1
        var waiting: [UInt32: ReplySlot<SFTPResponse>] = [:]
        var failure: (any Error)?
        var lastActivity = ContinuousClock.now
        var extensions: [String: [UInt8]] = [:]
        var readLimit = 0
        var writeLimit = 0
    }
    private let state = Mutex(State())
    private let versionReply = ReplySlot<(UInt32, [SFTPExtension])>()
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Starts SFTP on `transport`: starts the reader, sends `INIT` (version 3) and waits for `VERSION`.
    /// Fails with ``SFTPClientError/timedOut(what:seconds:)`` when the server says nothing for `timeout`.
    public static func start(on transport: any SFTPTransport, timeout: Duration, idleTimeout: Duration) async throws -> SFTPConnection {
        let connection = SFTPConnection(transport: transport, idleTimeout: idleTimeout)
        connection.startReader()
        do {
            try await transport.send(SFTPRequest.initPacket())
            let reply = connection.versionReply
            let (version, extensions) = try await withDeadline(timeout, what: "the SFTP version request",
                                                               onTimeout: { await connection.close() }) { try await reply.value }
            guard version >= 3 else { throw SFTPClientError.protocolViolation("the server speaks SFTP version \(version); version 3 is needed") }
            connection.state.withLock { state in
                for item in extensions { state.extensions[item.name] = item.data }
            }
            if connection.supports("limits@openssh.com") { try await connection.readLimits() }
            return connection
        } catch {
            await connection.close()
            throw error
        }
    }

    private init(transport: any SFTPTransport, idleTimeout: Duration) {
        self.transport = transport
        self.idleTimeout = idleTimeout
    }

    /// The largest `READ` and `WRITE` the server takes, from `limits@openssh.com` (0: not said).
    public var limits: (read: Int, write: Int) { state.withLock { ($0.readLimit, $0.writeLimit) } }

    /// The block size for reads (`write` false) or writes: the server's limit where it gives one
    /// (OpenSSH: 255 KiB, as its own `sftp` then uses), at most 255 KiB, else `fallback`.
    public func blockSize(writing: Bool, fallback: Int) -> Int {
        let limit = writing ? limits.write : limits.read
        return limit >= 4096 ? min(limit, 255 << 10) : fallback
    }

    /// Asks `limits@openssh.com` for the server's packet and read/write sizes.
    private func readLimits() async throws {
        let reply = try await request(.extended(name: "limits@openssh.com", data: []))
        guard case .extendedReply(_, let data) = reply else { return }
        var reader = SFTPReader(data)
        _ = try reader.readUInt64()
        let read = try reader.readUInt64(), write = try reader.readUInt64()
        state.withLock { state in
            state.readLimit = Int(clamping: read)
            state.writeLimit = Int(clamping: write)
        }
    }

    /// Whether the server announced an extension (`posix-rename@openssh.com`, `statvfs@openssh.com`...).
    public func supports(_ name: String) -> Bool { extensions[name] != nil }

    /// `true` once the connection failed: its pool drops it.
    public var isBroken: Bool { state.withLock { $0.failure != nil } }

    /// Sends a request and returns where its reply will arrive, without waiting for it: callers
    /// keep several in flight and await them in order.
    func send(_ request: SFTPRequest) async throws -> ReplySlot<SFTPResponse> {
        let slot = ReplySlot<SFTPResponse>()
        let id: UInt32 = try state.withLock { state in
            if let failure = state.failure { throw failure }
            let id = state.nextID
            state.nextID = state.nextID &+ 1
            if state.waiting.isEmpty { state.lastActivity = .now }
            state.waiting[id] = slot
            return id
        }
        do {
            try await transport.send(request.packet(id: id))
        } catch {
            fail(error)
            throw error
        }
        return slot
    }

    /// Sends a request and waits for its reply.
    public func request(_ request: SFTPRequest) async throws -> SFTPResponse {
        try await send(request).value
    }

    /// Runs a command on the server beside the session (see ``SFTPTransport/run(_:limit:)``).
    public func run(_ command: String, limit: Int = 4096) async throws -> (status: Int, output: [UInt8])? {
        try await transport.run(command, limit: limit)
    }

    /// Closes the session and its transport; pending requests fail.
    public func close() async {
        fail(SFTPClientError.connectionClosed(reason: "closed by the client"))
        await transport.close()
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    // MARK: Reader

    private func startReader() {
        // Replies are decoded and handed to their waiters on the transport's thread as they arrive.
        let decoder = Mutex(SFTPFrameDecoder())
        transport.inbound.attach { [weak self] event in
            guard let self else { return }
            switch event {
            case .bytes(let bytes):
                do {
                    try decoder.withLock { decoder in
                        decoder.append(bytes)
                        while let payload = try decoder.next() {
                            try self.deliver(try SFTPResponse(payload: payload))
                        }
                    }
                } catch let error as SFTPDecodingError {
                    self.fail(SFTPClientError.protocolViolation(error.reason))
                } catch {
                    self.fail(error)
                }
            case .end(let error):
                self.fail(error ?? SFTPClientError.connectionClosed(reason: "the server closed the channel"))
            }
        }
        // A watchdog: requests waiting longer than the idle time-out with nothing received fail the connection.
        let timeout = idleTimeout
        let watchdog = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                guard let self else { return }
                let stalled = self.state.withLock { state in
                    state.failure == nil && !state.waiting.isEmpty && ContinuousClock.now - state.lastActivity > timeout
                }
                if stalled {
                    self.fail(SFTPClientError.timedOut(what: "an SFTP request", seconds: Double(timeout.components.seconds)))
                    await self.transport.close()
                    return
                }
                if self.isBroken { return }
            }
        }
        tasks.withLock { $0 = [watchdog] }
    }

    private func deliver(_ response: SFTPResponse) throws {
        if case .version(let version, let extensions) = response {
            versionReply.fill(.success((version, extensions)))
            return
        }
        guard let id = response.id else { return }
        let slot = state.withLock { state in
            state.lastActivity = .now
            return state.waiting.removeValue(forKey: id)
        }
        guard let slot else { throw SFTPClientError.protocolViolation("a reply to request \(id), which is not pending") }
        slot.fill(.success(response))
    }

    private func fail(_ error: any Error) {
        let pending = state.withLock { state -> [ReplySlot<SFTPResponse>] in
            if state.failure == nil { state.failure = error }
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        let failure = state.withLock { $0.failure ?? error }
        for slot in pending { slot.fill(.failure(failure)) }
        versionReply.fill(.failure(failure))
    }
}

/// Runs `body`, failing with ``SFTPClientError/timedOut(what:seconds:)`` when it takes longer than
/// `timeout`. `onTimeout` runs first then: it must make `body` end (close the channel it waits
/// on), since a task group returns only once every child has. Whatever `body` throws after the
/// deadline passed (the closed channel's end of file), the time-out is what is reported.
func withDeadline<T: Sendable>(_ timeout: Duration, what: String, onTimeout: @escaping @Sendable () async -> Void,
                               _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let expired = DeadlineFlag()
    let timedOut = SFTPClientError.timedOut(what: what, seconds: Double(timeout.components.seconds))
    do {
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                expired.set()
                await onTimeout()
                throw timedOut
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    } catch {
        if expired.isSet { throw timedOut }
        throw error
    }
}

/// Set once a deadline passed.
final class DeadlineFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
