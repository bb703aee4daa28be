import Foundation

/// mapc's one order of values, used everywhere values are compared: the expression language
/// (`==`, `<`, `IN`, sets), schema validation (`min`/`max`, in `load` and in a store's validation,
/// through the SQL function `mapc_compare` where SQLite's own order is not exact) and inference.
///
/// - Numbers compare by their exact numeric value whatever their type: integers, doubles and
///   decimals (2^53 + 1 is above the double 2^53; a decimal against a double is exact whenever a
///   decimal's 38 digits can hold the double, see `exactOrder(_:_:)`); booleans as 0 and 1.
/// - Text by Unicode scalars (as SQLite orders UTF-8 text); text whose bytes are not UTF-8, byte
///   for byte, equal only to the same bytes.
/// - Dates in time; UUIDs by their text; URIs as text; binary values byte by byte.
/// - Values of unrelated kinds, and nil, are not ordered (nil).
enum ValueOrder {
    /// Orders two values; nil when they cannot be ordered.
    static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        switch (lhs, rhs) {
        case let (.string(a), .string(b)):
            // Not Swift's `==`, which takes "é" and "e" with a combining accent for the same.
            if a.unicodeScalars.elementsEqual(b.unicodeScalars) { return .orderedSame }
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? .orderedAscending : .orderedDescending
        case let (.nonUTF8Text(a), .nonUTF8Text(b)) where a == b: return .orderedSame
        case let (.date(a), .date(b)): return order(a, b)
        case let (.uuid(a), .uuid(b)): return order(a.uuidString, b.uuidString)
        case let (.uri(a), .uri(b)): return order(a, b)
        case let (.binary(a), .binary(b)):
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        default:
            guard let a = number(lhs), let b = number(rhs) else { return nil }
            switch (a, b) {
            case let (.integer(x), .integer(y)): return order(x, y)
            // Exactly, as SQLite compares integers with reals: through Double, 2^53 + 1 would equal 2^53.
            case let (.integer(x), .double(y)): return exactOrder(x, y)
            case let (.double(x), .integer(y)): return exactOrder(y, x).map(\.reversed)
            case let (.double(x), .double(y)): return x.isNaN || y.isNaN ? nil : order(x, y)
            case let (.decimal(x), .double(y)): return exactOrder(x, y)
            case let (.double(x), .decimal(y)): return exactOrder(y, x).map(\.reversed)
            case let (.decimal(x), .decimal(y)): return x.isNaN || y.isNaN ? nil : order(x, y)
            // Every Int64 is a decimal exactly.
            case let (.decimal(x), .integer(y)): return x.isNaN ? nil : order(x, Decimal(y))
            case let (.integer(x), .decimal(y)): return y.isNaN ? nil : order(Decimal(x), y)
            }
        }
    }

    private enum Number {
        case integer(Int64), double(Double), decimal(Decimal)
    }

    private static func number(_ value: Value) -> Number? {
        switch value {
        case .integer(let n): return .integer(n)
        case .double(let d): return .double(d)
        case .decimal(let d): return .decimal(d)
        case .bool(let flag): return .integer(flag ? 1 : 0)
        default: return nil
        }
    }

    /// Orders a decimal and a double exactly; nil when either is not a number. The decimal's
    /// correctly rounded double settles it unless it is the double itself; then the double's
    /// exact value decides, when a decimal can hold it (any double of at most 38 significant
    /// digits: every whole one below 2^126, and fractions of up to about 30 binary places).
    static func exactOrder(_ decimal: Decimal, _ double: Double) -> ComparisonResult? {
        if decimal.isNaN || double.isNaN { return nil }
        let rounded = ValueRules.double(of: decimal)
        if rounded != double { return rounded < double ? .orderedAscending : .orderedDescending }
        guard let exact = exactDecimal(double) else { return .orderedSame }
        return decimal < exact ? .orderedAscending : (decimal > exact ? .orderedDescending : .orderedSame)
    }

    /// A double's exact value as a decimal, or nil when a decimal's 38 digits cannot hold it.
    static func exactDecimal(_ double: Double) -> Decimal? {
        guard double.isFinite else { return nil }
        if double == 0 { return 0 }
        // double = significand × 2^exponent, the significand a whole number without trailing zero bits.
        var significand = UInt64(double.significandBitPattern) | (double.isNormal ? 1 << UInt64(Double.significandBitCount) : 0)
        var exponent = (double.isNormal ? Int(double.exponent) : -1022) - Double.significandBitCount
        while significand & 1 == 0 { significand >>= 1; exponent += 1 }
        let bits = 64 - significand.leadingZeroBitCount
        var digits = Decimal(significand)
        if exponent >= 0 {
            guard bits + exponent <= 126 else { return nil }
            for _ in 0..<exponent { digits *= 2 }
            return double < 0 ? -digits : digits
        }
        // m / 2^k = m × 5^k / 10^k: exact while m × 5^k fits the decimal's 128-bit significand.
        let places = -exponent
        guard Double(bits) + Double(places) * 2.33 <= 126, places <= 127 else { return nil }
        for _ in 0..<places { digits *= 5 }
        return Decimal(sign: double < 0 ? .minus : .plus, exponent: -places, significand: digits)
    }

    /// Orders an integer and a double exactly; nil when the double is NaN.
    static func exactOrder(_ integer: Int64, _ double: Double) -> ComparisonResult? {
        if double.isNaN { return nil }
        if double >= 9_223_372_036_854_775_808.0 { return .orderedAscending }   // 2^63: above every Int64
        if double < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = double.rounded(.down)
        let truncated = Int64(whole)
        if integer != truncated { return integer < truncated ? .orderedAscending : .orderedDescending }
        return double > whole ? .orderedAscending : .orderedSame
    }

}

extension ComparisonResult {
    /// The order seen from the other side.
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}
