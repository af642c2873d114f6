import Foundation
import NIOCore
import NIOPosix
public import NIOSSH
import Synchronization

/// How the in-process SSH channel proves who the user is, tried in this order.
public enum SSHCredential: Sendable {
    case password(String)
    case privateKey(NIOSSHPrivateKey, source: String)

    var methodName: String {
        switch self {
        case .password: "password"
        case .privateKey(_, let source): "public key \(source)"
        }
    }
}

/// An SFTP channel over an in-process SSH connection (swift-nio-ssh): TCP to the server, key
/// exchange, the host key checked by `checkHostKey`, the credentials offered in order, one
/// session channel and its `sftp` subsystem.
final class NIOSSHTransport: SFTPTransport {
    let inbound: InboundBytes
    private let connection: any Channel
    private let child: any Channel

    private init(connection: any Channel, child: any Channel, inbound: InboundBytes) {
        self.connection = connection
        self.child = child
        self.inbound = inbound
    }

    /// Connects, authenticates and opens the `sftp` subsystem, all within `timeout`.
    static func connect(host: String, port: Int, user: String, credentials: [SSHCredential],
                        checkHostKey: @escaping @Sendable (NIOSSHPublicKey) -> (any Error)?,
                        timeout: Duration) async throws -> NIOSSHTransport {
        let inbound = InboundBytes()
        let failure = FirstError()
        let userAuth = CredentialOffers(user: user, credentials: credentials, failure: failure)
        let serverAuth = HostKeyValidation(check: checkHostKey, failure: failure)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
            .channelOption(ChannelOptions.socket(SocketOptionLevel(IPPROTO_TCP), TCP_NODELAY), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ssh = NIOSSHHandler(
                        role: .client(.init(userAuthDelegate: userAuth, serverAuthDelegate: serverAuth)),
                        allocator: channel.allocator, inboundChildChannelInitializer: nil)
                    try channel.pipeline.syncOperations.addHandler(ssh)
                    try channel.pipeline.syncOperations.addHandler(ConnectionErrorHandler(failure: failure))
                }
            }
        let connection: any Channel
        do {
            connection = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            throw SFTPClientError.connectionClosed(reason: "cannot connect to \(host):\(port): \(Self.describe(error))")
        }
        do {
            let child = try await withDeadline(timeout, what: "the SSH handshake with \(host):\(port)",
                                               onTimeout: { try? await connection.close() }) {
                let subsystem = ReplySlot<Void>()
                let child: any Channel = try await connection.eventLoop.flatSubmit {
                    let promise = connection.eventLoop.makePromise(of: (any Channel).self)
                    do {
                        let ssh = try connection.pipeline.syncOperations.handler(type: NIOSSHHandler.self)
                        ssh.createChannel(promise, channelType: .session) { child, _ in
                            child.eventLoop.makeCompletedFuture {
                                try child.pipeline.syncOperations.addHandler(
                                    SFTPChannelHandler(inbound: inbound, subsystem: subsystem))
                            }
                        }
                    } catch {
                        promise.fail(error)
                    }
                    return promise.futureResult
                }.get()
                do {
                    try await subsystem.value
                } catch is SubsystemRefused {
                    throw SFTPClientError.subsystemRefused(host: host)
                }
                return child
            }
            return NIOSSHTransport(connection: connection, child: child, inbound: inbound)
        } catch {
            try? await connection.close()
            if case SFTPClientError.timedOut = error { throw error }
            // A refused host key or failed authentication explains more than what followed it.
            if let recorded = failure.value as? SFTPClientError { throw recorded }
            if error is SFTPClientError { throw error }
            throw SFTPClientError.connectionClosed(reason: Self.describe(failure.value ?? error))
        }
    }

    func send(_ packet: [UInt8]) async throws {
        let buffer = child.allocator.buffer(bytes: packet)
        // While the SSH window has room the packet is queued and the caller goes on (a failed
        // write closes the channel, which fails every pending request); otherwise it waits.
        if child.isWritable {
            child.writeAndFlush(buffer, promise: nil)
            return
        }
        do {
            try await child.writeAndFlush(buffer)
        } catch {
            throw SFTPClientError.connectionClosed(reason: Self.describe(error))
        }
    }

    func close() async {
        try? await child.close()
        try? await connection.close()
    }

    /// An `exec` channel beside the SFTP one, on the same connection.
    func run(_ command: String, limit: Int) async throws -> (status: Int, output: [UInt8])? {
        let result = ReplySlot<(status: Int, output: [UInt8])>()
        let connection = self.connection
        let channel = try await connection.eventLoop.flatSubmit {
            let promise = connection.eventLoop.makePromise(of: (any Channel).self)
            do {
                let ssh = try connection.pipeline.syncOperations.handler(type: NIOSSHHandler.self)
                ssh.createChannel(promise, channelType: .session) { child, _ in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(CommandHandler(command: command, limit: limit, result: result))
                    }
                }
            } catch {
                promise.fail(error)
            }
            return promise.futureResult
        }.get()
        // A command that never ends (or a server that never closes the channel) must not hold
        // the caller: closed after the time-out, which then fails the call.
        return try await withDeadline(commandTimeout, what: "a command on the server", onTimeout: { try? await channel.close() }) {
            try await result.value
        }
    }

    static func describe(_ error: any Error) -> String {
        if let ssh = error as? NIOSSHError { return "SSH: \(ssh.type)" }
        if let io = error as? IOError { return io.description }
        return String(describing: error)
    }
}

/// Keeps the first error the connection saw (a refused host key, failed authentication), which
/// explains the failure better than what the channel set-up reports after it.
final class FirstError: Sendable {
    private let stored = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { stored.withLock { if $0 == nil { $0 = error } } }
    var value: (any Error)? { stored.withLock { $0 } }
}

/// Offers each credential once, in order, when the server accepts its method.
final class CredentialOffers: NIOSSHClientUserAuthenticationDelegate, Sendable {
    private let user: String
    private let credentials: [SSHCredential]
    private let failure: FirstError
    private let next = Mutex<(index: Int, tried: [String])>((0, []))

    init(user: String, credentials: [SSHCredential], failure: FirstError) {
        self.user = user
        self.credentials = credentials
        self.failure = failure
    }

    func nextAuthenticationType(availableMethods: NIOSSHAvailableUserAuthenticationMethods,
                                nextChallengePromise: EventLoopPromise<NIOSSHUserAuthenticationOffer?>) {
        let (offer, tried): (NIOSSHUserAuthenticationOffer?, [String]) = next.withLock { state in
            while state.index < credentials.count {
                let credential = credentials[state.index]
                state.index += 1
                switch credential {
                case .password(let password) where availableMethods.contains(.password):
                    state.tried.append(credential.methodName)
                    return (NIOSSHUserAuthenticationOffer(username: user, serviceName: "", offer: .password(.init(password: password))), state.tried)
                case .privateKey(let key, _) where availableMethods.contains(.publicKey):
                    state.tried.append(credential.methodName)
                    return (NIOSSHUserAuthenticationOffer(username: user, serviceName: "", offer: .privateKey(.init(privateKey: key))), state.tried)
                default:
                    continue
                }
            }
            return (nil, state.tried)
        }
        if let offer {
            nextChallengePromise.succeed(offer)
        } else {
            var offers: [String] = []
            if availableMethods.contains(.publicKey) { offers.append("publickey") }
            if availableMethods.contains(.password) { offers.append("password") }
            if availableMethods.contains(.hostBased) { offers.append("hostbased") }
            let error = SFTPClientError.authenticationFailed(user: user, tried: tried,
                                                             serverOffers: offers.isEmpty ? "no method this client has" : offers.joined(separator: ", "))
            failure.record(error)
            nextChallengePromise.fail(error)
        }
    }
}

/// Accepts the server's host key only when `check` finds no fault with it.
final class HostKeyValidation: NIOSSHClientServerAuthenticationDelegate, Sendable {
    private let check: @Sendable (NIOSSHPublicKey) -> (any Error)?
    private let failure: FirstError

    init(check: @escaping @Sendable (NIOSSHPublicKey) -> (any Error)?, failure: FirstError) {
        self.check = check
        self.failure = failure
    }

    func validateHostKey(hostKey: NIOSSHPublicKey, validationCompletePromise: EventLoopPromise<Void>) {
        if let error = check(hostKey) {
            failure.record(error)
            validationCompletePromise.fail(error)
        } else {
            validationCompletePromise.succeed(())
        }
    }
}

/// Records the connection's first error and closes it.
final class ConnectionErrorHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = Any
    private let failure: FirstError

    init(failure: FirstError) { self.failure = failure }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failure.record(error)
        context.close(promise: nil)
    }
}

struct SubsystemRefused: Error {}

/// The session channel's end: asks for the `sftp` subsystem, passes the server's bytes to the
/// inbound relay, wraps outgoing bytes as channel data.
final class SFTPChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = SSHChannelData
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = SSHChannelData

    private let inbound: InboundBytes
    private let subsystem: ReplySlot<Void>

    init(inbound: InboundBytes, subsystem: ReplySlot<Void>) {
        self.inbound = inbound
        self.subsystem = subsystem
    }

    func channelActive(context: ChannelHandlerContext) {
        let request = SSHChannelRequestEvent.SubsystemRequest(subsystem: "sftp", wantReply: true)
        context.triggerUserOutboundEvent(request, promise: nil)
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelSuccessEvent:
            subsystem.fill(.success(()))
        case is ChannelFailureEvent:
            subsystem.fill(.failure(SubsystemRefused()))
        case ChannelEvent.inputClosed:
            inbound.deliver(.end(nil))
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        guard case .channel = message.type, case .byteBuffer(var buffer) = message.data else { return }
        if let bytes = buffer.readBytes(length: buffer.readableBytes) { inbound.deliver(.bytes(bytes)) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        subsystem.fill(.failure(SFTPClientError.connectionClosed(reason: "the SSH channel closed")))
        inbound.deliver(.end(nil))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbound.deliver(.end(SFTPClientError.connectionClosed(reason: NIOSSHTransport.describe(error))))
        context.close(promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        context.write(wrapOutboundOut(SSHChannelData(type: .channel, data: .byteBuffer(buffer))), promise: promise)
    }
}

/// A session channel that runs one command (`exec`) and collects its exit status and output.
final class CommandHandler: ChannelInboundHandler {
    typealias InboundIn = SSHChannelData

    private let command: String
    private let limit: Int
    private let result: ReplySlot<(status: Int, output: [UInt8])>
    private var output: [UInt8] = []
    private var status: Int?

    init(command: String, limit: Int, result: ReplySlot<(status: Int, output: [UInt8])>) {
        self.command = command
        self.limit = limit
        self.result = result
    }

    func handlerAdded(context: ChannelHandlerContext) {
        _ = context.channel.setOption(ChannelOptions.allowRemoteHalfClosure, value: true)
    }

    func channelActive(context: ChannelHandlerContext) {
        // With a reply asked for: a server that refuses commands (AsyncSSH with only SFTP) says so
        // at once rather than keeping the channel open.
        context.triggerUserOutboundEvent(SSHChannelRequestEvent.ExecRequest(command: command, wantReply: true), promise: nil)
        // Nothing on its standard input: a command that reads it (an `md5sum` a server took
        // without its file) sees the end at once instead of waiting.
        context.close(mode: .output, promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        guard case .channel = message.type, case .byteBuffer(var buffer) = message.data else { return }
        let room = max(0, limit - output.count)
        if let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) { output += bytes }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let exit as SSHChannelRequestEvent.ExitStatus:
            status = exit.exitStatus
        case is ChannelFailureEvent:
            result.fill(.failure(SFTPClientError.subsystemRefused(host: "the server (exec)")))
            context.close(promise: nil)
        case ChannelEvent.inputClosed:
            context.close(promise: nil)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        result.fill(.success((status ?? -1, output)))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        result.fill(.failure(SFTPClientError.connectionClosed(reason: NIOSSHTransport.describe(error))))
        context.close(promise: nil)
    }
}
