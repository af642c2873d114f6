// swift-tools-version:5.4
// 5.4 on purpose: from 5.5 on, SwiftPM renames an executable's entry point to `<module>_main` and
// links with `--defsym main=<module>_main`, which breaks harnesses whose `main` comes from libFuzzer.
import PackageDescription

// libFuzzer harnesses for the parsers that read what servers and users send: WebDAV 207 bodies,
// FTP LIST and MLSD lines, FTP control-connection replies, HTTP response header lines, gateway config JSON, FreeDesktop `.trashinfo` records, and
// media files (EXIF, audio tags, image headers, PDF information: FuzzMediaMetadata), and what WebDAV
// clients send `gateway serve` (request bodies, If, Range and Timeout headers: FuzzServeRequests),
// and what SFTP servers send (packets cut from a byte stream and read: FuzzSFTPPacket), and plans
// (chunk lines, manifests and markers from a shared plan folder: FuzzPlan), and what S3 servers send
// (ListObjectsV2 pages and error answers: FuzzS3XML).
//
// A separate package so the main one stays free of fuzzing flags. Build and run it through
// `scripts/fuzz.sh` (see docs/fuzzing.md), which passes `-sanitize=fuzzer,address`,
// `-parse-as-library` and `-enable-testing` (the multistatus harness reaches the internal
// `MultistatusParser` with `@testable import GatewayWebDAV`).

/// A product of the main package. Each harness takes the narrowest that holds its parser, so the
/// sanitized build leaves out what no harness reaches (SwiftNIO and swift-nio-ssh, which only the
/// SFTP provider's channel uses, cost about 90 s of it).
func product(_ name: String) -> Target.Dependency { .product(name: name, package: "swift-storage-gateway") }

/// Each harness: `Sources/<name>/Harness.swift` defining `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
let harnesses: [(name: String, dependencies: [Target.Dependency])] = [
    ("FuzzMultistatus", [product("GatewayWebDAV")]),
    ("FuzzLIST", [product("GatewayFTP")]),
    ("FuzzMLSD", [product("GatewayFTP")]),
    ("FuzzFTPReply", [product("GatewayFTP")]),
    ("FuzzHTTPHeaders", [product("GatewayFTP")]),
    ("FuzzConfig", [product("GatewayLocal"), product("GatewayWebDAV"), product("GatewayFTP")]),
    ("FuzzTrashInfo", [product("GatewayCore")]),
    ("FuzzMediaMetadata", [product("GatewayLocal")]),
    ("FuzzServeRequests", [product("GatewayServeRequests"), product("GatewayLocal")]),
    ("FuzzSFTPPacket", [product("GatewaySFTPProtocol")]),
    ("FuzzPlan", [product("GatewayTransfer")]),
    ("FuzzS3XML", [product("GatewayS3Protocol")]),
]

let package = Package(
    name: "GatewayFuzz",
    dependencies: [.package(name: "swift-storage-gateway", path: "..")],
    targets: harnesses.map { harness in
        .executableTarget(name: harness.name, dependencies: harness.dependencies)
    }
)
