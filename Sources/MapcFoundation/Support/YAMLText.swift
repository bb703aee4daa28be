import Foundation

/// Writes YAML scalars that read back as exactly the same text, for the files mapc generates.
package enum YAMLText {
    /// The text as a YAML scalar: plain when the YAML syntax leaves it unchanged, single-quoted when
    /// it fits on one printable line, double-quoted with escapes otherwise.
    package static func scalar(_ text: String) -> String {
        scalar(text, inFlow: false)
    }

    /// Text for a `#` comment: on one line whatever it holds (a file's name may hold a line
    /// break, which would end the comment and start YAML).
    package static func comment(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .lineSeparator || $0.properties.generalCategory == .paragraphSeparator || $0.value < 0x20 || $0.value == 0x85 ? " " : Character($0) })
    }

    /// The text as a scalar inside a flow collection (`{ … }`, `[ … ]`), where `,` and brackets
    /// end a plain scalar.
    package static func flowScalar(_ text: String) -> String {
        scalar(text, inFlow: true)
    }

    private static func scalar(_ text: String, inFlow: Bool) -> String {
        let printable = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) && $0 != "\u{FEFF}" }
        let risky = text.isEmpty || text.contains(": ") || text.contains(" #") || text.hasSuffix(":")
            || text.first.map { "{[]},*&!|>'\"%@`?-#:".contains($0) } == true
            || text != text.trimmingCharacters(in: .whitespaces)
            || (inFlow && text.contains { ",[]{}".contains($0) })
        if printable && !risky { return text }
        if printable { return "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        return "\"" + text.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "\"": return "\\\""
            case "\\": return "\\\\"
            case "\n": return "\\n"
            case "\t": return "\\t"
            case "\r": return "\\r"
            case "\0": return "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) || scalar == "\u{FEFF}" {
                    return String(format: "\\u%04X", scalar.value)
                }
                return String(scalar)
            }
        }.joined() + "\""
    }
}
