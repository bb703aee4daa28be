import Foundation

/// Values written as literals of the expression language, for the mapping files mapc writes
/// (inferred defaults, imported Xcode expressions): text the lexer reads back as the same value.
package enum ExpressionLiteral {
    /// A string literal: double-quoted, with the lexer's escapes for quotes, backslashes and
    /// control characters.
    package static func string(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "\"": return "\\\""
            case "\\": return "\\\\"
            case "\n": return "\\n"
            case "\t": return "\\t"
            case "\r": return "\\r"
            default: return scalar.value < 0x20 || scalar.value == 0x7F ? String(format: "\\u%04x", scalar.value) : String(scalar)
            }
        }.joined() + "\""
    }

    /// A value as a literal (decimals and dates through `CAST`), or nil for kinds with no literal.
    package static func value(_ value: Value) -> String? {
        switch value {
        case .null: return "nil"
        case .bool(let flag): return flag ? "YES" : "NO"
        case .integer(let n): return String(n)
        case .double(let d): return d.isFinite ? "\(d)" : nil
        case .decimal(let d): return "CAST(\(string(d.description)), \"NSDecimalNumber\")"
        case .string(let text): return string(text)
        case .date(let date): return "CAST(\(string(ISO8601.format(date))), \"NSDate\")"
        default: return nil
        }
    }
}
