import Foundation
import MapcFoundation

/// One attribute value, typed the way the schema's attribute types are.
///
/// Float attributes hold `.double` values rounded to single precision; transformable
/// attributes hold `.binary` (the transformer's output, which mapc does not interpret).
public enum Value: Sendable, Hashable {
    /// Nil: no value.
    case null
    /// A boolean.
    case bool(Bool)
    /// An integer (every integer type's values).
    case integer(Int64)
    /// A double or a float.
    case double(Double)
    /// A decimal number.
    case decimal(Decimal)
    /// Text.
    case string(String)
    /// A point in time, exact (`Timestamp`).
    case date(Timestamp)
    /// Bytes (binary and transformable attributes).
    case binary(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URI, as its text.
    case uri(String)
    /// Text a store holds whose bytes are not valid UTF-8 (SQLite stores what it is given, and
    /// so can a Core Data store), kept as its bytes so that it is written back exactly as it was.
    /// String and URI attributes hold it; a mapping can copy it and compare it with nil or with
    /// itself, and anything that reads it as characters refuses it, naming the object (see
    /// docs/data-format.md for how data files write it).
    case nonUTF8Text(Data)

    /// A date, from a Foundation `Date` (exactly: see `Timestamp`).
    public static func date(_ date: Date) -> Value { .date(Timestamp(date)) }

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// About how many bytes the value holds: its text's or data's, a word for the others (what
    /// bounds a batch of objects read at once).
    package var byteCount: Int {
        switch self {
        case .string(let text), .uri(let text): return text.utf8.count
        case .binary(let data), .nonUTF8Text(let data): return data.count
        default: return 16
        }
    }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        case .double(let value): return "\(value)"
        case .decimal(let value): return value.description
        // Quoted as a data file writes it: a message's value stays on its line.
        case .string(let value): return JSONValue.string(value).serialized()
        case .date(let value): return ISO8601.format(value)
        case .binary(let value): return "<\(value.count) bytes>"
        case .uuid(let value): return value.uuidString.lowercased()
        // Written bare, as a data file reads it, unless a line break, a space or a quote in it
        // would break the message's line or its reading: then quoted as text is.
        case .uri(let value):
            return value.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F || $0 == "\"" || $0 == "\\" || $0.properties.isWhitespace }
                ? JSONValue.string(value).serialized() : value
        case .nonUTF8Text(let bytes): return "<text of \(bytes.count) bytes, not UTF-8: \(Value.hexPrefix(bytes))>"
        }
    }
}

extension Value {
    /// The value as messages show a value of an attribute of `type`: a float's in its shortest
    /// form as a float (0.1, where the double it is stored as is 0.10000000149011612), as `dump`
    /// writes it; any other as `description`.
    package func description(as type: AttributeType) -> String {
        if type == .float, case .double(let number) = self, let single = Float(exactly: number) { return "\(single)" }
        return description
    }

    /// The first bytes of a value in hexadecimal (`C3 28 FF`), for messages.
    static func hexPrefix(_ bytes: Data, limit: Int = 16) -> String {
        Hex.uppercase(bytes.prefix(limit), separator: UInt8(ascii: " ")) + (bytes.count > limit ? " …" : "")
    }

    /// Text read from a store: a string when the bytes are UTF-8 (NUL bytes included, which are
    /// the character U+0000), `.nonUTF8Text` otherwise. One rule for every way text is read.
    package static func text(fromStored bytes: UnsafeBufferPointer<UInt8>) -> Value {
        if let text = String(validating: bytes, as: UTF8.self) { return .string(text) }
        return .nonUTF8Text(Data(bytes))
    }

    /// Orders two values; nil when they cannot be compared. The one order of mapc (the expression
    /// language's, `ValueSemantics`): integers, doubles and decimals compare by their exact
    /// numeric value (2^53 + 1 is above the double 2^53), text by Unicode scalars, dates in time.
    package static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        ValueOrder.compare(lhs, rhs)
    }

    /// The value as a Double, for numbers.
    package var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .decimal(let value): return ValueRules.double(of: value)
        default: return nil
        }
    }
}
