internal import CMapcSystem
package import GRDB
internal import GRDBSQLite

extension Store {
    /// Whether the write-behind VFS is registered (`mapc_write_behind_install`), under its own
    /// name and not as the default: an app's own SQLite connections never go through it, and of
    /// mapc's only a step's temporary file, opened through it by name (`writeBehindPath`).
    static let writeBehindInstalled = mapc_write_behind_install() == 1

    /// The name to open a new file through the write-behind VFS with: a URI naming the VFS, or
    /// nil when it is not registered or this SQLite reads no URI filenames (the file is then
    /// opened by its path and written as usual).
    static func writeBehindPath(_ path: String) -> String? {
        guard writeBehindInstalled, sqlite3_compileoption_used("USE_URI") == 1 else { return nil }
        // In a URI, '%', '?' and '#' would be read as escapes, the query and a fragment.
        var escaped = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "file:\(escaped)?vfs=mapc-write-behind"
    }

    /// Starts writing the store's file behind: SQLite's writes are queued (at most 4 MiB) and
    /// made by a thread of the file's own, so that the kernel's copy of each page into its cache
    /// runs on another core than the migration. For a step's temporary file only, between its
    /// creation and `endWritingBehind`. Returns whether it started; when it did not (an in-memory
    /// store, a thread that could not start) the file is written as before.
    @discardableResult
    package func beginWritingBehind() -> Bool {
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
    package func endWritingBehind() throws {
        guard Self.writeBehindInstalled, let path else { return }
        let code = try database.writeWithoutTransaction { db in
            sqlite3_file_control(db.sqliteConnection, "main", MAPC_FCNTL_WRITE_BEHIND_END, nil)
        }
        // SQLITE_NOTFOUND: a file that was never written behind.
        guard code != SQLITE_OK, code != SQLITE_NOTFOUND else { return }
        throw Store.storeError(DatabaseError(resultCode: ResultCode(rawValue: code)), path: path, doing: "cannot write the migrated store")
    }
}
