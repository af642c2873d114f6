extension RemoteConfiguration {
    /// The longest time a seconds key (`connect_timeout`, `idle_timeout`, `low_speed_time`) may
    /// hold: one day. Longer values are refused by validation, so no later arithmetic on them (nor
    /// libcurl's `long` options) can overflow.
    public static let maximumSeconds: Double = 86_400

    /// A seconds key as a `Duration` (`fallback` when absent), held within 1 ms ... one day even
    /// if validation was skipped.
    public func duration(_ key: String, default fallback: Double) -> Duration {
        let seconds = number(key) ?? fallback
        guard seconds.isFinite else { return .seconds(fallback) }
        return .milliseconds(Int64((min(max(seconds, 0.001), Self.maximumSeconds) * 1000).rounded()))
    }

    /// Validation of seconds keys: each present one must be above 0 and at most a day.
    public func secondsProblems(_ keys: [String]) -> [ProviderDescriptor.Problem] {
        keys.compactMap { key in
            guard let seconds = number(key), !(seconds > 0 && seconds <= Self.maximumSeconds) else { return nil }
            return .init(key: key, message: "key \"\(key)\" must be a number of seconds above 0 and at most \(Int(Self.maximumSeconds)) (a day)")
        }
    }

    /// Validation of an integer key's range.
    public func rangeProblem(_ key: String, _ range: ClosedRange<Int>, unit: String = "") -> ProviderDescriptor.Problem? {
        guard let value = integer(key), !range.contains(value) else { return nil }
        return .init(key: key, message: "key \"\(key)\" must be between \(range.lowerBound) and \(range.upperBound)\(unit)")
    }
}
