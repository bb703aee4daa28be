import Foundation
package import GRDB
internal import GRDBSQLite

/// Lets a long SQLite statement (a compiled mapping's `INSERT … SELECT`, a validation scan) notice
/// a cancellation while it runs, not only when it ends: SQLite's progress handler asks every
/// `interval` virtual-machine steps, and the statement stops with `SQLITE_INTERRUPT` when the
/// answer is yes. Counting steps, not time, keeps it deterministic.
package enum StatementCancellation {
    /// How many virtual-machine steps run between two questions (a few tens of microseconds).
    static let interval: Int32 = 10_000

    private final class Probe {
        let isCancelled: () -> Bool
        init(_ isCancelled: @escaping () -> Bool) { self.isCancelled = isCancelled }
    }

    /// Runs `body` with the connection's statements stopping once `isCancelled` says so; a
    /// statement stopped that way throws `DatabaseError` with `SQLITE_INTERRUPT`.
    package static func run<T>(on db: Database, isCancelled: @escaping () -> Bool, _ body: () throws -> T) rethrows -> T {
        let probe = Unmanaged.passRetained(Probe(isCancelled))
        sqlite3_progress_handler(db.sqliteConnection, interval, { context in
            guard let context else { return 0 }
            return Unmanaged<Probe>.fromOpaque(context).takeUnretainedValue().isCancelled() ? 1 : 0
        }, probe.toOpaque())
        defer {
            sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil)
            probe.release()
        }
        return try body()
    }
}
