public import Foundation

/// One problem found in a configuration: where (file or environment variable, remote, key) and what.
public struct ConfigProblem: Sendable, Hashable, CustomStringConvertible {
    /// The config file's path, or `environment VARIABLE` for an override.
    public var source: String
    /// The remote the problem concerns, if any.
    public var remote: String?
    /// The key the problem concerns, if any.
    public var key: String?
    /// What is wrong, e.g. `unknown key "rot" (did you mean "root"?)`.
    public var message: String

    /// Creates a problem.
    public init(source: String, remote: String? = nil, key: String? = nil, message: String) {
        self.source = source
        self.remote = remote
        self.key = key
        self.message = message
    }

    /// One line: `config FILE: remote "NAME": MESSAGE`.
    public var description: String {
        var line = source.hasPrefix("environment") ? source : "config \(source)"
        if let remote { line += ": remote \"\(remote)\"" }
        return line + ": " + message
    }
}

/// A configuration that cannot be used. The CLI prints one line per problem and exits with 2.
public struct ConfigError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// Every problem found (validation does not stop at the first).
    public var problems: [ConfigProblem]

    /// Creates an error from problems.
    public init(_ problems: [ConfigProblem]) { self.problems = problems }

    /// Creates an error with one problem.
    public init(source: String, remote: String? = nil, key: String? = nil, message: String) {
        self.problems = [ConfigProblem(source: source, remote: remote, key: key, message: message)]
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }

    /// Every problem, one per line: what `localizedDescription` shows an app's user.
    public var errorDescription: String? { description }
}

/// "Did you mean" suggestions by edit distance.
public enum Suggestion {
    /// The candidate closest to `word`, if it is close enough to be a plausible typo.
    public static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        let lower = word.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lower, candidate.lowercased())
            if distance <= max(2, candidate.count / 3), distance < (best?.1 ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.0
    }

    /// ` (did you mean "x"?)` or an empty string.
    public static func didYouMean(_ word: String, in candidates: some Sequence<String>) -> String {
        closest(to: word, in: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
    }

    /// Levenshtein distance between two strings (by characters).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
