internal import CMapcSystem
internal import GRDB
internal import GRDBSQLite

extension Store {
    /// Whether the write-behind VFS is the default (`mapc_write_behind_install`): installed once,
    /// before the first store file is created, so that every file created after it can be written
    /// behind. Files not asked to go straight through it.
    static let writeBehindInstalled = mapc_write_behind_install() == 1

    /// Starts writing the store's file behind: SQLite's writes are queued (at most 4 MiB) and
    /// made by a thread of the file's own, so that the kernel's copy of each page into its cache
    /// runs on another core than the migration. For a step's temporary file only, between its
    /// creation and `endWritingBehind`. Returns whether it started; when it did not (an in-memory
    /// store, a thread that could not start) the file is written as before.
    @discardableResult
    func beginWritingBehind() -> Bool {
        guard Self.writeBehindInstalled, path != nil else { return false }
        let code = try? database.writeWithoutTransaction { db -> Int32 in
            // Only where every other connection reaches the file through its locks (which wait
            // for the queue): not in WAL mode, whose readers read the file between checkpoints
            // under no lock of the file's, nor with the locks kept (exclusive locking mode).
            let journal = try String.fetchOne(db, sql: "PRAGMA journal_mode")?.lowercased()
            let locking = try String.fetchOne(db, sql: "PRAGMA locking_mode")?.lowercased()
            guard journal != "wal", locking == "normal" else { return SQLITE_MISUSE }
            return sqlite3_file_control(db.sqliteConnection, "main", MAPC_FCNTL_WRITE_BEHIND_BEGIN, nil)
        }
        return code == SQLITE_OK
    }

    /// Waits for every write queued by `beginWritingBehind` and stops; the file is written as
    /// before from then on. Throws the first write the thread could not make (a full disk): the
    /// file is then incomplete, and so is the step.
    func endWritingBehind() throws {
        guard Self.writeBehindInstalled, let path else { return }
        let code = database.writeWithoutTransaction { db in
            sqlite3_file_control(db.sqliteConnection, "main", MAPC_FCNTL_WRITE_BEHIND_END, nil)
        }
        // SQLITE_NOTFOUND: a file that was never written behind.
        guard code != SQLITE_OK, code != SQLITE_NOTFOUND else { return }
        throw Store.storeError(DatabaseError(resultCode: ResultCode(rawValue: code)), path: path, doing: "cannot write the migrated store")
    }
}
