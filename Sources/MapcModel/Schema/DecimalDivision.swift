import Foundation

/// Decimal division correctly rounded to the 38 digits a decimal keeps. Foundation's on Linux
/// loses digits once the divisor has more than about 18 (98765432109876543210 /
/// 123456789012345678901 was wrong from the 13th digit, 1 / a 38-digit number kept one digit);
/// Apple's is exact, and is used there.
package enum DecimalDivision {
    /// Why a quotient cannot be given.
    package enum Problem: Error, Equatable {
        case divisionByZero, overflow, underflow
    }

    /// `x / y`, rounded half away from zero (Foundation's `.plain`) to 38 significant digits.
    package static func divide(_ x: Decimal, _ y: Decimal) -> Result<Decimal, Problem> {
        guard !y.isZero else { return .failure(.divisionByZero) }
        if x.isNaN || y.isNaN { return .success(.nan) }
        if x.isZero { return .success(0) }
        #if canImport(Darwin)
        return .success(x / y)
        #else
        guard let dividend = UInt128(Swift.abs(x).significand.description), let divisor = UInt128(Swift.abs(y).significand.description) else {
            return .success(x / y)
        }
        let negative = (x.sign == .minus) != (y.sign == .minus)
        // dividend * 10^shift / divisor has 38 or 39 digits: at most 10^39 < 2^130, so the
        // dividend is widened to 256 bits and the shift lowered until the quotient fits 128.
        var shift = 38 - digits(dividend) + digits(divisor)
        var wide = times10(dividend, shift)
        while wide.high >= divisor, shift > 0 {
            shift -= 1
            wide = times10(dividend, shift)
        }
        guard wide.high < divisor else { return .success(x / y) }
        let division = divisor.dividingFullWidth(wide)
        var quotient = division.quotient
        let remainder = division.remainder
        var exponent = x.exponent - y.exponent - shift
        // Half away from zero: the remainder is at least half the divisor.
        var roundsUp = remainder >= divisor - remainder
        // A 39th digit goes, into the rounding (the first digit dropped decides it).
        while digits(quotient) > 38 {
            let (kept, dropped) = quotient.quotientAndRemainder(dividingBy: 10)
            roundsUp = dropped >= 5
            quotient = kept
            exponent += 1
        }
        if roundsUp { quotient += 1 }
        return make(quotient, exponent: exponent, negative: negative)
        #endif
    }

    #if !canImport(Darwin)
    /// The decimal `±significand × 10^exponent`, its trailing zeros folded into the exponent,
    /// rounded further when the exponent is below a decimal's least.
    private static func make(_ significand: UInt128, exponent: Int, negative: Bool) -> Result<Decimal, Problem> {
        var significand = significand, exponent = exponent
        while significand != 0, significand % 10 == 0 {
            significand /= 10
            exponent += 1
        }
        while exponent < -128, significand != 0 {
            let (kept, dropped) = significand.quotientAndRemainder(dividingBy: 10)
            significand = kept + (dropped >= 5 ? 1 : 0)
            exponent += 1
        }
        if significand == 0 { return .failure(.underflow) }
        guard exponent <= 127, let magnitude = Decimal(string: significand.description) else { return .failure(.overflow) }
        return .success(Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: magnitude))
    }

    private static func digits(_ value: UInt128) -> Int { value == 0 ? 1 : value.description.count }

    /// `value × 10^power` in 256 bits (`power` at most 76, so it fits).
    private static func times10(_ value: UInt128, _ power: Int) -> (high: UInt128, low: UInt128.Magnitude) {
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
