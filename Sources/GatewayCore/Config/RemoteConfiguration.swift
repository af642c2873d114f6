import Foundation

/// One validated remote: its name, type and values (after environment overrides).
public struct RemoteConfiguration: Sendable, Hashable {
    /// The remote's name, as used in `NAME:path`.
    public var name: String
    /// The provider type, e.g. `"local"`.
    public var type: String
    /// The values by key (without `type`), as written (after environment overrides).
    public var values: [String: ConfigValue]
    /// The declared defaults of the keys absent from ``values``: the typed accessors
    /// (``string(_:)``, ``integer(_:)``...) fall back to them.
    public var defaults: [String: ConfigValue] = [:]
    /// Where the remote was defined: a file path, or `environment`.
    public var source: String

    /// Creates a configuration. Normally built by ``GatewayConfiguration/parse(data:source:registry:environment:)``.
    public init(name: String, type: String, values: [String: ConfigValue], source: String) {
        self.name = name
        self.type = type
        self.values = values
        self.source = source
    }

    /// The value of a key as written, else its declared default.
    public func value(_ key: String) -> ConfigValue? { values[key] ?? defaults[key] }

    /// A string value (or the key's default).
    public func string(_ key: String) -> String? {
        if case .string(let value)? = value(key) { return value }
        return nil
    }

    /// An integer value (or the key's default).
    public func integer(_ key: String) -> Int? {
        if case .integer(let value)? = value(key) { return value }
        return nil
    }

    /// A number value, integers included (or the key's default).
    public func number(_ key: String) -> Double? {
        switch value(key) {
        case .number(let value)?: return value
        case .integer(let value)?: return Double(value)
        default: return nil
        }
    }

    /// A boolean value (or the key's default).
    public func boolean(_ key: String) -> Bool? {
        if case .boolean(let value)? = value(key) { return value }
        return nil
    }

    /// Resolves a secret key: the value itself, else the environment variable named by `<key>_env`,
    /// else the trimmed output of the shell command in `<key>_command`; `nil` when none is set.
    ///
    /// - Throws: ``ConfigError`` when the variable is unset or the command fails. The message never
    ///   contains the secret.
    public func secret(_ key: String, environment: [String: String]) throws -> String? {
        if let value = string(key) { return value }
        if let variable = string(key + "_env") {
            guard let value = environment[variable] else {
                throw ConfigError(source: source, remote: name, key: key + "_env",
                                  message: "\(key)_env names the environment variable \(variable), which is not set")
            }
            return value
        }
        if let command = string(key + "_command") {
            return try Self.runSecretCommand(command, key: key, remote: self)
        }
        return nil
    }

    /// A secret the type requires (declared `required: true`): as ``secret(_:environment:)``, but
    /// never `nil`.
    ///
    /// - Throws: ``ConfigError`` when it is not set in any of its three forms.
    public func requiredSecret(_ key: String, environment: [String: String]) throws -> String {
        guard let value = try secret(key, environment: environment) else {
            throw ConfigError(source: source, remote: name, key: key,
                              message: "missing required key \"\(key)\" (or \(key)_env, \(key)_command)")
        }
        return value
    }

    static func runSecretCommand(_ command: String, key: String, remote: RemoteConfiguration) throws -> String {
        try runSecretCommand(command, key: key, source: remote.source, remote: remote.name, keyPrefix: "")
    }

    /// Runs a `*_command` secret through `/bin/sh -c`; its output, trimmed of newlines.
    static func runSecretCommand(_ command: String, key: String, source: String, remote: String?, keyPrefix: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let name = keyPrefix + key + "_command"
        do {
            try process.run()
        } catch {
            throw ConfigError(source: source, remote: remote, key: name, message: "\(name) could not be started")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ConfigError(source: source, remote: remote, key: name, message: "\(name) exited with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
