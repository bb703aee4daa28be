import Foundation
import Testing
@testable import MapcModel

/// A date's instant holds every count of seconds either store keeps, exactly: the half second
/// before each store's epoch included, where `1 + seconds` is no double (a stored -0.3 was
/// refused as "outside the years 0001 to 9999", and `CAST(-0.3, "NSDate")` became 1970).
@Suite("Instants held exactly")
struct TimestampTests {
    /// Counts just before an epoch, with bits a fraction from the second before cannot hold.
    static let nearEpoch: [Double] = [-0.3, -0.1, -0.001, -1e-9, -1.0000000000287557e-06, -5e-324, -0.49999999999999994, -0.2, -0.45]

    @Test(arguments: [Timestamp.Epoch.unix, .reference])
    func everyCountBeforeAnEpochIsHeldAndGivenBackBitForBit(epoch: Timestamp.Epoch) throws {
        var random = SystemRandomNumberGenerator()
        let counts = Self.nearEpoch + (0..<2_000).map { _ in -Double.random(in: 0..<1, using: &random) } + (0..<500).map { _ in Double.random(in: -3...3, using: &random) }
        for count in counts {
            let instant = try #require(Timestamp(seconds: count, since: epoch), "\(count)")
            #expect(instant.seconds(since: epoch).bitPattern == count.bitPattern, "\(count)")
            // Its text reads back as the same instant (dump, then load).
            let text = ISO8601.format(instant, exactIn: epoch)
            let read = try #require(ISO8601.parse(text), "\(text)")
            #expect(read.seconds(since: epoch).bitPattern == count.bitPattern, "\(count): \(text)")
            // Ordered as its count is, against its neighbours and whole seconds.
            for other in [count.nextUp, count.nextDown, -1, 0, count - 0.5, count + 0.5] {
                guard let near = Timestamp(seconds: other, since: epoch) else { continue }
                #expect((instant < near) == (count < other) && (near < instant) == (other < count) && (instant == near) == (count == other), "\(count) against \(other)")
            }
        }
    }

    @Test func theFractionAndWholeSecondsAreTheInstantsSecond() throws {
        let instant = try #require(Timestamp(seconds: -0.3, since: .reference))
        #expect(instant.wholeSeconds == 978_307_199)
        #expect(instant.fraction == 0.7)
        #expect(ISO8601.format(instant) == "2000-12-31T23:59:59.700Z")
        #expect(instant.seconds(from: try #require(Timestamp(seconds: 0, since: .reference))) == -0.3)
        // Adding counts from the instant's own second: +0 changes nothing, +0.1 is Foundation's -0.3 + 0.1.
        #expect(instant.adding(0) == instant)
        #expect(instant.adding(0.1)?.seconds(since: .reference) == -0.3 + 0.1)
        #expect(DecimalDigits.rounded("0625", to: 3) == "062" && DecimalDigits.rounded("0635", to: 3) == "064" && DecimalDigits.rounded("99951", to: 3) == nil)
        #expect(DecimalDigits.complement("3") == "7" && DecimalDigits.complement("0010") == "999" && DecimalDigits.complement("000") == nil)
    }
    /// A migration's time in its history had milliseconds only when they were not zero
    /// (`19:13:50Z` beside `19:13:50.393Z`): always three digits now.
    @Test func aMigrationsTimeHasThreeDigitsOfMilliseconds() {
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: 1_700_000_000)) == "2023-11-14T22:13:20.000Z")
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: 1_700_000_000.393)) == "2023-11-14T22:13:20.393Z")
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: 1_700_000_000.9996)) == "2023-11-14T22:13:21.000Z")
    }
    /// The quick test of whether digits are a double exactly (5^n divides them) agrees with the
    /// digits of the double itself.
    @Test func digitsAreExactlyADoubleWhenTheDoublesDigitsAreThem() {
        var random = SystemRandomNumberGenerator()
        var cases = ["5", "25", "125", "0625", "123", "7", "75", "999", "0000001", "5000", "99999999999999999999999999"]
        for _ in 0..<3_000 {
            let fraction = Double.random(in: 0..<1, using: &random)
            let count = Int.random(in: 1...27, using: &random)
            cases.append(String(String(format: "%.*f", count, fraction).dropFirst(2)))
            // A double's own digits (up to 27 of them when it has few bits).
            let short = Double(Int.random(in: 0..<1024, using: &random)) / 1024
            cases.append(DecimalDigits.exact(short))
        }
        for digits in cases where !digits.isEmpty {
            guard let fraction = Double("0." + digits) else { continue }
            let slow = DecimalDigits.exact(fraction) == String(digits.reversed().drop { $0 == "0" }.reversed())
            #expect(DecimalDigits.isExact(fraction, digits) == slow, "\(digits)")
        }
    }
    /// A timestamp made from any 64-bit whole seconds (the public initializer takes them) is
    /// compared and counted without a trap.
    @Test func extremeWholeSecondsNeverTrap() throws {
        let top = try #require(Timestamp(wholeSeconds: .max, fraction: 0.5)), bottom = try #require(Timestamp(wholeSeconds: .min, fraction: 0))
        #expect(bottom < top && !(top < bottom))
        #expect(top.seconds(since: .reference) > 9e18 && bottom.seconds(since: .reference) < -9e18)
        #expect(top.seconds(from: bottom) > 1.8e19)
    }
    /// A review's findings: the seconds between two dates of one store were rounded twice
    /// (-0.4 and 1e-7 from 2001 gave -0.40000009999999997, Core Data's difference is -0.4000001);
    /// text just past a half was rounded to the half by its double (`.50000000000000003`).
    @Test func differencesRoundOnceAndHalvesAreReadOnTheirDigits() throws {
        let a = try #require(Timestamp(seconds: -0.4, since: .reference)), b = try #require(Timestamp(seconds: 1e-7, since: .reference))
        #expect(a.seconds(from: b) == -0.4 - 1e-7)
        let past = try #require(ISO8601.parse("2024-01-01T00:00:00.50000000000000003Z"))
        let half = try #require(ISO8601.parse("2024-01-01T00:00:00.5Z"))
        #expect(half < past)
        #expect(DecimalDigits.isPastHalf("50000000000000003") && !DecimalDigits.isPastHalf("5") && !DecimalDigits.isPastHalf("4999") && DecimalDigits.isPastHalf("6"))
    }
}
