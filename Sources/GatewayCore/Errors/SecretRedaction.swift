import Foundation
import Synchronization

/// The credentials of the remotes in use, so that no text a server sends back (a 500 page echoing
/// the request headers, an FTP `530` echoing the password) shows or logs them.
///
/// Transports register a remote's secrets when they are created (the password, its URL-encoded
/// form, the Basic `user:password` token, a bearer token); ``ErrorMessage/reason(for:)`` and the
/// CLI's log lines pass every text through ``redact(_:)``.
public enum SecretRedaction {
    /// What a secret is replaced with.
    public static let mask = "***"
    /// Secrets shorter than this are not redacted: masking every "ab" in a message would garble it
    /// and reveal the secret by its gaps.
    public static let minimumLength = 4

    private static let secrets = Mutex<Set<String>>([])

    /// Registers a secret and its usual encodings (percent-encoded, and with `user` the Basic
    /// `base64(user:secret)` token).
    public static func register(_ secret: String?, user: String? = nil) {
        guard let secret, !secret.isEmpty else { return }
        var forms: Set<String> = [secret]
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { forms.insert(encoded) }
        if let user { forms.insert(Data("\(user):\(secret)".utf8).base64EncodedString()) }
        forms = forms.filter { $0.utf8.count >= minimumLength }
        guard !forms.isEmpty else { return }
        secrets.withLock { $0.formUnion(forms) }
    }

    /// `text` with every registered secret replaced by ``mask``.
    public static func redact(_ text: String) -> String {
        let known = secrets.withLock { $0 }
        guard !known.isEmpty else { return text }
        var result = text
        // Longest first, so a secret inside a longer registered form does not break that form up.
        for secret in known.sorted(by: { $0.utf8.count > $1.utf8.count }) where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: mask)
        }
        return result
    }
}
