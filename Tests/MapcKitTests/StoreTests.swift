import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

@Suite("Store files")
struct StoreTests {
    private func note(_ id: String) -> ObjectData {
        ObjectData(id: id, entity: "Note", attributes: ["title": .string("t \(id)"), "body": .string("b"), "dateCreated": .date(Date(timeIntervalSince1970: 1_700_000_000))])
    }

    @Test func metadataRecordsModelVersionAndHashes() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try uncloudNotes("v3")
        let path = folder.appendingPathComponent("s.db").path
        _ = try Store.create(at: path, schema: schema)
        let (format, metadata) = try Store.metadata(at: path)
        #expect(format.identifier == "mapc-1")
        #expect(metadata.model == "UnCloudNotes")
        #expect(metadata.version == "v3")
        #expect(metadata.modelHash == VersionHash.modelHash(of: schema))
        #expect(metadata.entityHashes == VersionHash.entityHashes(of: schema))
        #expect(metadata.format == "mapc-1")
    }

    @Test func openingWithAnotherVersionIsRefusedWithTheDifference() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        _ = try Store.create(at: path, schema: try uncloudNotes("v2"))
        let error = #expect(throws: MapcError.self) { try Store.open(at: path, schema: try uncloudNotes("v3")) }
        let message = error?.description ?? ""
        #expect(message.contains("was written by version v2 and does not match version v3"))
        #expect(message.contains("entity 'Attachment' is in version v3 but not in the store"))
        #expect(message.contains("entity 'Note' differs"))
    }

    @Test func theCatalogFindsAStoresVersionByHash() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        _ = try Store.create(at: path, schema: try uncloudNotes("v2"))
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        #expect(catalog.schemas.map(\.version) == ["v1", "v2", "v3", "v4"])
        #expect(try Store.open(at: path, catalog: catalog).schema.version == "v2")
    }

    @Test func aNonStoreIsRefusedClearly() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = folder.appendingPathComponent("notes.txt").path
        try Data("hello, not sqlite".utf8).write(to: URL(fileURLWithPath: text))
        let notDatabase = #expect(throws: MapcError.self) { try Store.metadata(at: text) }
        #expect(notDatabase?.description.contains("notes.txt is not a SQLite store, or is damaged") == true, "\(String(describing: notDatabase))")
        let plain = folder.appendingPathComponent("plain.db").path
        try DatabaseQueue(path: plain).write { try $0.execute(sql: "CREATE TABLE t (x)") }
        let notMapc = #expect(throws: MapcError.self) { try Store.metadata(at: plain) }
        #expect(notMapc?.description.contains("not a store mapc knows: it has neither mapc's metadata") == true, "\(String(describing: notMapc))")
        let missing = #expect(throws: MapcError.self) { try Store.metadata(at: folder.appendingPathComponent("none.db").path) }
        #expect(missing?.description.contains("no such store") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("none.db").path), "opening must not create files")
    }

    @Test func createRefusesToOverwrite() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        let store = try Store.create(at: path, schema: try uncloudNotes("v1"))
        try store.insert([note("n1")])
        #expect(throws: MapcError.self) { try Store.create(at: path, schema: try uncloudNotes("v1")) }
        #expect(try Store.open(at: path, schema: try uncloudNotes("v1")).count(of: "Note") == 1)
    }

    @Test func walStoresAreReadWithTheirUncheckpointedPages() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try uncloudNotes("v1")
        let path = folder.appendingPathComponent("app.db").path
        let writer = try Store.create(at: path, schema: schema)
        _ = try writer.database.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode=WAL") }
        try writer.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint=0") }
        try writer.insert((1...50).map { note("n\($0)") })
        // Copy the three files while the writer still holds them, as a backup of a live app container would.
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber
        #expect((wal?.intValue ?? 0) > 0, "the objects must still be in the -wal file for this test to mean anything")
        let copy = folder.appendingPathComponent("copy.db").path
        for suffix in ["", "-wal", "-shm"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix) }
        let reader = try Store.open(at: copy, schema: schema, readOnly: true)
        #expect(try reader.count(of: "Note") == 50)
        #expect(try reader.objects(of: "Note").last?.attributes["title"] == .string("t n50"))
        try writer.database.close()
    }

    @Test func layoutDependsOnlyOnHashedContent() throws {
        let a = try loadSchema("model: M\nversion: v1\nentities:\n  B:\n    attributes:\n      y: string\n      x: int64\n  A:\n    attributes:\n      z: string\n")
        let b = try loadSchema("model: M\nversion: v2\nentities:\n  A:\n    attributes:\n      z: string\n  B:\n    attributes:\n      x: int64\n      y: string\n")
        let left = MapcFormat().layout(for: a), right = MapcFormat().layout(for: b)
        #expect(left.tables.map(\.name) == right.tables.map(\.name))
        #expect(left.tables.map { $0.columns.map(\.name) } == right.tables.map { $0.columns.map(\.name) })
    }

    @Test func siblingPropertiesWithOneNameGetTheirOwnColumns() throws {
        let schema = try loadSchema("model: M\nversion: v1\nentities:\n  Base: {}\n  Left:\n    parent: Base\n    attributes:\n      size: int64\n  Right:\n    parent: Base\n    attributes:\n      size: string\n")
        let layout = MapcFormat().layout(for: schema)
        #expect(layout.entities["Left"]?.attributeColumns["size"] == "size")
        #expect(layout.entities["Right"]?.attributeColumns["size"] == "size_Right")
        let store = try Store.inMemory(schema: schema)
        try store.insert([ObjectData(id: "l", entity: "Left", attributes: ["size": .integer(3)]), ObjectData(id: "r", entity: "Right", attributes: ["size": .string("XL")])])
        #expect(try store.objects(of: "Base").map { $0.attributes["size"] } == [.integer(3), .string("XL")])
    }

    @Test func hostileNamesAreQuotedNotInjected() throws {
        // Names are identifiers, but SQL keywords are identifiers too: every name must be quoted.
        let schema = try loadSchema("model: M\nversion: v1\nentities:\n  Select:\n    attributes:\n      from: string\n      where: int64?\n      order: string?\n")
        let store = try Store.inMemory(schema: schema)
        try store.insert([ObjectData(id: "x'); DROP TABLE \"Select\"; --", entity: "Select", attributes: ["from": .string("a'b\"c")])])
        let objects = try store.objects(of: "Select")
        #expect(objects.first?.id == "x'); DROP TABLE \"Select\"; --")
        #expect(objects.first?.attributes["from"] == .string("a'b\"c"))
    }

    /// A store whose metadata matches a version but which lacks a table of it (dropped, or damaged)
    /// is refused at once, naming the table and the entity, not with SQLite's "no such table"
    /// from whichever read comes first.
    @Test(arguments: TestLayout.allCases)
    func aStoreMissingATableIsRefusedNamingIt(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        let store = try Store.create(at: path, schema: try uncloudNotes("v3"), format: layout.format)
        let table = try store.layout.storage(of: "Attachment").table
        try store.database.write { try $0.execute(sql: "DROP TABLE \(table.quotedDatabaseIdentifier)") }
        try store.database.close()
        let error = #expect(throws: MapcError.self) { try Store.open(at: path, schema: try uncloudNotes("v3")) }
        #expect(error?.description.contains("has no table \(table), where entity 'Attachment' of version v3 keeps its objects") == true, "\(String(describing: error))")
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let viaCatalog = #expect(throws: MapcError.self) { try Store.open(at: path, catalog: catalog, readOnly: true) }
        #expect(viaCatalog?.description.contains("has no table \(table)") == true, "\(String(describing: viaCatalog))")
    }

    /// The same for a column (`ALTER TABLE … DROP COLUMN`): named with the attribute it keeps,
    /// at open, so `status` reports it too, rather than "no such column" from the first read.
    @Test(arguments: TestLayout.allCases)
    func aStoreMissingAColumnIsRefusedNamingIt(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        let store = try Store.create(at: path, schema: try uncloudNotes("v3"), format: layout.format)
        let storage = try store.layout.storage(of: "Note")
        let column = try #require(storage.attributeColumns["body"])
        try store.database.write { try $0.execute(sql: "ALTER TABLE \(storage.table.quotedDatabaseIdentifier) DROP COLUMN \(column.quotedDatabaseIdentifier)") }
        try store.database.close()
        let error = #expect(throws: MapcError.self) { try Store.open(at: path, schema: try uncloudNotes("v3")) }
        #expect(error?.description.contains("has no column \(column) in table \(storage.table), where attribute 'body' of entity 'Note' of version v3 is kept") == true, "\(String(describing: error))")
        // A column mapc only writes (Core Data's Z_OPT) is not required of a store it reads.
        guard layout == .coreData else { return }
        let other = try Store.create(at: folder.appendingPathComponent("t.db").path, schema: try uncloudNotes("v3"), format: layout.format)
        try other.database.write { try $0.execute(sql: "ALTER TABLE ZATTACHMENT DROP COLUMN Z_OPT") }
        try other.database.close()
        _ = try Store.open(at: folder.appendingPathComponent("t.db").path, schema: try uncloudNotes("v3"))
    }

    /// A missing join table is reported as the many-to-many relationship's, without calling a
    /// store Core Data wrote damaged: its name follows an observed rule the store may not.
    @Test(arguments: TestLayout.allCases)
    func aStoreMissingAJoinTableSaysWhatItHeld(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        let schema = try loadSchema(LoadIntoStoreTests.blog)
        let store = try Store.create(at: path, schema: schema, format: layout.format)
        let entityTables = Set(store.layout.entities.values.map(\.table))
        let join = try #require(store.layout.tables.map(\.name).first { !entityTables.contains($0) })
        try store.database.write { try $0.execute(sql: "DROP TABLE \(join.quotedDatabaseIdentifier)") }
        try store.database.close()
        let error = #expect(throws: MapcError.self) { try Store.open(at: path, schema: schema) }
        let message = error?.description ?? ""
        #expect(message.contains("has no table \(join), where version b1 keeps a to-many relationship's links") && !message.contains("damaged"), "\(message)")
    }

    /// A key looked up under any entity of a hierarchy finds the row whichever entity it is, even
    /// under a leaf entity whose table the parent shares (the migration finds the source object of
    /// a key rule that way).
    @Test(arguments: TestLayout.allCases)
    func anObjectIsFoundByKeyUnderAnyEntityOfItsHierarchy(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.create(at: folder.appendingPathComponent("s.db").path, schema: try uncloudNotes("v4"), format: layout.format)
        let date = Value.date(Date(timeIntervalSince1970: 1_700_000_000))
        try store.insert([
            ObjectData(id: "a", entity: "Attachment", attributes: ["dateCreated": date]),
            ObjectData(id: "i", entity: "ImageAttachment", attributes: ["dateCreated": date, "caption": .string("c"), "width": .double(1), "height": .double(2)]),
        ])
        let plain = try #require(try store.objects(ofExactEntity: "Attachment").first?.key)
        let image = try #require(try store.objects(ofExactEntity: "ImageAttachment").first?.key)
        for entity in ["Attachment", "ImageAttachment"] {
            #expect(try store.object(entity: entity, key: plain)?.entity == "Attachment", "under \(entity)")
            #expect(try store.object(entity: entity, key: image)?.entity == "ImageAttachment", "under \(entity)")
        }
        #expect(try store.object(entity: "Note", key: plain) == nil)
    }

    /// SQLite's memory statistics can only be turned off before SQLite is used: afterwards the
    /// call is refused and stores work as before.
    @Test func sqliteMemoryStatisticsStayOnceSQLiteIsInUse() throws {
        let store = try TestLayout.mapc.store(try uncloudNotes("v2"))
        try store.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("T"), "body": .string("B"), "dateCreated": .date(Date(timeIntervalSince1970: 0)), "displayIndex": .integer(1)])])
        #expect(!Migrator.disableSQLiteMemoryStatistics())
        #expect(try store.count(of: "Note") == 1)
    }
}

@Suite("Hostile schemas built in code")
struct HostileSchemaTests {
    @Test func aCyclicSchemaBuiltInCodeStillGetsALayout() throws {
        // The loader refuses cycles; a schema made in code may still have one and must not crash the layout.
        let schema = Schema(model: "M", version: "x", entities: [
            Entity(name: "A", parent: "B", attributes: [Attribute(name: "a", type: .string)]),
            Entity(name: "B", parent: "A", attributes: [Attribute(name: "b", type: .int64)]),
        ])
        let layout = MapcFormat().layout(for: schema)
        #expect(!layout.tables.isEmpty)
        #expect(layout.entities["A"] != nil && layout.entities["B"] != nil)
    }
}

@Suite("Statements that write a row per object")
struct WriteStatementTests {
    @Test func valuesOfEveryStorageClassAreBoundInOrderAndTheStatementRunsAgainAfterAFailure() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c, d)")
            let insert = try WriteStatement(db, sql: "INSERT INTO t (k, a, b, c, d) VALUES (?, ?, ?, ?, ?)")
            try insert.execute([1.databaseValue, "x".databaseValue, 2.5.databaseValue, Data([0, 1]).databaseValue, .null])
            try insert.execute([2.databaseValue, "".databaseValue, (-7).databaseValue, "é\u{1F600}".databaseValue, "y".databaseValue])
            // A constraint failure is reported as SQLite's, and the statement still runs afterwards.
            let failure = #expect(throws: DatabaseError.self) { try insert.execute([1.databaseValue, .null, .null, .null, .null]) }
            #expect(failure?.resultCode == .SQLITE_CONSTRAINT)
            try insert.execute([3.databaseValue, .null, .null, .null, .null])
            // Too few or too many values are refused, never run with the previous row's values.
            #expect(throws: DatabaseError.self) { try insert.execute([4.databaseValue]) }
            let rows = try Row.fetchAll(db, sql: "SELECT k, typeof(a), a, b, c, d FROM t ORDER BY k")
            #expect(rows.count == 3)
            #expect(rows[0] == ["k": 1, "typeof(a)": "text", "a": "x", "b": 2.5, "c": Data([0, 1]), "d": nil])
            #expect(rows[1] == ["k": 2, "typeof(a)": "text", "a": "", "b": -7, "c": "é\u{1F600}", "d": "y"])
            #expect(rows[2] == ["k": 3, "typeof(a)": "null", "a": nil, "b": nil, "c": nil, "d": nil])
        }
    }
}

@Suite("Reading columns through SQLite's C API")
struct StatementColumnsTests {
    /// Reads the one row of `sql` with `read`, as the store's object reads do.
    private func first<T>(_ sql: String, _ read: (StatementColumns) throws -> T) throws -> T? {
        try DatabaseQueue().read { db in
            let statement = try db.makeStatement(sql: sql)
            let columns = StatementColumns(statement)
            let rows = try Row.fetchCursor(statement)
            guard try rows.next() != nil else { return nil }
            return try read(columns)
        }
    }

    @Test func keysAndIdentitiesReadAsGRDBWouldDecodeThem() throws {
        #expect(try first("SELECT 42") { try $0.integer(0, "a key") } == 42)
        #expect(try first("SELECT NULL") { try $0.integerIfPresent(0, "a key") } == .some(nil))
        // A whole REAL is a key, as Int64.fromDatabaseValue reads it; text is refused, named.
        #expect(try first("SELECT 7.0") { try $0.integer(0, "a key") } == 7)
        #expect(throws: MapcError.self) { _ = try first("SELECT 'seven'") { try $0.integer(0, "a row key of Note") } }
        do {
            _ = try first("SELECT 'seven'") { try $0.integer(0, "a row key of Note") }
        } catch {
            #expect("\(error)".contains("where a row key of Note was expected"), "\(error)")
        }
        #expect(try first("SELECT 'n1'") { try $0.textIfPresent(0, "an id") } == "n1")
        #expect(try first("SELECT 'Note'") { try $0.text(0, "an entity name") } == "Note")
        #expect(throws: MapcError.self) { _ = try first("SELECT NULL") { try $0.text(0, "an entity name") } }
        #expect(try first("SELECT 'é' || char(0x1F600)") { try $0.textIfPresent(0, "an id") } == "é\u{1F600}")
        // UTF-8 in a blob is text (SQLite's own conversion); bytes that are not UTF-8 are refused.
        #expect(try first("SELECT CAST('n2' AS BLOB)") { try $0.textIfPresent(0, "an id") } == "n2")
        #expect(throws: MapcError.self) { _ = try first("SELECT x'ff00'") { try $0.textIfPresent(0, "an id") } }
        #expect(try first("SELECT x'0102'") { $0.value(0) } == DatabaseValue.fromDatabaseValue(Data([1, 2]).databaseValue))
    }
}

extension WriteStatementTests {
    /// Text is bound from its own UTF-8 bytes: small, long and bridged strings arrive whole.
    @Test func textOfEveryKindArrivesWhole() throws {
        let texts = ["", "a", "é\u{1F600} ünïcödé", String(repeating: "long text ", count: 500), ("bridged ✓" as NSString) as String]
        let stored = try DatabaseQueue().write { db in
            try db.execute(sql: "CREATE TABLE t (n INTEGER, v)")
            let insert = try WriteStatement(db, sql: "INSERT INTO t VALUES (?, ?)")
            for (index, text) in texts.enumerated() { try insert.execute([index.databaseValue, text.databaseValue]) }
            return try Row.fetchAll(db, sql: "SELECT typeof(v), v FROM t ORDER BY n").map { ($0[0] as String, $0[1] as DatabaseValue) }
        }
        #expect(stored.map(\.0) == Array(repeating: "text", count: texts.count))
        #expect(stored.map { String.fromDatabaseValue($0.1) } == texts)
    }

    /// Text and blobs are bound without a copy, from bytes valid only while the row is written:
    /// rows written one after another, of every size (a `Data` or a string short enough to be
    /// kept inline, an empty one, a large one), each arrive as they were, and an empty blob stays
    /// a blob, not NULL.
    @Test func textAndBlobsOfEverySizeArriveAsTheyWere() throws {
        let blobs = [Data(), Data([7]), Data(0..<14), Data(0..<15), Data((0..<4_000).map { UInt8($0 % 251) }), Data([0, 0, 0])]
        let texts = ["", "x", "fifteen bytes!!", "sixteen bytes!!!", String(repeating: "é", count: 3_000), "\u{1F600}"]
        let stored = try DatabaseQueue().write { db in
            try db.execute(sql: "CREATE TABLE t (n INTEGER, b, s, m)")
            let insert = try WriteStatement(db, sql: "INSERT INTO t VALUES (?, ?, ?, ?)")
            for (index, (blob, text)) in zip(blobs, texts).enumerated() {
                // Each row's values are made for it and dropped after it, as a migration's are.
                try insert.execute([index.databaseValue, Data(blob).databaseValue, String(text).databaseValue, (text + "/" + text).databaseValue])
            }
            return try Row.fetchAll(db, sql: "SELECT typeof(b), b, s, m FROM t ORDER BY n")
        }
        #expect(stored.map { $0[0] as String } == Array(repeating: "blob", count: blobs.count))
        #expect(stored.map { $0[1] as Data } == blobs)
        #expect(stored.map { $0[2] as String } == texts)
        #expect(stored.map { $0[3] as String } == texts.map { $0 + "/" + $0 })
    }

    /// A row with more text and blob values than are bound without a copy (a wide table, as a
    /// Core Data hierarchy's can be): the first ones nest, the rest are copied, and all arrive.
    @Test func aWideRowOfTextAndBlobsArrivesWhole() throws {
        let count = 80
        let values: [DatabaseValue] = (0..<count).map { column in
            column % 3 == 0 ? Data((0..<(column * 7)).map { UInt8($0 % 256) }).databaseValue : String(repeating: "c\(column)", count: column % 5).databaseValue
        }
        let stored = try DatabaseQueue().write { db in
            try db.execute(sql: "CREATE TABLE t (" + (0..<count).map { "v\($0)" }.joined(separator: ", ") + ")")
            let insert = try WriteStatement(db, sql: "INSERT INTO t VALUES (" + Array(repeating: "?", count: count).joined(separator: ", ") + ")")
            try insert.execute(values)
            try insert.execute(values.reversed())
            return try Row.fetchAll(db, sql: "SELECT * FROM t ORDER BY rowid")
        }
        #expect(stored.count == 2)
        #expect((0..<count).map { stored[0][$0] as DatabaseValue } == values)
        #expect((0..<count).map { stored[1][$0] as DatabaseValue } == values.reversed())
    }
}
