/// A value in a remote's configuration.
public enum ConfigValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    /// A JSON value of a kind no key accepts (array, object, null); kept only to report it.
    case unsupported(String)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .unsupported("null"); return }
        if let value = try? container.decode(Bool.self) { self = .boolean(value); return }
        if let value = try? container.decode(Int.self) { self = .integer(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if (try? container.decode([ConfigValue].self)) != nil { self = .unsupported("an array"); return }
        self = .unsupported("an object")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .boolean(let value): try container.encode(value)
        case .unsupported: try container.encodeNil()
        }
    }

    /// The JSON kind, for messages ("a string", "a number", ...). Never the value itself, which
    /// could be a secret.
    public var kindDescription: String {
        switch self {
        case .string: return "a string"
        case .integer, .number: return "a number"
        case .boolean: return "a boolean"
        case .unsupported(let kind): return kind
        }
    }

    public var description: String {
        switch self {
        case .string(let value): return value
        case .integer(let value): return String(value)
        case .number(let value): return String(value)
        case .boolean(let value): return String(value)
        case .unsupported(let kind): return "<\(kind)>"
        }
    }
}

/// One key a provider type accepts in its configuration.
public struct ConfigKey: Sendable, Hashable {
    /// The JSON type a key's value must have.
    public enum ValueType: String, Sendable, Hashable {
        case string, integer, number, boolean

        var article: String {
            switch self {
            case .string: return "a string"
            case .integer: return "an integer"
            case .number: return "a number"
            case .boolean: return "a boolean (true or false)"
            }
        }
    }

    /// The key as written in JSON, e.g. `"root"`.
    public var name: String
    /// The value's type.
    public var type: ValueType
    /// Whether every remote of this type must set it.
    public var isRequired: Bool
    /// A secret (such as `password`): never printed, and also accepted as `<name>_env` (the name of
    /// an environment variable holding it) and `<name>_command` (a shell command printing it).
    public var isSecret: Bool
    /// One line of documentation, shown by `gateway config types` and in the README table.
    public var summary: String
    /// The default when the key is absent, written as an environment override would be (`"4"`,
    /// `"true"`): shown in documentation, and what a validated ``RemoteConfiguration`` returns for
    /// the absent key. Validation reports a default that is not of the key's type.
    public var defaultValue: String?

    /// Declares a key.
    public init(_ name: String, _ type: ValueType, required: Bool = false, secret: Bool = false, default defaultValue: String? = nil, summary: String) {
        self.name = name
        self.type = type
        self.isRequired = required
        self.isSecret = secret
        self.summary = summary
        self.defaultValue = defaultValue
    }

    /// Whether `value` has this key's type (integers are accepted where numbers are).
    public func accepts(_ value: ConfigValue) -> Bool {
        switch (type, value) {
        case (.string, .string), (.integer, .integer), (.boolean, .boolean), (.number, .number), (.number, .integer):
            return true
        default:
            return false
        }
    }

    /// Parses an environment-variable override into this key's type.
    public func parse(environmentValue text: String) -> ConfigValue? {
        switch type {
        case .string: return .string(text)
        case .integer: return Int(text).map(ConfigValue.integer)
        case .number: return Double(text).map(ConfigValue.number)
        case .boolean:
            switch text.lowercased() {
            case "true", "1", "yes", "on": return .boolean(true)
            case "false", "0", "no", "off": return .boolean(false)
            default: return nil
            }
        }
    }
}
