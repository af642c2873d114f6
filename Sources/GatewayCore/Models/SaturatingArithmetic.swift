extension FixedWidthInteger {
    /// `self + other`, held at the type's bounds instead of trapping: sums of sizes reported by
    /// servers (a listing whose sizes add past `Int64.max`) must never crash the process.
    public func saturatingAdding(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}

// Conversions of floating-point figures (rates, fractions, times) to integers that never trap: a
// server's numbers can make them huge, infinite or not a number, and `Int64(_: Double)` stops the
// process on any of those.
extension Int64 {
    /// `value` rounded toward zero, clamped to `Int64.min...Int64.max`; `0` for NaN.
    @inlinable
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9_223_372_036_854_775_807.0 {
            self = .max
        } else if value <= -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int64(value)
        }
    }
}

extension Int {
    /// `value` rounded toward zero, clamped to `Int.min...Int.max`; `0` for NaN.
    @inlinable
    public init(saturating value: Double) {
        self = Int(truncatingIfNeeded: Int64(saturating: value))
    }
}

extension Duration {
    /// The length in seconds, fractions included.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// `seconds` as a duration, clamped to about ±292 years (whole milliseconds); zero for NaN.
    public static func seconds(saturating seconds: Double) -> Duration {
        .milliseconds(Int64(saturating: (seconds * 1000).rounded()))
    }
}
