import Foundation
import StorageGateway
#if canImport(Glibc)
import Glibc
#endif

/// Buffered standard output: lines are collected and written in large blocks.
final class StandardOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16 + 4096) }

    func line(_ text: String) {
        write(text)
        buffer.append(0x0A)
    }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        _ = buffer.withUnsafeBytes { FileDescriptorIO.writeAll(STDOUT_FILENO, $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes bytes straight to file descriptor 1.
    static func writeRaw(_ data: Data) {
        _ = FileDescriptorIO.writeAll(STDOUT_FILENO, data)
    }

    deinit { flush() }
}

/// Text forms shared by the commands.
enum Format {
    /// Whether standard output is a terminal (names are escaped there, as GNU `ls` does).
    static let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1

    /// A name or path as printed on standard output: control characters escaped on a terminal
    /// (``TerminalText``); piped elsewhere, the real bytes (a script reads them; `--json` escapes
    /// them in its strings).
    static func shown(_ name: String) -> String {
        stdoutIsTerminal ? TerminalText.escaped(name) : name
    }

    /// ISO 8601 in UTC with fractional seconds, e.g. `2026-11-21T12:58:01.250Z`.
    static func iso8601(_ date: Date?) -> String? {
        guard let date, let utc = UTCTime(date) else { return nil }
        return utc.text(separator: UInt8(ascii: "T"), fractionAndZone: true)
    }

    /// `2026-11-21 12:58:01` in UTC, for `ls -l`.
    static func listingDate(_ date: Date?) -> String {
        guard let date, let utc = UTCTime(date) else { return "                   " }
        return utc.text(separator: UInt8(ascii: " "), fractionAndZone: false)
    }

    /// `1.5 GiB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `1m05s`.
    static func duration(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds < 10 {
            return String(format: "%.1fs", duration.inSeconds)
        }
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return String(format: "%dm%02ds", seconds / 60, seconds % 60) }
        return String(format: "%dh%02dm", seconds / 3600, (seconds % 3600) / 60)
    }
}

/// JSON writing with stable key order and explicit `null`s.
enum JSON {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// A JSON value with an explicit `null`, so every documented key is present in the output even
/// when its value is unknown.
enum JSONField: Encodable {
    case string(String)
    case integer(Int64)
    case number(Double)
    /// A number written with all its digits (``number(_:)`` rounds to thousandths).
    case exact(Double)
    case boolean(Bool)
    case object([String: JSONField])
    case array([JSONField])
    case null

    init(_ value: String?) { self = value.map(JSONField.string) ?? .null }
    init(_ value: Int64?) { self = value.map(JSONField.integer) ?? .null }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode((value * 1000).rounded() / 1000)
        case .exact(let value): try container.encode(value)
        case .boolean(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

extension FileObject {
    /// The entry of `ls --json`: `{name, path, type, size, modified}`, `path` as given.
    func listingJSON(path: String) -> [String: JSONField] {
        ["name": .string(name), "path": .string(path), "type": .string(type.rawValue),
         "size": JSONField(isDirectory ? nil : size), "modified": JSONField(Format.iso8601(modificationDate))]
    }
}

/// A moment's calendar fields in UTC, from the C library's `gmtime_r`: listings print one per entry,
/// and Foundation's format styles cost several microseconds each.
struct UTCTime {
    private let fields: tm
    /// Milliseconds past the second, 0...999 (rounded down).
    private let milliseconds: Int

    init?(_ moment: Date) {
        let interval = moment.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 1e15 else { return nil }
        let seconds = interval.rounded(.down)
        var whole = time_t(seconds)
        var fields = tm()
        guard gmtime_r(&whole, &fields) != nil, fields.tm_year + 1900 >= 0, fields.tm_year + 1900 <= 9999 else { return nil }
        self.fields = fields
        milliseconds = min(999, Int((interval - seconds) * 1000))
    }

    /// `2026-11-21 12:58:01` (`separator` between date and time), with `.250Z` when `fractionAndZone`.
    func text(separator: UInt8, fractionAndZone: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func put(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        put(Int(fields.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
        put(Int(fields.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
        put(Int(fields.tm_mday), 2); bytes.append(separator)
        put(Int(fields.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
        put(Int(fields.tm_min), 2); bytes.append(UInt8(ascii: ":"))
        put(Int(fields.tm_sec), 2)
        if fractionAndZone {
            bytes.append(UInt8(ascii: "."))
            put(milliseconds, 3)
            bytes.append(UInt8(ascii: "Z"))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
