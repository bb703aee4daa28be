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
public enum ISO8601 {
    /// Formats a date in UTC; fractional seconds appear only when the date has them, as
    /// milliseconds or, when needed, microseconds (the precision stores keep).
    public static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        // Never a trap: a date outside the years stores hold is described, not formatted.
        guard ValueLimits.dateRange.contains(seconds) else { return "(\(seconds) seconds from 1970, outside the years 0001-9999)" }
        var whole = seconds.rounded(.down)
        var micros = Int(((seconds - whole) * 1_000_000).rounded())
        if micros >= 1_000_000 { whole += 1; micros -= 1_000_000 }
        let base = Date(timeIntervalSince1970: whole).formatted(
            .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon).timeZone(separator: .omitted))
        guard micros != 0 else { return base }
        let fraction = micros % 1000 == 0 ? String(format: ".%03d", micros / 1000) : String(format: ".%06d", micros)
        // base ends with "Z"; the fraction goes before it.
        return String(base.dropLast()) + fraction + "Z"
    }

    /// Parses `2024-05-01T10:00:00Z`, with optional fractional seconds and any UTC offset,
    /// or a bare date `2024-05-01` (midnight UTC).
    public static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day()) { return date }
        return nil
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
