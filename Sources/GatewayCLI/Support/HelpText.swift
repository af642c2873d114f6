import Foundation

/// `--help` texts written as wrapped source lines, re-flowed so that ArgumentParser wraps them to
/// the terminal's width itself (a source line break inside a paragraph would otherwise stay, and
/// leave ragged lines on any terminal narrower than the source).
enum HelpText {
    /// Joins the lines of each paragraph with spaces. Blank lines separate paragraphs; indented
    /// lines (examples) and the lines of a paragraph that starts with one stay as they are.
    static func reflow(_ text: String) -> String {
        var out: [String] = []
        var paragraph: [String] = []
        func flush() {
            if !paragraph.isEmpty { out.append(paragraph.joined(separator: " ")) }
            paragraph.removeAll()
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                flush()
                out.append("")
            } else if line.hasPrefix(" ") || line.hasSuffix(":") && paragraph.isEmpty {
                flush()
                out.append(line)
            } else {
                paragraph.append(line)
            }
        }
        flush()
        return out.joined(separator: "\n")
    }
}
