import GRDB
import GRDBSQLite

/// The current row of a statement that a GRDB cursor is stepping, read column by column through
/// SQLite's C API.
///
/// GRDB's `Row` subscripts are generic (`row[i] as DatabaseValue`, `Int64.fromDatabaseValue`) and
/// not specialised across modules: every value read instantiated generic metadata, 7% of an
/// interpreted migration's samples where it reads its source objects (`perf`,
/// docs/performance.md). Here a key is one `sqlite3_column_int64` and a value one
/// `DatabaseValue(sqliteStatement:index:)`, both public API. Values that are not of the common
/// type go through GRDB's own conversion, so what is accepted and refused is unchanged.
struct StatementColumns {
    private let handle: SQLiteStatement

    /// The columns of `statement`'s current row; valid while its cursor is on that row.
    init(_ statement: Statement) {
        handle = statement.sqliteStatement
    }

    /// The value of a column.
    func value(_ index: Int) -> DatabaseValue {
        DatabaseValue(sqliteStatement: handle, index: CInt(index))
    }

    /// An integer column (a key), or an error naming what was expected (`Row.stored`).
    func integer(_ index: Int, _ what: @autoclosure () -> String) throws -> Int64 {
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
    func text(_ index: Int, _ what: @autoclosure () -> String) throws -> String {
        guard let text = try textIfPresent(index, what()) else { throw Row.unexpected(.null, what()) }
        return text
    }

    /// A text column (an identity), nil for NULL.
    func textIfPresent(_ index: Int, _ what: @autoclosure () -> String) throws -> String? {
        switch sqlite3_column_type(handle, CInt(index)) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, CInt(index)) else { return nil }
            return String(cString: text)
        default: return try decoded(index, what())
        }
    }

    private func decoded<T: DatabaseValueConvertible>(_ index: Int, _ what: String) throws -> T {
        let value = self.value(index)
        guard let decoded = T.fromDatabaseValue(value) else { throw Row.unexpected(value, what) }
        return decoded
    }
}
