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

    /// Whether a plain scalar of this text would be read by YAML (1.1 or 1.2, as Yams, an editor's
    /// schema checker or any other tool reads it) as a null, a boolean, a number or a date rather
    /// than text: the words, and anything starting with a digit, or with a sign or point before
    /// a digit or `inf`/`nan`. Generous on purpose: text quoted needlessly reads the same.
    private static func readsAsAnotherType(_ text: String) -> Bool {
        let words: Set<String> = ["~", "null", "true", "false", "yes", "no", "on", "off", "y", "n"]
        if words.contains(text.lowercased()) { return true }
        var rest = Substring(text)
        if let sign = rest.first, sign == "-" || sign == "+" { rest = rest.dropFirst() }
        if rest.first == "." { rest = rest.dropFirst(); if ["inf", "nan"].contains(rest.lowercased()) { return true } }
        return rest.first?.isASCII == true && rest.first?.isNumber == true
    }

    private static func scalar(_ text: String, inFlow: Bool) -> String {
        let printable = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) && $0 != "\u{FEFF}" }
        let risky = text.isEmpty || text.contains(": ") || text.contains(" #") || text.hasSuffix(":")
            || text.first.map { "{[]},*&!|>'\"%@`?-#:".contains($0) } == true
            || text != text.trimmingCharacters(in: .whitespaces)
            || (inFlow && text.contains { ",[]{}".contains($0) })
        if printable && !risky && !readsAsAnotherType(text) { return text }
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
