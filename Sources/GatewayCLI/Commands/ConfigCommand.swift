import ArgumentParser
import Foundation
import StorageGateway

struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check config files and show what they may contain.",
        subcommands: [ValidateConfigCommand.self, ConfigTypesCommand.self]
    )
}

struct ValidateConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Validate a config file: types, keys, value types, required keys.",
        discussion: HelpText.reflow("""
        Without FILE, validates the config gateway would use (--config, $GATEWAY_CONFIG, or the default
        location). Prints one line per problem, naming the file, remote and key, and exits with 2 when
        there is any; GATEWAY_REMOTE_<NAME>_<KEY> overrides are checked too.
        """)
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The config file to check.") var file: String?

    func run() async throws {
        let registry = Gateway.makeRegistry()
        let environment = ProcessInfo.processInfo.environment
        do {
            let configuration = try ConfigLocator.load(flag: file ?? global.config, registry: registry, environment: environment)
            let count = configuration.remotes.count
            let source = configuration.source ?? "no config file (built-in default)"
            if !global.quiet { print("\(source): ok, \(count) remote\(count == 1 ? "" : "s")") }
        } catch {
            throw Diagnostics.fail(operation: "config", item: nil, error: error)
        }
    }
}

struct ConfigTypesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "List the provider types and every key each accepts."
    )

    @OptionGroup var global: GlobalOptions
    @Flag(name: .long, help: "Print JSON.") var json = false

    func run() async throws {
        let registry = Gateway.makeRegistry()
        let out = StandardOutput()
        if json {
            struct Key: Encodable { var name, type, summary: String; var required, secret: Bool; var `default`: String? }
            struct TypeEntry: Encodable { var type, summary: String; var keys: [Key] }
            out.line(JSON.encode(registry.allDescriptors.map { descriptor in
                TypeEntry(type: descriptor.type, summary: descriptor.summary, keys: descriptor.keys.map {
                    Key(name: $0.name, type: $0.type.rawValue, summary: $0.summary, required: $0.isRequired, secret: $0.isSecret, default: $0.defaultValue)
                })
            }))
        } else {
            for descriptor in registry.allDescriptors {
                out.line("\(descriptor.type): \(descriptor.summary)")
                for key in descriptor.keys {
                    var flags = [key.type.rawValue]
                    if key.isRequired { flags.append("required") }
                    if key.isSecret { flags.append("secret; also \(key.name)_env, \(key.name)_command") }
                    if let value = key.defaultValue { flags.append("default \(value)") }
                    out.line("  \(key.name) (\(flags.joined(separator: ", "))): \(key.summary)")
                }
            }
        }
        out.flush()
    }
}
