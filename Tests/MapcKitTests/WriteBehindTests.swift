import CMapcSystem
import Foundation
import GRDB
import Testing
@testable import MapcKit

/// A step's temporary file is written behind (`Store+WriteBehind`): SQLite sees the file as if
/// every write were made at once, a write the thread could not make fails the step, and the
/// store migrated is never one with a write missing.
@Suite("Writing a step's file behind")
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

    @Test func whatIsWrittenBehindReadsBackTheSameBeforeAndAfter() throws {
        let folder = try temporaryFolder()
        defer {
            mapc_write_behind_test_hooks(folder.path, -1, 0)
            try? FileManager.default.removeItem(at: folder)
        }
        let path = folder.appendingPathComponent("b.db").path
        let store = try Store.create(at: path, schema: try loadSchema(blobs))
        // A cache of 20 pages: SQLite reads again pages it wrote a moment ago, which the thread,
        // holding its writes back until its queue is half full, has not written yet.
        try store.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = 20") }
        mapc_write_behind_test_hooks(folder.path, -1, 1)
        #expect(store.beginWritingBehind())
        try fill(store, count: 16_000)
        try store.endWritingBehind()
        // Written in line from here on.
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
        let path = folder.appendingPathComponent("b.db").path
        let store = try Store.create(at: path, schema: try loadSchema(blobs))
        try store.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF") }
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
}
