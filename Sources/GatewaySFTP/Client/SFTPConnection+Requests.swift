import Foundation
import GatewayCore
import GatewaySFTPProtocol

/// The replies each request expects, unpacked; an error status becomes an ``SFTPStatusError``
/// naming the operation and the remote path (not the server's path).
extension SFTPConnection {
    /// Expects `STATUS OK`.
    func expectOK(_ request: SFTPRequest, _ operation: String, path: String) async throws {
        let reply = try await self.request(request)
        guard case .status(_, let code, let message) = reply else { throw unexpected(reply, operation) }
        guard code == .ok else { throw SFTPStatusError(code: code, message: message, operation: operation, path: path) }
    }

    /// Expects `ATTRS`.
    func expectAttributes(_ request: SFTPRequest, _ operation: String, path: String) async throws -> SFTPAttributes {
        let reply = try await self.request(request)
        switch reply {
        case .attrs(_, let attributes): return attributes
        case .status(_, let code, let message): throw SFTPStatusError(code: code, message: message, operation: operation, path: path)
        default: throw unexpected(reply, operation)
        }
    }

    /// Expects `HANDLE`.
    func expectHandle(_ request: SFTPRequest, _ operation: String, path: String) async throws -> [UInt8] {
        let reply = try await self.request(request)
        switch reply {
        case .handle(_, let handle): return handle
        case .status(_, let code, let message): throw SFTPStatusError(code: code, message: message, operation: operation, path: path)
        default: throw unexpected(reply, operation)
        }
    }

    /// Expects `NAME`; `nil` for `STATUS EOF` (the end of a folder).
    func expectNames(_ request: SFTPRequest, _ operation: String, path: String) async throws -> [SFTPName]? {
        let reply = try await self.request(request)
        switch reply {
        case .name(_, let entries): return entries
        case .status(_, .eof, _): return nil
        case .status(_, let code, let message): throw SFTPStatusError(code: code, message: message, operation: operation, path: path)
        default: throw unexpected(reply, operation)
        }
    }

    /// Expects `EXTENDED_REPLY`.
    func expectExtendedReply(_ request: SFTPRequest, _ operation: String, path: String) async throws -> [UInt8] {
        let reply = try await self.request(request)
        switch reply {
        case .extendedReply(_, let data): return data
        case .status(_, let code, let message): throw SFTPStatusError(code: code, message: message, operation: operation, path: path)
        default: throw unexpected(reply, operation)
        }
    }

    /// Closes a handle; a failure is reported (a close can be where a write's error shows).
    func closeHandle(_ handle: [UInt8], path: String) async throws {
        try await expectOK(.close(handle: handle), "CLOSE", path: path)
    }

    func unexpected(_ reply: SFTPResponse, _ operation: String) -> SFTPClientError {
        .protocolViolation("an unexpected reply to \(operation): \(reply.kindName)")
    }
}

extension SFTPResponse {
    /// The reply's packet name, for messages.
    var kindName: String {
        switch self {
        case .version: "VERSION"
        case .status(_, let code, _): "STATUS \(code.rawValue)"
        case .handle: "HANDLE"
        case .data: "DATA"
        case .name: "NAME"
        case .attrs: "ATTRS"
        case .extendedReply: "EXTENDED_REPLY"
        }
    }
}
