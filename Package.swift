// swift-tools-version:6.0
import PackageDescription

/// Settings every target of ours shares: Swift 6 language mode (strict concurrency is on by default there).
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-storage-gateway",
    // Linux first. The core (and Local) use Synchronization's Mutex and Atomic, which Apple's
    // platforms have from these releases on; the network backends need libcurl and libxml2.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        /// Everything an app needs: the core protocols and models plus every built-in backend.
        .library(name: "StorageGateway", targets: ["StorageGateway"]),
        /// Only the backend-neutral core, for apps that bring their own providers.
        .library(name: "GatewayCore", targets: ["GatewayCore"]),
        /// One backend on its own, without the others' dependencies (SFTP's SwiftNIO among them):
        /// register its `descriptor` on a `ProviderRegistry`, or make its provider directly.
        .library(name: "GatewayLocal", targets: ["GatewayLocal"]),
        .library(name: "GatewayWebDAV", targets: ["GatewayWebDAV"]),
        .library(name: "GatewayFTP", targets: ["GatewayFTP"]),
        .library(name: "GatewaySFTP", targets: ["GatewaySFTP"]),
        .library(name: "GatewayS3", targets: ["GatewayS3"]),
        /// A WebDAV server over any provider (what `gateway serve webdav` runs).
        .library(name: "GatewayServe", targets: ["GatewayServe"]),
        // The WebDAV request grammar `gateway serve` parses, on its own (the fuzz harnesses use it).
        .library(name: "GatewayServeRequests", targets: ["GatewayServeRequests"]),
        // SFTP packets on their own (the fuzz harness uses them).
        .library(name: "GatewaySFTPProtocol", targets: ["GatewaySFTPProtocol"]),
        // S3's signing and answers on their own (the fuzz harness uses them).
        .library(name: "GatewayS3Protocol", targets: ["GatewayS3Protocol"]),
        // The copy engine and plans (`gateway plan`) over the core alone (the fuzz harness uses it).
        .library(name: "GatewayTransfer", targets: ["GatewayTransfer"]),
        /// Any remote as a file system (FUSE, libfuse3): what `gateway mount` runs.
        .library(name: "GatewayMount", targets: ["GatewayMount"]),
        .executable(name: "gateway", targets: ["gateway"]),
        .plugin(name: "ValidateGatewayConfig", targets: ["ValidateGatewayConfig"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        // `gateway serve webdav`: the HTTP server (SwiftNIO underneath).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.20.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        // The SFTP backend's in-process SSH channel.
        .package(url: "https://github.com/apple/swift-nio-ssh", from: "0.12.0"),
        // The share page's templates (`gateway serve links`, a browser's view of `serve webdav`).
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        // `swift package generate-documentation`: the DocC catalog, built (warnings as errors) in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // Core: protocols, models, errors, registry, config, paths, content hashes (swift-crypto). Knows no backend, links no system library.
        .target(
            name: "GatewayCore",
            dependencies: [.product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // Backends, one target each.
        .target(
            name: "GatewayLocal",
            dependencies: ["GatewayCore", "GatewayState", "GatewayMedia", "CLocalShims"],
            swiftSettings: strict
        ),
        // Tiny C shim for GatewayLocal: openat2(2) through syscall(2), and Linux constants Swift's Glibc leaves out.
        .target(name: "CLocalShims", path: "Sources/CLocalShims"),
        // System libraries (Debian: libcurl4-openssl-dev, libxml2-dev) with header-only typed shims.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // SQLite (Debian: libsqlite3-dev) for the local state store, through a header-only shim.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The local state store (SQLite files under $XDG_STATE_HOME/gateway/) and what is built on
        // it for every backend: change monitoring by snapshots and anchors.
        .target(
            name: "GatewayState",
            dependencies: ["GatewayCore", "CSQLite", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // libcurl transport shared by the network backends: handle pool, dedicated threads, streamed bodies.
        .target(
            name: "GatewayTransport",
            dependencies: ["GatewayCore", "CCurl", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "GatewayWebDAV",
            dependencies: ["GatewayCore", "GatewayState", "GatewayMedia", "GatewayTransport", "CLibXML2", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "GatewayFTP",
            dependencies: ["GatewayCore", "GatewayState", "GatewayMedia", "GatewayTransport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // SFTP v3 packets (draft-ietf-secsh-filexfer-02) read and written, on their own: no SSH, no
        // SwiftNIO, so the fuzz harness builds it alone.
        .target(name: "GatewaySFTPProtocol", swiftSettings: strict),
        // The SFTP backend: its client over an SSH channel (swift-nio-ssh in process, or the system's
        // `ssh` as a subprocess), OpenSSH key files and known_hosts, and the provider.
        .target(
            name: "GatewaySFTP",
            dependencies: [
                "GatewayCore", "GatewayState", "GatewayMedia", "GatewaySFTPProtocol",
                .product(name: "NIOSSH", package: "swift-nio-ssh"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // AWS Signature Version 4 and S3's XML answers (libxml2 through GatewayServeRequests' SAX2
        // event reader), on their own: no transport, so the fuzz harness builds it alone.
        .target(
            name: "GatewayS3Protocol",
            dependencies: ["GatewayCore", "GatewayServeRequests", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // The S3 backend: signed requests over the shared libcurl transport.
        .target(
            name: "GatewayS3",
            dependencies: ["GatewayCore", "GatewayState", "GatewayMedia", "GatewayTransport", "GatewayS3Protocol",
                           .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Thumbnails and content metadata for every provider (ExtendedFileProvider over ranged reads):
        // libvips, libexif, TagLib and poppler-glib (Debian: libvips-dev, libexif-dev, libtagc0-dev,
        // libpoppler-glib-dev), through header-only shims and one small C++ stream for TagLib.
        .systemLibrary(name: "CVips", path: "Sources/CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .systemLibrary(name: "CExif", path: "Sources/CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CPoppler", path: "Sources/CPoppler", pkgConfig: "poppler-glib", providers: [.apt(["libpoppler-glib-dev"])]),
        // TagLib's C++ IOStream over C callbacks (TagLib's own C API opens files by name only).
        .target(name: "CTagLibStream", path: "Sources/CTagLibStream", linkerSettings: [.linkedLibrary("tag")]),
        // libvips and poppler-glib are loaded on first use (dlopen), not linked: with what they pull in
        // they are ~80 libraries and ~15 MB resident that commands other than thumbnail and meta
        // never need. CVips and CPoppler above give their headers to the check below.
        .target(name: "CMediaLibraries", path: "Sources/CMediaLibraries",
                linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // FFmpeg (video posters and metadata), loaded on first use the same way, but compiled against
        // its headers (Debian: libavformat-dev, libavcodec-dev, libavutil-dev, libswscale-dev).
        .target(name: "CVideoFrames", path: "Sources/CVideoFrames",
                linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(
            name: "GatewayMedia",
            dependencies: ["GatewayCore", "CMediaLibraries", "CVideoFrames", "CExif", "CTagLibStream"],
            swiftSettings: strict
        ),
        // Serving any remote to other programs: a WebDAV server (`gateway serve webdav`) on Hummingbird.
        // Not in the StorageGateway umbrella, so apps that only read and write remotes don't link
        // SwiftNIO.
        // libxcrypt (Debian: libcrypt-dev): bcrypt for --htpasswd files.
        .systemLibrary(name: "CServeSystem", path: "Sources/CServeSystem", providers: [.apt(["libcrypt-dev", "zlib1g-dev"])]),
        // What WebDAV clients send, parsed: PROPFIND, PROPPATCH and LOCK bodies, the If, Range and
        // Timeout headers (libxml2 for the bodies). No SwiftNIO, so the fuzz harnesses build it quickly.
        .target(
            name: "GatewayServeRequests",
            dependencies: ["GatewayCore", "CLibXML2"],
            swiftSettings: strict
        ),
        .target(
            name: "GatewayServe",
            dependencies: [
                "GatewayCore",
                "GatewayServeRequests",
                "GatewayState",
                "CServeSystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                // TLS (swift-nio-ssl) and HTTP/2 over it (swift-nio-http2), for --tls-cert.
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: strict
        ),
        // libfuse3's low-level API (Debian: libfuse3-dev; fuse3 for fusermount3), header-only shim.
        .systemLibrary(name: "CFuse", path: "Sources/CFuse", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        // A remote as a file system: the kernel's requests answered from the library's public
        // protocols. Not in the StorageGateway umbrella, so apps don't link libfuse.
        .target(
            name: "GatewayMount",
            dependencies: ["GatewayCore", "GatewayState", "CFuse", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Moving bytes and trees between any two providers.
        .target(
            name: "GatewayTransfer",
            dependencies: ["GatewayCore"],
            swiftSettings: strict
        ),
        // Umbrella for apps: re-exports the above and registers the built-in backends.
        .target(
            name: "StorageGateway",
            dependencies: ["GatewayCore", "GatewayState", "GatewayMedia", "GatewayLocal", "GatewayWebDAV", "GatewayFTP", "GatewaySFTP", "GatewayS3", "GatewayTransfer"],
            swiftSettings: strict
        ),
        // The `gateway` command-line tool: a thin layer over StorageGateway.
        .executableTarget(
            name: "gateway",
            dependencies: [
                "StorageGateway",
                "GatewayServe",
                "GatewayMount",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/GatewayCLI",
            swiftSettings: strict
        ),
        // The README's library snippet, verbatim (scripts/readme-snippet.sh keeps it in sync): it
        // compiles as an app author would paste it. Not a product; nothing runs it.
        .executableTarget(
            name: "readme-snippet",
            dependencies: ["StorageGateway"],
            path: "Snippets/README",
            swiftSettings: strict
        ),
        .plugin(
            name: "ValidateGatewayConfig",
            capability: .command(
                intent: .custom(
                    verb: "validate-config",
                    description: "Validate gateway config files (default: config.example.json) with the CLI's own validator."
                )
            ),
            dependencies: ["gateway"],
            path: "Plugins/ValidateGatewayConfig"
        ),
        // Helpers shared by the test suites (loopback sockets, silent servers); not a product.
        // (Fixtures for every backend, the test servers' environment, hostile servers; tests use it
        // through `@testable import`.)
        .target(name: "GatewayTestSupport", dependencies: ["StorageGateway", .product(name: "Logging", package: "swift-log")],
                path: "Tests/Support", swiftSettings: strict),
        // The library as an app author meets it: public API only (no @testable, no test support),
        // with docs/configuration.md's registration snippet compiled verbatim.
        .testTarget(
            name: "AppAuthorTests",
            dependencies: ["StorageGateway", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Compiles CMediaLibraries.h's declarations against the libraries' own headers (a mismatch
        // fails the test build); not a product.
        .target(name: "CMediaLibrariesCheck", dependencies: ["CMediaLibraries", "CVips", "CPoppler"],
                path: "Tests/CMediaLibrariesCheck"),
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: ["GatewayCore", "StorageGateway", "CMediaLibrariesCheck", "GatewayTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ProviderBehaviourTests",
            dependencies: ["StorageGateway", "GatewayTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayTransferTests",
            dependencies: ["GatewayTransfer", "StorageGateway", "GatewayTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayLocalTests",
            dependencies: ["GatewayLocal", "StorageGateway", "GatewayTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayWebDAVTests",
            dependencies: ["GatewayWebDAV", "GatewayTransport", "StorageGateway", "GatewayTestSupport",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayFTPTests",
            dependencies: ["GatewayFTP", "GatewayTransport", "StorageGateway", "GatewayTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewaySFTPTests",
            dependencies: ["GatewaySFTP", "GatewaySFTPProtocol", "StorageGateway", "GatewayTestSupport",
                           .product(name: "NIOSSH", package: "swift-nio-ssh")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayS3Tests",
            dependencies: ["GatewayS3", "GatewayS3Protocol", "StorageGateway", "GatewayTestSupport",
                           .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayStateTests",
            dependencies: ["GatewayState", "GatewayCore", "GatewayTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayServeTests",
            dependencies: ["GatewayServe", "GatewayServeRequests", "GatewayCore", "GatewayLocal", "GatewayTestSupport",
                           .product(name: "Logging", package: "swift-log"), .product(name: "HummingbirdCore", package: "hummingbird"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayMountTests",
            dependencies: ["GatewayMount", "GatewayLocal", "GatewayCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GatewayCLITests",
            dependencies: ["gateway", "StorageGateway", "GatewayTestSupport"],
            swiftSettings: strict
        ),
    ]
)
