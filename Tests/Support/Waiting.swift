import Testing

/// Waits for `condition` (checked every 10 ms), bounded by `timeout`, which only a broken run
/// reaches: a wait for the thing itself, not a pause of guessed length. On time-out it records
/// "not within TIMEOUT: `what`" as an issue and throws.
func waitUntil(_ what: @autoclosure () -> String, timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("not within \(timeout): \(what())", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Writes a probe until a stream reports it: `write(round)` changes the probe (a new size each
/// round: one written before the stream took its first look is part of the state it starts
/// from and reports nothing), then `seen()` is asked for 3 s; bounded by `timeout`. `false` when
/// the stream never reported it.
func probeUntilSeen(timeout: Duration, write: (Int) throws -> Void, seen: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    var round = 0
    while ContinuousClock.now < deadline {
        round += 1
        try write(round)
        let next = min(deadline, ContinuousClock.now + .seconds(3))
        while ContinuousClock.now < next {
            if seen() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
    return false
}
