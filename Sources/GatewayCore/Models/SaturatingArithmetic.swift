extension FixedWidthInteger {
    /// `self + other`, held at the type's bounds instead of trapping: sums of sizes reported by
    /// servers (a listing whose sizes add past `Int64.max`) must never crash the process.
    public func saturatingAdding(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
