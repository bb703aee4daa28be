import GRDB
import GRDBSQLite

/// A prepared statement that writes one row per run (an insert, a link), with its values bound
/// straight to SQLite.
///
/// GRDB's `StatementArguments(_:)` is generic over any sequence of values and not specialised
/// across modules: building one per row (a key path instantiated per call, witness calls per
/// value) was 8% of an interpreted migration's samples (`perf`, docs/performance.md). Here each
/// `DatabaseValue` binds itself (GRDB's own `bind(to:at:)`), and GRDB still runs the statement,
/// so its transaction bookkeeping and error reporting are unchanged.
///
/// The statement is owned by this value: run through GRDB's `execute(arguments:)` elsewhere, it
/// would rebind the arguments GRDB last saw over the ones bound here.
struct WriteStatement {
    private let statement: Statement
    private let parameterCount: Int

    init(_ db: Database, sql: String) throws {
        statement = try db.makeStatement(sql: sql)
        parameterCount = Int(sqlite3_bind_parameter_count(statement.sqliteStatement))
        // GRDB runs a statement without new arguments once it has seen valid ones bound: give it
        // placeholders once, so that `execute()` below keeps the values bound by `execute(_:)`.
        try statement.setArguments(StatementArguments(Array(repeating: DatabaseValue.null, count: parameterCount)))
    }

    /// Runs the statement with `values` bound to its parameters in order.
    func execute(_ values: [DatabaseValue]) throws {
        guard values.count == parameterCount else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "\(values.count) values for \(parameterCount) parameters", sql: statement.sql)
        }
        let handle = statement.sqliteStatement
        // A failed previous run leaves its error for the next reset to return; it was reported then.
        sqlite3_reset(handle)
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: handle, at: CInt(offset + 1))
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errstr(code)), sql: statement.sql)
            }
        }
        try statement.execute()
    }
}
