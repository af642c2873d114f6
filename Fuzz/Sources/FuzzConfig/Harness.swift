// libFuzzer harness for config loading: `GatewayConfiguration.parse(data:source:registry:environment:)`
// with the built-in backends registered but SFTP (whose SwiftNIO would double the sanitized build;
// its keys' validation is in ConfigTests): the same descriptors `Gateway.makeRegistry()` registers.
//
// Input format: config JSON, optionally followed by a NUL byte and environment lines `KEY=VALUE`
// (so the `GATEWAY_REMOTE_<NAME>_<KEY>` overrides are fuzzed too). A `ConfigError` is an expected
// outcome; a crash, a trap or a hang is not. Every error must describe itself.
import Foundation
import GatewayCore
import GatewayFTP
import GatewayLocal
import GatewayWebDAV

private let registry: ProviderRegistry = {
    let registry = ProviderRegistry()
    for descriptor in [LocalFileProvider.descriptor, WebDAVProvider.descriptor, FTPProvider.descriptor] { try? registry.register(descriptor) }
    return registry
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    var json = Data(bytes)
    var environment: [String: String] = [:]
    if let nul = bytes.firstIndex(of: 0) {
        json = Data(bytes[..<nul])
        let text = String(decoding: bytes[(nul + 1)...], as: UTF8.self)
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
    }
    do {
        let configuration = try GatewayConfiguration.parse(data: json, source: "fuzz.json", registry: registry, environment: environment)
        _ = configuration.remoteNames
    } catch {
        _ = String(describing: error)
    }
    return 0
}
