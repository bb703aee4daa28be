import Foundation
import Testing

/// An app's own index on a model's table was left out of the migrated store without a word,
/// where its triggers and views are said: its fetches then ran slower with nothing to say why.
@Suite("An app's own index on a model table")
struct AppIndexTests {
    @Test(arguments: ["mapc", "core-data"])
    func theRunSaysItIsLeftOut(layout: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Item:\n    attributes: { name: string, rank: int32? }\n    indexes: [[name]]\n"),
            ("v2", "  Item:\n    attributes: { name: string, rank: int32?, note: string? }\n    indexes: [[name]]\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v1","objects":{"Item":[{"id":"i1","name":"a","rank":1}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let (table, column) = layout == "mapc" ? ("Item", "rank") : ("ZITEM", "ZRANK")
        try sqlite(folder, "s.db", "CREATE INDEX MY_APP_IDX ON \(table) (\(column))")
        let status = try CLI.run(["status", "s.db"], in: folder)
        #expect(status.stdout.contains("index MY_APP_IDX"), "\(status.stdout)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("the store has index MY_APP_IDX, which the migrated store, made from the model, does not have"), "\(run.stderr)")
        // The model's own indexes are not said.
        #expect(!run.stderr.contains("index ITEM") && !run.stderr.contains("index Item") && !run.stderr.contains("index ZITEM"), "\(run.stderr)")
        // An index of the model's columns under another name (Core Data names a fetch index its
        // own way) is the model's: the migrated store has one on the same columns.
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "t.db"], in: folder).status == 0)
        try sqlite(folder, "t.db", "CREATE INDEX Z_Item_byName ON \(table) (\(layout == "mapc" ? "name" : "ZNAME")); DROP INDEX IF EXISTS \(layout == "mapc" ? "Item_name" : "ZITEM_ZNAME_INDEX"); CREATE UNIQUE INDEX MY_UNIQUE ON \(table) (\(column))")
        let renamed = try CLI.run(["run", "t.db"], in: folder)
        #expect(renamed.status == 0 && !renamed.stderr.contains("Z_Item_byName") && renamed.stderr.contains("unique index MY_UNIQUE") && renamed.stderr.contains("no longer enforces"), "\(renamed.stderr)")
    }
}

/// A store with a hot journal (a writer stopped mid-transaction, its changed pages in the file,
/// the old ones in `-journal`): SQLite rolls it back as anything opens the store. mapc did so
/// without a word, even for a dry run, and into a store whose mode lets no one write it (as root).
/// It says so now, and leaves a read-only store as it is, saying how to go on.
@Suite("A store left with an unfinished write")
struct HotJournalTests {
    /// Copies `s.db` to `name` with a hot journal: 2,000 committed rows, then an uncommitted
    /// update of them all spilled into the file by a two-page cache.
    static func storeWithHotJournal(_ folder: URL, _ name: String) throws {
        let script = """
        import shutil, sqlite3
        db = sqlite3.connect('s.db', isolation_level=None)
        db.execute('PRAGMA journal_mode=DELETE')
        db.execute('PRAGMA cache_size=2')
        db.execute('BEGIN')
        db.execute("UPDATE Item SET name = 'uncommitted ' || name")
        shutil.copyfile('s.db', '\(name)')
        shutil.copyfile('s.db-journal', '\(name)-journal')
        db.execute('ROLLBACK')
        """
        try folder.write(script, to: "hot.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "hot.py"]
        process.currentDirectoryURL = folder
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name + "-journal").path))
    }

    @Test func theRollbackIsSaidAndARead_onlyStoreKept() throws {
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes: { name: string }\n"), ("v2", "  Item:\n    attributes: { name: string, note: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = (1...2000).map { "{\"id\":\"i\($0)\",\"name\":\"item \($0) \(String(repeating: "x", count: 100))\"}" }.joined(separator: ",")
        try folder.write("{\"version\":\"v1\",\"objects\":{\"Item\":[\(items)]}}", to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "PRAGMA journal_mode=DELETE")
        try Self.storeWithHotJournal(folder, "hot.db")
        let status = try CLI.run(["status", "hot.db"], in: folder)
        #expect(status.status == 0 && status.stderr.contains("note: hot.db had an unfinished write (hot.db-journal"), "\(status.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("hot.db-journal").path))
        let dump = try CLI.run(["dump", "hot.db"], in: folder)
        #expect(dump.status == 0 && !dump.stdout.contains("uncommitted") && dump.stdout.contains("item 2000"), "\(dump.stderr)")
        // A store no one may write: left as it is, as root too.
        try Self.storeWithHotJournal(folder, "locked.db")
        let locked = folder.appendingPathComponent("locked.db").path
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: locked)
        let before = try Data(contentsOf: URL(fileURLWithPath: locked))
        let dry = try CLI.run(["run", "--dry-run", "locked.db"], in: folder)
        #expect(dry.status == 2 && dry.stderr.contains("unfinished write") && dry.stderr.contains("chmod u+w"), "\(dry.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: locked)) == before && FileManager.default.fileExists(atPath: locked + "-journal"))
    }
}
