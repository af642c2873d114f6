import ArgumentParser

/// A duration on the command line: a whole number with `s`, `m`, `h` or `d` (`30s`, `15m`, `2h`,
/// `7d`), as every option that takes one accepts it.
struct DurationArgument: ExpressibleByArgument, Sendable, Hashable {
    /// The length in seconds.
    let seconds: Int64

    init?(argument: String) {
        guard let seconds = Self.parse(argument) else { return nil }
        self.seconds = seconds
    }

    static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]

    /// Seconds for `text`, or `nil` when it is not a number and a unit (or over 100 years).
    static func parse(_ text: String) -> Int64? {
        guard let unit = text.last, let factor = units[unit] else { return nil }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy(\.isASCII), let number = Int64(digits), number >= 0 else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: factor)
        guard !overflow, product <= 100 * 366 * 86_400 else { return nil }
        return product
    }

    static var defaultValueDescription: String { "a number with s, m, h or d, e.g. 30s, 15m, 2h, 7d" }
}
