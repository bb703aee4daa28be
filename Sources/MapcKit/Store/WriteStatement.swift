import GRDB
import GRDBSQLite

/// A prepared statement that writes one row per run (an insert, a link), with its values bound
/// and the statement stepped through SQLite's C API.
///
/// GRDB's `StatementArguments(_:)` is generic over any sequence of values and not specialised
/// across modules: building one per row (a key path instantiated per call, witness calls per
/// value) was 8% of an interpreted migration's samples (`perf`, docs/performance.md). Here each
/// `DatabaseValue` binds itself (GRDB's public `bind(to:at:)`), and the statement is run with
/// `sqlite3_step`: only GRDB's public API and SQLite's, so no GRDB release can rebind other
/// values over these. What GRDB's `execute()` adds around a step (observers, authorizer
/// bookkeeping, transaction statements) does not apply to one row's `INSERT` or `UPDATE` inside
/// the transaction the caller holds; a failure is thrown as GRDB's `DatabaseError`, as before.
struct WriteStatement {
    private let statement: Statement
    private let parameterCount: Int

    init(_ db: Database, sql: String) throws {
        statement = try db.makeStatement(sql: sql)
        parameterCount = Int(sqlite3_bind_parameter_count(statement.sqliteStatement))
    }

    /// Runs the statement with `values` bound to its parameters in order.
    func execute(_ values: [DatabaseValue]) throws {
        guard values.count == parameterCount else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(parameterCount) parameters", sql: statement.sql)
        }
        // Every run ends with the statement reset (below, or in `failure`), so it starts ready.
        let handle = statement.sqliteStatement
        // The values are copied into the statement; they are not kept past the run.
        defer { sqlite3_clear_bindings(handle) }
        for (offset, value) in values.enumerated() {
            let code = Self.bind(value, to: handle, at: CInt(offset + 1))
            guard code == SQLITE_OK else { throw failure(code) }
        }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw failure(code) }
        sqlite3_reset(handle)
    }

    /// Binds a value as GRDB's `bind(to:at:)` does, with text bound from the string's own UTF-8
    /// bytes and its length: GRDB's passes the string as a C string, which copied each one into a
    /// new buffer (2% of an interpreted migration's samples). Text with a NUL byte, which this
    /// would store whole where GRDB's stopped at the NUL, never gets here: `ValueLimits` refuses
    /// it in values, and `MigrationManager.write` in identities.
    private static func bind(_ value: DatabaseValue, to handle: SQLiteStatement, at index: CInt) -> CInt {
        guard case .string(var text) = value.storage else { return value.bind(to: handle, at: index) }
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { characters in
                // An empty string has no bytes to point at; SQLite takes a null pointer for NULL.
                guard let start = characters.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, transient) }
                return sqlite3_bind_text(handle, index, start, CInt(characters.count), transient)
            }
        }
    }

    /// SQLite's `SQLITE_TRANSIENT`: it copies the bytes before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private func failure(_ code: CInt) -> DatabaseError {
        let connection = sqlite3_db_handle(statement.sqliteStatement)
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        sqlite3_reset(statement.sqliteStatement)
        return DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: statement.sql)
    }
}
