import Foundation
import StorageGateway
#if canImport(Glibc)
import Glibc
#endif

/// Buffered standard output: lines are collected and written in large blocks.
final class StandardOutput {
    private var buffer = Data()

    init() { buffer.reserveCapacity(1 << 16) }

    func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        Self.writeRaw(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes bytes straight to file descriptor 1.
    static func writeRaw(_ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    deinit { flush() }
}

/// Text forms shared by the commands.
enum Format {
    /// ISO 8601 in UTC with fractional seconds, e.g. `2026-11-21T12:58:01.250Z`.
    static func iso8601(_ date: Date?) -> String? {
        guard let date else { return nil }
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    /// `2026-11-21 12:58:01` in UTC, for `ls -l`.
    static func listingDate(_ date: Date?) -> String {
        guard let date else { return "                   " }
        var style = Date.ISO8601FormatStyle(dateSeparator: .dash, dateTimeSeparator: .space, timeZone: .gmt)
        style = style.year().month().day().time(includingFractionalSeconds: false)
        return date.formatted(style)
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

/// One entry of `ls --json`: `{name, path, type, size, modified}`.
struct ListEntryJSON: Encodable {
    var name: String
    var path: String
    var type: String
    var size: Int64?
    var modified: String?

    enum CodingKeys: String, CodingKey { case name, path, type, size, modified }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(path, forKey: .path)
        try container.encode(type, forKey: .type)
        try container.encode(size, forKey: .size)
        try container.encode(modified, forKey: .modified)
    }
}

