import CMapcSystem
import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// A step's temporary file is written behind (`Store+WriteBehind`): SQLite sees the file as if
/// every write were made at once, a write the thread could not make fails the step, and the
/// store migrated is never one with a write missing.
// Serialized: the test hooks are the process's.
@Suite("Writing a step's file behind", .serialized)
struct WriteBehindTests {
    private let blobs = "model: B\nversion: b1\nentities:\n  Item:\n    attributes:\n      n: int64\n      data: binary\n"

    /// Inserts `count` items of 1 KiB (16 MiB for 16,000: more than the queue holds at once) and
    /// reads them back while some are still queued: by key (pages looked up in the queue), by a
    /// scan, and the file's size.
    private func fill(_ store: Store, count: Int) throws {
        try store.database.write { db in
            for n in 0..<count {
                try db.execute(sql: "INSERT INTO \"Item\" (\"_pk\", \"_entity\", \"_id\", \"n\", \"data\") VALUES (?, 'Item', ?, ?, ?)",
                               arguments: [n + 1, "i\(n)", n, Data(repeating: UInt8(n % 251), count: 1024)])
                if n % 997 == 0 {
                    #expect(try Int.fetchOne(db, sql: "SELECT n FROM \"Item\" WHERE \"_pk\" = ?", arguments: [n / 2 + 1]) == n / 2)
                }
            }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \"Item\"") == count)
            #expect(try Int.fetchOne(db, sql: "SELECT sum(length(data)) FROM \"Item\"") == count * 1024)
        }
    }

    /// A new store file in the folder, built as a step builds its file (no journal, no syncs),
    /// with a page cache of `cachePages` when given.
    private func storeToWriteBehind(in folder: URL, cachePages: Int? = nil) throws -> (store: Store, path: String) {
        let path = folder.appendingPathComponent("b.db").path
        let store = try Store.create(at: path, schema: try loadSchema(blobs), format: .mapc, carrying: nil, writingBehind: true)
        try store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            if let cachePages { try db.execute(sql: "PRAGMA cache_size = \(cachePages)") }
        }
        return (store, path)
    }

    /// The file's size as SQLite asks its VFS for it (`xFileSize`).
    private func sizeSQLiteSees(_ db: Database) -> Int64? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let fileSize = file.pointee.pMethods?.pointee.xFileSize else { return nil }
        var size: sqlite3_int64 = 0
        return fileSize(file, &size) == SQLITE_OK ? size : nil
    }

    /// The write-behind VFS is never the process's default: an app's own connections, and a store
    /// created through the public API, go straight to SQLite's own VFS.
    @Test func onlyAStepsTemporaryFileIsWrittenBehind() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (behind, _) = try storeToWriteBehind(in: folder)
        #expect(behind.beginWritingBehind())
        try behind.endWritingBehind()
        let name = sqlite3_vfs_find(nil).map { String(cString: $0.pointee.zName) }
        #expect(name != nil && name != "mapc-write-behind", "the default VFS is \(name ?? "none")")
        let plain = try Store.create(at: folder.appendingPathComponent("plain.db").path, schema: try loadSchema(blobs))
        #expect(!plain.beginWritingBehind(), "a store of the public API is not written behind")
        let app = try DatabaseQueue(path: folder.appendingPathComponent("app.db").path)
        let vfs = try app.read { db -> String? in
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
            var name: UnsafeMutablePointer<CChar>?
            guard sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_VFSNAME, &name) == SQLITE_OK, let name else { return nil }
            defer { sqlite3_free(name) }
            return String(cString: name)
        }
        try app.close()
        #expect(vfs != nil && vfs?.contains("mapc-write-behind") == false, "an app's connection goes through \(vfs ?? "?")")
    }

    @Test(arguments: [1, 2])
    func whatIsWrittenBehindReadsBackTheSameBeforeAndAfter(holding: Int32) throws {
        let folder = try temporaryFolder()
        defer {
            mapc_write_behind_test_hooks(folder.path, -1, 0)
            try? FileManager.default.removeItem(at: folder)
        }
        // A cache of 20 pages: SQLite reads again pages it wrote a moment ago, which the thread,
        // holding its writes back until its queue is half full, has not written yet.
        let (store, path) = try storeToWriteBehind(in: folder, cachePages: 20)
        mapc_write_behind_test_hooks(folder.path, -1, holding)
        #expect(store.beginWritingBehind())
        try fill(store, count: 16_000)
        // While pages past the end of the file are queued, the size counts them.
        try store.database.write { db in
            for n in 16_000..<17_000 {
                try db.execute(sql: "INSERT INTO \"Item\" (\"_pk\", \"_entity\", \"_id\", \"n\", \"data\") VALUES (?, 'Item', ?, ?, zeroblob(1024))", arguments: [n + 1, "i\(n)", n])
            }
            let onDisk = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).int64Value
            #expect(try #require(sizeSQLiteSees(db)) > onDisk, "holding \(holding)")
            try db.execute(sql: "DELETE FROM \"Item\" WHERE n >= 16000")
        }
        // Another connection that locks the file after a commit reads what was committed.
        let other = try DatabaseQueue(path: path)
        #expect(try other.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \"Item\"") } == 16_000)
        try other.close()
        #expect(mapc_write_behind_test_hooks(folder.path, -1, holding) > 0, "some pages were read from the queue")
        try store.endWritingBehind()
        // Written behind again, then closed without ending: the close writes the queue out.
        #expect(store.beginWritingBehind())
        try store.database.write { try $0.execute(sql: "UPDATE \"Item\" SET data = data WHERE n % 2 = 0") }
        // Still written behind, and closed without an end: the close writes the queue out.
        try store.database.write { try $0.execute(sql: "UPDATE \"Item\" SET n = n + 1 WHERE \"_pk\" = 1") }
        try store.database.close()
        let reopened = try DatabaseQueue(path: path)
        try reopened.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \"Item\"") == 16_000)
            #expect(try Int.fetchOne(db, sql: "SELECT sum(n) FROM \"Item\"") == (0..<16_000).reduce(0, +) + 1)
            let rows = try Row.fetchAll(db, sql: "SELECT n, data FROM \"Item\" ORDER BY \"_pk\"")
            #expect(rows.enumerated().allSatisfy { index, row in
                let n: Int? = row[0]
                let data: Data? = row[1]
                return n == index + (index == 0 ? 1 : 0) && data == Data(repeating: UInt8(index % 251), count: 1024)
            })
        }
        try reopened.close()
    }

    /// A write the thread could not make (the test hook: a full disk) fails the file's next use or
    /// its end: never a store that silently lacks it.
    @Test func aWriteTheThreadCouldNotMakeFailsTheFile() throws {
        let folder = try temporaryFolder()
        defer {
            mapc_write_behind_test_hooks(folder.path, -1, 0)
            try? FileManager.default.removeItem(at: folder)
        }
        let (store, _) = try storeToWriteBehind(in: folder)
        #expect(store.beginWritingBehind())
        mapc_write_behind_test_hooks(folder.path, 100, 0)
        var failure: (any Error)?
        do {
            try fill(store, count: 4_000)
            try store.endWritingBehind()
        } catch {
            failure = error
        }
        let message = "\(failure.map { "\($0)" } ?? "no failure")"
        #expect(message.contains("full"), "\(message)")
        // Failed for good: the file lacks a write, whatever comes next.
        #expect(throws: (any Error).self) { try store.database.write { try $0.execute(sql: "DELETE FROM \"Item\"") } }
        #expect(throws: (any Error).self) { try store.endWritingBehind() }
    }

    /// The whole run: a step whose file could not be written leaves the store as it was, and
    /// no temporary file behind; the next run migrates it.
    @Test func aStepWhoseFileCouldNotBeWrittenLeavesTheStoreAsItWas() throws {
        let folder = try temporaryFolder()
        defer {
            mapc_write_behind_test_hooks(folder.path, -1, 0)
            try? FileManager.default.removeItem(at: folder)
        }
        let path = folder.appendingPathComponent("notes.db").path
        let source = try Store.create(at: path, schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(3_000, images: { $0 % 2 == 0 }, image: Data(repeating: 7, count: 2_000)))
        try source.database.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let migrator = try Migrator(schemasFolder: packageRoot.appendingPathComponent("schemas"), mappingsFolder: packageRoot.appendingPathComponent("mappings"))
        let url = URL(fileURLWithPath: path)
        mapc_write_behind_test_hooks(folder.path, 200, 0)
        let error = #expect(throws: (any Error).self) { try migrator.migrate(storeAt: url, to: "v3") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("full"), "\(error.map { "\($0)" } ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store is untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") || $0.contains("-journal") }.isEmpty)
        mapc_write_behind_test_hooks(folder.path, -1, 0)
        let outcome = try migrator.migrate(storeAt: url, to: "v3")
        #expect(outcome.steps.count == 1)
        let migrated = try Store.open(at: path, schema: try uncloudNotes("v3"))
        #expect(try migrated.count(of: "Note", exactly: true) == 3_000)
        #expect(try migrated.count(of: "Attachment", exactly: true) == 1_500)
    }

    /// A full disk met while a custom policy runs is the disk's failure, said as such (exit 2),
    /// never the policy's (exit 3), wherever in the step it comes.
    @Test func aFullDiskWhileAPolicyRunsIsReportedAsAFullDisk() throws {
        let folder = try temporaryFolder()
        defer {
            mapc_write_behind_test_hooks(folder.path, -1, 0)
            try? FileManager.default.removeItem(at: folder)
        }
        let path = folder.appendingPathComponent("notes.db").path
        let source = try Store.create(at: path, schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(2_000, images: { _ in true }, image: Data(repeating: 7, count: 3_000)))
        try source.database.close()
        let policies = PolicyRegistry()
        registerUnCloudNotesPolicies(in: policies)
        let migrator = try Migrator(schemasFolder: packageRoot.appendingPathComponent("schemas"), mappingsFolder: packageRoot.appendingPathComponent("mappings"), policies: policies)
        let url = URL(fileURLWithPath: path)
        _ = try migrator.migrate(storeAt: url, to: "v3")
        let before = try Data(contentsOf: url)
        var failures = 0
        for failingAfter in [0, 3, 10, 40, 150, 400, 900] {
            mapc_write_behind_test_hooks(folder.path, failingAfter, 0)
            defer { mapc_write_behind_test_hooks(folder.path, -1, 0) }
            do {
                _ = try migrator.migrate(storeAt: url, to: "v4")
                Issue.record("failing after \(failingAfter) writes: the migration did not fail")
            } catch {
                failures += 1
                if case MigrationError.policyFailed = error { Issue.record("failing after \(failingAfter) writes: reported as the policy's failure: \(error)") }
                let said = (MapcError(sqlite: error) ?? error).localizedDescription + "\(MapcError(sqlite: error).map { "\($0)" } ?? "\(error)")"
                #expect(said.contains("full") || said.contains("rolled back"), "failing after \(failingAfter) writes: \(said)")
            }
            #expect(try Data(contentsOf: url) == before, "the store is untouched")
        }
        #expect(failures == 7)
    }
}
