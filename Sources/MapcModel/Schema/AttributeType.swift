/// The attribute types of a schema, the same set Core Data's model editor offers.
public enum AttributeType: String, Sendable, CaseIterable, Hashable {
    /// A 16-bit integer (Core Data's Integer 16).
    case int16
    /// A 32-bit integer.
    case int32
    /// A 64-bit integer.
    case int64
    /// A decimal number (`NSDecimalNumber`).
    case decimal
    /// A double-precision number.
    case double
    /// A single-precision number.
    case float
    /// Text.
    case string
    /// A boolean.
    case bool
    /// A point in time.
    case date
    /// Bytes (Core Data's Binary Data).
    case binary
    /// A UUID.
    case uuid
    /// A URI.
    case uri
    /// An archived object (Core Data's Transformable), kept as bytes.
    case transformable

    /// Whether values are numbers (integers, decimals, floating point).
    public var isNumeric: Bool {
        switch self {
        case .int16, .int32, .int64, .decimal, .double, .float: return true
        default: return false
        }
    }

    /// Whether values are integers.
    public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }

    /// The inclusive range of an integer type.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .int16: return Int64(Int16.min)...Int64(Int16.max)
        case .int32: return Int64(Int32.min)...Int64(Int32.max)
        case .int64: return Int64.min...Int64.max
        default: return nil
        }
    }
}
