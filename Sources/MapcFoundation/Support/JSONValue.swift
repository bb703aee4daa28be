import Foundation

/// A JSON value whose objects keep their key order, so that everything mapc writes
/// (dumps, diagnostics, summaries) is byte-for-byte deterministic.
public indirect enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number a double holds as written (the nearest double reads back as the same value).
    case double(Double)
    /// A number a double would change: more significant digits than a double keeps, or a whole
    /// number beyond 64 bits. Its text as written, so that a reader that keeps every digit (a
    /// decimal attribute) gets them all; `nearestDouble` is what a double makes of it.
    case number(String)
    /// A single-precision number, printed with the shortest text that reads back as the same Float.
    case float(Float)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, its keys in their order.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.float(a), .float(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The nearest double to a `number`'s text (±infinity beyond a double's range).
    package static func nearestDouble(_ text: String) -> Double {
        Double(text) ?? (text.hasPrefix("-") ? -.infinity : .infinity)
    }

    /// The value for a key of an object (first match), or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double, .number, .float: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: - Reading

extension JSONValue {
    /// Parses JSON text, keeping member order. Errors give `path:line:col`; duplicate member
    /// names in one object are errors (JSON leaves them undefined, and keeping one would silently
    /// drop the other).
    public static func parse(_ data: Data, path: String) throws -> JSONValue {
        try JSONParser.parse(data, path: path)
    }

    /// The document and where its values start, down to four levels, by their path of member
    /// names and array positions: for placing a problem found in it (a second, slower reading).
    package static func placedValues(_ data: Data, path: String) -> (value: JSONValue, places: [[String]: (line: Int, column: Int)])? {
        JSONParser.placedValues(data, path: path)
    }
}

// MARK: - Writing

extension JSONValue {
    /// The JSON text. Pretty output puts one member per line with two-space indentation,
    /// except arrays of scalars, which stay on one line.
    public func serialized(pretty: Bool = false) -> String {
        serialized(pretty: pretty, indent: 0)
    }

    /// The JSON text of this value as it stands `indent` levels deep in a pretty document (its
    /// first line unindented, as after a key): a document written piece by piece.
    package func serialized(pretty: Bool, indent: Int) -> String {
        var output = ""
        write(to: &output, pretty: pretty, indent: indent)
        return output
    }

    /// `serialized(pretty: true, indent:)`, given to `write` in pieces: an object member by
    /// member, a string value that needs no escape as the string itself. A value of hundreds of
    /// MB (a dump's binary value, as base64) is then never copied into the text around it.
    package func writePretty(indent: Int, _ write: (String) throws -> Void) throws {
        guard case .object(let pairs) = self, !pairs.isEmpty else { return try write(serialized(pretty: true, indent: indent)) }
        try write("{\n")
        let inner = String(repeating: "  ", count: indent + 1)
        for (index, (key, value)) in pairs.enumerated() {
            var head = inner
            JSONValue.writeString(key, to: &head)
            head += ": "
            let last = index == pairs.count - 1 ? "\n" : ",\n"
            if case .string(let text) = value, !JSONValue.needsEscape(text) {
                try write(head + "\"")
                try write(text)
                try write("\"" + last)
            } else {
                try write(head + value.serialized(pretty: true, indent: indent + 1) + last)
            }
        }
        try write(String(repeating: "  ", count: indent) + "}")
    }

    /// Whether JSON text must escape something in a string (a quote, a backslash, a control character).
    static func needsEscape(_ string: String) -> Bool {
        string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
    }

    private var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }

    private func write(to output: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .double(let value): output += JSONValue.format(value)
        case .number(let text): output += text
        case .float(let value): output += value.isFinite ? "\(value)" : "null"
        case .string(let value): JSONValue.writeString(value, to: &output)
        case .array(let items):
            if items.isEmpty { output += "[]"; return }
            if !pretty || items.allSatisfy(\.isScalar) {
                output += "["
                for (index, item) in items.enumerated() {
                    if index > 0 { output += pretty ? ", " : "," }
                    item.write(to: &output, pretty: pretty, indent: indent)
                }
                output += "]"
                return
            }
            output += "[\n"
            for (index, item) in items.enumerated() {
                output += String(repeating: "  ", count: indent + 1)
                item.write(to: &output, pretty: pretty, indent: indent + 1)
                output += index < items.count - 1 ? ",\n" : "\n"
            }
            output += String(repeating: "  ", count: indent) + "]"
        case .object(let pairs):
            if pairs.isEmpty { output += "{}"; return }
            output += pretty ? "{\n" : "{"
            for (index, (key, value)) in pairs.enumerated() {
                if pretty { output += String(repeating: "  ", count: indent + 1) }
                JSONValue.writeString(key, to: &output)
                output += pretty ? ": " : ":"
                value.write(to: &output, pretty: pretty, indent: indent + 1)
                if index < pairs.count - 1 { output += "," }
                if pretty { output += "\n" }
            }
            if pretty { output += String(repeating: "  ", count: indent) }
            output += "}"
        }
    }

    /// Shortest round-tripping text; JSON has no infinities or NaN, so those become null.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return "\(value)"
    }

    static func writeString(_ string: String, to output: inout String) {
        output += "\""
        // Most text needs no escape: appended whole (hashing a schema writes thousands of names).
        if !needsEscape(string) {
            output += string
            output += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output += String(format: "\\u%04x", scalar.value)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
