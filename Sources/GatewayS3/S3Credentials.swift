import Foundation

/// The key pair (and session token) an ``S3Provider`` signs with, and where it came from.
public struct S3Credentials: Sendable, Equatable {
    /// The access key id.
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// A temporary credential's session token.
    public var sessionToken: String?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The credentials AWS's own tools would find, in their order: the environment
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then the profile
    /// (`profile`, else `AWS_PROFILE`, else `default`) of the shared credentials file
    /// (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`). `nil` when neither has them.
    ///
    /// - Throws: ``S3CredentialsError`` when a profile named explicitly is missing or incomplete.
    public static func standard(environment: [String: String], profile: String? = nil) throws -> S3Credentials? {
        if profile == nil, let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
           let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty {
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        }
        let named = profile ?? environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 }
        let file = environment["AWS_SHARED_CREDENTIALS_FILE"].map { URL(fileURLWithPath: $0) }
            ?? environment["HOME"].map { URL(fileURLWithPath: $0).appendingPathComponent(".aws/credentials") }
        guard let file, let text = try? String(contentsOf: file, encoding: .utf8) else {
            if let named { throw S3CredentialsError("profile \"\(named)\" was asked for, but no shared credentials file was found") }
            return nil
        }
        let sections = parseINI(text)
        let wanted = named ?? "default"
        guard let section = sections[wanted] else {
            if let named { throw S3CredentialsError("profile \"\(named)\" is not in \(file.path)") }
            return nil
        }
        guard let key = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] else {
            throw S3CredentialsError("profile \"\(wanted)\" in \(file.path) lacks aws_access_key_id or aws_secret_access_key")
        }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: section["aws_session_token"])
    }

    /// The sections of an INI file (`[name]`, `key = value`, `#` and `;` comments), at most 1 MiB.
    static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for line in text.utf8.count > 1 << 20 ? [] : text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") {
                var name = String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                if name.hasPrefix("profile ") { name = String(name.dropFirst(8)).trimmingCharacters(in: .whitespaces) }
                current = name
                continue
            }
            guard let current, let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[current, default: [:]][key] = value
        }
        return sections
    }
}

/// Credentials that were asked for and could not be found.
public struct S3CredentialsError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
