import Foundation
import Testing
@testable import MapcModel

/// Decimal division to 38 digits, against Python's `decimal` (precision 38, half up): Foundation's
/// on Linux lost digits once the divisor was long (1 / a 38-digit number kept one).
@Suite("Decimal division")
struct DecimalArithmeticTests {
    static let cases: [(String, String, String)] = [
        ("1", "12345678901234567890123456789012345678", "8.1000000729000006633900060368490549359E-38"),
        ("1", "123456789012345678901", "8.1000000729000006634053960363970749259E-21"),
        ("98765432109876543210", "123456789012345678901", "0.80000000729000006633252060356753649193"),
        ("1", "3", "0.33333333333333333333333333333333333333"),
        ("10", "7", "1.4285714285714285714285714285714285714"),
        ("-2", "3", "-0.66666666666666666666666666666666666667"),
        ("1", "4", "0.25"),
        ("0.0001", "0.3", "0.00033333333333333333333333333333333333333"),
        ("12345678901234567.89", "1234567890123456789012345", "9.9999999999999999999000054991000494918E-9"),
        ("1e100", "3e-27", "3.3333333333333333333333333333333333333E+126"),
        ("99999999999999999999999999999999999999", "0.99999999999999999999999999999999999999", "1E+38"),
        ("5", "2", "2.5"),
        ("-7.5", "-2.5", "3"),
        // Quotients near the ends of the range: rounded once at the least exponent, zeros moved
        // back into the significand past the greatest.
        ("1774648607e-67", "-60e64", "-2.9577e-124"),
        ("10e127", "1", "10e127"), ("1e17", "1e-127", "100000000000000000e127"),
        ("-2e126", "-99999999999999999999999999999999999999e-57", "2000000000000000000e127"),
    ]

    @Test(arguments: cases)
    func aQuotientHasEveryDigitItShould(_ dividend: String, _ divisor: String, _ expected: String) throws {
        let x = try #require(Decimal(string: dividend)), y = try #require(Decimal(string: divisor)), want = try #require(Decimal(string: expected))
        let quotient = try DecimalArithmetic.divide(x, y).get()
        #expect(quotient == want, "\(dividend) / \(divisor) = \(quotient), not \(want)")
    }

    @Test func whatCannotBeGivenIsSaid() throws {
        #expect(DecimalArithmetic.divide(1, 0) == .failure(.divisionByZero))
        #expect(DecimalArithmetic.divide(try #require(Decimal(string: "1e-100")), try #require(Decimal(string: "7e30"))) == .failure(.underflow))
        #expect(DecimalArithmetic.divide(try #require(Decimal(string: "1e127")), try #require(Decimal(string: "1e-50"))) == .failure(.overflow))
        #expect(DecimalArithmetic.divide(0, 7) == .success(0))
        #expect(DecimalArithmetic.divide(try #require(Decimal(string: "4.5e-100")), try #require(Decimal(string: "1e29"))) == .failure(.underflow), "0.45e-128 rounds to 0")
    }

    /// Sums against Python's `decimal` (precision 38, half up): Foundation's addition on Linux kept
    /// about 34 digits when the exponents were far apart (520339 + 8.99…e-16 lost its last four).
    static let sums: [(String, String, String)] = [
        ("8995368485651218510584378318e-43", "520339", "520339.00000000000000089953684856512185"),
        ("99999999999999999999999999999999999999", "0.6", "1e38"),
        ("1e30", "1e-7", "1000000000000000000000000000000.0000001"),
        ("1.0000000000000000000000000000000000001", "-1", "1E-37"),
        ("12345678901234567890123456789012345678", "-0.5", "12345678901234567890123456789012345678"),
        ("-5", "5", "0"), ("1", "1e-100", "1"), ("0.1", "0.2", "0.3"), ("1e-128", "-3e-128", "-2E-128"),
        ("-99999999999999999999999999999999999999e90", "-1e127", "-11e127"),
        // A 39-digit significand (a product's) whose 39th digit is 5: a tiny addend decides the rounding by its sign.
        ("123456789012345678901234567890123456785", "-1e-50", "12345678901234567890123456789012345678e1"),
        ("123456789012345678901234567890123456785", "1e-50", "12345678901234567890123456789012345679e1"),
        ("1e-90", "-1e-128", "99999999999999999999999999999999999999e-128"),
    ]

    @Test(arguments: sums)
    func aSumHasEveryDigitItShould(_ left: String, _ right: String, _ expected: String) throws {
        let x = try #require(Decimal(string: left)), y = try #require(Decimal(string: right)), want = try #require(Decimal(string: expected))
        #expect(try DecimalArithmetic.add(x, y).get() == want, "\(left) + \(right)")
        #expect(try DecimalArithmetic.add(y, x).get() == want, "\(right) + \(left)")
    }

    /// Products against Python's `decimal` (precision 38, half up): Foundation's multiplication on
    /// Linux truncated (the square of a 38-digit number ended in 545 where 546 is right) and kept a
    /// 39th digit where it fitted 128 bits (99…99 × 3), which `load` and validation then refused.
    static let products: [(String, String, String)] = [
        ("9.8765432109876543210987654321098765432", "9.8765432109876543210987654321098765432", "97.546105798506325258725803993760097546"),
        ("1.2345678901234567890123456789012345678", "7.7", "9.5061727539506172753950617275395061721"),
        ("99999999999999999999999999999999999999", "4", "4E+38"),
        ("99999999999999999999999999999999999999", "3", "3E+38"),
        ("-12345678901234567890123456789012345678", "0.5", "-6172839450617283945061728394506172839"),
        ("1.5", "-2.5", "-3.75"), ("123456789", "987654321", "121932631112635269"),
        // Exponents adding up below the least (where Foundation traps): rounded once at -128.
        ("1e-64", "1e-64", "1e-128"), ("3e-100", "5e-29", "2e-128"), ("-3e-100", "5e-29", "-2e-128"),
        ("99999999999999999999999999999999999999e89", "1e1", "99999999999999999999999999999999999999e90"),
    ]

    @Test(arguments: products)
    func aProductHasEveryDigitItShould(_ left: String, _ right: String, _ expected: String) throws {
        let x = try #require(Decimal(string: left)), y = try #require(Decimal(string: right)), want = try #require(Decimal(string: expected))
        #expect(try DecimalArithmetic.multiply(x, y).get() == want, "\(left) * \(right)")
        #expect(try DecimalArithmetic.multiply(y, x).get() == want, "\(right) * \(left)")
    }

    @Test func aProductADecimalCannotHoldIsSaid() throws {
        #expect(DecimalArithmetic.multiply(try #require(Decimal(string: "4e-100")), try #require(Decimal(string: "1e-29"))) == .failure(.underflow), "0.4e-128 rounds to 0")
        #expect(DecimalArithmetic.multiply(try #require(Decimal(string: "1e127")), try #require(Decimal(string: "1e38"))) == .failure(.overflow))
        #expect(DecimalArithmetic.multiply(0, try #require(Decimal(string: "1e127"))) == .success(0))
    }
}
