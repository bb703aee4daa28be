import Foundation
import Testing

/// Defects a probe of SQLite-level properties of store files found (valid SQLite, as apps and
/// devices leave it: declared types, text encodings, collations, virtual tables, header fields,
/// names needing quotes, keys at the edges).
@Suite("Defects found by a probe of SQLite-level store properties", .serialized)
struct SQLiteFeaturesProbeDefectTests {
    /// Notes (a sub-entity Memo) and tags, in a store of version q1 (q2 adds an attribute: inferred).
    private func project(layout: String) throws -> URL {
        let notes = "  Note:\n    attributes:\n      title: string\n      flag: {type: bool, optional: true}\n      amount: {type: decimal, optional: true}\n"
            + "    relationships:\n      tags: {destination: Tag, toMany: true, inverse: notes, optional: true}\n"
            + "  Memo:\n    parent: Note\n    attributes:\n      pages: {type: int32, optional: true}\n"
            + "  Tag:\n    attributes:\n      name: string\n    relationships:\n      notes: {destination: Note, toMany: true, inverse: tags, optional: true}\n"
        let folder = try CLI.project(versions: [("q1", notes), ("q2", notes.replacingOccurrences(of: "      title: string\n", with: "      title: string\n      subtitle: {type: string, optional: true}\n"))])
        try folder.write(#"{"version": "q1", "objects": {"Note": [{"id": "n1", "title": "first", "flag": true, "amount": "12.5", "tags": ["t1"]}, {"id": "n2", "title": "second"}], "#
                         + #""Memo": [{"id": "m1", "title": "memo", "pages": 3, "tags": ["t1", "t2"]}], "Tag": [{"id": "t1", "name": "red"}, {"id": "t2", "name": "blue"}]}}"#, to: "data.json")
        let load = try CLI.run(["load", "data.json", "s.db", "--layout", layout], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        return folder
    }

    private func bytes(_ folder: URL, _ name: String = "s.db") throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent(name))
    }

    /// A column declared with another type than the format's (`title STRING`: numeric affinity)
    /// holds an integer where the model keeps a string. `dump` and `run --interpret` refuse it;
    /// the compiled path copied it into the new store's text column, which made it "7" in silence.
    /// Every path now refuses it alike, and the store is left as it was.
    @Test(arguments: ["mapc", "core-data"]) func aColumnOfAnotherAffinityIsNotCopiedInSilence(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (table, column, key) = layout == "mapc" ? ("Note", "title", "_pk") : ("ZNOTE", "ZTITLE", "Z_PK")
        let declared = layout == "mapc" ? "\"title\" TEXT" : "ZTITLE VARCHAR"
        let retyped = layout == "mapc" ? "\"title\" STRING" : "ZTITLE STRING"
        try sqlite(folder, "s.db", "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, '\(declared)', '\(retyped)') WHERE name = '\(table)'")
        #expect(try sqliteOutput(folder, "s.db", "SELECT sql FROM sqlite_master WHERE name = '\(table)'").contains(retyped))
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(column) = '007' WHERE \(key) = (SELECT min(\(key)) FROM \(table))")
        #expect(try sqliteOutput(folder, "s.db", "SELECT typeof(\(column)) FROM \(table) WHERE \(key) = (SELECT min(\(key)) FROM \(table))") == "integer")
        let before = try bytes(folder)
        let interpreted = try CLI.run(["run", "--quiet", "--interpret", "--dry-run", "s.db"], in: folder)
        #expect(interpreted.status != 0 && interpreted.stderr.contains("where the model keeps a string"), "\(interpreted.stderr)")
        let compiled = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(compiled.status == interpreted.status && compiled.stderr.contains("where the model keeps a string"), "\(compiled.stderr)")
        #expect(try bytes(folder) == before)
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// An app's numbers in the file's header (`application_id`, `user_version`) were 0 after a
    /// migration, in place or to `--output`: they are kept, as the store's metadata is.
    @Test(arguments: ["mapc", "core-data"]) func theHeaderFieldsAnAppKeepsAreKept(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "PRAGMA application_id = 1234567; PRAGMA user_version = 42")
        let output = try CLI.run(["run", "--quiet", "s.db", "--output", "out.db"], in: folder)
        #expect(output.status == 0, "\(output.stderr)")
        let inPlace = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(inPlace.status == 0, "\(inPlace.stderr)")
        for store in ["out.db", "s.db"] {
            #expect(try sqliteOutput(folder, store, "PRAGMA application_id") == "1234567", "\(store)")
            #expect(try sqliteOutput(folder, store, "PRAGMA user_version") == "42", "\(store)")
        }
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// A store whose text is UTF-16 (`PRAGMA encoding` before its first table) was refused by
    /// every run but `--interpret` ("attached databases must use the same text encoding"): SQL
    /// reads only a file of the destination's encoding, and the objects are read one by one.
    @Test(arguments: ["UTF-16le", "UTF-16be"]) func aUTF16StoreMigrates(encoding: String) throws {
        let folder = try project(layout: "core-data")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The same store in another encoding: a new file, the store's SQL text (schema and rows) read into it.
        try sqlite(folder, "u.db", "PRAGMA encoding = '\(encoding)';" + (try sqliteOutput(folder, "s.db", ".dump")))
        #expect(try sqliteOutput(folder, "u.db", "PRAGMA encoding") == encoding)
        let dumped = try CLI.run(["dump", "u.db", "--output", "before.json"], in: folder)
        #expect(dumped.status == 0, "\(dumped.stderr)")
        let run = try CLI.run(["run", "--quiet", "u.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let after = try CLI.run(["dump", "u.db", "--output", "after.json"], in: folder)
        #expect(after.status == 0, "\(after.stderr)")
        let before = try String(contentsOf: folder.appendingPathComponent("before.json"), encoding: .utf8)
        let migrated = try String(contentsOf: folder.appendingPathComponent("after.json"), encoding: .utf8)
        // The same objects and values, but the version and the new attribute (nil for every object).
        let normalized = migrated.replacingOccurrences(of: "\n        \"subtitle\": null,", with: "")
        #expect(migrated.contains("\"memo\"") && migrated.contains("\"red\"") && normalized == before.replacingOccurrences(of: "\"q1\"", with: "\"q2\""), "\(migrated)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// An app's empty table or column whose name holds a double quote (`app"cache`) was refused as
    /// one whose rows could not be counted: its name ended the SQL identifier early. It is counted
    /// (empty: left out with a note) and one holding rows is named as such.
    @Test(arguments: ["mapc", "core-data"]) func aNameWithAQuoteIsCounted(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let table = layout == "mapc" ? "Tag" : "ZTAG"
        try sqlite(folder, "s.db", "CREATE TABLE \"app\"\"cache\" (x); ALTER TABLE \(table) ADD COLUMN \"app\"\"col\"")
        let empty = try CLI.run(["run", "--quiet", "s.db", "--output", "out.db"], in: folder)
        #expect(empty.status == 0 && empty.stderr.contains("app\"cache (0 rows)") && empty.stderr.contains("app\"col (0 values)"), "\(empty.stderr)")
        try sqlite(folder, "s.db", "INSERT INTO \"app\"\"cache\" VALUES (1), (2)")
        let held = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(held.status != 0 && held.stderr.contains("app\"cache (2 rows)"), "\(held.stderr)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// An index ordering by a collation the app registered (`COLLATE localized`) made SQLite
    /// refuse every run ("no such collation sequence"), `status` saying nothing wrong. A store is
    /// read with a stand-in (its reading never depends on the order); `load` into it is refused,
    /// naming the index, since rows added without the app's order would be lost to its queries.
    @Test(arguments: ["mapc", "core-data"]) func anIndexOfAnAppsCollationIsRead(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (table, column) = layout == "mapc" ? ("Tag", "name") : ("ZTAG", "ZNAME")
        // Made as the app makes it: Python's sqlite3 registers the collation for the statement.
        let script = "import sqlite3; c = sqlite3.connect('s.db'); c.create_collation('localized', lambda a, b: (a > b) - (a < b)); "
            + "c.execute('CREATE INDEX tag_name_localized ON \(table)(\(column) COLLATE localized)'); c.commit()"
        try python(script, in: folder)
        try folder.write(#"{"version": "q1", "objects": {"Tag": [{"id": "t9", "name": "green"}]}}"#, to: "more.json")
        let before = try bytes(folder)
        let load = try CLI.run(["load", "more.json", "s.db"], in: folder)
        #expect(load.status != 0 && load.stderr.contains("tag_name_localized on \(table) (COLLATE localized)") && load.stderr.contains("into a new store"), "\(load.stderr)")
        #expect(try bytes(folder) == before)
        let run = try CLI.run(["run", "--quiet", "s.db", "--output", "out.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "out.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains("\"blue\"") && dump.stdout.contains("\"memo\""), "\(dump.stderr)")
        #expect(try bytes(folder) == before)
        // Such an index on a table of the app's own, which load never writes, does not refuse it.
        let other = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: other) }
        let appTable = "import sqlite3; c = sqlite3.connect('s.db'); c.create_collation('localized', lambda a, b: (a > b) - (a < b)); "
            + "c.execute('CREATE TABLE appcache (k TEXT)'); c.execute('CREATE INDEX appcache_k ON appcache(k COLLATE localized)'); c.commit()"
        try python(appTable, in: other)
        try other.write(#"{"version": "q1", "objects": {"Tag": [{"id": "t9", "name": "green"}]}}"#, to: "more.json")
        let added = try CLI.run(["load", "more.json", "s.db"], in: other)
        #expect(added.status == 0, "\(added.stderr)")
        // Unless a trigger may write to it when load writes its tables (a second review).
        try sqlite(other, "s.db", "CREATE TRIGGER tag_log AFTER INSERT ON \(table) BEGIN INSERT INTO appcache VALUES ('x'); END")
        try other.write(#"{"version": "q1", "objects": {"Tag": [{"id": "t10", "name": "teal"}]}}"#, to: "again.json")
        let triggered = try CLI.run(["load", "again.json", "s.db"], in: other)
        #expect(triggered.status != 0 && triggered.stderr.contains("appcache_k on appcache (COLLATE localized)"), "\(triggered.stderr)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// Empty full-text and R*Tree tables were reported as holding rows (their shadow tables'
    /// bookkeeping: `search_config (1 row)`) and the run refused; a virtual table whose module
    /// this SQLite lacks failed every command, `status` and `dump` too ("no such module"). A
    /// virtual table is one table, counted through its module, named with it; one that cannot be
    /// counted is taken as holding rows, and left out only when the loss is accepted.
    @Test(arguments: ["mapc", "core-data"]) func virtualTablesAreTablesOfTheirModule(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "CREATE VIRTUAL TABLE search USING fts5(body); CREATE VIRTUAL TABLE geo USING rtree(id, a, b)")
        let empty = try CLI.run(["run", "--quiet", "s.db", "--output", "out.db"], in: folder)
        #expect(empty.status == 0 && empty.stderr.contains("search (a virtual table of module fts5, 0 rows)") && !empty.stderr.contains("search_config"), "\(empty.stderr)")
        // A table of the app's named after the virtual table is no shadow of it: counted, and kept unless accepted.
        try sqlite(folder, "s.db", "CREATE TABLE search_backup (body); INSERT INTO search_backup VALUES ('kept')")
        let named = try CLI.run(["run", "--quiet", "--dry-run", "s.db"], in: folder)
        #expect(named.status != 0 && named.stderr.contains("search_backup (1 row)"), "\(named.stderr)")
        try sqlite(folder, "s.db", "DROP TABLE search_backup")
        // An external content table named as FTS5 names its own: the app's, with the app's rows.
        let external = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: external) }
        try sqlite(external, "s.db", "CREATE TABLE docs_content (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO docs_content (body) VALUES ('precious'), ('more'); "
                   + "CREATE VIRTUAL TABLE docs USING fts5(body, content = '')")
        let content = try CLI.run(["run", "--quiet", "--dry-run", "s.db"], in: external)
        #expect(content.status != 0 && content.stderr.contains("docs_content (2 rows)"), "\(content.stderr)")
        // Options FTS5 reads otherwise than they are written (any prefix of a name, a quoted value,
        // a comment): a table is a shadow by its columns, whatever the options say (a second review).
        try sqlite(external, "s.db", "DROP TABLE docs; DROP TABLE docs_content; CREATE VIRTUAL TABLE s USING fts5(body, /* note */ cont = '', col = '0'); "
                   + "CREATE TABLE s_content (id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE s_docsize (id INTEGER PRIMARY KEY, note TEXT); "
                   + "INSERT INTO s_content (body) VALUES ('precious'); INSERT INTO s_docsize (note) VALUES ('kept')")
        let options = try CLI.run(["run", "--quiet", "--dry-run", "s.db"], in: external)
        #expect(options.status != 0 && options.stderr.contains("s_content (1 row)") && options.stderr.contains("s_docsize (1 row)") && !options.stderr.contains("s_data"), "\(options.stderr)")
        // A module this SQLite does not have (an app's, or an extension's).
        try sqlite(folder, "s.db", "PRAGMA writable_schema = ON; INSERT INTO sqlite_master VALUES ('table', 'spell', 'spell', 0, 'CREATE VIRTUAL TABLE spell USING spellfix1')")
        let before = try bytes(folder)
        let status = try CLI.run(["status", "s.db"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("spell (a virtual table of module spellfix1, whose rows SQLite cannot count (no such module: spellfix1)"), "\(status.stdout)\(status.stderr)")
        #expect(try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder).status == 0)
        let refused = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(refused.status != 0 && refused.stderr.contains("spell (a virtual table of module spellfix1") && refused.stderr.contains("--accept-data-loss"), "\(refused.stderr)")
        #expect(try bytes(folder) == before)
        let accepted = try CLI.run(["run", "--quiet", "--accept-data-loss", "s.db"], in: folder)
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// A key of 0 (valid in SQLite, as another writer may leave it) made an inferred step renumber
    /// the whole table, so that a Core Data object URI the app saved named another object; and a
    /// key of 2^63 - 1 in a table two entities share refused the step ("every key of table Note
    /// is used") though it adds no object. Both keep every key now, as lightweight migration does.
    @Test(arguments: ["mapc", "core-data"]) func keysAtTheEdgesAreKept(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (table, key, title) = layout == "mapc" ? ("Note", "_pk", "title") : ("ZNOTE", "Z_PK", "ZTITLE")
        let keyed = "SELECT group_concat(\(key) || ':' || \(title), ',') FROM (SELECT \(key), \(title) FROM \(table) ORDER BY \(key))"
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(key) = 0 WHERE \(key) = (SELECT min(\(key)) FROM \(table))"
                   + (layout == "mapc" ? "; UPDATE Note_tags SET owner = 0 WHERE owner = 1" : "; UPDATE Z_1TAGS SET Z_1NOTES = 0 WHERE Z_1NOTES = 1"))
        let before = try sqliteOutput(folder, "s.db", keyed)
        #expect(before.hasPrefix("0:first"), "\(before)")
        let zero = try CLI.run(["run", "--quiet", "s.db", "--output", "zero.db"], in: folder)
        #expect(zero.status == 0, "\(zero.stderr)")
        #expect(try sqliteOutput(folder, "zero.db", keyed) == before)
        let dumped = try CLI.run(["dump", "zero.db"], in: folder)
        #expect(dumped.status == 0 && dumped.stdout.contains("\"red\""), "\(dumped.stderr)")
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(key) = 9223372036854775807 WHERE \(key) = (SELECT max(\(key)) FROM \(table))"
                   + (layout == "core-data" ? "; UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'Note'" : ""))
        let highest = try CLI.run(["run", "--quiet", "s.db", "--output", "highest.db"], in: folder)
        #expect(highest.status == 0, "\(highest.stderr)")
        #expect(try sqliteOutput(folder, "highest.db", keyed) == (try sqliteOutput(folder, "s.db", keyed)))
        // The least key there is: related object by object, the batches of a kept range began one
        // key before it (a review found the overflow trapping, exit 132).
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(key) = -9223372036854775808 WHERE \(key) = 0"
                   + (layout == "mapc" ? "; UPDATE Note_tags SET owner = -9223372036854775808 WHERE owner = 0" : "; UPDATE Z_1TAGS SET Z_1NOTES = -9223372036854775808 WHERE Z_1NOTES = 0"))
        for path in [["--interpret"], []] {
            let least = try CLI.run(["run", "--quiet", "s.db", "--output", "least\(path.count).db"] + path, in: folder)
            #expect(least.status == 0, "\(path): \(least.stderr)")
            #expect(try sqliteOutput(folder, "least\(path.count).db", keyed) == (try sqliteOutput(folder, "s.db", keyed)))
        }
        let memo = try CLI.run(["dump", "least1.db"], in: folder)
        #expect(memo.status == 0 && memo.stdout.contains("\"red\""), "\(memo.stderr)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// `load` into a Core Data store with Core Data's derived-attribute triggers failed with
    /// SQLite's "no such function: NSCoreDataDATrigger…", saying neither that a trigger of the
    /// store calls it nor what to do. It says both; the store is left as it was.
    @Test func aTriggerCallingAnAppsFunctionIsSaidAsSuch() throws {
        let folder = try project(layout: "core-data")
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "CREATE TRIGGER ZQ_TAG_COUNT AFTER INSERT ON ZTAG BEGIN SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('ZNOTE', NEW.Z_PK); END")
        try folder.write(#"{"version": "q1", "objects": {"Tag": [{"id": "t9", "name": "green"}]}}"#, to: "more.json")
        let before = try bytes(folder)
        let load = try CLI.run(["load", "more.json", "s.db"], in: folder)
        #expect(load.status != 0 && load.stderr.contains("calls the SQL function NSCoreDataDATriggerInsertUpdatedAffectedObjectValue")
                && load.stderr.contains("Core Data's own") && load.stderr.contains("load them into a new store"), "\(load.stderr)")
        #expect(try bytes(folder) == before)
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// A WAL store its user owns, whose `-wal` and `-shm` another user (root) owns, could be read
    /// (`status`, `dump`) but every run failed with "BEGIN IMMEDIATE failed: attempt to write a
    /// readonly database", naming neither file nor cause, `--output` too. The files are named with
    /// what to do, and `--output`, which only reads the store, migrates it.
    @Test(.enabled(if: CLI.canRunUnprivileged, "needs root and setpriv to run mapc as nobody"))
    func aWALStoreWhoseCompanionsAreAnotherUsersIsSaidAsSuch() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Left in WAL mode with a commit only in its log: the writer ends without closing.
        let script = "import sqlite3, os; c = sqlite3.connect('s.db', isolation_level=None); c.execute('PRAGMA journal_mode = WAL'); "
            + "c.execute(\"UPDATE Tag SET name = 'walled' WHERE _id = 't1'\"); os._exit(0)"
        try python(script, in: folder)
        #expect(folder.exists("s.db-wal") && folder.exists("s.db-shm"))
        chmod(folder.path, 0o777)
        chown(folder.appendingPathComponent("s.db").path, 65534, 65534)
        for companion in ["s.db-wal", "s.db-shm"] { chmod(folder.appendingPathComponent(companion).path, 0o644) }
        let before = try bytes(folder)
        let refused = try CLI.runUnprivileged(["run", "--quiet", "s.db"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("this user cannot write s.db-wal and s.db-shm beside the store") && refused.stderr.contains("--output"), "\(refused.stderr)")
        #expect(try bytes(folder) == before)
        let output = try CLI.runUnprivileged(["run", "--quiet", "s.db", "--output", "out.db"], in: folder)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try sqliteOutput(folder, "out.db", "SELECT name FROM Tag WHERE _id = 't1'") == "walled")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// A store with a hot rollback journal (a writer killed mid-transaction) in a folder its user
    /// cannot write was diagnosed as a WAL store needing its -shm file; it is said as the
    /// unfinished write it is, which SQLite must roll back and delete from the folder.
    @Test(.enabled(if: CLI.canRunUnprivileged, "needs root and setpriv to run mapc as nobody"))
    func aHotJournalInAReadOnlyFolderIsSaidAsSuch() throws {
        let folder = try project(layout: "mapc")
        defer { chmod(folder.path, 0o755); try? FileManager.default.removeItem(at: folder) }
        // Enough rows that pages reach the file before the kill: the journal must be rolled back.
        let script = "import sqlite3, os, signal; c = sqlite3.connect('s.db', isolation_level=None); c.execute('PRAGMA cache_size = 5'); c.execute('BEGIN')\n"
            + "for i in range(3000): c.execute('INSERT INTO Tag VALUES (?, ?, ?, ?)', (None, 'Tag', 'x%d' % i, 'y' * 1000))\n"
            + "os.kill(os.getpid(), signal.SIGKILL)"
        try python(script, in: folder)
        #expect(folder.exists("s.db-journal"))
        for file in ["s.db", "s.db-journal", "s.db.mapc-lock", ""] { chown(folder.appendingPathComponent(file).path, 65534, 65534) }
        chmod(folder.path, 0o555)
        let status = try CLI.runUnprivileged(["status", "s.db"], in: folder)
        #expect(status.status != 0 && status.stderr.contains("has an unfinished write (s.db-journal") && !status.stderr.contains("WAL"), "\(status.stderr)")
        // A journal left empty (TRUNCATE mode) holds nothing to undo: not said to (the review found it was).
        chmod(folder.path, 0o755)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("s.db-journal"))
        FileManager.default.createFile(atPath: folder.appendingPathComponent("s.db-journal").path, contents: Data())
        for file in ["s.db", "s.db-journal"] { chown(folder.appendingPathComponent(file).path, 65534, 65534) }
        chmod(folder.path, 0o555)
        let empty = try CLI.runUnprivileged(["run", "s.db", "--output", "/tmp/mapc-never-\(UUID().uuidString).db"], in: folder)
        #expect(empty.status != 0 && !empty.stderr.contains("unfinished write") && empty.stderr.contains("lock"), "\(empty.stderr)")
    }
}

/// Runs a Python script in a folder, as an app or a device would have touched the store.
func python(_ script: String, in folder: URL) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script]
    process.currentDirectoryURL = folder
    try process.run()
    process.waitUntilExit()
    // A script that failed (an assertion about the bytes it edits) leaves the store as it was (one
    // that kills itself, as an app killed mid-write, is no failure):
    // a test must not go on as if it had changed it.
    if process.terminationReason == .exit, process.terminationStatus != 0 { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "the Python script failed (exit \(process.terminationStatus))"]) }
}

extension SQLiteFeaturesProbeDefectTests {
    /// A Core Data table rebuilt without its PRIMARY KEY, two rows sharing a key: `run` said "3
    /// objects created", kept one and exited 0 (a unique row lost too). Refused, naming the key;
    /// and `load` wrote into stores every other command refuses (a row of an unknown entity).
    @Test func rowsSharingAKeyAreRefusedAndLoadWritesNoDamagedStore() throws {
        let folder = try project(layout: "core-data")
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "CREATE TABLE T AS SELECT * FROM ZTAG; DROP TABLE ZTAG; CREATE TABLE ZTAG (Z_PK INTEGER, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR); "
                   + "INSERT INTO ZTAG SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM T; DROP TABLE T; INSERT INTO ZTAG SELECT Z_PK, Z_ENT, Z_OPT, 'dup' FROM ZTAG WHERE Z_PK = 1")
        let before = try bytes(folder)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("table ZTAG has rows whose key Z_PK is not one whole number of its own: 1 (2 rows)"), "\(run.stderr)")
        try folder.write(#"{"version": "q1", "objects": {"Tag": [{"id": "t9", "name": "green"}]}}"#, to: "more.json")
        let load = try CLI.run(["load", "more.json", "s.db"], in: folder)
        #expect(load.status != 0 && load.stderr.contains("not one whole number of its own"), "\(load.stderr)")
        #expect(try bytes(folder) == before)
        let unknown = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: unknown) }
        try sqlite(unknown, "s.db", "UPDATE Tag SET _entity = 'Ghost' WHERE _id = 't1'")
        try unknown.write(#"{"version": "q1", "objects": {"Tag": [{"id": "t9", "name": "green"}]}}"#, to: "more.json")
        let unread = try bytes(unknown)
        let ghost = try CLI.run(["load", "more.json", "s.db"], in: unknown)
        #expect(ghost.status != 0 && ghost.stderr.contains("of entity Ghost"), "\(ghost.stderr)")
        #expect(try bytes(unknown) == unread)
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// `run --jobs 1000` over a folder of stores crashed in Foundation's process launching (a
    /// hostile-input probe: exit 132/139, 3 GB). The workers are capped at four per core, said.
    @Test func aHugeJobsCountIsCapped() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["b.db", "c.db"] { try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent(name)) }
        let run = try CLI.run(["run", "--quiet", "--jobs", "1000", "s.db", "b.db", "c.db"], in: folder)
        let most = max(4, 4 * ProcessInfo.processInfo.activeProcessorCount)
        #expect(run.status == 0 && run.stderr.contains("note: --jobs 1000 is more than this machine runs usefully at once") && run.stderr.contains("\(most) stores migrate at a time"), "\(run.stderr)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// Escape sequences, bells and carriage returns from a store's name or contents reached the
    /// terminal raw (a hostile probe: a title set, colours, a line overwritten); they are shown as
    /// `<U+001B>`, as bidirectional controls were already. A progress redraw keeps its own.
    @Test func controlCharactersFromFilesAreShownAsWhatTheyAre() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        let hostile = "a\u{1B}]0;owned\u{07}\r.db"
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent(hostile))
        let status = try CLI.run(["status", hostile], in: folder)
        #expect(status.status == 0 && status.stdout.contains("a<U+001B>]0;owned<U+0007><U+000D>.db") && !status.stdout.contains("\u{1B}"), "\(status.stdout)")
        let run = try CLI.run(["run", hostile], in: folder)
        #expect(run.status == 0 && !run.stdout.contains("\u{1B}") && !run.stderr.contains("\u{07}"), "\(run.stdout)\(run.stderr)")
    }
}

extension SQLiteFeaturesProbeDefectTests {
    /// A damaged hash sharing the schema's first twelve characters was shown cut to them on both
    /// sides ("differs (store QavXT3Td1lW/, schema QavXT3Td1lW/)"): such hashes are shown whole.
    @Test func hashesThatLookEqualWhenCutAreShownWhole() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "UPDATE _mapc_entities SET hash = hash || 'x' WHERE name = 'Tag'")
        let status = try CLI.run(["run", "--dry-run", "s.db"], in: folder)
        let hash = try sqliteOutput(folder, "s.db", "SELECT hash FROM _mapc_entities WHERE name = 'Tag'")
        #expect(status.status != 0 && status.stderr.contains("differs (store \(hash), schema \(hash.dropLast()))"), "\(status.stderr)")
    }
}
