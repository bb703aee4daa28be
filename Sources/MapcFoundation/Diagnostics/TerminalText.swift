/// Text from files shown on a terminal: the bidirectional controls a file may hold (U+202E
/// RIGHT-TO-LEFT OVERRIDE and its kin) are shown as what they are, `<U+202E>`, since a terminal
/// would reorder the text around them and show a name, a line or a message as other than it is
/// ("Trojan Source"), and so are control characters other than a line break and a tab (an escape
/// sequence in a store's metadata would reach the terminal). Only text for people goes through
/// it: a dump or a JSON report keeps every character.
package enum TerminalText {
    /// How a scalar is shown: `<U+XXXX>` for a bidirectional control, nil for itself.
    package static func visible(_ scalar: Unicode.Scalar) -> String? {
        switch scalar.value {
        // Control characters other than a line break and a tab: an escape sequence from a store
        // (ESC, a terminal's title or colours), a bell, a carriage return that rewrites a line.
        case 0x00...0x08, 0x0B...0x1F, 0x7F...0x9F:
            return "<U+\(String(format: "%04X", scalar.value))>"
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return "<U+\(String(scalar.value, radix: 16, uppercase: true))>"
        default:
            return nil
        }
    }

    /// The text of one cell of a table (a store's name in a row), line breaks and tabs shown as
    /// `<U+000A>` and `<U+0009>` too: the row stays one line, and the next does not read as a
    /// store of its own.
    package static func oneLine(_ text: String) -> String {
        visible(text).replacingOccurrences(of: "\n", with: "<U+000A>").replacingOccurrences(of: "\r", with: "<U+000D>").replacingOccurrences(of: "\t", with: "<U+0009>")
    }

    /// The text with each bidirectional or control character shown as `<U+XXXX>`.
    package static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { visible($0) != nil }) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if let replacement = visible(scalar) { shown += replacement } else { shown.unicodeScalars.append(scalar) }
        }
        return shown
    }
}
