package import GRDB
internal import GRDBSQLite

/// A prepared statement that writes one row per run (an insert, a link), with its values bound
/// and the statement stepped through SQLite's C API.
///
/// GRDB's `StatementArguments(_:)` is generic over any sequence of values and not specialised
/// across modules: building one per row (a key path instantiated per call, witness calls per
/// value) showed in an interpreted migration's profile (docs/performance.md). Here each
/// `DatabaseValue` binds itself (GRDB's public `bind(to:at:)`), and the statement is run with
/// `sqlite3_step`: only GRDB's public API and SQLite's, so no GRDB release can rebind other
/// values over these. What GRDB's `execute()` adds around a step (observers, authorizer
/// bookkeeping, transaction statements) does not apply to one row's `INSERT` or `UPDATE` inside
/// the transaction the caller holds; a failure is thrown as GRDB's `DatabaseError`, as before.
package struct WriteStatement {
    private let statement: Statement
    private let parameterCount: Int

    /// The statement's SQL, as SQLite keeps it.
    var sql: String { statement.sql }

    package init(_ db: Database, sql: String) throws {
        statement = try db.makeStatement(sql: sql)
        parameterCount = Int(sqlite3_bind_parameter_count(statement.sqliteStatement))
    }

    /// Runs the statement with `values` bound to its parameters in order.
    package func execute(_ values: [DatabaseValue]) throws {
        guard values.count == parameterCount else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(parameterCount) parameters", sql: statement.sql)
        }
        let handle = statement.sqliteStatement
        let outcome = values.withUnsafeBufferPointer { Self.bindAndRun($0, from: 0, depth: 0, handle) }
        if let failure = outcome { throw DatabaseError(resultCode: ResultCode(rawValue: failure.code), message: failure.message, sql: statement.sql) }
    }

    /// The rows the statement's last run changed.
    package var changedRows: Int { Int(sqlite3_changes(sqlite3_db_handle(statement.sqliteStatement))) }

    /// Text and blob values bound without a copy per row, at most; the rest are copied, so that
    /// the nesting below stays shallow whatever the number of columns.
    private static let uncopiedLimit = 32

    /// Binds `values[index...]` and runs the statement; nil when it ran, else SQLite's error.
    ///
    /// Text and blobs are bound without a copy (`SQLITE_STATIC`): each is bound inside the closure
    /// that keeps its bytes where they are (a short string's, or a small `Data`'s, live in a
    /// temporary copy only there), and the statement runs in the innermost one, after which its
    /// bindings are cleared, so SQLite never holds a pointer past its closure. Numbers and NULL
    /// are bound in a loop; each text or blob nests one level, up to `uncopiedLimit` of them
    /// (SQLite copies any beyond): copying every text and blob into SQLite and freeing it again
    /// showed in the profile. Text is bound with its length, so a NUL byte
    /// in it is stored (GRDB's own binding stops there).
    private static func bindAndRun(_ values: UnsafeBufferPointer<DatabaseValue>, from start: Int, depth: Int, _ handle: SQLiteStatement) -> (code: CInt, message: String)? {
        var index = start
        while index < values.count {
            let position = CInt(index + 1)
            let next = index + 1
            switch values[index].storage {
            case .string(var text) where depth < uncopiedLimit:
                return text.withUTF8 { bytes in
                    let code = bytes.withMemoryRebound(to: CChar.self) { characters in
                        // An empty string has no bytes to point at: SQLite copies an empty one.
                        guard let first = characters.baseAddress else { return sqlite3_bind_text(handle, position, "", 0, transient) }
                        return sqlite3_bind_text(handle, position, first, CInt(characters.count), nil)
                    }
                    return code == SQLITE_OK ? bindAndRun(values, from: next, depth: depth + 1, handle) : bindFailure(code, handle)
                }
            case .blob(let data) where depth < uncopiedLimit:
                return data.withUnsafeBytes { bytes in
                    // An empty blob is a blob of no bytes, not NULL.
                    let code = bytes.baseAddress.map { sqlite3_bind_blob(handle, position, $0, CInt(bytes.count), nil) } ?? sqlite3_bind_zeroblob(handle, position, 0)
                    return code == SQLITE_OK ? bindAndRun(values, from: next, depth: depth + 1, handle) : bindFailure(code, handle)
                }
            case .string(var text):
                let code = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        guard let first = characters.baseAddress else { return sqlite3_bind_text(handle, position, "", 0, transient) }
                        return sqlite3_bind_text(handle, position, first, CInt(characters.count), transient)
                    }
                }
                guard code == SQLITE_OK else { return bindFailure(code, handle) }
            default:
                let code = values[index].bind(to: handle, at: position)
                guard code == SQLITE_OK else { return bindFailure(code, handle) }
            }
            index = next
        }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        var failure: (code: CInt, message: String)?
        if code != SQLITE_DONE { failure = error(code, handle) }
        // Every run ends with the statement reset, so the next starts ready.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return failure
    }

    /// SQLite's `SQLITE_TRANSIENT`: it copies the bytes before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// SQLite's extended error and message for a failed run.
    private static func error(_ code: CInt, _ handle: SQLiteStatement) -> (code: CInt, message: String) {
        let connection = sqlite3_db_handle(handle)
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return (extended, message)
    }

    /// A failed binding: the statement is left ready, with nothing bound.
    private static func bindFailure(_ code: CInt, _ handle: SQLiteStatement) -> (code: CInt, message: String)? {
        let failure = error(code, handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return failure
    }
}
