import Foundation

/// An instant, exactly: whole seconds from 1970-01-01T00:00:00Z and the fraction of the next
/// second, the value a date attribute holds.
///
/// Stores count a date's seconds as a double, mapc's from 1970 and Core Data's (like Foundation's
/// `Date`) from 2001. A double counted from one instant cannot always name the same instant
/// counted from the other (their steps differ below a microsecond), so a date kept as either
/// double would change when read from one store and written to a store of the same format. Any
/// double of either count splits exactly into a whole number of seconds and a fraction, so a
/// `Timestamp` holds every stored date exactly and gives it back bit for bit to a store of the
/// same format (`seconds(since:)`); only a store of the other format rounds it, to the nearest
/// instant its count holds. Equality, ordering and hashing are the instants'.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The instant a store's count of seconds starts from.
    public enum Epoch: Sendable, Hashable {
        /// 1970-01-01T00:00:00Z: mapc's stores and ISO 8601 arithmetic.
        case unix
        /// 2001-01-01T00:00:00Z: Core Data's stores and Foundation's `Date`.
        case reference

        /// Whole seconds from 1970 to this epoch.
        package var offset: Int64 { self == .unix ? 0 : 978_307_200 }
    }

    /// The instant, exactly: `offset` seconds after `base` seconds from 1970. `offset` is in
    /// 0 ..< 1, or, for an instant in the half second before `base` that a count from the second
    /// before cannot name (a stored -0.3: `1 - 0.3` is no double), between -0.5 and 0. That form is
    /// used only then, so each instant has one form (equality and hashing are the fields').
    private let base: Int64
    private let offset: Double

    /// Whole seconds since 1970-01-01T00:00:00Z (negative before it): the second the instant is in.
    public var wholeSeconds: Int64 { offset < 0 ? base - 1 : base }
    /// The fraction of a second after `wholeSeconds`, in 0 ..< 1: exact, except for an instant a
    /// count from `wholeSeconds` cannot name (just before a second: a store's -0.3 from its
    /// epoch, or text whose digits past a half a fraction does not hold), where it is the
    /// nearest such fraction; `seconds(since:)` is exact there.
    public var fraction: Double { offset < 0 ? min(1 + offset, 1.0.nextDown) : offset }

    /// The instant `wholeSeconds + fraction` seconds after 1970; nil unless the fraction is in 0 ..< 1.
    public init?(wholeSeconds: Int64, fraction: Double) {
        guard fraction >= 0, fraction < 1 else { return nil }
        base = wholeSeconds
        offset = fraction
    }

    /// The instant a store's count of seconds names, exactly; nil when the count is not finite or
    /// is beyond what 64-bit whole seconds hold (a damaged cell: years 1 to 9999 are checked by
    /// `ValueLimits`).
    public init?(seconds: Double, since epoch: Epoch) {
        self.init(seconds: seconds, after: epoch.offset)
    }

    /// The instant `seconds` after `origin` seconds from 1970, exactly.
    private init?(seconds: Double, after origin: Int64) {
        let whole = seconds.rounded(.down)
        guard whole.isFinite, whole >= -9.2e18, whole <= 9.2e18 else { return nil }
        let fraction = seconds - whole
        let (total, overflow) = Int64(whole).addingReportingOverflow(origin)
        guard !overflow else { return nil }
        // `seconds - whole` is exact (both are doubles of the same binade, or the fraction's bits
        // are the lowest bits of `seconds`), except just below the origin (-1 < seconds < 0),
        // where `1 + seconds` can round: such an instant is kept as `seconds` before the origin.
        if fraction < 1, whole + fraction == seconds {
            (base, offset) = (total, fraction)
        } else {
            guard seconds > -0.5, seconds < 0 else { return nil }
            (base, offset) = (origin, seconds)
        }
    }

    /// The instant digits name after the whole second `second` (`0.` + digits of a second): the
    /// nearest one a fraction holds, or, past half a second where a fraction rounds, the nearest
    /// one counted back from the next second (finer there: -0.3 is nearer 0.7 of a second than
    /// the double 0.7 is). The digits `format` writes read back as the instant they came from.
    package init?(second: Int64, fractionDigits digits: String) {
        guard let fraction = Double("0." + digits), digits.allSatisfy(\.isASCII) else { return nil }
        // Past half a second by the digits, not the rounded double (`.50000000000000003` is).
        if DecimalDigits.isPastHalf(digits), !DecimalDigits.isExact(fraction, digits), second < Int64.max {
            guard let before = DecimalDigits.complement(digits), let seconds = Double("-0." + before),
                  let nearest = Timestamp(seconds: seconds, after: second + 1) else { return nil }
            self = nearest
            return
        }
        base = second
        offset = fraction
    }

    /// The decimal digits of the fraction after `wholeSeconds`, every one (no trailing zeros).
    package var exactFractionDigits: String {
        offset < 0 ? (DecimalDigits.complement(DecimalDigits.exact(-offset)) ?? "") : DecimalDigits.exact(offset)
    }

    /// The instant `seconds` after this one: computed from its own second, so that adding 0
    /// changes nothing and a date near its store's epoch is not rounded through another count
    /// (one rounding, to the double nearest the sum); nil outside 64-bit whole seconds.
    package func adding(_ seconds: Double) -> Timestamp? {
        Timestamp(seconds: offset + seconds, after: base)
    }

    /// Seconds from `other` to this instant, the nearest double.
    package func seconds(from other: Timestamp) -> Double {
        // In a count that holds both exactly, one rounding (the difference of its doubles, as a
        // store's app would subtract them); else the nearest of the parts' sum.
        for epoch in [Epoch.reference, .unix] {
            let (a, b) = (seconds(since: epoch), other.seconds(since: epoch))
            if Timestamp(seconds: a, since: epoch) == self, Timestamp(seconds: b, since: epoch) == other { return a - b }
        }
        return Self.difference(base, other.base) + (offset - other.offset)
    }

    /// `a - b` as a double, never trapping (a `Timestamp` made from any 64-bit whole seconds).
    private static func difference(_ a: Int64, _ b: Int64) -> Double {
        let (exact, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? Double(a) - Double(b) : Double(exact)
    }

    /// The instant a `Date` names, exactly.
    public init(_ date: Date) {
        // A Date's seconds since 2001 are finite and far inside Int64 for any Date Foundation makes.
        self = Timestamp(seconds: date.timeIntervalSinceReferenceDate, since: .reference) ?? Timestamp(unchecked: 0, 0)
    }

    private init(unchecked whole: Int64, _ fraction: Double) {
        base = whole
        offset = fraction
    }

    /// The instant's seconds counted from `epoch`: exactly the double read from a store that
    /// counts from it, else the nearest double (one rounding).
    public func seconds(since epoch: Epoch) -> Double {
        Self.difference(base, epoch.offset) + offset
    }

    /// Seconds since 1970, the nearest double.
    public var secondsSince1970: Double { seconds(since: .unix) }

    /// The nearest `Date`.
    public var date: Date { Date(timeIntervalSinceReferenceDate: seconds(since: .reference)) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        if lhs.base == rhs.base { return lhs.offset < rhs.offset }
        // Bases a second apart, one of them in the form before its base: that form is the later
        // of the two exactly when its offset is past the other's fraction less a second (exact:
        // a fraction of a half or more less one is a double).
        if lhs.base < .max, lhs.base + 1 == rhs.base, rhs.offset < 0 { return lhs.offset < 0.5 || lhs.offset - 1 < rhs.offset }
        if rhs.base < .max, rhs.base + 1 == lhs.base, lhs.offset < 0 { return rhs.offset >= 0.5 && lhs.offset < rhs.offset - 1 }
        return lhs.base < rhs.base
    }

    public var description: String { ISO8601.format(self) }
}

/// Decimal digits of fractions, exactly, for `Timestamp`'s text (a double's binary fraction has a
/// finite decimal expansion: at most 1,074 digits).
package enum DecimalDigits {
    /// Every digit after `0.` of `fraction` (in 0 ..< 1), without trailing zeros.
    package static func exact(_ fraction: Double) -> String {
        String(String(format: "%.1074f", fraction).dropFirst(2).reversed().drop { $0 == "0" }.reversed())
    }

    /// Whether `digits` (after `0.`) are exactly `fraction`, the double nearest them.
    package static func isExact(_ fraction: Double, _ digits: String) -> Bool {
        let trimmed = digits.utf8.reversed().drop { $0 == UInt8(ascii: "0") }.reversed()
        // Quickly, for up to 27 digits (every date's text in practice): d / 10^n is a double
        // exactly when 5^n divides d (then it is d / 5^n over 2^n, under 2^53 bits).
        if trimmed.count <= 27 {
            var value: UInt128 = 0, five: UInt128 = 1
            for byte in trimmed {
                guard (48...57).contains(byte) else { return false }
                value = value * 10 + UInt128(byte - 48)
                five *= 5
            }
            return value % five == 0
        }
        return exact(fraction) == String(decoding: Array(trimmed), as: UTF8.self)
    }

    /// Whether `0.digits` is more than a half.
    package static func isPastHalf(_ digits: String) -> Bool {
        guard let first = digits.utf8.first else { return false }
        return first > UInt8(ascii: "5") || (first == UInt8(ascii: "5") && digits.utf8.dropFirst().contains { $0 != UInt8(ascii: "0") })
    }

    /// The digits of `1 - 0.digits`, or nil when `digits` are all zeros (that is 1).
    package static func complement(_ digits: String) -> String? {
        var bytes = Array(digits.utf8)
        while bytes.last == UInt8(ascii: "0") { bytes.removeLast() }
        guard !bytes.isEmpty, bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        // Each digit from 9, the last from 10: 1 - 0.3 is 0.7, 1 - 0.25 is 0.75.
        for index in bytes.indices { bytes[index] = (index == bytes.count - 1 ? 106 : 105) - bytes[index] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `digits` (after `0.`) rounded to `count` digits, half to even; nil when they round up to 1.
    package static func rounded(_ digits: String, to count: Int) -> String? {
        var kept = Array(digits.prefix(count)).compactMap(\.wholeNumberValue)
        kept += Array(repeating: 0, count: count - kept.count)
        let rest = Array(digits.dropFirst(count))
        let first = rest.first?.wholeNumberValue ?? 0
        let beyondHalf = rest.dropFirst().contains { $0 != "0" }
        let up = first > 5 || (first == 5 && (beyondHalf || (kept.last ?? 0) % 2 == 1))
        if up {
            var index = kept.count - 1
            while index >= 0 {
                if kept[index] == 9 { kept[index] = 0; index -= 1 } else { kept[index] += 1; break }
            }
            if index < 0 { return nil }
        }
        return kept.map(String.init).joined()
    }
}
