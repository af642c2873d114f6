import Foundation
import GatewayCore
import GatewayServeRequests
import HTTPTypes
import HummingbirdCore
import NIOCore

/// `DELETE`, `MKCOL`, `COPY` and `MOVE`, on the remote's own operations (server-side where the
/// remote can).
extension WebDAVHandler {
    func operations() -> (any FileProviderOperations)? { provider as? any FileProviderOperations }

    func delete(_ request: Request, path: String) async throws -> Response {
        guard let operations = operations() else { return Self.plain(.notImplemented, "this remote cannot remove items") }
        guard path != paths.root else { return Self.plain(.forbidden, "the served folder itself cannot be removed") }
        guard let item = try await item(path) else { return Self.plain(.notFound, "not found") }
        if Conditions.check(request.headers, etag: item.isDirectory ? nil : Self.etag(item), modified: item.modificationDate,
                            exists: true, readMethod: false) != nil {
            return Self.plain(.preconditionFailed, "precondition failed")
        }
        try await operations.removeItem(path: path, recursive: true)
        try? deadProperties?.removeAll(under: path)
        locks.removeAll(under: path)
        return Response(status: .noContent, headers: HTTPFields(), body: ResponseBody())
    }

    func mkcol(_ request: Request, path: String) async throws -> Response {
        guard let operations = operations() else { return Self.plain(.notImplemented, "this remote cannot create folders") }
        let length = request.headers[.contentLength].flatMap { Int64($0) } ?? 0
        if length > 0 || request.headers[.transferEncoding] != nil {
            return Self.plain(.unsupportedMediaType, "MKCOL with a body is not supported")
        }
        if try await item(path) != nil { return Self.plain(.methodNotAllowed, "something already has this name") }
        guard try await item(RemotePath.parent(of: path))?.isDirectory == true else {
            return Self.plain(.conflict, "the parent folder does not exist")
        }
        try await operations.createFolder(path: path, withIntermediateDirectories: false)
        return Self.plain(.created, "created")
    }

    func copyOrMove(_ request: Request, path: String, move: Bool) async throws -> Response {
        guard let operations = operations() else { return Self.plain(.notImplemented, "this remote cannot copy or move") }
        guard let header = request.headers[HTTPField.Name("Destination")!] else {
            return Self.plain(.badRequest, "a Destination header is required")
        }
        guard let destination = paths.remote(forDestination: header) else {
            return Self.plain(.badGateway, "the destination is not on this server, or not an acceptable path")
        }
        let overwriteHeader = request.headers[HTTPField.Name("Overwrite")!]?.trimmingCharacters(in: .whitespaces).uppercased()
        guard overwriteHeader == nil || overwriteHeader == "T" || overwriteHeader == "F" else {
            return Self.plain(.badRequest, "Overwrite must be T or F")
        }
        let overwrite = overwriteHeader != "F"
        let depth = request.headers[HTTPField.Name("Depth")!]?.trimmingCharacters(in: .whitespaces).lowercased() ?? "infinity"
        guard depth == "infinity" || (!move && depth == "0") else {
            return Self.plain(.badRequest, move ? "MOVE takes Depth: infinity only" : "COPY takes Depth: 0 or infinity")
        }
        guard let source = try await item(path) else { return Self.plain(.notFound, "not found") }
        guard destination != path else { return Self.plain(.forbidden, "the source and the destination are the same") }
        guard destination != paths.root, !destination.hasPrefix(path == "/" ? "/" : path + "/") else {
            return Self.plain(.forbidden, "the destination is inside the source")
        }
        guard try await item(RemotePath.parent(of: destination))?.isDirectory == true else {
            return Self.plain(.conflict, "the destination's parent folder does not exist")
        }
        let existing = try await item(destination)
        if existing != nil {
            guard overwrite else { return Self.plain(.preconditionFailed, "the destination exists (Overwrite: F)") }
            // RFC 4918 9.8.4 and 9.9.3: the destination is removed first, as by DELETE.
            try await operations.removeItem(path: destination, recursive: true)
            try? deadProperties?.removeAll(under: destination)
            locks.removeAll(under: destination)
        }
        if move {
            try await operations.moveItem(path: path, to: destination, overwrite: false)
            locks.removeAll(under: path)
        } else if source.isDirectory, depth == "0" {
            try await operations.createFolder(path: destination, withIntermediateDirectories: false)
        } else {
            try await operations.copyItem(path: path, to: destination, overwrite: false, progress: nil)
        }
        // Dead properties go with the item (a Depth 0 copy of a folder takes only its own).
        if let store = deadProperties {
            if !move, source.isDirectory, depth == "0" {
                let own = try store.properties(of: path)
                try store.update(destination, own.map { .set($0) })
            } else {
                try store.transfer(from: path, to: destination, keepSource: !move)
            }
        }
        return existing == nil ? Self.plain(.created, "created") : Response(status: .noContent, headers: HTTPFields(), body: ResponseBody())
    }
}
