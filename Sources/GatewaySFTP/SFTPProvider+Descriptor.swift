import Foundation
public import GatewayCore
import NIOSSH
import GatewayState

extension SFTPProvider {
    /// The `sftp` type for config files.
    public static let descriptor = ProviderDescriptor(
        type: SFTPProvider.type,
        summary: "An SFTP server (OpenSSH and any SSH server with the SFTP subsystem).",
        keys: [
            ConfigKey("host", .string, required: true, summary: "the server's name or address"),
            ConfigKey("port", .integer, default: "22", summary: "the SSH port"),
            ConfigKey("user", .string, required: true, summary: "the account to log in as"),
            ConfigKey("password", .string, secret: true, summary: "password (or password_env, password_command)"),
            ConfigKey("key_file", .string, summary: "an OpenSSH private key file (Ed25519 or ECDSA in process; any type with ssh_command)"),
            ConfigKey("key_passphrase", .string, secret: true, summary: "the key file's passphrase (key_passphrase_env names a variable holding it)"),
            ConfigKey("known_hosts", .string, default: "~/.ssh/known_hosts", summary: "the known_hosts file the server's host key is checked against"),
            ConfigKey("host_key_fingerprint", .string, summary: "SHA256:... (as ssh-keygen -lf prints it): trust this host key instead of known_hosts"),
            ConfigKey("ssh_command", .string,
                      summary: "use the system's OpenSSH client, e.g. \"ssh\" or \"ssh -F ~/.ssh/config -J jump\" (RSA keys, ssh-agent, ProxyJump); given -p, -l, -i and -s HOST sftp"),
            ConfigKey("hash_command", .string, default: "auto",
                      summary: "auto: hashes without a download by running md5sum, sha1sum or sha256sum on the server, where the account can (found out once; servers with check-file compute them anyway); none: never run commands there"),
            ConfigKey("root", .string, summary: "the folder on the server that is the remote's root: absolute, or relative to the login folder (default: the login folder)"),
            ConfigKey("max_connections", .integer, default: "4", summary: "SSH sessions kept open at once (each carries many requests)"),
            ConfigKey("connect_timeout", .number, default: "15", summary: "seconds allowed to connect, authenticate and start SFTP"),
            ConfigKey("idle_timeout", .number, default: "60", summary: "seconds a request may wait for its answer"),
        ] + TrashSettings.configKeys(folderSummary: "the trash folder, relative to the remote's root (`files/` and `info/` inside, FreeDesktop-style); hidden from copies and syncs"),
        validate: validate,
        make: { remote, context in
            let knownHosts = remote.string("known_hosts").map(expandingTilde)
            let keyFile = remote.string("key_file").map(expandingTilde)
            let channel: SFTPClientConfiguration.Channel
            if let command = remote.string("ssh_command") {
                channel = .command(command, keyFile: keyFile, knownHosts: knownHosts)
            } else {
                var credentials: [SSHCredential] = []
                if let keyFile {
                    let text: String
                    do {
                        text = try String(contentsOfFile: keyFile, encoding: .utf8)
                    } catch {
                        throw ConfigError(source: remote.source, remote: remote.name, key: "key_file", message: "cannot read the key file \(keyFile): \(error.localizedDescription)")
                    }
                    let passphrase = try remote.secret("key_passphrase", environment: context.environment)
                    do {
                        credentials.append(.privateKey(try OpenSSHPrivateKey.parse(text, passphrase: passphrase, source: keyFile), source: keyFile))
                    } catch {
                        throw ConfigError(source: remote.source, remote: remote.name, key: "key_file", message: String(describing: error))
                    }
                }
                if let password = try remote.secret("password", environment: context.environment) {
                    credentials.append(.password(password))
                }
                channel = .inProcess(credentials: credentials,
                                     hostKeys: HostKeyPolicy(knownHostsFiles: [knownHosts ?? HostKeyPolicy.userKnownHosts],
                                                             fingerprint: remote.string("host_key_fingerprint")))
            }
            var configuration = SFTPClientConfiguration(
                remoteName: remote.name, host: remote.string("host") ?? "", port: remote.integer("port") ?? 22,
                user: remote.string("user") ?? "", channel: channel, root: remote.string("root"),
                maxConnections: context.maxConnections(remote),
                connectTimeout: remote.duration("connect_timeout", default: 15), idleTimeout: remote.duration("idle_timeout", default: 60))
            configuration.runsHashCommands = remote.string("hash_command") != "none"
            if let links = context.links {
                return SFTPProviderWithLinks(
                    links: PublicLinks(configuration: links, remote: remote.name, stateDirectory: context.stateDirectory, environment: context.environment),
                    configuration: configuration, trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
            }
            return SFTPProvider(configuration: configuration, trash: TrashSettings(remote), stateDirectory: context.stateDirectory, logger: context.logger)
        }
    )

    private static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }

    private static func validate(_ remote: RemoteConfiguration) -> [ProviderDescriptor.Problem] {
        var problems = TrashSettings.problems(remote)
        problems += [remote.rangeProblem("max_connections", 1...64), remote.rangeProblem("port", 1...65535)].compactMap { $0 }
        problems += remote.secondsProblems(["connect_timeout", "idle_timeout"])
        if let command = remote.string("hash_command"), !["auto", "none"].contains(command) {
            problems.append(.init(key: "hash_command", message: "key \"hash_command\" must be auto or none\(Suggestion.didYouMean(command, in: ["auto", "none"]))"))
        }
        if let fingerprint = remote.string("host_key_fingerprint"), !fingerprint.hasPrefix("SHA256:") {
            problems.append(.init(key: "host_key_fingerprint", message: "key \"host_key_fingerprint\" must be SHA256:... as ssh-keygen -lf prints it"))
        }
        if remote.string("ssh_command") != nil, remote.values.keys.contains(where: { $0.hasPrefix("password") || $0.hasPrefix("key_passphrase") }) {
            problems.append(.init(key: "ssh_command", message: "with ssh_command the system's ssh authenticates (keys, ssh-agent); passwords are not passed to it"))
        }
        if remote.string("ssh_command") == nil, remote.string("key_file") == nil,
           !remote.values.keys.contains(where: { $0.hasPrefix("password") }) {
            problems.append(.init(key: "password", message: "an sftp remote needs a password, a key_file or ssh_command"))
        }
        return problems
    }
}
