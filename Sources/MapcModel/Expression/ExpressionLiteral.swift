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

    /// A property's name as a key after `$source.` or a '.': `#` before a reserved word
    /// (`$source.#function`), which the lexer would otherwise read as the keyword.
    package static func key(_ name: String) -> String {
        Keyword.reservesKey(name) ? "#" + name : name
    }

    /// Whether the lexer reads `text` whole as one word (a key or a variable's name).
    package static func isWord(_ text: String) -> Bool { Lexer.isWord(text) }

    /// A key-value coding key path (an Xcode archive's, `owner.all`) as the language writes it: each
    /// key as `key(_:)` writes it, collection operators as they are, and `self` (the object itself)
    /// as `SELF` alone and left out within a path.
    package static func keyPath(_ path: String) -> String {
        let kept = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init).filter { $0 != "self" }
        guard !kept.isEmpty else { return "SELF" }
        return kept.map { $0.hasPrefix("@") ? $0 : key($0) }.joined(separator: ".")
    }

    /// `$source.name`, the key written as `key(_:)` writes it.
    package static func sourceKey(_ name: String) -> String { "$source." + key(name) }

    /// A literal that an attribute of the value's type stores as the value (decimals and dates
    /// through `CAST`; UUIDs and URIs as their text, which such an attribute reads as one), or nil
    /// for a value with none (binary data, a double not finite, text whose bytes are not UTF-8).
    package static func value(_ value: Value) -> String? {
        switch value {
        case .null: return "nil"
        case .bool(let flag): return flag ? "YES" : "NO"
        case .integer(let n): return String(n)
        case .double(let d): return d.isFinite ? "\(d)" : nil
        case .decimal(let d): return "CAST(\(string(d.description)), \"NSDecimalNumber\")"
        case .string(let text): return string(text)
        case .date(let date): return "CAST(\(string(ISO8601.format(date))), \"NSDate\")"
        case .uuid(let uuid): return string(uuid.uuidString.lowercased())
        case .uri(let text): return string(text)
        case .binary, .nonUTF8Text: return nil
        }
    }
}
