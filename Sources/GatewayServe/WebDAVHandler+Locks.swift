import Foundation
import GatewayCore
import GatewayServeRequests
import HTTPTypes
import HummingbirdCore
import NIOCore

/// `LOCK` and `UNLOCK` (RFC 4918 class 2), the `If` header, and the rule that a change to a
/// locked resource presents the lock's token. Locks live in the server's ``LockTable``: they are
/// the server's promise to its WebDAV clients, not locks on the remote (which other programs
/// reach directly).
extension WebDAVHandler {
    static let lockTokenHeader = HTTPField.Name("Lock-Token")!
    static let ifHeader = HTTPField.Name("If")!
    static let timeoutHeader = HTTPField.Name("Timeout")!

    /// The response that stops a request, or `nil` when it goes ahead: a malformed `If` header
    /// (400), one that evaluates false (412), or a change to a locked resource that does not
    /// submit the lock's token (423).
    func lockGate(_ request: Request, method: String, path: String) async throws -> Response? {
        var submitted = Set<String>()
        if let text = request.headers[Self.ifHeader] {
            guard let header = IfHeader.parse(text) else { return Self.plain(.badRequest, "the If header is malformed") }
            let locks = self.locks
            let holds = await header.evaluate(
                resolve: { tag in tag.map { paths.remote(forDestination: $0) } ?? path },
                entityTag: { target in
                    guard let item = try? await item(target), !item.isDirectory else { return nil }
                    return Self.etag(item)
                },
                holdsToken: { token, target in locks.isToken(token, covering: target) })
            guard holds else { return Self.plain(.preconditionFailed, "the If header's conditions do not hold") }
            submitted = header.submittedTokens
        }
        var affected: [ActiveLock] = []
        switch method {
        case "PUT":
            // A depth-0 lock on the parent matters only when the PUT adds a member.
            let withParent = locks.locks(affecting: path, members: false, parentMembership: true)
            affected = withParent.filter { $0.covers(path) }
            if affected.count < withParent.count, try await item(path) == nil { affected = withParent }
        case "PROPPATCH":
            affected = locks.locks(affecting: path, members: false, parentMembership: false)
        case "MKCOL", "DELETE":
            affected = locks.locks(affecting: path, members: method == "DELETE", parentMembership: true)
        case "COPY", "MOVE":
            if method == "MOVE" { affected = locks.locks(affecting: path, members: true, parentMembership: true) }
            if let header = request.headers[HTTPField.Name("Destination")!], let destination = paths.remote(forDestination: header) {
                affected += locks.locks(affecting: destination, members: true, parentMembership: true)
            }
        default:
            return nil
        }
        let missing = affected.filter { !submitted.contains($0.token) }
        guard let first = missing.first else { return nil }
        return Self.xml(HTTPResponse.Status(code: 423, reasonPhrase: "Locked"),
                        "<D:error xmlns:D=\"DAV:\"><D:lock-token-submitted><D:href>\(ServeText.xml(paths.href(for: first.root, isFolder: first.rootIsFolder)))</D:href></D:lock-token-submitted></D:error>")
    }

    /// `LOCK`: a new lock (with a `DAV:lockinfo` body) or a refresh (without one, naming the lock
    /// in the `If` header). Locking a name with nothing there creates an empty file (RFC 4918
    /// section 7.3).
    func lock(_ request: Request, path: String) async throws -> Response {
        let timeout = TimeoutHeader.parse(request.headers[Self.timeoutHeader], longest: LockTable.longestTimeout, fallback: LockTable.defaultTimeout)
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: options.maximumRequestXML)
        } catch {
            return Self.plain(.contentTooLarge, "the LOCK body is larger than \(options.maximumRequestXML) bytes")
        }
        if body.readableBytes == 0 {
            // A refresh: the If header (already found true) names the lock.
            let tokens = request.headers[Self.ifHeader].flatMap(IfHeader.parse)?.submittedTokens ?? []
            for token in tokens.sorted() {
                if let lock = locks.refresh(token, covering: path, timeout: timeout) { return lockResponse(lock, status: .ok, newToken: false) }
            }
            return Self.plain(.preconditionFailed, "a LOCK without a body refreshes a lock, and the If header names none on this resource")
        }
        let wanted: LockRequest
        do {
            wanted = try LockRequest.parse(Data(body.readableBytesView))
        } catch {
            return Self.plain(.badRequest, "the LOCK body is not a DAV:lockinfo document with a write lock")
        }
        let depth = request.headers[HTTPField.Name("Depth")!]?.trimmingCharacters(in: .whitespaces).lowercased() ?? "infinity"
        guard depth == "0" || depth == "infinity" else { return Self.plain(.badRequest, "LOCK takes Depth: 0 or infinity") }
        let existing = try await item(path)
        if existing == nil {
            guard provider is any FileProviderReadWrite else { return Self.plain(.notImplemented, "this remote cannot be written") }
            guard try await item(RemotePath.parent(of: path))?.isDirectory == true else {
                return Self.plain(.conflict, "the parent folder does not exist")
            }
        }
        let isFolder = existing?.isDirectory == true
        switch locks.lock(root: path, isFolder: isFolder, deep: isFolder && depth == "infinity", scope: wanted.scope,
                          owner: wanted.owner, timeout: timeout) {
        case .failure(.conflict(let root)):
            return Self.xml(HTTPResponse.Status(code: 423, reasonPhrase: "Locked"),
                            "<D:error xmlns:D=\"DAV:\"><D:no-conflicting-lock><D:href>\(ServeText.xml(paths.href(for: root, isFolder: false)))</D:href></D:no-conflicting-lock></D:error>")
        case .failure(.full):
            return Self.plain(.serviceUnavailable, "the server holds too many locks")
        case .success(let lock):
            guard existing == nil, let writer = provider as? any FileProviderReadWrite else { return lockResponse(lock, status: .ok, newToken: true) }
            do {
                var options = WriteOptions(overwrite: false, atomically: true, expectedSize: 0)
                options.returnsStoredAttributes = false
                _ = try await writer.write(path: path, from: ByteStream(data: Data()), options: options)
            } catch {
                _ = locks.unlock(lock.token, covering: path)
                throw error
            }
            return lockResponse(lock, status: .created, newToken: true)
        }
    }

    /// `UNLOCK`: removes the lock the `Lock-Token` header names, which must cover the resource.
    func unlock(_ request: Request, path: String) -> Response {
        guard var token = request.headers[Self.lockTokenHeader]?.trimmingCharacters(in: .whitespaces), token.count > 2 else {
            return Self.plain(.badRequest, "UNLOCK needs a Lock-Token header")
        }
        if token.hasPrefix("<"), token.hasSuffix(">") { token = String(token.dropFirst().dropLast()) }
        guard locks.unlock(token, covering: path) else {
            return Self.xml(.conflict, "<D:error xmlns:D=\"DAV:\"><D:lock-token-matches-request-uri/></D:error>")
        }
        return Response(status: .noContent, headers: HTTPFields(), body: ResponseBody())
    }

    /// The `DAV:lockdiscovery` of a path: every lock that covers it.
    func lockDiscovery(_ path: String) -> String {
        let active = locks.locks(covering: path)
        guard !active.isEmpty else { return "<D:lockdiscovery/>" }
        return "<D:lockdiscovery>" + active.map(activeLock).joined() + "</D:lockdiscovery>"
    }

    /// The `DAV:supportedlock` every resource has: exclusive and shared write locks.
    static let supportedLock = "<D:supportedlock>"
        + "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
        + "<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
        + "</D:supportedlock>"

    private func activeLock(_ lock: ActiveLock) -> String {
        var xml = "<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:\(lock.scope.rawValue)/></D:lockscope>"
        xml += "<D:depth>\(lock.deep ? "infinity" : "0")</D:depth>"
        if !lock.owner.isEmpty { xml += "<D:owner>\(lock.owner)</D:owner>" }
        xml += "<D:timeout>Second-\(lock.timeout.components.seconds)</D:timeout>"
        xml += "<D:locktoken><D:href>\(ServeText.xml(lock.token))</D:href></D:locktoken>"
        xml += "<D:lockroot><D:href>\(ServeText.xml(paths.href(for: lock.root, isFolder: lock.rootIsFolder)))</D:href></D:lockroot>"
        return xml + "</D:activelock>"
    }

    private func lockResponse(_ lock: ActiveLock, status: HTTPResponse.Status, newToken: Bool) -> Response {
        var response = Self.xml(status, "<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>\(activeLock(lock))</D:lockdiscovery></D:prop>")
        if newToken { response.headers[Self.lockTokenHeader] = "<\(lock.token)>" }
        return response
    }

    /// An XML response (with the XML declaration) of `body`.
    static func xml(_ status: HTTPResponse.Status, _ body: String) -> Response {
        let buffer = ByteBuffer(string: #"<?xml version="1.0" encoding="utf-8"?>"# + "\n" + body + "\n")
        var headers = HTTPFields()
        headers[.contentType] = "application/xml; charset=utf-8"
        headers[.contentLength] = String(buffer.readableBytes)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }
}
