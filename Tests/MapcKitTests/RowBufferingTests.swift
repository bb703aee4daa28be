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

/// A migration's row writer holds inserted rows back and writes them `RowWriter.rowsPerStatement`
/// per `INSERT`: the store built is the same, a refused row is named whichever row of its
/// statement it was, and nothing reads or writes the store while rows are held back.
@Suite("Rows written several per statement")
struct RowBufferingTests {
    private let items = "model: U\nversion: u1\nentities:\n  Item:\n    attributes:\n      name: string\n      code: int64\n"

    /// Items `i0`, `i1`, … with the codes given, in a file store of the layout.
    private func items(codes: [Int], layout: TestLayout, at path: String, constrained: Bool = false) throws -> Store {
        let schema = try loadSchema(constrained ? items.replacingOccurrences(of: "  Item:\n", with: "  Item:\n    uniquenessConstraints: [[code]]\n") : items)
        let store = try Store.create(at: path, schema: schema, format: layout.format)
        try store.insert(codes.enumerated().map { ObjectData(id: "i\($0)", entity: "Item", attributes: ["name": .string("item \($0)"), "code": .integer(Int64($1))]) })
        return store
    }

    /// The shipped v2 → v3 step, interpreted (every row through the writer) and compiled (`INSERT …
    /// SELECT`, no writer), on more notes than several statements' worth: the same stores.
    @Test(arguments: TestLayout.allCases)
    func theInterpreterWritesWhatTheCompiledStepWrites(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try Store.create(at: folder.appendingPathComponent("v2.db").path, schema: try uncloudNotes("v2"), format: layout.format)
        // 16 × 6 + 5 notes: full statements and a remainder, for the notes and for their attachments.
        try source.insert(v2Notes(101, images: { $0 % 4 != 1 }))
        let path = packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").path
        let model = try #require(MappingLoader.parse(source: SourceFile(path: path, text: try String(contentsOfFile: path, encoding: .utf8))).mapping)
        let v3 = try uncloudNotes("v3")
        let built = try [false, true].map { compiled in
            let destination = try Store.create(at: folder.appendingPathComponent("v3-\(compiled).db").path, schema: v3, format: layout.format)
            var step = StepMigration(source: source, destination: destination, mapping: model)
            step.allowsSQL = compiled
            let summary = try step.run()
            #expect(summary.compiled.isEmpty != compiled)
            return (summary.created.map(\.count), try v3.entities.flatMap { try destination.objects(ofExactEntity: $0.name) })
        }
        #expect(built[0].0 == [101, 76])
        #expect(built[0].1.count == 177)
        #expect(built[1].0 == built[0].0)
        #expect(built[1].1 == built[0].1)
    }

    /// A row a uniqueness constraint refuses in the middle of a statement's rows is named, with
    /// the object it clashes with, whether the store's journal rolls the statement back or (a
    /// migration's temporary file, which has none) keeps the rows before it.
    @Test(arguments: [true, false])
    func aRowRefusedInTheMiddleOfAStatementIsNamed(journalOff: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Item 21, the sixth row of the second statement, takes item 5's code, written by the first.
        let codes = (0..<40).map { $0 == 21 ? 5 : $0 }
        let source = try items(codes: codes, layout: .mapc, at: folder.appendingPathComponent("s.db").path)
        // Core Data's layout keeps the constraint as a UNIQUE index, which refuses the insert itself.
        let destination = try items(codes: [], layout: .coreData, at: folder.appendingPathComponent("d.db").path, constrained: true)
        if journalOff {
            try destination.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = OFF") }
        }
        let copy = "source: u1\ndestination: u1\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      name: $source.name\n      code: $source.code\n"
        var step = StepMigration(source: source, destination: destination, mapping: try loadMapping(copy))
        step.allowsSQL = false
        let error = #expect(throws: MigrationError.self) { try step.run() }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("ItemToItem") && message.contains("'i21'") && message.contains("uniqueness constraint (code) of Item") && message.contains("code 5"), "\(message)")
        #expect(message.contains("Item/p6"), "the object already holding code 5 is named: \(message)")
        #expect(!message.contains("SQLite"), "\(message)")
    }

    /// From a Core Data store, which keeps no ids, the refused object is named by its entity and
    /// key in the source (the object the user can find), not as the object it clashes with.
    @Test func aRefusedObjectOfACoreDataStoreIsNamedByItsOwnKey() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let codes = (0..<40).map { $0 == 21 ? 5 : $0 }
        let source = try items(codes: codes, layout: .coreData, at: folder.appendingPathComponent("s.db").path)
        let destination = try items(codes: [], layout: .coreData, at: folder.appendingPathComponent("d.db").path, constrained: true)
        let copy = "source: u1\ndestination: u1\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      name: $source.name\n      code: $source.code\n"
        var step = StepMigration(source: source, destination: destination, mapping: try loadMapping(copy))
        step.allowsSQL = false
        let error = #expect(throws: MigrationError.self) { try step.run() }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("Item 'Item/p22'") && message.contains("Item 'Item/p6' in the store has the same code 5"), "\(message)")
    }

    /// Rows held back are in the store once anything else goes through the writer.
    @Test(arguments: TestLayout.allCases)
    func heldRowsAreWrittenBeforeAnythingElseUsesTheStore(layout: TestLayout) throws {
        let store = try layout.store(try loadSchema(items))
        try store.database.write { db in
            let writer = RowWriter(store: store, db: db, buffersRows: true)
            let storage = try store.layout.storage(of: "Item")
            let table = storage.table.quotedDatabaseIdentifier
            for index in 0..<3 { _ = try writer.insert(entity: "Item", id: "i\(index)", attributes: ["name": .string("x"), "code": .integer(Int64(index))]) }
            #expect(try Int.fetchOne(writer.db, sql: "SELECT count(*) FROM \(table)") == 3, "db writes them")
            for index in 3..<5 { _ = try writer.insert(entity: "Item", id: "i\(index)", attributes: ["name": .string("x"), "code": .integer(Int64(index))]) }
            #expect(try Int.fetchOne(writer.statement("SELECT count(*) FROM \(table)")) == 5, "a statement asked for writes them")
            for index in 5..<40 { _ = try writer.insert(entity: "Item", id: "i\(index)", attributes: ["name": .string("x"), "code": .integer(Int64(index))]) }
            try writer.finish()
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") == 40)
            let code = try #require(storage.attributeColumns["code"]).quotedDatabaseIdentifier
            #expect(try Int.fetchAll(db, sql: "SELECT \(code) FROM \(table) ORDER BY \(code)") == Array(0..<40))
        }
    }

    #if DEBUG
    /// The debug build's watch: a statement that reaches the connection another way while rows
    /// are held back fails the next write, so a missing flush fails the tests that reach it.
    @Test func aStatementRunWhileRowsAreHeldIsCaught() throws {
        let store = try TestLayout.mapc.store(try loadSchema(items))
        try store.database.write { db in
            let writer = RowWriter(store: store, db: db, buffersRows: true)
            _ = try writer.insert(entity: "Item", id: "i0", attributes: ["name": .string("x"), "code": .integer(0)])
            // Past the writer: the held row is not there yet.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \"Item\"") == 0)
            let error = #expect(throws: MapcError.self) { try writer.flush() }
            #expect("\(error.map { "\($0)" } ?? "")".contains("ran while inserted rows were held back"))
        }
    }
    #endif

    /// A table with so many columns that a full statement's rows would pass SQLite's limit on
    /// parameters writes fewer rows per statement.
    @Test func aWideTableWritesFewerRowsPerStatement() throws {
        let store = try TestLayout.mapc.store(try loadSchema(items))
        try store.database.write { db in
            // Four values a row (key, id, name, code; the entity is written in the SQL): three rows per statement under a limit of 12.
            sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_VARIABLE_NUMBER, 12)
            let writer = RowWriter(store: store, db: db, buffersRows: true)
            for index in 0..<40 { _ = try writer.insert(entity: "Item", id: "i\(index)", attributes: ["name": .string("x"), "code": .integer(Int64(index))]) }
            try writer.finish()
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \"Item\"") == 40)
        }
    }
}
