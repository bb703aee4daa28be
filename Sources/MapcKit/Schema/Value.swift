import Foundation

/// One attribute value, typed the way the schema's attribute types are.
///
/// Float attributes hold `.double` values rounded to single precision; transformable
/// attributes hold `.binary` (the transformer's output, which mapc does not interpret).
public enum Value: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case binary(Data)
    case uuid(UUID)
    case uri(String)

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        case .double(let value): return "\(value)"
        case .decimal(let value): return value.description
        case .string(let value): return "\"\(value)\""
        case .date(let value): return ISO8601.format(value)
        case .binary(let value): return "<\(value.count) bytes>"
        case .uuid(let value): return value.uuidString.lowercased()
        case .uri(let value): return value
        }
    }
}

/// ISO 8601 dates as the data format writes them: UTC, with milliseconds only when present.
///
/// The calendar is the proleptic Gregorian one, as ISO 8601 and SQLite's date functions count
/// (Foundation's switches to the Julian calendar before 1582-10-15), written out here so that
/// every year from 0001 to 9999 reads and writes back the same. Parsing is strict: a date that
/// does not exist (February 30th, hour 25) or text after it is refused, never rolled over or cut.
public enum ISO8601 {
    /// Formats a date in UTC; fractional seconds appear only when the date has them, as
    /// milliseconds or, when needed, microseconds (the precision stores keep).
    public static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        // Never a trap: a date outside the years stores hold is described, not formatted.
        guard ValueLimits.dateRange.contains(seconds) else { return "(\(seconds) seconds from 1970, outside the years 0001-9999)" }
        // The shortest of whole seconds, milliseconds and microseconds that reads back as the same
        // number: far from 1970 a double holds no microseconds, and `.001` written as a
        // millisecond must not come back as `.000999`.
        for digits in [0, 3] {
            let text = format(seconds, fractionDigits: digits)
            if parseUnbounded(text) == seconds { return text }
        }
        return format(seconds, fractionDigits: 6)
    }

    /// The date with its seconds rounded to `fractionDigits` digits (trailing zeros of a
    /// microsecond fraction kept to three, none for a whole second).
    private static func format(_ seconds: Double, fractionDigits: Int) -> String {
        let scale = [1, 1_000, 1_000_000][fractionDigits / 3]
        var whole = seconds.rounded(.down)
        var fraction = Int(((seconds - whole) * Double(scale)).rounded())
        if fraction >= scale { whole += 1; fraction -= scale }
        let total = Int64(whole)
        let days = total >= 0 ? total / 86_400 : -((-total + 86_399) / 86_400)
        let inDay = total - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        var text = String(format: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", year, month, day, inDay / 3600, inDay / 60 % 60, inDay % 60)
        if fraction != 0 {
            text += scale == 1_000 || fraction % 1000 == 0 ? String(format: ".%03d", scale == 1_000 ? fraction : fraction / 1000) : String(format: ".%06d", fraction)
        }
        return text + "Z"
    }

    /// Parses `2024-05-01T10:00:00Z`: a date, `T` (or a space), the time with optional fractional
    /// seconds (after `.` or `,`), and `Z` or an offset (`+02:00`, `-0530`); or a bare date
    /// `2024-05-01` (midnight UTC). Nil for anything else, including a time without a zone
    /// (which UTC offset it meant cannot be guessed) and dates that do not exist.
    public static func parse(_ text: String) -> Date? {
        guard let seconds = parseUnbounded(text), ValueLimits.dateRange.contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The seconds since 1970 the text names, whether or not stores can hold them (an offset can
    /// move 0001-01-01 into year 0).
    private static func parseUnbounded(_ text: String) -> Double? {
        var reader = Reader(Array(text.utf8))
        guard let year = reader.digits(4), reader.take("-"), let month = reader.digits(2), reader.take("-"), let day = reader.digits(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        let days = Self.days(fromYear: year, month: month, day: day)
        if reader.atEnd { return Double(days * 86_400) }
        guard reader.take("T") || reader.take("t") || reader.take(" "),
              let hour = reader.digits(2), reader.take(":"), let minute = reader.digits(2), reader.take(":"), let second = reader.digits(2),
              hour < 24, minute < 60, second < 60 else { return nil }
        var fraction = 0.0
        if reader.take(".") || reader.take(",") {
            guard let digits = reader.fraction() else { return nil }
            fraction = digits
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
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    /// Why text `parse` refuses is not a date, in words for an error message.
    public static func problem(with text: String) -> String {
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

        /// One or more digits after the decimal mark, as a fraction of a second.
        mutating func fraction() -> Double? {
            let start = position
            while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
            guard position > start, position - start <= 18 else { return nil }
            return Double("0." + String(decoding: bytes[start..<position], as: UTF8.self))
        }
    }
}

extension Value {
    /// Orders two values of the same numeric or date kind; nil when they cannot be compared.
    /// Integers, doubles and decimals compare with each other by numeric value.
    public static func compare(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): return order(a, b)
        case let (.date(a), .date(b)): return order(a, b)
        case let (.string(a), .string(b)): return order(a, b)
        case let (.decimal(a), .decimal(b)): return order(a, b)
        default:
            guard let a = lhs.doubleValue, let b = rhs.doubleValue else { return nil }
            return order(a, b)
        }
    }

    /// The value as a Double, for numbers.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .decimal(let value): return NSDecimalNumber(decimal: value).doubleValue
        default: return nil
        }
    }
}
