import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Damaged and hostile store files: every read mapc does (metadata, identification, counts,
/// history, dumps, integrity, a migration) on mutated copies of a real store must end in a result
/// or an error, never a trap. Mutations are both raw (bytes flipped, the file cut short) and
/// structured (any cell of any table replaced by a value of another type, rows of unknown
/// entities, metadata removed), with a fixed seed so a failure can be replayed.
@Suite("Store fuzzing")
struct StoreFuzzTests {
    static let hostileValues: [String] = [
        "NULL", "x'00ff'", "x''", "'text'", "''", "-1", "0", "9223372036854775807", "-9223372036854775808", "1e308", "9e999", "-9e999",
        "0.5", "'2024-01-01'", "'\u{0}'", "'💥'", "x'ffffffff'", "'n1'", "'Note'", "'Bogus'", "'-1'", "'NaN'", "'1e400'", "'99999999999999999999999999999999999999999'",
    ]

    private func pristineStore(in folder: URL) throws -> (path: String, catalog: SchemaCatalog) {
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let path = folder.appendingPathComponent("pristine.db").path
        let store = try Store.create(at: path, schema: try catalog.require(version: "v3"))
        var objects: [ObjectData] = []
        for index in 0..<12 {
            objects.append(ObjectData(id: "n\(index)", entity: "Note", attributes: [
                "title": .string("Note \(index)"), "body": .string("Body"), "dateCreated": .date(Date(timeIntervalSince1970: Double(index) * 3600)), "displayIndex": .integer(Int64(index)),
            ], relationships: index % 2 == 0 ? ["attachments": ["a\(index)"]] : [:]))
            if index % 2 == 0 {
                objects.append(ObjectData(id: "a\(index)", entity: "Attachment", attributes: ["image": .binary(Data([0x89, 0x50, 0x4E, 0x47])), "dateCreated": .date(Date())]))
            }
        }
        try store.insert(objects)
        try StoreHistory.write([HistoryEntry(fromVersion: "v2", fromHash: "a", toVersion: "v3", toHash: "b", inferred: false, mappingSHA256: "c",
                                             startedAt: "2024", finishedAt: "2024", created: ["NoteToNote": 12])], to: store)
        try store.database.close()
        return (path, catalog)
    }

    /// Every read mapc does on a store, in the order the commands do them; throws on any error.
    private func exercise(_ path: String, _ catalog: SchemaCatalog) throws {
        let (format, metadata) = try Store.metadata(at: path)
        _ = catalog.version(of: metadata, format: format)
        let store = try Store.open(at: path, catalog: catalog, readOnly: true)
        defer { try? store.database.close() }
        for entity in store.schema.entities { _ = try store.count(of: entity.name, exactly: true) }
        _ = try StoreHistory.read(store)
        _ = try DataFile.dump(store).serialized()
        try store.checkIntegrity()
        let v4 = try catalog.require(version: "v4")
        let mapping = try #require(MappingInference.infer(from: store.schema, to: v4).mapping)
        let destination = try Store.inMemory(schema: v4)
        _ = try StepMigration(source: store, destination: destination, mapping: mapping).run()
    }

    @Test func damagedStoresGiveErrorsNotTraps() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (pristine, catalog) = try pristineStore(in: folder)
        try exercise(pristine, catalog)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: pristine))
        let tables = try DatabaseQueue(path: pristine).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'").map { table in
                (table, try db.columns(in: table).map(\.name))
            }
        }
        var random = SplitMix64(state: 0xDA3A_6ED5)
        var outcomes = (succeeded: 0, refused: 0)
        let rounds = 400
        for round in 0..<rounds {
            let path = folder.appendingPathComponent("copy-\(round).db").path
            defer { AtomicFile.removeStoreFiles(path) }
            if round % 4 == 0 {
                // Raw damage: flipped bytes, or the file cut short.
                var damaged = bytes
                if round % 8 == 0 {
                    damaged = damaged.prefix(Int.random(in: 0..<damaged.count, using: &random))
                } else {
                    for _ in 0..<Int.random(in: 1...16, using: &random) {
                        damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                    }
                }
                try damaged.write(to: URL(fileURLWithPath: path))
            } else {
                // Structured damage: cells of other types, rows of unknown entities, metadata removed.
                try bytes.write(to: URL(fileURLWithPath: path))
                let queue = try DatabaseQueue(path: path)
                try queue.write { db in
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        let (table, columns) = tables.randomElement(using: &random)!
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0: try? db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE rowid IN (SELECT rowid FROM \(table.quotedDatabaseIdentifier) LIMIT 1)")
                        case 1: try? db.execute(sql: "DROP TABLE \(table.quotedDatabaseIdentifier)")
                        default:
                            let column = columns.randomElement(using: &random)!
                            let value = Self.hostileValues.randomElement(using: &random)!
                            try? db.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = \(value) WHERE rowid IN (SELECT rowid FROM \(table.quotedDatabaseIdentifier) ORDER BY random() LIMIT 2)")
                        }
                    }
                }
                try queue.close()
            }
            do {
                try exercise(path, catalog)
                outcomes.succeeded += 1
            } catch is MapcError {
                outcomes.refused += 1
            } catch is DatabaseError {
                outcomes.refused += 1
            } catch is MigrationError {
                outcomes.refused += 1
            } catch is DiagnosticsError {
                outcomes.refused += 1
            }
            // Any other error type, or a trap, fails the test.
        }
        print("store fuzzing: \(rounds) damaged copies, \(outcomes.succeeded) read through, \(outcomes.refused) refused with an error, none trapped")
        // Both outcomes must occur, or the mutations are not reaching the readers.
        #expect(outcomes.refused > rounds / 4, "\(outcomes)")
        #expect(outcomes.succeeded > 10, "\(outcomes)")
    }
}
