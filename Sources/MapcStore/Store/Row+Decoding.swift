package import GRDB
import MapcFoundation

extension Row {
    /// The value of a column, decoded without trapping: a store file may hold anything in any
    /// column, and GRDB's non-optional subscripts trap on a value they cannot convert.
    package func stored<T: DatabaseValueConvertible>(_ index: Int, _ what: @autoclosure () -> String) throws -> T {
        let value = self[index] as DatabaseValue
        guard let decoded = T.fromDatabaseValue(value) else { throw Row.unexpected(value, what()) }
        return decoded
    }

    /// The error for a stored value that is not what a column should hold.
    static func unexpected(_ value: DatabaseValue, _ what: String) -> MapcError {
        MapcError.store("the store holds \(StoreValidator.describe(value)) where \(what) was expected; the file is damaged or was not written by mapc")
    }

    /// The value of a column, nil for NULL, decoded without trapping.
    package func storedIfPresent<T: DatabaseValueConvertible>(_ index: Int, _ what: @autoclosure () -> String) throws -> T? {
        if (self[index] as DatabaseValue).isNull { return nil }
        return try stored(index, what())
    }
}
