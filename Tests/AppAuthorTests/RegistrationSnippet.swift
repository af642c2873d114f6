// Written by scripts/readme-snippet.sh from docs/configuration.md ("Registering your own
// provider type"): the snippet verbatim, inside a function the tests call. Do not edit.
import StorageGateway

func registrationSnippet() throws -> ProviderRegistry {
    let registry = Gateway.makeRegistry()      // or ProviderRegistry() for an empty one
    try registry.register(ProviderDescriptor(
        type: "vault",
        summary: "Files in our vault service.",
        keys: [
            ConfigKey("url", .string, required: true, summary: "service URL"),
            ConfigKey("password", .string, required: true, secret: true, summary: "API password"),
            ConfigKey("retries", .integer, default: "3", summary: "attempts per request"),
        ],
        validate: { _ in [] },                        // optional extra checks -> [ProviderDescriptor.Problem]
        make: { remote, context in
            // A required secret comes back non-optional; defaults apply ("retries" is 3 when absent).
            let password = try remote.requiredSecret("password", environment: context.environment)
            return try VaultProvider(name: remote.name, url: remote.string("url")!, password: password,
                                     retries: remote.integer("retries")!, logger: context.logger)
        }
    ))
    return registry
}
