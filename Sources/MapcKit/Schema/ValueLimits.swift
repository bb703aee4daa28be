import Foundation

/// What a store can hold, one definition used wherever values enter one (data files, mapping
/// expressions, policies, values read back): nothing non-finite, nothing out of an attribute
/// type's range, no text SQLite would cut short.
public enum ValueLimits {
    /// Dates from 0001-01-01 to 9999-12-31 (UTC), as seconds since 1970: what ISO 8601's four-digit
    /// years write and read back, far wider than any Core Data store holds.
    public static let dateRange: ClosedRange<Double> = -62_135_596_800 ... 253_402_300_799.999
    /// Significant digits a decimal keeps (Foundation's `Decimal` holds 38).
    public static let maxDecimalDigits = 38

    /// Why `value` cannot be stored in an attribute of `type`, or nil when it can. Null is
    /// acceptable here; whether a value is required is checked elsewhere.
    public static func problem(_ value: Value, for type: AttributeType) -> String? {
        switch value {
        case .string(let text), .uri(let text):
            return containsNUL(text) ? "text containing the NUL character (U+0000) cannot be stored: SQLite would cut it short there" : nil
        case .double(let number):
            guard number.isFinite else { return "\(number) is not a finite number" }
            if type == .float, !Float(number).isFinite { return "\(number) is out of range for a float (at most \(Float.greatestFiniteMagnitude))" }
            return nil
        case .decimal(let number):
            return number.isNaN ? "the decimal is not a number (an overflow)" : nil
        case .date(let date):
            return dateRange.contains(date.timeIntervalSince1970) ? nil : dateProblem(date.timeIntervalSince1970)
        case .integer(let number):
            if let range = type.integerRange, !range.contains(number) { return "\(number) is out of range for \(type.rawValue) (\(range.lowerBound) to \(range.upperBound))" }
            return nil
        default:
            return nil
        }
    }

    /// Whether text holds U+0000. In UTF-8 a zero byte is that character and nothing else, so the
    /// bytes are scanned with `memchr` rather than decoded: every string read from a store and
    /// every string a migration writes passes here (2% of an interpreted run, decoding scalars).
    static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let start = bytes.baseAddress, bytes.count > 0 else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
    }

    /// The message for a date outside `dateRange`, given as seconds since 1970.
    public static func dateProblem(_ seconds: Double) -> String {
        "a date \(seconds.isFinite ? "\(seconds) seconds from 1970" : "of \(seconds) seconds") is outside the years 0001 to 9999 that stores hold"
    }

    /// The number of significant digits in decimal text (`0.0150` has 3: `150`; `1e50` has 1).
    static func significantDigits(_ text: String) -> Int {
        let mantissa = text.split(whereSeparator: { $0 == "e" || $0 == "E" }).first ?? ""
        let digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
        return digits.reversed().drop { $0 == "0" }.count
    }
}
