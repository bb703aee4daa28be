import Foundation

/// mapc's one order of values, used everywhere values are compared: the expression language
/// (`==`, `<`, `IN`, sets), schema validation (`min`/`max`, in `load` and in a store's validation,
/// through the SQL function `mapc_compare` where SQLite's own order is not exact) and inference.
///
/// - Numbers compare by their exact numeric value whatever their type: integers, doubles and
///   decimals (2^53 + 1 is above the double 2^53; the decimal 0.1 is below the double 0.1, which is
///   0.1000000000000000055…); booleans as 0 and 1.
/// - Text by Unicode scalars (as SQLite orders UTF-8 text); text whose bytes are not UTF-8 byte
///   for byte, against any text (SQLite's `BINARY` order, which a Core Data fetch uses), equal only
///   to the same bytes.
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
        case let (.nonUTF8Text(a), .nonUTF8Text(b)): return byteOrder(a, b)
        case let (.nonUTF8Text(a), .string(b)): return byteOrder(a, Data(b.utf8))
        case let (.string(a), .nonUTF8Text(b)): return byteOrder(Data(a.utf8), b)
        case let (.date(a), .date(b)): return order(a, b)
        case let (.uuid(a), .uuid(b)): return order(a.uuidString, b.uuidString)
        case let (.uri(a), .uri(b)): return order(a, b)
        case let (.binary(a), .binary(b)): return byteOrder(a, b)
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

    /// Bytes in order, as `memcmp` and then the length order them (valid UTF-8 so ordered is in
    /// its scalars' order).
    private static func byteOrder(_ a: Data, _ b: Data) -> ComparisonResult {
        a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
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
    /// exact value decides: as a decimal when one can hold it (at most 38 significant digits),
    /// else in whole-number arithmetic (`BigNumber`).
    static func exactOrder(_ decimal: Decimal, _ double: Double) -> ComparisonResult? {
        if decimal.isNaN || double.isNaN { return nil }
        let rounded = ValueRules.double(of: decimal)
        if rounded != double { return rounded < double ? .orderedAscending : .orderedDescending }
        if let exact = exactDecimal(double) {
            return decimal < exact ? .orderedAscending : (decimal > exact ? .orderedDescending : .orderedSame)
        }
        // The double needs more digits than a decimal holds, so they are never equal: compared
        // as whole numbers, the decimal's digits × 10^e against the double's significand × 2^e.
        return bigOrder(decimal, double)
    }

    /// Orders a finite decimal and a finite double exactly, in whole-number arithmetic.
    private static func bigOrder(_ decimal: Decimal, _ double: Double) -> ComparisonResult? {
        let negative = decimal < 0
        if negative != (double < 0) { return negative ? .orderedAscending : .orderedDescending }
        // The decimal as digits and a power of ten (its description is plain digits).
        let text = decimal.magnitude.description
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        let digits = (whole + fraction).drop { $0 == "0" }
        var left = BigNumber(digits: String(digits.isEmpty ? "0" : digits))
        let decimalExponent = -fraction.count
        // The double as a significand and a power of two.
        var significand = UInt64(double.magnitude.significandBitPattern) | (double.isNormal ? 1 << UInt64(Double.significandBitCount) : 0)
        var binaryExponent = (double.isNormal ? Int(double.exponent) : -1022) - Double.significandBitCount
        while significand != 0 && significand & 1 == 0 { significand >>= 1; binaryExponent += 1 }
        var right = BigNumber(significand)
        if decimalExponent > 0 { left.multiply(byPowerOf: 10, decimalExponent) } else { right.multiply(byPowerOf: 10, -decimalExponent) }
        if binaryExponent > 0 { right.multiply(byPowerOf: 2, binaryExponent) } else { left.multiply(byPowerOf: 2, -binaryExponent) }
        let order = left.compare(right)
        return negative ? order.reversed : order
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

/// A whole number of any size, just enough for `ValueOrder` to compare a decimal with a double
/// exactly: made from digits or a `UInt64`, multiplied by powers of 2 and 10, compared.
private struct BigNumber {
    /// Base 2^32 digits, least significant first.
    private var limbs: [UInt32] = [0]

    init(_ value: UInt64) {
        limbs = [UInt32(truncatingIfNeeded: value), UInt32(truncatingIfNeeded: value >> 32)]
        trim()
    }

    init(digits: String) {
        for digit in digits.utf8 {
            multiply(by: 10)
            add(UInt32(digit &- UInt8(ascii: "0")))
        }
    }

    mutating func multiply(by factor: UInt32) {
        var carry: UInt64 = 0
        for index in limbs.indices {
            let product = UInt64(limbs[index]) * UInt64(factor) + carry
            limbs[index] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry != 0 { limbs.append(UInt32(carry)) }
    }

    mutating func multiply(byPowerOf base: UInt32, _ count: Int) {
        var left = count
        // In steps that fit a 32-bit factor: 10^9, 2^31.
        let (step, stepFactor): (Int, UInt32) = base == 10 ? (9, 1_000_000_000) : (31, 1 << 31)
        while left >= step { multiply(by: stepFactor); left -= step }
        var rest: UInt32 = 1
        for _ in 0..<max(0, left) { rest *= base }
        if rest != 1 { multiply(by: rest) }
    }

    private mutating func add(_ value: UInt32) {
        var carry = UInt64(value)
        var index = 0
        while carry != 0 {
            if index == limbs.count { limbs.append(0) }
            let sum = UInt64(limbs[index]) + carry
            limbs[index] = UInt32(truncatingIfNeeded: sum)
            carry = sum >> 32
            index += 1
        }
    }

    private mutating func trim() {
        while limbs.count > 1 && limbs.last == 0 { limbs.removeLast() }
    }

    func compare(_ other: BigNumber) -> ComparisonResult {
        var a = self, b = other
        a.trim()
        b.trim()
        if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count ? .orderedAscending : .orderedDescending }
        for index in a.limbs.indices.reversed() where a.limbs[index] != b.limbs[index] {
            return a.limbs[index] < b.limbs[index] ? .orderedAscending : .orderedDescending
        }
        return .orderedSame
    }
}

