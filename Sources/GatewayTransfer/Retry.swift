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

extension CopyEngine {
    /// Runs `body` under the run's retry policy (`--retries`, its delays), each retry reported as
    /// a `.retrying` event for `relative`. With `progress`, each attempt counts its bytes in a child
    /// of it (of `bytes` in all, named `relative`), and a failed attempt takes its bytes back, so
    /// that progress stays true when the work is done again.
    func retrying<T>(_ relative: String, state: RunState, progress: TransferProgress? = nil, bytes: Int64? = nil,
                     _ body: (TransferProgress?) async throws -> T) async throws -> T {
        try await Retry.run(attempts: options.retries, base: options.retryDelay, cap: options.maxRetryDelay,
                            onRetry: { attempt, delay, error in
                                state.event(.retrying(path: relative, attempt: attempt, delay: delay, error: ErrorMessage.reason(for: error)))
                            }) {
            let attempt = progress?.makeChild(totalBytes: bytes, name: relative)
            defer { attempt?.finish() }
            do {
                return try await body(attempt)
            } catch {
                if let attempt { attempt.removeBytes(attempt.snapshot.completedBytes) }
                throw error
            }
        }
    }
}
