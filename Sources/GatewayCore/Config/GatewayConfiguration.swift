public import Foundation

/// A whole gateway configuration: named remotes, validated against the provider types a
/// ``ProviderRegistry`` knows, with `GATEWAY_REMOTE_<NAME>_<KEY>` environment overrides applied.
///
/// The JSON form is `{"remotes": {"NAME": {"type": "local", "root": "/srv/files"}}}`.
public struct GatewayConfiguration: Sendable {
    /// The file the configuration came from; `nil` for the built-in default (no file).
    public var source: String?
    /// The remotes by name.
    public var remotes: [String: RemoteConfiguration]
    /// The top-level `state_dir`: the folder of the local state store (an absolute path, or one
    /// starting with `~/`, kept as written); `nil` for the default (see ``StateLocation``).
    public var stateDirectory: String?
    /// The top-level `links` object: where public links point and what signs them; `nil` when
    /// the configuration has none (then only remotes with their own sharing make links).
    public var links: LinksConfiguration?

    /// Creates a configuration directly (apps that build remotes in code).
    public init(source: String? = nil, remotes: [String: RemoteConfiguration] = [:], stateDirectory: String? = nil,
                links: LinksConfiguration? = nil) {
        self.source = source
        self.remotes = remotes
        self.stateDirectory = stateDirectory
        self.links = links
    }

    /// The top-level keys.
    static let topLevelKeys = ["remotes", "state_dir", "links"]

    /// The built-in default: no named remotes; bare paths are the local file system.
    public static let builtInDefault = GatewayConfiguration()

    /// Prefix of environment variables that override or define remote keys.
    public static let environmentPrefix = "GATEWAY_REMOTE_"

    /// The remote names, sorted.
    public var remoteNames: [String] { remotes.keys.sorted() }

    /// Reads and validates a config file.
    ///
    /// - Throws: ``ConfigError`` listing every problem, each naming the file, remote and key.
    public static func load(from url: URL, registry: ProviderRegistry, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> GatewayConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigError(source: url.path, message: "cannot read the file (\(ErrorMessage.reason(for: error)))")
        }
        return try parse(data: data, source: url.path, registry: registry, environment: environment)
    }

    /// Validates configuration JSON. `source` names it in messages.
    public static func parse(data: Data, source: String, registry: ProviderRegistry, environment: [String: String] = [:]) throws -> GatewayConfiguration {
        let document: [String: ConfigDocumentValue]
        do {
            document = try JSONDecoder().decode([String: ConfigDocumentValue].self, from: data)
        } catch let error as DecodingError {
            throw ConfigError(source: source, message: "not a JSON object: \(describe(error))")
        } catch {
            throw ConfigError(source: source, message: "not valid JSON")
        }
        var problems: [ConfigProblem] = []
        for key in document.keys.sorted() where !topLevelKeys.contains(key) {
            problems.append(ConfigProblem(source: source, key: key,
                                          message: "unknown top-level key \"\(key)\"\(Suggestion.didYouMean(key, in: topLevelKeys))"))
        }
        var stateDirectory: String?
        switch document["state_dir"] {
        case nil:
            break
        case .text(let path)? where path.hasPrefix("/") || path == "~" || path.hasPrefix("~/"):
            stateDirectory = path
        case .text(let path)?:
            problems.append(ConfigProblem(source: source, key: "state_dir", message: "\"state_dir\" must be an absolute path (or start with ~/), not \"\(path)\""))
        case .object?:
            problems.append(ConfigProblem(source: source, key: "state_dir", message: "\"state_dir\" must be a string (a folder), not an object"))
        case .invalid(let kind)?:
            problems.append(ConfigProblem(source: source, key: "state_dir", message: "\"state_dir\" must be a string (a folder), not \(kind)"))
        }
        var links: LinksConfiguration?
        if document["links"] != nil {
            if let values = (try? JSONDecoder().decode(LinksEnvelope.self, from: data))?.links {
                links = LinksConfiguration.validate(values, source: source, problems: &problems)
            } else {
                problems.append(ConfigProblem(source: source, key: "links",
                                              message: "\"links\" must be an object like {\"base_url\": \"https://files.example.com\", \"secret_env\": \"VAR\"}"))
            }
        }
        var raw: [String: [String: ConfigValue]] = [:]
        switch document["remotes"] {
        case nil:
            break
        case .object(let remotes)?:
            for (name, remote) in remotes {
                switch remote {
                case .values(let values):
                    raw[name] = values
                case .invalid(let kind):
                    problems.append(ConfigProblem(source: source, remote: name, message: "must be an object like {\"type\": \"local\", ...}, not \(kind)"))
                }
            }
        case .invalid(let kind)?:
            problems.append(ConfigProblem(source: source, key: "remotes", message: "\"remotes\" must be an object of NAME: {type, ...}, not \(kind)"))
        case .text?:
            problems.append(ConfigProblem(source: source, key: "remotes", message: "\"remotes\" must be an object of NAME: {type, ...}, not a string"))
        }
        var remotes: [String: RemoteConfiguration] = [:]
        let overrides = EnvironmentOverrides(environment: environment, fileRemotes: Set(raw.keys))
        for name in overrides.definedRemotes where raw[name] == nil { raw[name] = [:] }
        for name in raw.keys.sorted() {
            let remoteSource = overrides.isEnvironmentOnly(name) ? "environment" : source
            guard RemoteLocation.isValidRemoteName(name) else {
                problems.append(ConfigProblem(source: remoteSource, remote: name,
                                              message: "invalid remote name (use letters, digits, '_', '-', '.'; start with a letter or digit)"))
                continue
            }
            var values = raw[name] ?? [:]
            problems += overrides.apply(to: &values, remote: name, registry: registry)
            if let remote = validate(name: name, values: values, source: remoteSource, registry: registry, problems: &problems) {
                remotes[name] = remote
            }
        }
        problems += overrides.unmatchedProblems()
        guard problems.isEmpty else { throw ConfigError(problems) }
        return GatewayConfiguration(source: source, remotes: remotes, stateDirectory: stateDirectory, links: links)
    }

    /// The state folder this configuration names, with `~/` expanded; `nil` without `state_dir`.
    public func stateDirectoryURL(environment: [String: String]) -> URL? {
        guard let stateDirectory else { return nil }
        if stateDirectory == "~" || stateDirectory.hasPrefix("~/") {
            let home = environment["HOME"] ?? NSHomeDirectory()
            return URL(fileURLWithPath: home + stateDirectory.dropFirst(), isDirectory: true)
        }
        return URL(fileURLWithPath: stateDirectory, isDirectory: true)
    }

    /// Checks one remote's values against its type's keys.
    static func validate(name: String, values: [String: ConfigValue], source: String, registry: ProviderRegistry,
                         problems: inout [ConfigProblem]) -> RemoteConfiguration? {
        guard let typeValue = values["type"] else {
            problems.append(ConfigProblem(source: source, remote: name, key: "type",
                                          message: "missing required key \"type\" (one of: \(registry.typeNames.joined(separator: ", ")))"))
            return nil
        }
        guard case .string(let type) = typeValue else {
            problems.append(ConfigProblem(source: source, remote: name, key: "type",
                                          message: "key \"type\" must be a string, not \(typeValue.kindDescription)"))
            return nil
        }
        guard let descriptor = registry.descriptor(forType: type) else {
            problems.append(ConfigProblem(source: source, remote: name, key: "type",
                                          message: "unknown type \"\(type)\"\(Suggestion.didYouMean(type, in: registry.typeNames)) (known types: \(registry.typeNames.joined(separator: ", ")))"))
            return nil
        }
        let keysByName = descriptor.acceptedKeys
        var clean: [String: ConfigValue] = [:]
        var mistyped: Set<String> = []
        var ok = true
        for (key, value) in values.sorted(by: { $0.key < $1.key }) where key != "type" {
            guard let spec = keysByName[key] else {
                problems.append(ConfigProblem(source: source, remote: name, key: key,
                                              message: "unknown key \"\(key)\" for type \"\(type)\"\(Suggestion.didYouMean(key, in: keysByName.keys))"))
                ok = false
                continue
            }
            guard spec.accepts(value) else {
                problems.append(ConfigProblem(source: source, remote: name, key: key,
                                              message: "key \"\(key)\" must be \(spec.type.article), not \(value.kindDescription)"))
                mistyped.insert(key)
                ok = false
                continue
            }
            clean[key] = value
        }
        // Defaults apply: an absent key reads as its declared default (`remote.integer("chunk")` is
        // the default, not nil), and a default that is not of its key's type is reported like a
        // bad value (a provider type's mistake, caught by `config validate`).
        var defaults: [String: ConfigValue] = [:]
        for spec in descriptor.keys where !spec.isSecret && clean[spec.name] == nil && !mistyped.contains(spec.name) {
            guard let text = spec.defaultValue else { continue }
            guard let value = spec.parse(environmentValue: text) else {
                problems.append(ConfigProblem(source: source, remote: name, key: spec.name,
                                              message: "type \"\(type)\" declares the default \"\(text)\" for key \"\(spec.name)\", which is not \(spec.type.article)"))
                ok = false
                continue
            }
            defaults[spec.name] = value
        }
        for spec in descriptor.keys where spec.isRequired && !mistyped.contains(spec.name) {
            let present = clean[spec.name] != nil
                || (spec.isSecret && (clean[spec.name + "_env"] != nil || clean[spec.name + "_command"] != nil))
            if !present {
                problems.append(ConfigProblem(source: source, remote: name, key: spec.name,
                                              message: "missing required key \"\(spec.name)\" for type \"\(type)\" (\(spec.summary))"))
                ok = false
            }
        }
        var remote = RemoteConfiguration(name: name, type: type, values: clean, source: source)
        remote.defaults = defaults
        if ok {
            for problem in descriptor.validate(remote) {
                problems.append(ConfigProblem(source: source, remote: name, key: problem.key, message: problem.message))
                ok = false
            }
        }
        return ok ? remote : nil
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            return context.debugDescription
        @unknown default:
            return "cannot be decoded"
        }
    }
}

/// The top level of a config document: `remotes` should be an object of objects.
enum ConfigDocumentValue: Decodable {
    case object([String: RemoteDocument])
    case text(String)
    case invalid(String)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let remotes = try? container.decode([String: RemoteDocument].self) {
            self = .object(remotes)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else if let value = try? container.decode(ConfigValue.self) {
            self = .invalid(value.kindDescription)
        } else {
            self = .invalid("an array")
        }
    }
}

/// The `links` object of a config document, read on its own (its values are plain strings).
struct LinksEnvelope: Decodable {
    var links: [String: ConfigValue]?
}

/// One remote in a config document: an object of values, or something else to report.
enum RemoteDocument: Decodable {
    case values([String: ConfigValue])
    case invalid(String)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let values = try? container.decode([String: ConfigValue].self) {
            self = .values(values)
        } else {
            self = .invalid((try? container.decode(ConfigValue.self))?.kindDescription ?? "an array")
        }
    }
}
