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

    /// Whole seconds since 1970-01-01T00:00:00Z (negative before it).
    public let wholeSeconds: Int64
    /// The fraction of a second after `wholeSeconds`, in 0 ..< 1.
    public let fraction: Double

    /// The instant `wholeSeconds + fraction` seconds after 1970; nil unless the fraction is in 0 ..< 1.
    public init?(wholeSeconds: Int64, fraction: Double) {
        guard fraction >= 0, fraction < 1 else { return nil }
        self.wholeSeconds = wholeSeconds
        self.fraction = fraction
    }

    /// The instant a store's count of seconds names, exactly; nil when the count is not finite or
    /// is beyond what 64-bit whole seconds hold (a damaged cell: years 1 to 9999 are checked by
    /// `ValueLimits`).
    public init?(seconds: Double, since epoch: Epoch) {
        let whole = seconds.rounded(.down)
        guard whole.isFinite, whole >= -9.2e18, whole <= 9.2e18 else { return nil }
        // `seconds - whole` is exact: both are doubles of the same binade or the fraction's bits
        // are the lowest bits of `seconds`.
        let (total, overflow) = Int64(whole).addingReportingOverflow(epoch.offset)
        let fraction = seconds - whole
        // Exact except just below the epoch (-1 < seconds < 0) with bits below 2^-53, where
        // `1 + seconds` rounds: such a count is refused rather than moved.
        guard !overflow, fraction < 1, whole + fraction == seconds else { return nil }
        self.wholeSeconds = total
        self.fraction = fraction
    }

    /// The instant a `Date` names, exactly.
    public init(_ date: Date) {
        // A Date's seconds since 2001 are finite and far inside Int64 for any Date Foundation makes.
        self = Timestamp(seconds: date.timeIntervalSinceReferenceDate, since: .reference) ?? Timestamp(unchecked: 0, 0)
    }

    private init(unchecked whole: Int64, _ fraction: Double) {
        wholeSeconds = whole
        self.fraction = fraction
    }

    /// The instant's seconds counted from `epoch`: exactly the double read from a store that
    /// counts from it, else the nearest double (one rounding).
    public func seconds(since epoch: Epoch) -> Double {
        Double(wholeSeconds - epoch.offset) + fraction
    }

    /// Seconds since 1970, the nearest double.
    public var secondsSince1970: Double { seconds(since: .unix) }

    /// The nearest `Date`.
    public var date: Date { Date(timeIntervalSinceReferenceDate: seconds(since: .reference)) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.wholeSeconds, lhs.fraction) < (rhs.wholeSeconds, rhs.fraction)
    }

    public var description: String { ISO8601.format(self) }
}
