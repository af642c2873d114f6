import Foundation
import GatewayCore

/// Retries with exponential back-off and jitter, for transient errors only, honouring a server's
/// `Retry-After`.
enum Retry {
    static func run<T>(attempts: Int, base: Duration, cap: Duration,
                       onRetry: (Int, Duration, any Error) -> Void, _ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch {
                guard attempt < attempts, error.isTransient else { throw error }
                let delay = Self.delay(after: attempt, base: base, cap: cap, error: error)
                onRetry(attempt, delay, error)
                try await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }

    /// `base * 2^(attempt-1)`, ±25 % jitter, at most `cap`; a `Retry-After` wins (up to a minute).
    static func delay(after attempt: Int, base: Duration, cap: Duration, error: any Error) -> Duration {
        if let described = error as? any DescribedFailure, let retryAfter = described.retryAfter {
            return min(retryAfter, .seconds(60))
        }
        let exponential = base * (1 << min(attempt - 1, 20))
        let jitter = Double.random(in: 0.75...1.25)
        return min(cap, exponential * jitter)
    }
}
