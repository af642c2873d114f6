/// One reply of an FTP server on the control connection (RFC 959 §4.2): a three-digit code and its
/// text lines. Multi-line replies (`211-Features:` ... `211 End`) keep every line.
public struct FTPReply: Sendable, Hashable {
    /// The reply code, e.g. 250.
    public var code: Int
    /// The reply's lines as received, the code included.
    public var lines: [String]

    /// Creates a reply.
    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// The text of the reply's last line, after the code (`"Requested action okay."`).
    public var text: String {
        guard let last = lines.last else { return "" }
        return last.count > 4 ? String(last.dropFirst(4)) : ""
    }

    /// The lines between the first and the last of a multi-line reply (FEAT's features, MLST's facts).
    public var innerLines: [String] {
        lines.count > 2 ? Array(lines[1..<(lines.count - 1)]) : []
    }

    /// Splits a sequence of reply lines into replies. Lines outside any reply are dropped.
    public static func parse(_ lines: [String]) -> [FTPReply] {
        var replies: [FTPReply] = []
        var open: (code: Int, lines: [String])?
        for line in lines {
            let code = Self.code(of: line)
            if var current = open {
                current.lines.append(line)
                if let code, code == current.code, line.utf8.count == 3 || line.utf8.dropFirst(3).first == UInt8(ascii: " ") {
                    replies.append(FTPReply(code: current.code, lines: current.lines))
                    open = nil
                } else {
                    open = current
                }
            } else if let code {
                if line.utf8.dropFirst(3).first == UInt8(ascii: "-") {
                    open = (code, [line])
                } else {
                    replies.append(FTPReply(code: code, lines: [line]))
                }
            }
        }
        return replies
    }

    /// The reply code a line starts with, if it does.
    static func code(of line: String) -> Int? {
        let bytes = Array(line.utf8.prefix(4))
        guard bytes.count >= 3, bytes[0...2].allSatisfy({ (UInt8(ascii: "1")...UInt8(ascii: "6")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              bytes.count == 3 || bytes[3] == UInt8(ascii: " ") || bytes[3] == UInt8(ascii: "-") else { return nil }
        return Int(bytes[0] - 48) * 100 + Int(bytes[1] - 48) * 10 + Int(bytes[2] - 48)
    }
}
