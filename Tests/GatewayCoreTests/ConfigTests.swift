import Foundation
import GatewayCore
import StorageGateway
import Testing

@Suite("Configuration: parsing, validation, overrides, secrets")
struct ConfigTests {
    let registry = Gateway.makeRegistry()

    func parse(_ json: String, environment: [String: String] = [:], registry: ProviderRegistry? = nil) throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(data: Data(json.utf8), source: "/etc/test.json", registry: registry ?? self.registry, environment: environment)
    }

    func problems(_ json: String, environment: [String: String] = [:]) -> [String] {
        do {
            _ = try parse(json, environment: environment)
            return []
        } catch let error as ConfigError {
            return error.problems.map(\.description)
        } catch {
            return ["unexpected \(error)"]
        }
    }

    @Test("a valid config yields its remotes")
    func valid() throws {
        let config = try parse(#"{"remotes": {"docs": {"type": "local", "root": "/srv/docs"}, "tmp": {"type": "local", "root": "~/tmp"}}}"#)
        #expect(config.remoteNames == ["docs", "tmp"])
        #expect(config.remotes["docs"]?.string("root") == "/srv/docs")
        #expect(config.remotes["docs"]?.type == "local")
    }

    @Test("the shipped config.example.json is valid")
    func exampleIsValid() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config.example.json")
        let config = try GatewayConfiguration.load(from: url, registry: registry, environment: [:])
        #expect(!config.remotes.isEmpty)
        #expect(config.stateDirectory != nil, "config.example.json shows the top-level state_dir")
        #expect(config.links?.baseURL.absoluteString == "https://files.example.com", "config.example.json shows the top-level links")
        // Every key of every type appears in the example.
        for descriptor in registry.allDescriptors {
            let usedKeys = Set(config.remotes.values.filter { $0.type == descriptor.type }.flatMap(\.values.keys))
            for key in descriptor.keys {
                #expect(usedKeys.contains(key.name), "config.example.json lacks \(descriptor.type).\(key.name)")
            }
        }
    }

    @Test("links: base_url and one of secret_env, secret_command; each mistake named")
    func links() throws {
        let config = try parse(#"{"links": {"base_url": "https://files.example.com/pub/", "secret_env": "S"}, "remotes": {}}"#)
        #expect(config.links == LinksConfiguration(baseURL: URL(string: "https://files.example.com/pub")!, secretEnvironmentVariable: "S", source: "/etc/test.json"))
        #expect(config.links?.serverPrefix == "/pub/s/")
        #expect(try config.links?.secret(environment: ["S": "0123456789abcdef"]) == Array("0123456789abcdef".utf8))
        #expect(throws: ConfigError.self) { try config.links?.secret(environment: ["S": "too short"]) }
        #expect(throws: ConfigError.self) { try config.links?.secret(environment: [:]) }
        let command = try parse(#"{"links": {"base_url": "http://127.0.0.1:8080", "secret_command": "printf '%s' 0123456789abcdefXYZ"}}"#)
        #expect(try command.links?.secret(environment: [:]) == Array("0123456789abcdefXYZ".utf8))
        #expect(try parse(#"{"remotes": {}}"#).links == nil)
        #expect(problems(#"{"links": {"secret_env": "S"}}"#).contains { $0.contains("base_url") })
        #expect(problems(#"{"links": {"base_url": "ftp://x", "secret_env": "S"}}"#).contains { $0.contains("http") })
        #expect(problems(#"{"links": {"base_url": "https://u:p@x", "secret_env": "S"}}"#).contains { $0.contains("credentials") })
        #expect(problems(#"{"links": {"base_url": "https://x?a=b", "secret_env": "S"}}"#).contains { $0.contains("query") })
        #expect(problems(#"{"links": {"base_url": "https://x"}}"#).contains { $0.contains("secret_env") })
        #expect(problems(#"{"links": {"base_url": "https://x", "secret_env": "S", "secret_command": "c"}}"#).contains { $0.contains("not both") })
        #expect(problems(#"{"links": {"base_url": "https://x", "secret_env": "S", "secret": "inline"}}"#).contains { $0.contains("unknown key") })
        #expect(problems(#"{"links": {"base_url": 3, "secret_env": "S"}}"#).contains { $0.contains("string") })
        #expect(problems(#"{"links": "https://x"}"#).contains { $0.contains("\"links\" must be an object") })
        // The share page's limits: defaults, a value, 0 turning the ZIP off, a wrong value named.
        #expect(config.links?.zipMaximumBytes == LinksConfiguration.defaultZipLimit)
        #expect(config.links?.thumbnailCacheMaximumBytes == LinksConfiguration.defaultThumbnailCacheLimit)
        let limits = try parse(#"{"links": {"base_url": "https://x", "secret_env": "S", "zip_max_bytes": 1000, "thumbnail_cache_max_bytes": 5000}}"#)
        #expect(limits.links?.zipMaximumBytes == 1000 && limits.links?.thumbnailCacheMaximumBytes == 5000)
        #expect(try parse(#"{"links": {"base_url": "https://x", "secret_env": "S", "zip_max_bytes": 0}}"#).links?.zipMaximumBytes == nil)
        #expect(problems(#"{"links": {"base_url": "https://x", "secret_env": "S", "zip_max_bytes": -1}}"#)
            .contains { $0.contains("links.zip_max_bytes must be a whole number of bytes") })
        #expect(problems(#"{"links": {"base_url": "https://x", "secret_env": "S", "thumbnail_cache_max_bytes": "1G"}}"#)
            .contains { $0.contains("links.thumbnail_cache_max_bytes must be a whole number of bytes") })
        #expect(problems(#"{"link": {}}"#).contains { $0.contains("did you mean \"links\"") })
    }

    @Test("state_dir: an absolute or ~/ path; anything else is a problem; GATEWAY_STATE_DIR wins")
    func stateDirectory() throws {
        let config = try GatewayConfiguration.parse(data: Data(#"{"state_dir": "~/state", "remotes": {}}"#.utf8), source: "c.json", registry: registry)
        #expect(config.stateDirectoryURL(environment: ["HOME": "/home/u"])?.path == "/home/u/state")
        #expect(StateLocation.directory(environment: ["HOME": "/home/u"], configured: config.stateDirectoryURL(environment: ["HOME": "/home/u"])).path == "/home/u/state")
        #expect(StateLocation.directory(environment: ["GATEWAY_STATE_DIR": "/env/state", "HOME": "/home/u"],
                                        configured: URL(fileURLWithPath: "/configured")).path == "/env/state")
        #expect(StateLocation.directory(environment: ["XDG_STATE_HOME": "/xdg"]).path == "/xdg/gateway")
        #expect(StateLocation.directory(environment: ["HOME": "/home/u"]).path == "/home/u/.local/state/gateway")
        #expect(problems(#"{"state_dir": "relative/path"}"#).contains { $0.contains("state_dir") && $0.contains("absolute") })
        #expect(problems(#"{"state_dir": 3}"#).contains { $0.contains("state_dir") })
        #expect(problems(#"{"state_di": "/x"}"#).contains { $0.contains("did you mean \"state_dir\"") })
    }

    @Test("unknown key: one line naming file, remote and key, with did-you-mean")
    func unknownKey() {
        let lines = problems(#"{"remotes": {"docs": {"type": "local", "root": "/x", "rot": "/y"}}}"#)
        #expect(lines == [#"config /etc/test.json: remote "docs": unknown key "rot" for type "local" (did you mean "root"?)"#])
    }

    @Test("unknown type, with suggestion and the known types")
    func unknownType() {
        let lines = problems(#"{"remotes": {"docs": {"type": "locl", "root": "/x"}}}"#)
        #expect(lines.count == 1)
        #expect(lines[0].contains(#"remote "docs": unknown type "locl" (did you mean "local"?)"#))
        #expect(lines[0].contains("known types: ftp, local, s3, sftp, webdav"))
    }

    @Test("wrong value type names the key and never echoes the value")
    func wrongType() {
        let lines = problems(#"{"remotes": {"docs": {"type": "local", "root": 123456789}}}"#)
        #expect(lines == [#"config /etc/test.json: remote "docs": key "root" must be a string, not a number"#])
        #expect(!lines[0].contains("123456789"))
        let booleans = problems(#"{"remotes": {"docs": {"type": "local", "root": true}}}"#)
        #expect(booleans.first?.contains("not a boolean") == true)
    }

    @Test("missing required keys and missing type")
    func missingRequired() {
        #expect(problems(#"{"remotes": {"docs": {"type": "local"}}}"#).first?.contains(#"remote "docs": missing required key "root""#) == true)
        #expect(problems(#"{"remotes": {"docs": {"root": "/x"}}}"#).first?.contains(#"missing required key "type""#) == true)
    }

    @Test("malformed documents are reported, not crashed on")
    func malformed() {
        #expect(problems("{not json").first?.contains("config /etc/test.json: not a JSON object") == true)
        #expect(problems("[1,2]").first?.contains("not a JSON object") == true)
        #expect(problems(#"{"remotes": 5}"#).first?.contains(#""remotes" must be an object"#) == true)
        #expect(problems(#"{"remotes": {"docs": "local"}}"#).first?.contains(#"remote "docs": must be an object"#) == true)
        #expect(problems(#"{"remote": {}}"#).first?.contains(#"unknown top-level key "remote" (did you mean "remotes"?)"#) == true)
        #expect(problems(#"{"remotes": {"bad/name": {"type": "local", "root": "/x"}}}"#).first?.contains("invalid remote name") == true)
        #expect(problems(#"{"remotes": {"docs": {"type": "local", "root": "relative/path"}}}"#).first?.contains("must be an absolute path") == true)
    }

    @Test("every problem is reported, one line each")
    func severalProblems() {
        let lines = problems(#"{"remotes": {"a": {"type": "local", "rot": "/x"}, "b": {"type": "nope"}}}"#)
        #expect(lines.count == 3)
    }

    @Test("GATEWAY_REMOTE_<NAME>_<KEY> overrides a key")
    func environmentOverride() throws {
        let config = try parse(#"{"remotes": {"my-docs": {"type": "local", "root": "/x"}}}"#,
                               environment: ["GATEWAY_REMOTE_MY_DOCS_ROOT": "/override"])
        #expect(config.remotes["my-docs"]?.string("root") == "/override")
    }

    @Test("environment variables can define a whole remote, and bad ones are reported")
    func environmentDefinedRemote() throws {
        let config = try parse("{}", environment: ["GATEWAY_REMOTE_SCRATCH_TYPE": "local", "GATEWAY_REMOTE_SCRATCH_ROOT": "/tmp"])
        #expect(config.remotes["scratch"]?.string("root") == "/tmp")
        #expect(config.remotes["scratch"]?.source == "environment")

        let typo = problems("{}", environment: ["GATEWAY_REMOTE_SCRATCH_TYPE": "local", "GATEWAY_REMOTE_SCRATCH_ROOTT": "/tmp"])
        #expect(typo.contains { $0.hasPrefix("environment GATEWAY_REMOTE_SCRATCH_ROOTT: remote \"scratch\": unknown key \"roott\"") && $0.contains("did you mean \"root\"") })
        let stray = problems("{}", environment: ["GATEWAY_REMOTE_NOBODY_ROOT": "/tmp"])
        #expect(stray.first?.contains("GATEWAY_REMOTE_NOBODY_ROOT: matches no configured remote") == true)
    }

    @Test("longest remote name wins when names overlap")
    func overlappingNames() throws {
        let config = try parse(#"{"remotes": {"a": {"type": "local", "root": "/a"}, "a_b": {"type": "local", "root": "/ab"}}}"#,
                               environment: ["GATEWAY_REMOTE_A_B_ROOT": "/new"])
        #expect(config.remotes["a_b"]?.string("root") == "/new")
        #expect(config.remotes["a"]?.string("root") == "/a")
    }

    @Test("apps register their own types; secrets come from values, _env or _command")
    func customTypeAndSecrets() async throws {
        let registry = ProviderRegistry()
        let descriptor = ProviderDescriptor(
            type: "vault", summary: "test type",
            keys: [ConfigKey("url", .string, required: true, summary: "where"),
                   ConfigKey("password", .string, required: true, secret: true, summary: "secret"),
                   ConfigKey("retries", .integer, summary: "count"),
                   ConfigKey("fast", .boolean, summary: "flag")],
            make: { remote, context -> any FileProviderBasic in
                _ = try remote.secret("password", environment: context.environment)
                throw FileProviderError.unsupported(operation: "test", path: nil)
            })
        try registry.register(descriptor)
        #expect(throws: ProviderRegistry.DuplicateTypeError.self) { try registry.register(descriptor) }
        #expect(registry.typeNames == ["vault"])

        let env = ["VAULT_PW": "s3cret!", "GATEWAY_REMOTE_V_RETRIES": "7", "GATEWAY_REMOTE_V_FAST": "yes"]
        let config = try parse(#"{"remotes": {"v": {"type": "vault", "url": "x", "password_env": "VAULT_PW"}}}"#, environment: env, registry: registry)
        let remote = try #require(config.remotes["v"])
        #expect(try remote.secret("password", environment: env) == "s3cret!")
        #expect(remote.integer("retries") == 7)
        #expect(remote.boolean("fast") == true)

        let commanded = try parse(#"{"remotes": {"v": {"type": "vault", "url": "x", "password_command": "printf 'from-command\n'"}}}"#, registry: registry)
        #expect(try commanded.remotes["v"]?.secret("password", environment: [:]) == "from-command")

        let failing = try parse(#"{"remotes": {"v": {"type": "vault", "url": "x", "password_command": "exit 3"}}}"#, registry: registry)
        #expect(throws: ConfigError.self) { try failing.remotes["v"]?.secret("password", environment: [:]) }

        do {
            _ = try remote.secret("password", environment: [:])
            Issue.record("an unset password_env variable must fail")
        } catch let error as ConfigError {
            #expect(error.description.contains("VAULT_PW, which is not set"))
        }

        let badInt = (try? parse(#"{"remotes": {"v": {"type": "vault", "url": "x", "password": "p"}}}"#,
                                 environment: ["GATEWAY_REMOTE_V_RETRIES": "many"], registry: registry)) == nil
        #expect(badInt)
        let missingSecret = (try? parse(#"{"remotes": {"v": {"type": "vault", "url": "x"}}}"#, registry: registry)) == nil
        #expect(missingSecret)
    }

    @Test("config file lookup order: flag, GATEWAY_CONFIG, XDG_CONFIG_HOME, ~/.config")
    func lookupOrder() {
        let exists: (String) -> Bool = { _ in true }
        let none: (String) -> Bool = { _ in false }
        #expect(ConfigLocator.locate(flag: "/f.json", environment: ["GATEWAY_CONFIG": "/g.json"], fileExists: exists) == .explicit(URL(fileURLWithPath: "/f.json")))
        #expect(ConfigLocator.locate(flag: nil, environment: ["GATEWAY_CONFIG": "/g.json"], fileExists: exists) == .explicit(URL(fileURLWithPath: "/g.json")))
        #expect(ConfigLocator.locate(flag: nil, environment: ["XDG_CONFIG_HOME": "/xdg", "HOME": "/h"], fileExists: exists) == .defaultFile(URL(fileURLWithPath: "/xdg/gateway/config.json")))
        #expect(ConfigLocator.locate(flag: nil, environment: ["HOME": "/h"], fileExists: exists) == .defaultFile(URL(fileURLWithPath: "/h/.config/gateway/config.json")))
        #expect(ConfigLocator.locate(flag: nil, environment: ["HOME": "/h"], fileExists: none) == .none)
    }

    @Test("unknown remotes are config errors with a suggestion")
    func unknownRemote() async throws {
        let config = try parse(#"{"remotes": {"docs": {"type": "local", "root": "/"}}}"#)
        let resolver = Gateway.makeResolver(configuration: config, registry: registry)
        do {
            _ = try await resolver.provider(named: "dcos")
            Issue.record("must fail")
        } catch let error as ConfigError {
            #expect(error.description.contains(#"remote "dcos": unknown remote (did you mean "docs"?)"#))
        }
        let docs = try await resolver.provider(named: "docs")
        let again = try await resolver.provider(named: "docs")
        let same = (docs as AnyObject) === (again as AnyObject)
        #expect(same, "providers are created once and shared")
        // A typed look-up: the capability an app needs, or an error naming it.
        let writer = try await resolver.provider(named: "docs", as: (any FileProviderReadWrite).self)
        #expect(writer.name == "docs")
        do {
            _ = try await resolver.provider(named: "docs", as: (any FileProviderSharing).self)
            Issue.record("Local has no sharing")
        } catch {
            #expect(error.failureKind == .unsupported)
            #expect(ErrorMessage.reason(for: error).contains("FileProviderSharing"), "\(ErrorMessage.reason(for: error))")
        }
    }

    @Test("edit distance and suggestions")
    func suggestions() {
        #expect(Suggestion.editDistance("kitten", "sitting") == 3)
        #expect(Suggestion.closest(to: "pasword", in: ["password", "url"]) == "password")
        #expect(Suggestion.closest(to: "zzzzzz", in: ["password", "url"]) == nil)
    }

    @Test("defaults apply and are validated; a required secret comes back non-optional")
    func defaultsAndRequiredSecrets() throws {
        func registry(chunkDefault: String) throws -> ProviderRegistry {
            let registry = ProviderRegistry()
            try registry.register(ProviderDescriptor(type: "custom", summary: "test", keys: [
                ConfigKey("chunk", .integer, default: chunkDefault, summary: "chunk size"),
                ConfigKey("fast", .boolean, default: "true", summary: "go fast"),
                ConfigKey("token", .string, required: true, secret: true, summary: "API token"),
            ], validate: { remote in
                // Defaults are validated like values: they reach the type's own checks.
                (remote.integer("chunk") ?? 0) > 0 ? [] : [.init(key: "chunk", message: "chunk must be above 0")]
            }, make: { _, _ in throw CancellationError() }))
            return registry
        }
        let good = try registry(chunkDefault: "4")
        let config = try parse(#"{"remotes": {"c": {"type": "custom", "token_env": "TOKEN"}}}"#, registry: good)
        let remote = try #require(config.remotes["c"])
        #expect(remote.integer("chunk") == 4)
        #expect(remote.boolean("fast") == true)
        let token: String = try remote.requiredSecret("token", environment: ["TOKEN": "t0ken"])
        #expect(token == "t0ken")
        #expect(throws: ConfigError.self) { _ = try remote.requiredSecret("chunk_secret", environment: [:]) }
        // A default that is not of its key's type, or that fails the type's checks, is reported.
        for bad in ["x", "0"] {
            do {
                _ = try parse(#"{"remotes": {"c": {"type": "custom", "token": "t"}}}"#, registry: try registry(chunkDefault: bad))
                Issue.record("default \(bad) was accepted")
            } catch let error as ConfigError {
                #expect(error.problems.contains { $0.key == "chunk" }, "\(error)")
            }
        }
    }
}
