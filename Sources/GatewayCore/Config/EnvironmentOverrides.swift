/// Applies `GATEWAY_REMOTE_<NAME>_<KEY>` environment variables to a configuration.
///
/// `<NAME>` is the remote's name in upper case with `-` and `.` written as `_`; `<KEY>` is the key in
/// upper case. A variable ending in `_TYPE` for a name the file does not have defines a new remote,
/// so a whole remote can live in the environment. When names overlap (`a` and `a_b`), the longest
/// matching remote name wins.
struct EnvironmentOverrides {
    private var assigned: [String: [(variable: String, key: String, value: String)]] = [:]
    private var unmatched: [String] = []
    private(set) var definedRemotes: [String] = []
    private let fileRemotes: Set<String>

    static func environmentName(of remote: String) -> String {
        String(remote.uppercased().map { $0 == "-" || $0 == "." ? "_" : $0 })
    }

    init(environment: [String: String], fileRemotes: Set<String>) {
        self.fileRemotes = fileRemotes
        let prefix = GatewayConfiguration.environmentPrefix
        let variables = environment.filter { $0.key.hasPrefix(prefix) }
        var names = Array(fileRemotes)
        let fileEnvironmentNames = Set(fileRemotes.map(Self.environmentName))
        for variable in variables.keys.sorted() where variable.hasSuffix("_TYPE") {
            let middle = String(variable.dropFirst(prefix.count).dropLast("_TYPE".count))
            if !middle.isEmpty, !fileEnvironmentNames.contains(middle) {
                let name = middle.lowercased()
                if !names.contains(name) {
                    names.append(name)
                    definedRemotes.append(name)
                }
            }
        }
        for (variable, value) in variables {
            let rest = variable.dropFirst(prefix.count)
            let match = names
                .filter { rest.hasPrefix(Self.environmentName(of: $0) + "_") }
                .max { Self.environmentName(of: $0).count < Self.environmentName(of: $1).count }
            guard let remote = match else {
                unmatched.append(variable)
                continue
            }
            let key = rest.dropFirst(Self.environmentName(of: remote).count + 1).lowercased()
            assigned[remote, default: []].append((variable, key, value))
        }
    }

    func isEnvironmentOnly(_ remote: String) -> Bool { !fileRemotes.contains(remote) }

    /// Overrides `values` of `remote`; returns problems for values that cannot be used.
    func apply(to values: inout [String: ConfigValue], remote: String, registry: ProviderRegistry) -> [ConfigProblem] {
        guard let overrides = assigned[remote] else { return [] }
        var problems: [ConfigProblem] = []
        if let type = overrides.first(where: { $0.key == "type" }) {
            values["type"] = .string(type.value)
        }
        let typeName: String? = if case .string(let name)? = values["type"] { name } else { nil }
        let keys = typeName.flatMap { registry.descriptor(forType: $0) }?.acceptedKeys
        for override in overrides.sorted(by: { $0.variable < $1.variable }) where override.key != "type" {
            let source = "environment \(override.variable)"
            guard let keys else {
                values[override.key] = .string(override.value)
                continue
            }
            guard let spec = keys[override.key] else {
                problems.append(ConfigProblem(source: source, remote: remote, key: override.key,
                                              message: "unknown key \"\(override.key)\" for type \"\(typeName ?? "?")\"\(Suggestion.didYouMean(override.key, in: keys.keys))"))
                continue
            }
            guard let value = spec.parse(environmentValue: override.value) else {
                problems.append(ConfigProblem(source: source, remote: remote, key: override.key,
                                              message: "key \"\(override.key)\" must be \(spec.type.article)"))
                continue
            }
            values[override.key] = value
        }
        return problems
    }

    /// Variables that matched no remote.
    func unmatchedProblems() -> [ConfigProblem] {
        unmatched.sorted().map { variable in
            ConfigProblem(source: "environment \(variable)",
                          message: "matches no configured remote (define a new one with \(GatewayConfiguration.environmentPrefix)<NAME>_TYPE)")
        }
    }
}
