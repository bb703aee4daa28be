import Foundation

/// Decimal division, addition and multiplication correctly rounded to the 38 digits a decimal
/// keeps, where Foundation's on Linux is not: its division loses digits once the divisor has more
/// than about 18 (98765432109876543210 / 123456789012345678901 was wrong from the 13th digit, 1 /
/// a 38-digit number kept one digit), its addition keeps about 34 when the exponents are far
/// apart, its multiplication truncates.
/// Apple's are exact, and are used there.
package enum DecimalArithmetic {
    /// Why a quotient cannot be given.
    package enum Problem: Error, Equatable {
        case divisionByZero, overflow, underflow
    }

    /// `x / y`, rounded half away from zero (Foundation's `.plain`) to 38 significant digits, or
    /// to fewer where the quotient is so small that a decimal's least exponent, -128, comes first.
    package static func divide(_ x: Decimal, _ y: Decimal) -> Result<Decimal, Problem> {
        guard !y.isZero else { return .failure(.divisionByZero) }
        if x.isNaN || y.isNaN { return .success(.nan) }
        if x.isZero { return .success(0) }
        #if canImport(Darwin)
        var dividend = x, divisor = y, quotient = Decimal()
        switch NSDecimalDivide(&quotient, &dividend, &divisor, .plain) {
        case .overflow: return .failure(.overflow)
        case .underflow: return .failure(.underflow)
        case .divideByZero: return .failure(.divisionByZero)
        default: return .success(quotient)
        }
        #else
        guard let dividend = significand(x), let divisor = significand(y) else {
            return .success(x / y)
        }
        let negative = (x.sign == .minus) != (y.sign == .minus)
        // dividend * 10^shift / divisor has 38 or 39 digits: at most 10^39 < 2^130, so the
        // dividend is widened to 256 bits and the shift lowered until the quotient fits 128.
        // The shift never takes the quotient's exponent below the least: it is rounded once.
        var shift = 38 - digits(dividend) + digits(divisor)
        let floor = x.exponent - y.exponent - leastExponent
        var below = 0
        if shift > floor {
            below = max(0, -floor)
            shift = max(0, floor)
        }
        var wide = times10(dividend, shift)
        while wide.high >= divisor, shift > 0 {
            shift -= 1
            wide = times10(dividend, shift)
        }
        guard wide.high < divisor else { return .success(x / y) }
        let division = divisor.dividingFullWidth(wide)
        var quotient = division.quotient
        var exponent = x.exponent - y.exponent - shift
        // Half away from zero: the remainder is at least half the divisor.
        var roundsUp = division.remainder >= divisor - division.remainder
        // Digits past the 38th, or below the least exponent, go in one step: the first of them
        // decides (a remainder only adds to them, and half-up looks no further).
        let excess = max(digits(quotient) - 38, below)
        if excess > 0 {
            guard excess < 39 else { return .failure(.underflow) }
            let unit = power10(excess)
            let (kept, dropped) = quotient.quotientAndRemainder(dividingBy: unit)
            roundsUp = dropped >= unit - dropped
            quotient = kept
            exponent += excess
        }
        if roundsUp { quotient += 1 }
        return make(quotient, exponent: exponent, negative: negative)
        #endif
    }

    /// `x + y`, rounded half away from zero to 38 significant digits.
    package static func add(_ x: Decimal, _ y: Decimal) -> Result<Decimal, Problem> {
        if x.isNaN || y.isNaN { return .success(.nan) }
        if x.isZero { return .success(y) }
        if y.isZero { return .success(x) }
        #if canImport(Darwin)
        var left = x, right = y, sum = Decimal()
        switch NSDecimalAdd(&sum, &left, &right, .plain) {
        case .overflow: return .failure(.overflow)
        case .underflow: return .failure(.underflow)
        default: return .success(sum)
        }
        #else
        guard var mx = significand(x), var my = significand(y) else { return .success(x + y) }
        var ex = x.exponent, ey = y.exponent
        // An addend wholly below the digits the sum keeps and the one that rounds it (with a place
        // to spare for a borrow) counts only by its sign and by not being 0: it is replaced by a 1
        // just below them, so the two align in 256 bits.
        let lowestX = ex + digits(mx) - 41, lowestY = ey + digits(my) - 41
        if ey + digits(my) <= lowestX + 1 { my = 1; ey = lowestX - 1 }
        else if ex + digits(mx) <= lowestY + 1 { mx = 1; ex = lowestY - 1 }
        let exponent = min(ex, ey)
        let shiftX = ex - exponent, shiftY = ey - exponent
        guard digits(mx) + shiftX <= 77, digits(my) + shiftY <= 77 else { return .success(x + y) }
        let a = times10(mx, shiftX), b = times10(my, shiftY)
        var magnitude: Wide, negative: Bool
        if (x.sign == .minus) == (y.sign == .minus) {
            magnitude = sum(a, b)
            negative = x.sign == .minus
        } else if isLess(a, b) {
            magnitude = difference(b, a)
            negative = y.sign == .minus
        } else {
            magnitude = difference(a, b)
            negative = x.sign == .minus
        }
        if magnitude.high == 0, magnitude.low == 0 { return .success(0) }
        return rounded(magnitude, exponent: exponent, negative: negative)
        #endif
    }

    /// `x × y`, rounded half away from zero to 38 significant digits, or to fewer where the
    /// product is so small that a decimal's least exponent comes first. Foundation's on Linux
    /// truncates the product's digits past its 128 bits (99999999999999999999999999999999999999 × 4
    /// ended in 990, where rounding gives 4e38) and keeps a 39th digit where they fit; it traps
    /// where the exponents add up below the least, even for a product a decimal holds.
    package static func multiply(_ x: Decimal, _ y: Decimal) -> Result<Decimal, Problem> {
        if x.isNaN || y.isNaN { return .success(.nan) }
        if x.isZero || y.isZero { return .success(0) }
        #if canImport(Darwin)
        var left = x, right = y, product = Decimal()
        switch NSDecimalMultiply(&product, &left, &right, .plain) {
        case .overflow: return .failure(.overflow)
        case .underflow: return .failure(.underflow)
        default: return .success(product)
        }
        #else
        guard let mx = significand(x), let my = significand(y) else { return .success(x * y) }
        // Two significands of at most 39 digits: the exact product has at most 78, in 256 bits.
        return rounded(mx.multipliedFullWidth(by: my), exponent: x.exponent + y.exponent, negative: (x.sign == .minus) != (y.sign == .minus), floor: leastExponent)
        #endif
    }

    /// The least exponent a decimal holds (Foundation's `Decimal`, NSDecimalNumber's).
    package static let leastExponent = -128

    #if !canImport(Darwin)
    /// A 256-bit magnitude.
    private typealias Wide = (high: UInt128, low: UInt128)

    /// 10^38, the first number past a decimal's 38 digits.
    private static let tenTo38 = power10(38)

    /// The decimal `±significand × 10^exponent`: trailing zeros folded into the exponent, and
    /// back into the significand when the exponent is past the greatest a decimal holds.
    private static func make(_ significand: UInt128, exponent: Int, negative: Bool) -> Result<Decimal, Problem> {
        var significand = significand, exponent = exponent
        if significand == 0 || exponent < leastExponent { return .failure(.underflow) }
        while significand % 10 == 0, exponent < 127 {
            significand /= 10
            exponent += 1
        }
        while exponent > 127, significand < power10(37) {
            significand *= 10
            exponent -= 1
        }
        // Written out and read (the significand with its exponent: Decimal(sign:exponent:significand:)
        // folds a significand's zeros into an exponent past the greatest, giving NaN).
        guard exponent <= 127, let value = Decimal(string: "\(negative ? "-" : "")\(significand)e\(exponent)", locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else {
            return .failure(.overflow)
        }
        return .success(value)
    }

    /// A decimal's significand, as a whole number (nil for one past 128 bits, which none is).
    private static func significand(_ x: Decimal) -> UInt128? { UInt128(Swift.abs(x).significand.description) }

    /// `magnitude × 10^exponent` rounded half away from zero to 38 significant digits, and to no
    /// digit below 10^floor: the last digit dropped, the most significant of them, decides (half
    /// up looks no further).
    private static func rounded(_ magnitude: Wide, exponent: Int, negative: Bool, floor: Int = .min) -> Result<Decimal, Problem> {
        var magnitude = magnitude, exponent = exponent, dropped: UInt128 = 0
        while magnitude.high != 0 || magnitude.low >= tenTo38 || exponent < floor {
            if magnitude.high == 0, magnitude.low == 0 { return .failure(.underflow) }
            (magnitude, dropped) = dividedBy10(magnitude)
            exponent += 1
        }
        var significand = magnitude.low
        if dropped >= 5 { significand += 1 }
        return make(significand, exponent: exponent, negative: negative)
    }

    private static func digits(_ value: UInt128) -> Int { value == 0 ? 1 : value.description.count }

    /// 10^power, for a power from 0 to 38.
    private static func power10(_ power: Int) -> UInt128 {
        (0..<power).reduce(UInt128(1)) { value, _ in value * 10 }
    }

    /// `a + b` (their sum below 2^256: two 77-digit numbers at most).
    private static func sum(_ a: Wide, _ b: Wide) -> Wide {
        let (low, carry) = a.low.addingReportingOverflow(b.low)
        return (a.high + b.high + (carry ? 1 : 0), low)
    }

    /// `a - b`, for `b` not above `a`.
    private static func difference(_ a: Wide, _ b: Wide) -> Wide {
        let (low, borrow) = a.low.subtractingReportingOverflow(b.low)
        return (a.high - b.high - (borrow ? 1 : 0), low)
    }

    private static func isLess(_ a: Wide, _ b: Wide) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }

    /// `value / 10` and the digit dropped.
    private static func dividedBy10(_ value: Wide) -> (Wide, UInt128) {
        let (highQuotient, highRemainder) = value.high.quotientAndRemainder(dividingBy: 10)
        let (lowQuotient, remainder) = UInt128(10).dividingFullWidth((high: highRemainder, low: value.low))
        return ((highQuotient, lowQuotient), remainder)
    }

    /// `value × 10^power` in 256 bits (`power` at most 76, so it fits).
    private static func times10(_ value: UInt128, _ power: Int) -> Wide {
        var high: UInt128 = 0, low = value
        for _ in 0..<max(0, power) {
            let product = low.multipliedFullWidth(by: 10)
            high = high * 10 + product.high
            low = product.low
        }
        return (high, low)
    }
    #endif
}
