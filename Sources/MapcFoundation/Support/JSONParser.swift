import Foundation

/// Reads JSON text into `JSONValue`, keeping the order of object members, refusing duplicate
/// keys, and locating every error by line and column. One pass over the UTF-8 bytes, nesting
/// bounded, no intermediate Foundation objects (a data file costs a few times its size, not tens).
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maxDepth = 512

    private let bytes: [UInt8]
    private let path: String
    private var index = 0
    private var depth = 0
    /// When set, where each value down to `recordedDepth` starts, by its path of member names
    /// and array positions (`["objects", "Note", "3", "title"]`): asked only to place a problem.
    private var recorded: [[String]: Int]?
    private var trail: [String] = []
    private static let recordedDepth = 4

    /// Parses a whole document; throws `MapcError.input` with `path:line:col` on any problem.
    static func parse(_ data: Data, path: String) throws -> JSONValue {
        var parser = JSONParser(bytes: [UInt8](data), path: path)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    /// The document and where its values start, down to four levels (a data file's objects'
    /// members), as 1-based lines and columns; nil when it does not parse.
    static func placedValues(_ data: Data, path: String) -> (value: JSONValue, places: [[String]: (line: Int, column: Int)])? {
        var parser = JSONParser(bytes: [UInt8](data), path: path)
        parser.recorded = [:]
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        guard let value = try? parser.value() else { return nil }
        // Lines and columns counted once over the text, in offset order: a column from where the
        // last one was counted, not from its line's start (a file on one line was quadratic). A
        // value starts with an ASCII character, which no grapheme cluster before it takes in.
        var places: [[String]: (line: Int, column: Int)] = [:]
        var line = 1, scanned = 0, column = 1, counted = 0
        for (trail, offset) in (parser.recorded ?? [:]).sorted(by: { $0.value < $1.value }) {
            while scanned < offset, scanned < parser.bytes.count {
                if parser.bytes[scanned] == UInt8(ascii: "\n") { line += 1; column = 1; counted = scanned + 1 }
                scanned += 1
            }
            let end = min(offset, parser.bytes.count)
            if counted < end {
                column += String(decoding: parser.bytes[counted..<end], as: UTF8.self).count
                counted = end
            }
            places[trail] = (line, column)
        }
        return (value, places)
    }

    // MARK: Errors

    /// The 1-based line and column (in characters) of a byte offset.
    private func position(of offset: Int) -> (line: Int, column: Int) {
        var line = 1, lineStart = 0
        for i in 0..<min(offset, bytes.count) where bytes[i] == UInt8(ascii: "\n") {
            line += 1
            lineStart = i + 1
        }
        let column = String(decoding: bytes[lineStart..<min(offset, bytes.count)], as: UTF8.self).count + 1
        return (line, column)
    }

    private func failure(_ message: String, at offset: Int? = nil) -> MapcError {
        let (line, column) = position(of: offset ?? index)
        return MapcError.input("\(path):\(line):\(column): not valid JSON: \(message)")
    }

    // MARK: Grammar

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func value() throws -> JSONValue {
        if recorded != nil, trail.count <= Self.recordedDepth { recorded?[trail] = index }
        guard index < bytes.count else { throw failure("the text ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try nested { try $0.object() }
        case UInt8(ascii: "["): return try nested { try $0.array() }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected '\(String(decoding: bytes[index..<min(index + 1, bytes.count)], as: UTF8.self))' where a value was expected")
        }
    }

    private mutating func nested(_ body: (inout JSONParser) throws -> JSONValue) throws -> JSONValue {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw failure("arrays and objects nest more than \(Self.maxDepth) levels deep") }
        return try body(&self)
    }

    private mutating func literal(_ word: String) throws {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw failure("unexpected text where a value was expected")
        }
        index += expected.count
    }

    private mutating func object() throws -> JSONValue {
        index += 1
        var pairs: [(String, JSONValue)] = []
        var seen: [String: Int] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object([]) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name in double quotes") }
            let keyStart = index
            let key = try string()
            if let first = seen[key] {
                throw failure("the member \"\(key.prefix(40))\" appears twice in one object (first at line \(position(of: first).line)); keep one", at: keyStart)
            }
            seen[key] = keyStart
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after the member name") }
            index += 1
            skipWhitespace()
            if recorded != nil { trail.append(key) }
            pairs.append((key, try value()))
            if recorded != nil { trail.removeLast() }
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an object; a '}' is missing") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(pairs) }
            throw failure("expected ',' or '}' in an object")
        }
    }

    private mutating func array() throws -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array([]) }
        while true {
            skipWhitespace()
            if recorded != nil { trail.append(String(items.count)) }
            items.append(try value())
            if recorded != nil { trail.removeLast() }
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside an array; a ']' is missing") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw failure("expected ',' or ']' in an array")
        }
    }

    private mutating func string() throws -> String {
        let start = index
        index += 1
        // A String, appended to in place: `UnicodeScalarView.append(contentsOf:)` builds a new
        // string each time, which made a text of many escapes take the square of its length.
        var decoded = ""
        var runStart = index
        func flushRun() throws {
            guard runStart < index else { return }
            guard let text = String(validating: bytes[runStart..<index], as: UTF8.self) else {
                throw failure("the string is not valid UTF-8", at: runStart)
            }
            decoded.append(text)
        }
        while true {
            guard index < bytes.count else { throw failure("the string is not closed", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flushRun()
                index += 1
                return decoded
            }
            if byte < 0x20 { throw failure("a control character inside a string must be escaped (\\n, \\t, \\u0000)") }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            try flushRun()
            index += 1
            guard index < bytes.count else { throw failure("the string is not closed", at: start) }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): decoded.unicodeScalars.append("\"")
            case UInt8(ascii: "\\"): decoded.unicodeScalars.append("\\")
            case UInt8(ascii: "/"): decoded.unicodeScalars.append("/")
            case UInt8(ascii: "b"): decoded.unicodeScalars.append("\u{8}")
            case UInt8(ascii: "f"): decoded.unicodeScalars.append("\u{C}")
            case UInt8(ascii: "n"): decoded.unicodeScalars.append("\n")
            case UInt8(ascii: "r"): decoded.unicodeScalars.append("\r")
            case UInt8(ascii: "t"): decoded.unicodeScalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("a lone surrogate \\u\(String(code, radix: 16)) is not a character")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate \\u\(String(code, radix: 16)) is not a character") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw failure("\\u\(String(code, radix: 16)) is not a character") }
                decoded.unicodeScalars.append(scalar)
            default:
                throw failure("unknown escape '\\\(String(decoding: [escape], as: UTF8.self))' in a string", at: index - 2)
            }
            runStart = index
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard bytes.count - index >= 4, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw failure("\\u needs four hexadecimal digits")
        }
        index += 4
        return code
    }

    private mutating func number() throws -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        let integerDigits = digits()
        guard integerDigits > 0 else { throw failure("a number needs digits", at: start) }
        if integerDigits > 1, bytes[start + (bytes[start] == UInt8(ascii: "-") ? 1 : 0)] == UInt8(ascii: "0") {
            throw failure("a number cannot start with 0 (leading zeros are not JSON)", at: start)
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard digits() > 0 else { throw failure("a number needs digits after '.'", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            isInteger = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("a number needs digits in its exponent", at: start) }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        // Outside Double's range this is ±infinity, which every value check refuses with its object named.
        let nearest = JSONValue.nearestDouble(text)
        // A double keeps what is written when its shortest text is the same number ("0.1", "2.5e3");
        // otherwise the text is kept ("1234567890.123456789", a whole number beyond 64 bits).
        // Up to 15 significant digits a normal double always does (DBL_DIG): no text compared.
        if nearest.isNormal, NumberText.significantDigits(text) <= 15 { return .double(nearest) }
        return NumberText.sameValue(text, "\(nearest)") ? .double(nearest) : .number(text)
    }
}
