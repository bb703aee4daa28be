internal import CMapcSystem
import Foundation
internal import GRDBSQLite
import MapcFoundation

/// SQLite's own write lock on a store, held from before a migration's first read until the
/// replacement is prepared, then taken again as the exclusive lock until the migrated file has
/// replaced it: no process (mapc or an app) can commit to the old file meanwhile unseen (a commit
/// in the moment between the two is caught by `PRAGMA data_version`, and nothing is replaced).
/// A connection of its own holds the `BEGIN IMMEDIATE` transaction, which lets readers (the
/// migration itself) in and keeps writers out.
package final class WriterExclusion {
    private var connection: OpaquePointer?
    /// The store as the user named it, for messages.
    private let path: String
    /// The store's real path, whose companion files a refusal names.
    private let realPath: String
    private var startVersion: Int64 = 0
    /// Whether the store was in WAL mode when the exclusion began.
    package private(set) var wasWAL = false

    /// Opens the store at its real path and takes its write lock (waiting up to `Store.busyTimeout`).
    package init(realPath: String, name: String) throws {
        self.path = name
        self.realPath = realPath
        var handle: OpaquePointer?
        guard sqlite3_open_v2(realPath, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw MapcError.store("\(path): cannot open the store to lock it: \(message)")
        }
        connection = handle
        sqlite3_busy_timeout(handle, Int32(Store.busyTimeout * 1000))
        // Closing must not fold a WAL store's log into its file: a dry run, or a run that fails,
        // leaves the store's files as they were. The replacement folds it explicitly.
        _ = mapc_no_checkpoint_on_close(UnsafeMutableRawPointer(handle))
        do {
            wasWAL = try text("PRAGMA journal_mode")?.lowercased() == "wal"
            try execute("BEGIN IMMEDIATE")
            startVersion = try integer("PRAGMA data_version") ?? 0
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Makes the store ready to be renamed over: a WAL store's log is folded into the file and the
    /// file switched to a rollback journal (a new file must never meet an old `-wal`); then the
    /// write lock is taken again, as SQLite's exclusive lock, and checked to have kept everyone out.
    ///
    /// The exclusive lock waits for readers in the middle of a read transaction to finish (an app
    /// reading a rollback-journal store holds a shared lock while it reads), and refuses the store
    /// as in use when one does not: such a reader would go on reading the old, unlinked file.
    package func prepareReplacement() throws {
        try execute("COMMIT")
        do {
            if wasWAL {
                // Leaving WAL mode needs SQLite's exclusive lock before it folds the log in (and
                // then deletes it): with another connection open it fails having touched
                // nothing, where a checkpoint first would have rewritten both files of a store
                // the run then leaves "unchanged".
                let mode = try text("PRAGMA journal_mode = DELETE")
                guard mode?.lowercased() == "delete" else {
                    throw MapcError.storeInUse(Store.inUseMessage(path) + " (its write-ahead log could not be folded in while another connection has it open)")
                }
            }
            try execute("BEGIN EXCLUSIVE")
        } catch let error as MapcError {
            throw error
        } catch {
            throw MapcError.storeInUse(Store.inUseMessage(path))
        }
        let now = try integer("PRAGMA data_version") ?? 0
        if now != startVersion {
            throw MapcError.storeInUse("\(path) was written by another process while it was being migrated; nothing was replaced. Run again when nothing else writes to it")
        }
    }

    /// Puts a WAL store back in WAL mode after `prepareReplacement` when the replacement did not happen.
    package func restoreJournalMode() {
        guard wasWAL, connection != nil else { return }
        _ = try? execute("ROLLBACK")
        _ = try? text("PRAGMA journal_mode = WAL")
    }

    /// Ends the transaction and closes the connection.
    package func close() {
        guard let connection else { return }
        sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
        sqlite3_close_v2(connection)
        self.connection = nil
    }

    // MARK: SQL on the raw connection

    private func failure(_ sql: String, _ code: Int32) -> MapcError {
        if code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED { return MapcError.storeInUse(Store.inUseMessage(path)) }
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        let companions = Store.unwritableCompanions(of: realPath)
        if code & 0xFF == SQLITE_READONLY, !companions.isEmpty {
            return MapcError.store(Store.unwritableCompanionsProblem(path, companions))
        }
        return MapcError.store("\(path): \(sql) failed: \(message)")
    }

    private func execute(_ sql: String) throws {
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(sql, code) }
    }

    private func texts(_ sql: String) throws -> [String] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK else { throw failure(sql, prepared) }
        defer { sqlite3_finalize(statement) }
        var rows: [String] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw failure(sql, step) }
            rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
        }
    }

    private func text(_ sql: String) throws -> String? { try texts(sql).first }

    private func integer(_ sql: String) throws -> Int64? { try text(sql).flatMap { Int64($0) } }
}
