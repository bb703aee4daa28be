import Foundation

/// ISO 8601 dates as the data format writes them: UTC, with fractional seconds only when present.
///
/// The calendar is the proleptic Gregorian one, as ISO 8601 and SQLite's date functions count
/// (Foundation's switches to the Julian calendar before 1582-10-15), written out here so that
/// every year from 0001 to 9999 reads and writes back the same. Parsing is strict: a date that
/// does not exist (February 30th, hour 25) or text after it is refused, never rolled over or cut.
///
/// Text and instants convert exactly: the whole seconds are counted in integers, and the
/// fraction is written with as many digits as it takes for the text to read back as the same
/// stored date in a store that counts seconds as the one it came from (`Timestamp`).
package enum ISO8601 {
    /// Formats an instant in UTC. The fraction of a second, when there is one, is written with
    /// the fewest digits (3, 6, then one more at a time) that read back as the same double in
    /// `epoch`'s count of seconds, so a date dumped from a store loads back into a store of its
    /// format bit for bit (`DataFile.dump` gives the store's count); milliseconds and
    /// microseconds, the usual cases, stay as short as that.
    ///
    /// Without an epoch (a date made text by an expression, or shown), the instant's own store is
    /// not known: the digits are the shorter of the two counts' that read back exactly, among the
    /// counts that hold the instant as a double. A Core Data store's `.123` reads back in 2001's
    /// count, where 1970's would need `.12300003`.
    package static func format(_ instant: Timestamp, exactIn epoch: Timestamp.Epoch? = nil) -> String {
        // Never a trap: a date outside the years stores hold is described, not formatted.
        guard ValueLimits.holds(instant) else { return "(\(instant.secondsSince1970) seconds from 1970, outside the years 0001-9999)" }
        let total = instant.wholeSeconds
        let days = total >= 0 ? total / 86_400 : -((-total + 86_399) / 86_400)
        let inDay = total - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // By hand, not String(format:): a dump formats every date it holds (a third of its time went here).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(40)
        func digits(_ value: Int64, _ width: Int) {
            var text = Array(String(value).utf8)
            while text.count < width { text.insert(UInt8(ascii: "0"), at: 0) }
            bytes += text
        }
        digits(year, 4); bytes.append(UInt8(ascii: "-")); digits(month, 2); bytes.append(UInt8(ascii: "-")); digits(day, 2)
        bytes.append(UInt8(ascii: "T")); digits(inDay / 3600, 2); bytes.append(UInt8(ascii: ":")); digits(inDay / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":")); digits(inDay % 60, 2)
        let text = String(decoding: bytes, as: UTF8.self)
        guard instant.fraction != 0 else { return text + "Z" }
        let digits: String
        if let epoch {
            digits = fractionDigits(of: instant, exactIn: epoch)
        } else {
            let holding = [Timestamp.Epoch.unix, .reference].filter { Timestamp(seconds: instant.seconds(since: $0), since: $0) == instant }
            digits = (holding.isEmpty ? [.unix] : holding).map { fractionDigits(of: instant, exactIn: $0) }.min { $0.count < $1.count } ?? ""
        }
        return text + "." + digits + "Z"
    }

    /// Formats a `Date` to the millisecond, always with three digits (the time of a migration,
    /// for its history and its backup's name: entries read and sort alike, `.000` included).
    package static func milliseconds(_ date: Date) -> String {
        let count = (date.timeIntervalSince1970 * 1000).rounded()
        let text = format(Timestamp(seconds: count / 1000, since: .unix) ?? Timestamp(date))
        guard text.hasSuffix("Z"), !text.contains(".") else { return text }
        return text.dropLast() + ".000Z"
    }

    /// The digits after the decimal mark for an instant's fraction (see `format`).
    private static func fractionDigits(of instant: Timestamp, exactIn epoch: Timestamp.Epoch) -> String {
        // Every digit of the fraction, worked out only for an instant a fraction does not hold
        // (just before a second); elsewhere printf rounds the fraction's exact value, the same
        // digits, faster.
        let exact = Timestamp(wholeSeconds: instant.wholeSeconds, fraction: instant.fraction) == instant ? nil : instant.exactFractionDigits
        // Up to 17 significant digits of a count just before a second (0.999998999… is -1.0e-6: its
        // zeros first), and no more.
        for count in [3, 6] + Array(7...40) {
            // Nil: the fraction rounds up to the next second, which these digits cannot say.
            let rounded: String?
            if let exact {
                rounded = DecimalDigits.rounded(exact, to: count)
            } else {
                let text = String(format: "%.*f", count, instant.fraction)
                rounded = text.hasPrefix("0.") ? String(text.dropFirst(2)) : nil
            }
            guard let digits = rounded else { continue }
            if let parsed = Timestamp(second: instant.wholeSeconds, fractionDigits: digits), parsed.seconds(since: epoch) == instant.seconds(since: epoch) {
                return digits
            }
        }
        // The fraction's own digits, in full: exact whatever its size.
        return exact ?? instant.exactFractionDigits
    }

    /// Parses `2024-05-01T10:00:00Z`: a date, `T` (or a space), the time with optional fractional
    /// seconds (after `.` or `,`), and `Z` or an offset (`+02:00`, `-0530`); or a bare date
    /// `2024-05-01` (midnight UTC). Nil for anything else, including a time without a zone
    /// (which UTC offset it meant cannot be guessed), dates that do not exist and dates outside
    /// the years 0001 to 9999.
    package static func parse(_ text: String) -> Timestamp? {
        guard let instant = parseUnbounded(text), ValueLimits.holds(instant) else { return nil }
        return instant
    }

    /// The instant the text names, whether or not stores can hold it (an offset can move
    /// 0001-01-01 into year 0).
    private static func parseUnbounded(_ text: String) -> Timestamp? {
        var reader = Reader(Array(text.utf8))
        guard let year = reader.digits(4), reader.take("-"), let month = reader.digits(2), reader.take("-"), let day = reader.digits(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        let days = Self.days(fromYear: year, month: month, day: day)
        if reader.atEnd { return Timestamp(wholeSeconds: days * 86_400, fraction: 0) }
        guard reader.take("T") || reader.take("t") || reader.take(" "),
              let hour = reader.digits(2), reader.take(":"), let minute = reader.digits(2), reader.take(":"), let second = reader.digits(2),
              hour < 24, minute < 60, second < 60 else { return nil }
        var digits = "0"
        if reader.take(".") || reader.take(",") {
            guard let written = reader.fraction() else { return nil }
            digits = written
        }
        var offset: Int64 = 0
        if reader.take("Z") || reader.take("z") {
        } else if let sign: Int64 = reader.take("+") ? 1 : (reader.take("-") ? -1 : nil) {
            guard let hours = reader.digits(2), hours < 24 else { return nil }
            _ = reader.take(":")
            guard let minutes = reader.digits(2), minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard reader.atEnd else { return nil }
        return Timestamp(second: days * 86_400 + hour * 3600 + minute * 60 + second - offset, fractionDigits: digits)
    }

    /// Why text `parse` refuses is not a date, in words for an error message.
    package static func problem(with text: String) -> String {
        let shown = "'\(text.prefix(60))'"
        if parse(text + "Z") != nil {
            return "\(shown) has no time zone: add Z for UTC, or an offset such as +02:00"
        }
        if parseUnbounded(text) != nil {
            return "\(shown) is outside the years 0001 to 9999 that stores hold (in UTC)"
        }
        if let first = text.firstIndex(of: "-"), text.distance(from: text.startIndex, to: first) > 4, text[..<first].allSatisfy(\.isNumber) {
            return "\(shown) is outside the years 0001 to 9999 that stores hold"
        }
        // A leap second: the time it names, with :59 for :60, parses.
        let time = text.firstIndex { $0 == "T" || $0 == "t" }.map { text[text.index(after: $0)...] } ?? ""
        // (A leap second is the 61st second of a day's last minute: 23:59:60 in UTC.)
        if time.count >= 8, let seconds = time.index(time.startIndex, offsetBy: 5, limitedBy: time.endIndex), time[seconds...].hasPrefix(":60"),
           let before = parse(text.replacingCharacters(in: seconds..<time.index(seconds, offsetBy: 3), with: ":59")),
           ((before.wholeSeconds % 86_400) + 86_400) % 86_400 == 86_399 {
            return "\(shown) is a leap second (:60), which stores do not hold: a date counts seconds without them, as Core Data's and SQLite's do; write the second after (or :59)"
        }
        return "\(shown) is not an ISO 8601 date such as 2024-05-01T10:00:00Z (a date that exists, its time in hours, minutes and seconds, and Z or an offset)"
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of the proleptic Gregorian calendar a number of days from 1970-01-01 falls on.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Reads ASCII digits and marks off the front of the text.
    private struct Reader {
        let bytes: [UInt8]
        var position = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var atEnd: Bool { position == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard position < bytes.count, let ascii = character.asciiValue, bytes[position] == ascii else { return false }
            position += 1
            return true
        }

        /// Exactly `count` digits.
        mutating func digits(_ count: Int) -> Int64? {
            guard position + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[position..<position + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            position += count
            return value
        }

        /// One or more digits after the decimal mark, a fraction of a second's (as many as
        /// `format` writes for the smallest fraction a stored date has, and no more).
        mutating func fraction() -> String? {
            let start = position
            while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
            guard position > start, position - start <= 1100 else { return nil }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }
    }
}
