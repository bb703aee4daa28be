import Foundation
import MapcFoundation

/// The kinds of scalar value expressions produce and attributes hold, for the assignability rule.
package enum ValueKind: Sendable, Hashable {
    /// Booleans.
    case bool
    /// Integers.
    case integer
    /// Doubles and floats.
    case double
    /// Decimals.
    case decimal
    /// Text.
    case string
    /// Dates.
    case date
    /// Bytes.
    case binary
    /// UUIDs.
    case uuid
    /// URIs.
    case uri

    /// The kind an attribute type's values have.
    package init(_ type: AttributeType) {
        switch type {
        case .int16, .int32, .int64: self = .integer
        case .double, .float: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .bool: self = .bool
        case .date: self = .date
        case .binary, .transformable: self = .binary
        case .uuid: self = .uuid
        case .uri: self = .uri
        }
    }
}

/// The rules about values that several layers apply, each written once: which values an attribute
/// takes and how they are converted (the checker, the evaluator's results, policies' values and the
/// SQL compiler all ask here), which type changes lose nothing (inference and the SQL compiler), and
/// how long a string is (expressions, validation and regular expressions).
package enum ValueRules {
    /// How a value of one kind goes into an attribute of a type.
    package enum Assignment: Sendable, Equatable {
        /// Stored as it is, or widened without loss (integer into double, float into double).
        case lossless
        /// Converted with a check at run time that fails naming the value (an integer out of an
        /// int16's range, text that is not a UUID, a fraction stored in an integer); `warning` is
        /// what the checker says about it beforehand, when the check is one users should know of.
        case checked(warning: String?)
        /// Never possible; the reason.
        case refused(String)

        /// Whether the assignment is never possible.
        public var isRefused: Bool {
            if case .refused = self { return true }
            return false
        }
    }

    /// The assignability rule: how a value of `kind` goes into an attribute of `type`.
    package static func assignment(of kind: ValueKind, to type: AttributeType) -> Assignment {
        switch (kind, type) {
        case (.integer, .int16), (.integer, .int32), (.integer, .int64):
            return .checked(warning: nil)
        case (.integer, .double), (.integer, .float), (.integer, .decimal): return .lossless
        case (.integer, .bool): return .checked(warning: "every number but 0 becomes true")
        case (.bool, .bool), (.bool, .int16), (.bool, .int32), (.bool, .int64): return .lossless
        case (.double, .double), (.double, .decimal), (.decimal, .decimal), (.decimal, .double): return .lossless
        case (.double, .float), (.decimal, .float): return .checked(warning: nil)
        case (.double, .int16), (.double, .int32), (.double, .int64), (.decimal, .int16), (.decimal, .int32), (.decimal, .int64):
            return .checked(warning: "a value with a fraction, or out of range, fails the migration")
        case (.string, .string), (.uri, .uri), (.uri, .string), (.uuid, .uuid), (.uuid, .string): return .lossless
        case (.string, .uri), (.string, .uuid): return .checked(warning: nil)
        case (.date, .date), (.binary, .binary), (.binary, .transformable): return .lossless
        default:
            return .refused("\(English.withArticle("\(kind)")) value cannot be stored in \(English.withArticle(type.rawValue)) attribute")
        }
    }

    /// The value an attribute of `type` stores for `value`, converted by the assignability rule
    /// and within `ValueLimits`; or why it cannot hold it.
    package static func coerce(_ value: Value, to type: AttributeType) -> Result<Value, ValueProblem> {
        converted(value, to: type).flatMap { result in
            ValueLimits.problem(result, for: type).map { .failure(ValueProblem($0)) } ?? .success(result)
        }
    }

    private static func converted(_ value: Value, to type: AttributeType) -> Result<Value, ValueProblem> {
        let kind: ValueKind
        switch value {
        case .null: return .success(.null)
        case .bool: kind = .bool
        case .integer: kind = .integer
        case .double: kind = .double
        case .decimal: kind = .decimal
        case .string: kind = .string
        case .date: kind = .date
        case .binary: kind = .binary
        case .uuid: kind = .uuid
        case .uri: kind = .uri
        case .nonUTF8Text(let bytes):
            // Kept as its bytes where text is stored; nothing can read it as anything else.
            guard type == .string || type == .uri else {
                return .failure(ValueProblem("text whose bytes are not UTF-8 (\(Value.hexPrefix(bytes))) cannot be read as \(English.withArticle(type.rawValue))"))
            }
            return .success(value)
        }
        if case .refused(let reason) = assignment(of: kind, to: type) { return .failure(ValueProblem(reason)) }
        switch (value, type) {
        case (.integer(let n), _) where type.isInteger: return ValueParser.checkRange(n, type)
        case (.integer(let n), .double): return .success(.double(Double(n)))
        case (.integer(let n), .float): return .success(.double(Double(Float(n))))
        case (.integer(let n), .decimal): return .success(.decimal(Decimal(n)))
        case (.integer(let n), .bool): return .success(.bool(n != 0))
        case (.bool(let flag), .bool): return .success(.bool(flag))
        case (.bool(let flag), _): return .success(.integer(flag ? 1 : 0))
        case (.double(let d), .double): return .success(.double(d))
        case (.double(let d), .float):
            if let problem = ValueLimits.floatRangeProblem(d) { return .failure(ValueProblem(problem)) }
            return .success(.double(Double(Float(d))))
        case (.double(let d), .decimal):
            guard d.isFinite else { return .failure(ValueProblem("\(d) is not a finite number")) }
            guard let decimal = decimal(of: d) else { return .failure(ValueProblem("\(d) is out of the range decimals hold")) }
            return .success(.decimal(decimal))
        case (.double(let d), _):
            guard !d.isNaN else { return .failure(ValueProblem("NaN is not a number, which an \(type.rawValue) attribute cannot hold")) }
            guard d.rounded() == d else { return .failure(ValueProblem("\(d) has a fraction, which an \(type.rawValue) attribute cannot hold; round it (in an expression, with floor:(), ceiling:() or trunc:())")) }
            guard let n = Int64(exactly: d) else { return .failure(ValueProblem("\(d) is out of range for \(type.rawValue)")) }
            return ValueParser.checkRange(n, type)
        case (.decimal(let d), .decimal): return .success(.decimal(d))
        case (.decimal(let d), .double): return .success(.double(double(of: d)))
        case (.decimal(let d), .float): return converted(.double(double(of: d)), to: .float)
        case (.decimal(let d), _):
            guard !d.isNaN else { return .failure(ValueProblem("the decimal NaN is not a number, which an \(type.rawValue) attribute cannot hold")) }
            // Exactly, without going through Double (which has 53 bits).
            var exact = d, whole = Decimal()
            NSDecimalRound(&whole, &exact, 0, .down)
            guard whole == d else { return .failure(ValueProblem("\(d) has a fraction, which an \(type.rawValue) attribute cannot hold; round it (in an expression, with floor:(), ceiling:() or trunc:())")) }
            guard let n = Int64(whole.description) else { return .failure(ValueProblem("\(d) is out of range for \(type.rawValue)")) }
            return ValueParser.checkRange(n, type)
        case (.string(let text), .string): return .success(.string(text))
        // Kept as written, as a data file's URI is (spaces and all): the text is the value.
        case (.string(let text), .uri): return .success(.uri(text))
        case (.string(let text), _): return ValueParser.parse(text, as: type)
        case (.uri(let text), .uri): return .success(.uri(text))
        case (.uri(let text), _): return .success(.string(text))
        case (.uuid(let uuid), .uuid): return .success(.uuid(uuid))
        case (.uuid(let uuid), _): return .success(.string(uuid.uuidString.lowercased()))
        case (.date(let date), _): return .success(.date(date))
        case (.binary(let data), _): return .success(.binary(data))
        default: return .failure(ValueProblem("\(value) cannot be stored in a \(type.rawValue) attribute"))
        }
    }

    /// Type changes between versions that keep every value exactly: what lightweight inference
    /// carries over, and what the SQL compiler copies as stored.
    package static let losslessTypeChanges: Set<String> = [
        "int16>int32", "int16>int64", "int32>int64", "int16>float", "int16>double", "int32>double", "float>double",
        "int16>decimal", "int32>decimal", "int64>decimal", "uuid>string", "uri>string", "binary>transformable", "transformable>binary",
        // A bool is the integer 0 or 1 (an NSNumber in Core Data, which infers the change).
        "bool>int16", "bool>int32", "bool>int64",
    ]

    /// The decimal of a double: its shortest decimal digits (0.1, not the 0.1000000000000000055511…
    /// it is exactly, nor Foundation's `Decimal(Double)`, which is off in the last digits), as a
    /// Core Data store's DECIMAL column reads back; nil beyond the range decimals hold.
    package static func decimal(of double: Double) -> Decimal? {
        double.isFinite ? ValueParser.parseDecimal("\(double)") : nil
    }

    /// The double nearest a decimal, correctly rounded (through its digits: Foundation's
    /// `NSDecimalNumber.doubleValue` is off in the last bits, 1e-38 became 1.0000000000000005e-38).
    package static func double(of decimal: Decimal) -> Double {
        decimal.isNaN ? .nan : (Double(decimal.description) ?? NSDecimalNumber(decimal: decimal).doubleValue)
    }

    /// Numbers convert into each other in a lightweight migration, as Core Data's does (its
    /// inferred mapping reads an NSNumber and stores it in the new type): for a change between
    /// numeric types that is not lossless, what the conversion can cost, in words; nil for any
    /// other change. Losses of precision happen silently (as in Core Data); a value that does not
    /// fit at all (a fraction or an out-of-range number into an integer) fails the migration.
    package static func numericConversionCaution(from: AttributeType, to: AttributeType) -> String? {
        let numbers: Set<AttributeType> = [.int16, .int32, .int64, .float, .double, .decimal]
        guard from != to, numbers.contains(from), numbers.contains(to), !isLossless(from: from, to: to) else { return nil }
        switch (from, to) {
        case (.int64, .double), (.int64, .float), (.int32, .float):
            return "integers beyond \(to == .double ? "2^53 (9007199254740992)" : "2^24 (16777216)") lose their last digits"
        case (.double, .float), (.decimal, .float): return "values are rounded to single precision (about 7 digits, fewer below 1.2e-38); one beyond a float's range, or one other than 0 that a float would make 0, fails the migration"
        case (.decimal, .double): return "values are rounded to a double (about 15 significant digits)"
        case (.double, .decimal): return "values keep the digits of their shortest decimal form; one of 1e165 or more in size, or with digits below 1e-128 (1e-130, 2.5e-128), fails the migration"
        case (.float, .decimal): return "values become the decimal of the double each float is (0.1 as a float becomes 0.10000000149011612)"
        default: return "a value with a fraction, or out of range for \(to.rawValue), fails the migration"
        }
    }

    /// Whether a conversion between number types changes some values without failing: it rounds
    /// (an int64 past 2^53 made a double, a double made a float, a float made a decimal), where the
    /// other lossy conversions fail the migration on a value that does not fit.
    package static func roundsSilently(from: AttributeType, to: AttributeType) -> Bool {
        switch (from, to) {
        case (.int64, .double), (.int64, .float), (.int32, .float), (.double, .float), (.decimal, .float), (.decimal, .double), (.float, .decimal): return true
        default: return false
        }
    }

    /// Whether values of `from` keep every value when stored as `to` (or the types are equal).
    package static func isLossless(from: AttributeType, to: AttributeType) -> Bool {
        from == to || losslessTypeChanges.contains("\(from.rawValue)>\(to.rawValue)")
    }

    // MARK: String length

    /// The length of a string, in UTF-16 code units: what `NSString.length` counts, so that the
    /// `length` of expressions, Core Data's minLength/maxLength validation and `MATCHES` ranges
    /// agree with the Core Data models mapc imports. (Swift's `count` counts grapheme clusters,
    /// `unicodeScalars.count` code points; "é" written as e + accent is 1, 2 and 2 of them.)
    package static func length(of text: String) -> Int { text.utf16.count }

    /// The text's first `limit` UTF-16 units, as Foundation's `substringToIndex:` cuts it, except
    /// that a surrogate pair (one code point, such as an emoji's) is never cut in two, which would
    /// leave invalid text: the cut falls before it. `dropPrefix` cuts at the same place, so the two
    /// parts always make the text again ("a🍣b" at 2 is "a" and "🍣b"; nothing is lost).
    package static func prefix(_ text: String, length limit: Int) -> String {
        String(text.unicodeScalars[..<cut(text, atUnit: limit)])
    }

    /// The text after its first `count` UTF-16 units, as Foundation's `substringFromIndex:` gives
    /// it, cut where `prefix` cuts.
    package static func dropPrefix(_ text: String, length count: Int) -> String {
        String(text.unicodeScalars[cut(text, atUnit: count)...])
    }

    /// Where a text is cut at `offset` UTF-16 units: the last code point boundary at or before it.
    private static func cut(_ text: String, atUnit offset: Int) -> String.UnicodeScalarView.Index {
        let scalars = text.unicodeScalars
        var used = 0, index = scalars.startIndex
        while index < scalars.endIndex {
            used += UTF16.width(scalars[index])
            if used > offset { break }
            index = scalars.index(after: index)
        }
        return index
    }
}
