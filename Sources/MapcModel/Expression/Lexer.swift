/// Turns expression text into tokens, each with its source range.
///
/// Numbers: decimal, `0x` hex, `0o` octal, `0b` binary, fractions and exponents. Strings in
/// double or single quotes with C's escapes (`\n \t \r \a \b \f \v \\ \" \'`, octal `\101`, `\x41`) and
/// `\uXXXX`; any other backslash is an error (taken as the character alone, it changed text in silence). Keywords case-insensitive;
/// `#` before a word makes it a plain key.
struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    /// All tokens, ending with `.end`, or the first lexical error.
    mutating func tokenize() -> Result<[Token], ExpressionError> {
        var tokens: [Token] = []
        while true {
            switch next() {
            case .success(let token):
                tokens.append(token)
                if token.kind == .end { return .success(tokens) }
            case .failure(let error):
                return .failure(error)
            }
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let index = position + offset
        return index < scalars.count ? scalars[index] : nil
    }

    /// Whether the lexer reads `text` whole as one word (a key, a variable's or a function's
    /// name): the rule for text that mapc writes into expressions (imported key paths).
    static func isWord(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, isIdentifierStart(first) else { return false }
        return text.unicodeScalars.allSatisfy(isIdentifierPart)
    }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
    }

    private mutating func next() -> Result<Token, ExpressionError> {
        while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
        let start = position
        guard let scalar = peek() else { return .success(Token(kind: .end, range: SourceRange(start, start))) }

        if ("0"..."9").contains(scalar) || (scalar == "." && peek(1).map { ("0"..."9").contains($0) } == true) {
            return number(from: start)
        }
        if scalar == "\"" || scalar == "'" { return string(quote: scalar, from: start) }
        if scalar == "$" {
            position += 1
            let name = word()
            guard !name.isEmpty else { return .failure(ExpressionError("expected a variable name after '$'", at: SourceRange(start, position))) }
            return .success(Token(kind: .variable(name), range: SourceRange(start, position)))
        }
        if scalar == "@" {
            position += 1
            let name = word()
            guard !name.isEmpty else { return .failure(ExpressionError("expected a collection operator such as @count after '@'", at: SourceRange(start, position))) }
            return .success(Token(kind: .collectionOperator(name), range: SourceRange(start, position)))
        }
        if scalar == "#" {
            position += 1
            let name = word()
            guard !name.isEmpty else { return .failure(ExpressionError("expected a key after '#'", at: SourceRange(start, position))) }
            return .success(Token(kind: .escapedIdentifier(name), range: SourceRange(start, position)))
        }
        if Self.isIdentifierStart(scalar) {
            let name = word()
            // `name:` or `add:to:` directly followed by `(` is a named function.
            if peek() == ":" {
                let save = position
                var selector = name
                while peek() == ":" {
                    position += 1
                    selector += ":"
                    let part = word()
                    if part.isEmpty { break }
                    selector += part
                    if peek() != ":" { selector = ""; break }
                }
                var probe = position
                while probe < scalars.count, scalars[probe].properties.isWhitespace { probe += 1 }
                if !selector.isEmpty, probe < scalars.count, scalars[probe] == "(" {
                    return .success(Token(kind: .selector(selector), range: SourceRange(start, position)))
                }
                position = save
            }
            if let keyword = Keyword.byName[name.uppercased()] {
                return .success(Token(kind: .keyword(keyword), range: SourceRange(start, position)))
            }
            return .success(Token(kind: .identifier(name), range: SourceRange(start, position)))
        }
        let twoCharacter: Set<String> = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**"]
        if let second = peek(1), twoCharacter.contains(String(scalar) + String(second)) {
            position += 2
            return .success(Token(kind: .symbol(String(scalar) + String(second)), range: SourceRange(start, position)))
        }
        if "()[]{},.+-*/<>=!".unicodeScalars.contains(scalar) {
            position += 1
            return .success(Token(kind: .symbol(String(scalar)), range: SourceRange(start, position)))
        }
        if scalar == "%", let second = peek(1), "@Kdfis".unicodeScalars.contains(second) {
            return .failure(ExpressionError("'%\(second)' is a format specifier, which mapc does not read", at: SourceRange(start, start + 2),
                                            fix: "write the value itself (a key, or a quoted string): a mapping file holds the final text"))
        }
        if scalar == ":", peek(1) == "=" {
            return .failure(ExpressionError("':=' assigns a variable, which mapc does not read", at: SourceRange(start, start + 2), fix: "write the value where the variable is read"))
        }
        return .failure(ExpressionError("unexpected character '\(scalar)'", at: SourceRange(start, start + 1)))
    }

    private mutating func word() -> String {
        var result = ""
        while let scalar = peek(), Self.isIdentifierPart(scalar) {
            result.unicodeScalars.append(scalar)
            position += 1
        }
        return result
    }

    private mutating func number(from start: Int) -> Result<Token, ExpressionError> {
        if peek() == "0", let marker = peek(1), "xXoObB".unicodeScalars.contains(marker) {
            position += 2
            let radix: Int = marker == "x" || marker == "X" ? 16 : (marker == "o" || marker == "O" ? 8 : 2)
            var digits = ""
            while let scalar = peek(), Self.isIdentifierPart(scalar) {
                digits.unicodeScalars.append(scalar)
                position += 1
            }
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                return .failure(ExpressionError("'\(String(String.UnicodeScalarView(scalars[start..<position])))' is not a valid base-\(radix) number", at: SourceRange(start, position)))
            }
            guard value <= UInt64(Int64.max) else {
                return .failure(ExpressionError("number is too large for a 64-bit integer", at: SourceRange(start, position)))
            }
            return .success(Token(kind: .integer(Int64(value)), range: SourceRange(start, position)))
        }
        var text = ""
        var isFraction = false
        while let scalar = peek(), ("0"..."9").contains(scalar) { text.unicodeScalars.append(scalar); position += 1 }
        if peek() == ".", let after = peek(1), ("0"..."9").contains(after) {
            isFraction = true
            text += "."
            position += 1
            while let scalar = peek(), ("0"..."9").contains(scalar) { text.unicodeScalars.append(scalar); position += 1 }
        } else if peek() == ".", text.isEmpty == false, let after = peek(1), !Self.isIdentifierStart(after), after != "." {
            // "1." is a number; "a.1" never reaches here.
            isFraction = true
            position += 1
        }
        if let e = peek(), e == "e" || e == "E" {
            var probe = 1
            if let sign = peek(1), sign == "+" || sign == "-" { probe = 2 }
            if let digit = peek(probe), ("0"..."9").contains(digit) {
                isFraction = true
                text += "e"
                if probe == 2 { text.unicodeScalars.append(peek(1)!) }
                position += probe
                while let scalar = peek(), ("0"..."9").contains(scalar) { text.unicodeScalars.append(scalar); position += 1 }
            }
        }
        if let scalar = peek(), Self.isIdentifierStart(scalar) {
            return .failure(ExpressionError("a number cannot run into a name; add a space or an operator", at: SourceRange(start, position + 1)))
        }
        if isFraction {
            guard let value = Double(text), value.isFinite else {
                return .failure(ExpressionError("'\(text)' is not a finite number", at: SourceRange(start, position)))
            }
            return .success(Token(kind: .double(value), range: SourceRange(start, position)))
        }
        if let value = Int64(text) {
            return .success(Token(kind: .integer(value), range: SourceRange(start, position)))
        }
        return .success(Token(kind: .bigInteger(text), range: SourceRange(start, position)))
    }

    private mutating func string(quote: Unicode.Scalar, from start: Int) -> Result<Token, ExpressionError> {
        position += 1
        var result = String.UnicodeScalarView()
        while let scalar = peek() {
            position += 1
            if scalar == quote { return .success(Token(kind: .string(String(result)), range: SourceRange(start, position))) }
            guard scalar == "\\" else { result.append(scalar); continue }
            guard let escaped = peek() else { break }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "a": result.append("\u{07}")
            case "b": result.append("\u{08}")
            case "f": result.append("\u{0C}")
            case "v": result.append("\u{0B}")
            case "\\", "\"", "'": result.append(escaped)
            case "0"..."7":
                // C's octal escape: up to three octal digits (`\0` is NUL, `\101` is "A").
                var code = escaped.value - 48, count = 1
                while count < 3, let digit = peek(), ("0"..."7").contains(digit) { code = code * 8 + digit.value - 48; position += 1; count += 1 }
                guard let decoded = Unicode.Scalar(code) else {
                    return .failure(ExpressionError("'\\\(String(escaped))…' is not a character", at: SourceRange(position - count - 1, position)))
                }
                result.append(decoded)
            case "x", "u":
                // `\x41` (two hex digits) and `\u00e9` (four).
                let width = escaped == "x" ? 2 : 4
                var hex = ""
                while hex.count < width, let digit = peek(), digit.properties.isASCIIHexDigit { hex.unicodeScalars.append(digit); position += 1 }
                // A character past U+FFFF as JSON and Foundation's strings write it: a surrogate pair
                // (`\ud83c\udf63`, one 🍣); half of one names no character.
                if escaped == "u", hex.count == 4, let high = UInt32(hex, radix: 16), (0xD800...0xDFFF).contains(high) {
                    let pairStart = position - 6
                    var low: UInt32?
                    if (0xD800...0xDBFF).contains(high), peek() == "\\" {
                        let mark = position
                        position += 1
                        if peek() == "u" {
                            position += 1
                            var second = ""
                            while second.count < 4, let digit = peek(), digit.properties.isASCIIHexDigit { second.unicodeScalars.append(digit); position += 1 }
                            if second.count == 4, let code = UInt32(second, radix: 16), (0xDC00...0xDFFF).contains(code) { low = code }
                        }
                        if low == nil { position = mark }
                    }
                    guard let low, let decoded = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) else {
                        return .failure(ExpressionError("'\\u\(hex)' is half of a surrogate pair, which names no character alone", at: SourceRange(pairStart, position),
                                                        fix: "write both halves (\\ud83c\\udf63 is one character), or the character itself"))
                    }
                    result.append(decoded)
                    continue
                }
                guard hex.count == width, let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) else {
                    return .failure(ExpressionError("'\\\(String(escaped))' must be followed by \(width == 2 ? "two" : "four") hex digits naming a character",
                                                    at: SourceRange(position - hex.count - 2, position)))
                }
                result.append(decoded)
            default:
                // Taken as the character alone, it changed the text in silence (`"^\d+$"` matched "ddd").
                return .failure(ExpressionError("'\\\(String(escaped))' is no escape a string knows", at: SourceRange(position - 2, position),
                                                fix: "write '\\\\\(String(escaped))' for a backslash followed by \(String(escaped)) (a pattern's \\\(String(escaped)), say); the escapes are \\n \\t \\r \\a \\b \\f \\v \\\\ \\\" \\' \\ooo (octal) \\xhh \\uhhhh"))
            }
        }
        return .failure(ExpressionError("unterminated string; add the closing \(quote)", at: SourceRange(start, start + 1)))
    }
}
