import MapcFoundation
import MapcModel
extension EvalValue {
    /// The value as JSON: scalars as in data files, objects as `{"entity", "id"}`, collections as arrays.
    package var json: JSONValue { json(dateEpoch: .unix) }

    /// The value as JSON, its dates written to read back exactly in `dateEpoch`'s count (a
    /// store's values as that store's dump writes them).
    package func json(dateEpoch: Timestamp.Epoch) -> JSONValue {
        switch self {
        case .scalar(let value):
            switch value {
            // An infinity a store holds is written as data files write it, not as JSON's null.
            case .double(let number): return number.isFinite ? .double(number) : .string(number > 0 ? "Infinity" : "-Infinity")
            default: return DataFile.json(value, type: .string, dateEpoch: dateEpoch)
            }
        case .object(let ref): return .object([("entity", .string(ref.entity)), ("id", .string(ref.id))])
        case .collection(let items, _): return .array(items.map { $0.json(dateEpoch: dateEpoch) })
        case .handle: return .string("<\(kindName)>")
        }
    }
}
