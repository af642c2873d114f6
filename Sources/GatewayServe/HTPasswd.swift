import CServeSystem
import Crypto
import Foundation
import GatewayCore
import Synchronization

/// An Apache `htpasswd` file of bcrypt entries (`htpasswd -B`): `user:$2y$…` lines. Other hash
/// kinds (MD5 `$apr1$`, SHA-1 `{SHA}`, crypt) are refused when the file is read, naming the line:
/// they are too weak to keep passwords in.
///
/// The file is read again when it changes (its size or modification time), so users can be added
/// without a restart. A bcrypt check costs milliseconds by design; a password that checked out is
/// remembered (as a SHA-256 of user, password and hash, in memory) for ``rememberFor``, so a
/// client's next requests do not pay it again.
final class HTPasswd: Sendable {
    let path: String
    /// How long a checked password is remembered.
    static let rememberFor: Duration = .seconds(300)
    /// The most entries read from a file, and remembered checks.
    static let maximumEntries = 100_000
    static let maximumRemembered = 10_000

    private struct State {
        var entries: [String: String] = [:]
        var stamp: (size: Int64, modified: Int64) = (-1, -1)
        var remembered: [Data: ContinuousClock.Instant] = [:]
    }

    private let state = Mutex(State())

    /// Reads `path`.
    ///
    /// - Throws: ``HTPasswd/Problem`` when the file cannot be read or has a line that is not a bcrypt entry.
    init(path: String) throws {
        self.path = path
        let (entries, stamp) = try Self.read(path)
        state.withLock {
            $0.entries = entries
            $0.stamp = stamp
        }
    }

    /// A problem with the file, naming it and the line.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether `password` is `user`'s.
    func accepts(user: String, password: String) -> Bool {
        reloadIfChanged()
        guard let hash = state.withLock({ $0.entries[user] }) else {
            // The same work as a real check, so a missing user does not answer faster.
            _ = Self.crypt(password, setting: Self.decoyHash)
            return false
        }
        let key = Data(SHA256.hash(data: Data("\(user)\u{0}\(password)\u{0}\(hash)".utf8)))
        let now = ContinuousClock.now
        if let until = state.withLock({ $0.remembered[key] }), until > now { return true }
        guard let computed = Self.crypt(password, setting: hash),
              BasicAuthorization.constantTimeEqual(Array(computed.utf8), Array(hash.utf8)) else { return false }
        state.withLock { state in
            if state.remembered.count >= Self.maximumRemembered { state.remembered = state.remembered.filter { $0.value > now } }
            if state.remembered.count < Self.maximumRemembered { state.remembered[key] = now + Self.rememberFor }
        }
        return true
    }

    private func reloadIfChanged() {
        guard let stamp = Self.stamp(path), stamp != state.withLock({ $0.stamp }) else { return }
        // A file being rewritten may read as broken for a moment: the last good entries stay.
        guard let (entries, fresh) = try? Self.read(path) else { return }
        state.withLock {
            $0.entries = entries
            $0.stamp = fresh
            $0.remembered = [:]
        }
    }

    private static func stamp(_ path: String) -> (size: Int64, modified: Int64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    private static func read(_ path: String) throws -> ([String: String], (size: Int64, modified: Int64)) {
        guard let stamp = stamp(path), let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "\(path): cannot be read")
        }
        guard data.count <= 16 << 20 else { throw Problem(description: "\(path): larger than 16 MiB") }
        var entries: [String: String] = [:]
        for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.hasSuffix("\r") ? line.dropLast() : line
            if text.trimmingCharacters(in: .whitespaces).isEmpty || text.hasPrefix("#") { continue }
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                throw Problem(description: "\(path) line \(index + 1): not a USER:HASH entry")
            }
            let user = String(text[..<colon])
            let hash = String(text[text.index(after: colon)...])
            guard isBcrypt(hash) else {
                throw Problem(description: "\(path) line \(index + 1): user \(TerminalText.escaped(user)) has no bcrypt hash "
                              + "(make entries with htpasswd -B; MD5, SHA-1 and crypt hashes are refused)")
            }
            entries[user] = hash
            guard entries.count <= maximumEntries else { throw Problem(description: "\(path): more than \(maximumEntries) users") }
        }
        return (entries, stamp)
    }

    /// `$2a$`, `$2b$` or `$2y$`, a two-digit cost, and 53 characters of salt and hash.
    static func isBcrypt(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
              let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost), bytes[6] == UInt8(ascii: "$") else {
            return false
        }
        return bytes[7...].allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x2F }
    }

    /// A bcrypt hash of nothing in particular, cost 10 (htpasswd -B's default: the same work).
    static let decoyHash = "$2y$10$abcdefghijklmnopqrstuu5Ji8dRFyN9Y3ItTvwl1SIxn6Vx1ljyG"

    /// libxcrypt's `crypt_r`: `password` hashed with the settings (and salt) of `setting`.
    static func crypt(_ password: String, setting: String) -> String? {
        guard !password.utf8.contains(0), password.utf8.count <= 72 * 4 else { return nil }
        let data = UnsafeMutablePointer<crypt_data>.allocate(capacity: 1)
        defer {
            UnsafeMutableRawPointer(data).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<crypt_data>.size)
            data.deallocate()
        }
        UnsafeMutableRawPointer(data).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<crypt_data>.size)
        guard let result = crypt_r(password, setting, data) else { return nil }
        let text = String(cString: result)
        // libxcrypt signals failure with a string starting with "*".
        return text.hasPrefix("*") ? nil : text
    }
}
