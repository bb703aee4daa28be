import Foundation

/// What a store can hold, one definition used wherever values enter one (data files, mapping
/// expressions, policies, values read back): nothing out of an attribute type's range, no NaN
/// double (SQLite stores NULL for it), floats of single precision. Text may hold any character,
/// U+0000 included: it is bound and read with its length, so SQLite keeps it whole (identities
/// are the exception: `containsNUL`). A store may hold an infinite double and a decimal that is
/// not a number (Core Data writes `'NaN'`), and mapc carries them over unchanged; it never makes
/// one: arithmetic, `CAST` and data files' numbers refuse results that are not finite.
package enum ValueLimits {
    /// Dates from 0001-01-01 to 9999-12-31 (UTC), as seconds since 1970: what ISO 8601's four-digit
    /// years write and read back, far wider than any Core Data store holds.
    package static let dateRange: ClosedRange<Double> = -62_135_596_800 ... 253_402_300_799.999
    /// The same range in whole seconds since 1970, as `Timestamp` counts them.
    package static let wholeSecondsRange: ClosedRange<Int64> = -62_135_596_800 ... 253_402_300_799

    /// Whether an instant is in the years 0001 to 9999 (UTC).
    package static func holds(_ instant: Timestamp) -> Bool {
        wholeSecondsRange.contains(instant.wholeSeconds)
    }
    /// Significant digits a decimal keeps (Foundation's `Decimal` holds 38).
    package static let maxDecimalDigits = 38

    /// Why `value` cannot be stored in an attribute of `type`, or nil when it can. Null is
    /// acceptable here; whether a value is required is checked elsewhere.
    package static func problem(_ value: Value, for type: AttributeType) -> String? {
        switch value {
        case .double(let number):
            guard !number.isNaN else { return "NaN is not a number a store can hold (SQLite stores nil for it)" }
            guard type == .float, Double(Float(number)) != number else { return nil }
            return floatRangeProblem(number) ?? "\(number) is not a float's value (single precision; the nearest is \(Double(Float(number))))"
        case .decimal:
            return nil
        case .date(let instant):
            guard holds(instant) else { return dateProblem(instant.secondsSince1970) }
            // Stores keep seconds in a double (from 1970 or 2001): the last microseconds of 9999
            // round to the first instant of year 10000, which no store may hold.
            for epoch in [Timestamp.Epoch.unix, .reference] where instant.seconds(since: epoch) >= Double(wholeSecondsRange.upperBound + 1 - epoch.offset) {
                return "\(ISO8601.format(instant)) cannot be stored: a store keeps a date as seconds in a double, and the nearest double is 10000-01-01T00:00:00Z; "
                    + "use an instant at least a few hundredths of a millisecond earlier"
            }
            return nil
        case .integer(let number):
            if let range = type.integerRange, !range.contains(number) { return "\(number) is out of range for \(type.rawValue) (\(range.lowerBound) to \(range.upperBound))" }
            return nil
        default:
            return nil
        }
    }

    /// Why a double cannot be rounded to a float: it is finite and beyond a float's range, or not 0 and
    /// so small that it would become 0 (every digit lost). What
    /// converts a number to a float (text, data files, expressions) checks this, then rounds.
    package static func floatRangeProblem(_ number: Double) -> String? {
        guard number.isFinite else { return nil }
        if !Float(number).isFinite { return "\(number) is out of range for a float (at most \(Float.greatestFiniteMagnitude))" }
        // Rounding to single precision keeps about 7 digits (fewer below 1.2e-38); a number nearer
        // 0 than the least float would become 0, and keep nothing. (One nearer the least float
        // rounds to it, as `1e-45`, the shortest text of that float, must.)
        if number != 0, Float(number) == 0 {
            return "\(number) is too small for a float (the least is \(Double(Float.leastNonzeroMagnitude))): it would become 0"
        }
        return nil
    }

    /// Whether text holds U+0000, which an object's identity may not (identities are bound and
    /// compared as C strings in places, and named in messages). In UTF-8 a zero byte is that
    /// character and nothing else, so the bytes are scanned with `memchr` rather than decoded.
    package static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let start = bytes.baseAddress, bytes.count > 0 else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
    }

    /// The message for a date outside `dateRange`, given as seconds since 1970, said in the count
    /// expressions use (NSDate's, from 2001-01-01): `CAST(1e20, "NSDate")` was said as
    /// "1.000000000009783e+20 seconds from 1970".
    package static func dateProblem(_ seconds: Double) -> String {
        let fromReference = seconds - Double(Timestamp.Epoch.reference.offset)
        return "a date \(seconds.isFinite ? "\(fromReference) seconds from 2001-01-01 (NSDate's reference date)" : "of \(seconds) seconds") is outside the years 0001 to 9999 that stores hold"
    }
}
