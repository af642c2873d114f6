import Foundation
import Logging

/// The SFTP sessions of one remote: opened as needed up to `maxConnections`, shared (each carries
/// many requests at once), a broken one dropped and replaced on the next use.
actor SFTPSessionPool {
    private let configuration: SFTPClientConfiguration
    private let logger: Logger
    private var sessions: [(connection: SFTPConnection, users: Int)] = []
    private var opening = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(configuration: SFTPClientConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// A session for one operation; give it back with ``release(_:)``.
    func acquire() async throws -> SFTPConnection {
        while true {
            sessions.removeAll { $0.connection.isBroken && $0.users == 0 }
            let healthy = sessions.indices.filter { !sessions[$0].connection.isBroken }
            // An idle session, else a new one while under the limit, else the least busy.
            if let idle = healthy.first(where: { sessions[$0].users == 0 }) {
                sessions[idle].users += 1
                return sessions[idle].connection
            }
            if healthy.count + opening < configuration.maxConnections {
                opening += 1
                defer { opening -= 1; wakeWaiters() }
                let connection = try await open()
                sessions.append((connection, 1))
                return connection
            }
            if let least = healthy.min(by: { sessions[$0].users < sessions[$1].users }) {
                sessions[least].users += 1
                return sessions[least].connection
            }
            // Every slot is being opened: wait for one to finish.
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    /// Gives a session back.
    func release(_ connection: SFTPConnection) {
        if let index = sessions.firstIndex(where: { $0.connection === connection }) {
            sessions[index].users -= 1
            if sessions[index].users == 0, connection.isBroken {
                sessions.remove(at: index)
                Task { await connection.close() }
            }
        }
    }

    /// Closes every session.
    func closeAll() async {
        let all = sessions.map(\.connection)
        sessions.removeAll()
        for connection in all { await connection.close() }
    }

    private func wakeWaiters() {
        let woken = waiters
        waiters.removeAll()
        for waiter in woken { waiter.resume() }
    }

    private func open() async throws -> SFTPConnection {
        let transport: any SFTPTransport
        switch configuration.channel {
        case .inProcess(let credentials, let policy):
            let host = configuration.displayHost
            transport = try await NIOSSHTransport.connect(
                host: configuration.host, port: configuration.port, user: configuration.user, credentials: credentials,
                checkHostKey: { [configuration] key in policy.check(key, host: configuration.host, port: configuration.port, displayHost: host) },
                timeout: configuration.connectTimeout)
        case .command(let command, let keyFile, let knownHosts):
            var arguments = ["-p", String(configuration.port), "-l", configuration.user, "-o", "BatchMode=yes"]
            if let keyFile { arguments += ["-i", keyFile] }
            if let knownHosts { arguments += ["-o", "UserKnownHostsFile=\(knownHosts)"] }
            transport = try SSHCommandTransport(command: command, options: arguments, host: configuration.host)
        }
        let connection = try await SFTPConnection.start(on: transport, timeout: configuration.connectTimeout, idleTimeout: configuration.idleTimeout)
        logger.debug("SFTP session open", metadata: ["remote": "\(configuration.remoteName)",
                                                    "extensions": "\(connection.extensions.keys.sorted().joined(separator: ","))"])
        return connection
    }
}
