/// The attribute types of a schema, the same set Core Data's model editor offers.
public enum AttributeType: String, Sendable, CaseIterable, Hashable {
    case int16, int32, int64, decimal, double, float, string, bool, date, binary, uuid, uri, transformable

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
