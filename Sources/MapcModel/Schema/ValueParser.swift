import Foundation
import MapcFoundation

/// A value that does not fit its type, with a message saying why.
package struct ValueProblem: Error, Sendable, Equatable {
    /// What is wrong, e.g. "'abc' is not an int16".
    package var message: String
    /// Creates a problem.
    package init(_ message: String) { self.message = message }
}

/// Reads values of an attribute type from text (YAML scalars, command-line arguments).
package enum ValueParser {
    /// Parses `text` as a value of `type`. Integers are decimal (or `0x` hex), whatever leading zeros;
    /// booleans accept true/false/yes/no; dates are ISO 8601; binary is base64; decimals keep every digit.
    package static func parse(_ text: String, as type: AttributeType) -> Result<Value, ValueProblem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .int16, .int32, .int64:
            guard let value = parseInteger(trimmed) else {
                // With a point or an exponent, on its digits, as data files read it (`1.0e2` is 100).
                if isDecimalText(trimmed) {
                    // Beyond 64 bits is out of the type's range too, and said so.
                    if !hasFraction(decimalText: trimmed), integerPart(ofDecimalText: trimmed) == nil, let range = type.integerRange {
                        return .failure(ValueProblem("\(English.abbreviated(trimmed, limit: 60)) is out of range for \(type.rawValue) (\(range.lowerBound) to \(range.upperBound))"))
                    }
                    return wholeNumber(ofDecimalText: trimmed).flatMap { checkRange($0, type) }
                }
                return .failure(ValueProblem("'\(text)' is not a whole number"))
            }
            return checkRange(value, type)
        case .double, .float:
            guard let value = Double(trimmed), value.isFinite else {
                return .failure(ValueProblem("'\(text)' is not a finite number"))
            }
            if let problem = underflowProblem(trimmed, nearest: value) { return .failure(problem) }
            if type == .float, let problem = ValueLimits.floatRangeProblem(value) { return .failure(ValueProblem(problem)) }
            return .success(type == .float ? .double(Double(Float(value))) : .double(value))
        case .decimal:
            switch decimal(trimmed) {
            case .success(let value?): return .success(.decimal(value))
            case .success(nil): return .failure(ValueProblem("'\(text)' is not a decimal number"))
            case .failure(let problem): return .failure(problem)
            }
        case .string:
            if let problem = ValueLimits.problem(.string(text), for: type) { return .failure(ValueProblem(problem)) }
            return .success(.string(text))
        case .bool:
            switch trimmed.lowercased() {
            case "true", "yes", "on", "1": return .success(.bool(true))
            case "false", "no", "off", "0": return .success(.bool(false))
            default: return .failure(ValueProblem("'\(text)' is not true or false"))
            }
        case .date:
            guard let date = ISO8601.parse(trimmed) else {
                return .failure(ValueProblem(ISO8601.problem(with: trimmed)))
            }
            if let problem = ValueLimits.problem(.date(date), for: type) { return .failure(ValueProblem(problem)) }
            return .success(.date(date))
        case .binary, .transformable:
            guard let data = Data(base64Encoded: trimmed) else {
                return .failure(ValueProblem("'\(text.prefix(40))' is not base64"))
            }
            return .success(.binary(data))
        case .uuid:
            guard let uuid = UUID(uuidString: trimmed) else {
                return .failure(ValueProblem("'\(text)' is not a UUID such as 123e4567-e89b-12d3-a456-426614174000"))
            }
            return .success(.uuid(uuid))
        case .uri:
            guard !trimmed.isEmpty, URL(string: trimmed) != nil, ValueLimits.problem(.uri(trimmed), for: type) == nil else {
                return .failure(ValueProblem("'\(text)' is not a URI"))
            }
            return .success(.uri(trimmed))
        }
    }

    /// Checks that an integer fits the integer type.
    package static func checkRange(_ value: Int64, _ type: AttributeType) -> Result<Value, ValueProblem> {
        if let range = type.integerRange, !range.contains(value) {
            return .failure(ValueProblem("\(value) is out of range for \(type.rawValue) (\(range.lowerBound) to \(range.upperBound))"))
        }
        return .success(.integer(value))
    }

    static func parseInteger(_ text: String) -> Int64? {
        var body = Substring(text)
        var negative = false
        if body.hasPrefix("-") { negative = true; body = body.dropFirst() } else if body.hasPrefix("+") { body = body.dropFirst() }
        let magnitude: UInt64?
        if body.lowercased().hasPrefix("0x") {
            magnitude = UInt64(body.dropFirst(2), radix: 16)
        } else {
            magnitude = body.allSatisfy(\.isASCII) ? UInt64(body, radix: 10) : nil
        }
        guard let magnitude else { return nil }
        if negative {
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : (magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// Decimal text: an optional sign, digits, an optional fraction and exponent; nothing else,
    /// and no more significant digits than a decimal keeps (so none is silently lost).
    package static func parseDecimal(_ text: String) -> Decimal? {
        (try? decimal(text).get()) ?? nil
    }

    /// Decimal text as a decimal, or why it is not one.
    static func decimal(_ text: String) -> Result<Decimal?, ValueProblem> {
        guard isDecimalText(text) else { return .success(nil) }
        let digits = NumberText.significantDigits(text)
        guard digits <= ValueLimits.maxDecimalDigits else {
            return .failure(ValueProblem("'\(text.prefix(60))' has \(digits) significant digits; decimals keep at most \(ValueLimits.maxDecimalDigits)"))
        }
        guard let normalized = normalizedDecimalText(text), let value = Decimal(string: normalized, locale: posix), !value.isNaN else {
            return .failure(ValueProblem("'\(text.prefix(60))' is out of the range decimals hold"))
        }
        return .success(value)
    }

    /// Decimal text written as digits times a power of ten that a decimal's exponent (-128 to
    /// 127) holds, zeros moved between the digits and the exponent (`1e128` is `10e127`, which
    /// Foundation's reader otherwise refuses while it takes `1.5e128`); nil for a value no decimal
    /// holds (past 38 digits once so written, or with digits below 1e-128).
    static func normalizedDecimalText(_ text: String) -> String? {
        let (sign, whole, fraction, exponent) = parts(ofDecimalText: text)
        var digits = String((whole + fraction).drop { $0 == "0" })
        guard !digits.isEmpty else { return "0" }
        var power = exponent - fraction.count
        while power < -128, digits.last == "0" { digits.removeLast(); power += 1 }
        if power > 127 {
            guard power - 127 + digits.count <= ValueLimits.maxDecimalDigits else { return nil }
            digits += String(repeating: "0", count: power - 127)
            power = 127
        }
        guard power >= -128 else { return nil }
        return "\(sign)\(digits)e\(power)"
    }
}

extension ValueParser {
    /// The locale decimal text is read in (a point, no grouping), made once.
    private static let posix = Locale(identifier: "en_US_POSIX")

    /// Decimal text (`isDecimalText`) taken apart: "-" or "", the digits before and after the
    /// point, and the exponent (one too long for an Int is far beyond any 64-bit integer, or far
    /// below 1: half of Int's range, so that moving the point by it cannot overflow the count).
    private static func parts(ofDecimalText text: String) -> (sign: String, whole: Substring, fraction: Substring, exponent: Int) {
        var body = Substring(text)
        var sign = ""
        if let first = body.first, first == "+" || first == "-" { sign = first == "-" ? "-" : ""; body = body.dropFirst() }
        var exponent = 0
        if let marker = body.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            let written = body[body.index(after: marker)...]
            exponent = Int(written) ?? (written.hasPrefix("-") ? Int.min / 2 : Int.max / 2)
            body = body[..<marker]
        }
        let point = body.firstIndex(of: ".") ?? body.endIndex
        return (sign, body[..<point], body[point...].dropFirst(), exponent)
    }

    /// The integer part of decimal text (`isDecimalText`), exactly, the fraction dropped toward
    /// zero (`-42.9` is -42, `1e5` 100000, `1e-400` 0); nil when it is beyond a 64-bit integer.
    /// Worked on the digits, so no value is rounded through a double or a 38-digit decimal.
    static func integerPart(ofDecimalText text: String) -> Int64? {
        let (sign, whole, fraction, exponent) = parts(ofDecimalText: text)
        let digits = (whole + fraction).drop { $0 == "0" }
        // Zero, whatever its exponent (`0e20`, as Java's and Python's decimals write it).
        if digits.isEmpty { return 0 }
        // Where the point falls in the digits once the leading zeros are gone.
        let (placed, overflow) = (whole.count - (whole.count + fraction.count - digits.count)).addingReportingOverflow(exponent)
        if overflow { return exponent > 0 ? nil : 0 }
        guard placed > 0 else { return 0 }
        guard placed <= 19 else { return nil }
        let integerDigits = digits.prefix(placed) + String(repeating: "0", count: max(0, placed - digits.count))
        return Int64(sign + integerDigits)
    }

    /// The whole number decimal text names (`12.0`, `1.5e3`, `9007199254740993.0`), read on its
    /// digits, never through a double: a fraction, however small (`12.0000000000000001`, `1e-400`),
    /// is refused, and a number beyond 64 bits.
    package static func wholeNumber(ofDecimalText text: String) -> Result<Int64, ValueProblem> {
        guard isDecimalText(text) else { return .failure(ValueProblem("'\(English.abbreviated(text, limit: 60))' is not a whole number")) }
        if hasFraction(decimalText: text) {
            return .failure(ValueProblem("\(English.abbreviated(text, limit: 60)) is not a whole number (it has a fraction), which an integer attribute cannot hold; round it"))
        }
        guard let value = integerPart(ofDecimalText: text) else {
            return .failure(ValueProblem("\(English.abbreviated(text, limit: 60)) is beyond a 64-bit integer (\(Int64.min) to \(Int64.max))"))
        }
        return .success(value)
    }

    /// Whether decimal text (`isDecimalText`) has a digit other than 0 after its point, once its
    /// exponent has moved the point.
    static func hasFraction(decimalText text: String) -> Bool {
        let (_, whole, fraction, exponent) = parts(ofDecimalText: text)
        // The digits after the point once it has moved `exponent` places (trailing zeros never count).
        // Bytes, not characters: the text is ASCII digits (`isDecimalText`), and may be long.
        let digits = (whole + fraction).utf8, zero = UInt8(ascii: "0")
        let (placed, overflow) = whole.utf8.count.addingReportingOverflow(exponent)
        if overflow { return exponent < 0 && digits.contains { $0 != zero } }
        return digits.dropFirst(max(0, min(placed, digits.count))).contains { $0 != zero }
    }

    /// A number written other than zero that a double would make 0 (`1e-400`, below the least
    /// double, 5e-324, or half of it), given the double nearest it: as a number too large for a
    /// double is refused, never made infinite.
    package static func underflowProblem(_ text: String, nearest: Double) -> ValueProblem? {
        guard nearest == 0, isDecimalText(text), isNonZero(decimalText: text) else { return nil }
        return ValueProblem("\(English.abbreviated(text, limit: 60)) is too small for a double: it would become 0 (the least double is 5e-324); write 0 if that is meant")
    }

    /// Whether decimal text (`isDecimalText`) names a number other than zero.
    static func isNonZero(decimalText text: String) -> Bool {
        (text.firstIndex { $0 == "e" || $0 == "E" }.map { text[..<$0] } ?? text[...]).contains { ("1"..."9").contains($0) }
    }

    /// Whether text is a decimal number: `[+-]?(digits[.digits?] | .digits)([eE][+-]?digits)?`.
    /// Scanned, not matched with a regular expression: every decimal a store or a data file holds
    /// comes through here (a regular expression was compiled per call and took a quarter of `load`).
    static func isDecimalText(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func digits() -> Int {
            let count = bytes.prefix(while: isDigit).count
            bytes = bytes.dropFirst(count)
            return count
        }
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let marker = bytes.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

extension ValueProblem: LocalizedError {
    package var errorDescription: String? { message }
}
