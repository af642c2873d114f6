import Foundation
import StorageGateway

/// The servers `scripts/test-servers.sh` starts on 127.0.0.1, found through the environment that
/// `scripts/test.sh` exports. A missing server makes the test fail with this explanation.
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        let variable: String
        var description: String {
            "\(variable) is not set: the test servers are not running. Run ./scripts/test.sh, or start them with "
                + "`scripts/test-servers.sh start` and `source /tmp/gateway-test-servers/env`."
        }
    }

    struct WebDAVServer {
        let url: URL
        let user: String
        let password: String

        func configuration(remoteName: String) -> HTTPClientConfiguration {
            HTTPClientConfiguration(baseURL: url, remoteName: remoteName, user: user, password: password,
                                    connectTimeout: .seconds(5), idleTimeout: .seconds(15))
        }
    }

    static func webdav(urlVariable: String) throws -> WebDAVServer {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment[urlVariable], let url = URL(string: text) else { throw Missing(variable: urlVariable) }
        return WebDAVServer(url: url, user: environment["GATEWAY_TEST_WEBDAV_USER"] ?? "gateway",
                            password: environment["GATEWAY_TEST_WEBDAV_PASSWORD"] ?? "gateway-test")
    }

    /// An FTP server started by `scripts/test-servers.sh`: its configuration for a remote.
    static func ftp(urlVariable: String, userVariable: String, tls: FTPClientConfiguration.TLSMode = .none,
                    caFileVariable: String? = nil, remoteName: String) throws -> FTPClientConfiguration {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment[urlVariable], let url = URL(string: text) else { throw Missing(variable: urlVariable) }
        guard let user = environment[userVariable] else { throw Missing(variable: userVariable) }
        guard let password = environment["GATEWAY_TEST_FTP_PASSWORD"] else { throw Missing(variable: "GATEWAY_TEST_FTP_PASSWORD") }
        var caFile: String?
        if let caFileVariable {
            guard let value = environment[caFileVariable] else { throw Missing(variable: caFileVariable) }
            caFile = value
        }
        return FTPClientConfiguration(baseURL: url, remoteName: remoteName, user: user, password: password, tls: tls,
                                      connectTimeout: .seconds(5), idleTimeout: .seconds(15), caFile: caFile)
    }
}
