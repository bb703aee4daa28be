package import GRDB
internal import GRDBSQLite
import MapcFoundation
import MapcModel

/// The current row of a statement that a GRDB cursor is stepping, read column by column through
/// SQLite's C API.
///
/// GRDB's `Row` subscripts are generic (`row[i] as DatabaseValue`, `Int64.fromDatabaseValue`) and
/// not specialised across modules: every value read instantiated generic metadata (a measured
/// share of an interpreted migration's time: docs/performance.md). Here a key is one `sqlite3_column_int64` and a value one
/// `DatabaseValue(sqliteStatement:index:)`, both public API. Values that are not of the common
/// type go through GRDB's own conversion, so what is accepted and refused is unchanged.
package struct StatementColumns {
    private let handle: SQLiteStatement

    /// The columns of `statement`'s current row; valid while its cursor is on that row.
    package init(_ statement: Statement) {
        handle = statement.sqliteStatement
    }

    /// The value of a column.
    package func value(_ index: Int) -> DatabaseValue {
        DatabaseValue(sqliteStatement: handle, index: CInt(index))
    }

    /// An attribute's value, decoded by the store's format. Text is read whole, with its length
    /// (GRDB's `DatabaseValue` reads it as a C string, which ends at a NUL byte and replaces bytes
    /// that are not UTF-8): text that is UTF-8 is decoded as the format says, and text that is not
    /// is kept as its bytes (`Value.nonUTF8Text`) where the format stores text, and refused
    /// elsewhere (no number, date or UUID is spelled with such bytes).
    func attributeValue(_ index: Int, as type: AttributeType, _ strategy: any StoreFormatStrategy) throws -> Value {
        let column = CInt(index)
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT else { return try strategy.decode(value(index), as: type) }
        // `sqlite3_column_text` before `sqlite3_column_bytes`, as SQLite asks.
        let start = sqlite3_column_text(handle, column)
        let bytes = UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column)))
        switch Value.text(fromStored: bytes) {
        case .string(let text): return try strategy.decode(text.databaseValue, as: type)
        case let other:
            guard strategy.storesText(type) else {
                throw MapcError.store("stored value \(other) cannot be read as \(type.rawValue); the store does not match its model")
            }
            return other
        }
    }

    /// An integer column (a key), or an error naming what was expected (`Row.stored`).
    package func integer(_ index: Int, _ what: @autoclosure () -> String) throws -> Int64 {
        if sqlite3_column_type(handle, CInt(index)) == SQLITE_INTEGER { return sqlite3_column_int64(handle, CInt(index)) }
        return try decoded(index, what())
    }

    /// An integer column, nil for NULL.
    func integerIfPresent(_ index: Int, _ what: @autoclosure () -> String) throws -> Int64? {
        switch sqlite3_column_type(handle, CInt(index)) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return sqlite3_column_int64(handle, CInt(index))
        default: return try decoded(index, what())
        }
    }

    /// A text column (a name), or an error naming what was expected.
    package func text(_ index: Int, _ what: @autoclosure () -> String) throws -> String {
        guard let text = try textIfPresent(index, what()) else { throw Row.unexpected(.null, what()) }
        return text
    }

    /// A text column (an identity), nil for NULL. Read whole and refused unless it is UTF-8
    /// without a NUL byte (what an identity may hold): repaired or cut short, it would name
    /// another object.
    package func textIfPresent(_ index: Int, _ what: @autoclosure () -> String) throws -> String? {
        let column = CInt(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT:
            let start = sqlite3_column_text(handle, column)
            let bytes = UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column)))
            guard case .string(let text) = Value.text(fromStored: bytes), !ValueLimits.containsNUL(text) else {
                throw MapcError.store("\(what()) is \(Value.text(fromStored: bytes).description.replacingOccurrences(of: "\u{0}", with: "\\u0000")), which is not text an identity can hold (UTF-8 without NUL bytes); the store is damaged")
            }
            return text
        default: return try decoded(index, what())
        }
    }

    private func decoded<T: DatabaseValueConvertible>(_ index: Int, _ what: String) throws -> T {
        let value = self.value(index)
        guard let decoded = T.fromDatabaseValue(value) else { throw Row.unexpected(value, what) }
        return decoded
    }
}
