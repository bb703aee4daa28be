import Foundation
import Testing
import GRDB
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// An app tells apart the store problems it handles differently: a store in use (try again
/// later) and a store of no known version (ship its schema), by the error's case.
@Suite("Kinds of store errors", .serialized)
struct StoreErrorKindTests {
    @Test func aStoreInUseIsStoreInUse() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let held = try StoreLock(store: app.storeURL.path)
        defer { held.release() }
        let error = #expect(throws: MapcError.self) { try migrator.migrate(storeAt: app.storeURL) }
        guard case .storeInUse(let message)? = error else {
            Issue.record("expected storeInUse, got \(String(describing: error))")
            return
        }
        #expect(message.contains("is writing"))
        #expect(try migrator.status(ofStoreAt: app.storeURL).version == "v1")
    }

    @Test func aStoreOfNoKnownVersionIsUnknownVersion() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let other = try Migrator(schemaFiles: ["v1.yaml": "model: Contacts\nversion: v1\nentities:\n  Person:\n    attributes:\n      name: { type: string }\n",
                                               "versions.yaml": "versions: [v1]\n"])
        let error = #expect(throws: MapcError.self) { try other.migrate(storeAt: app.storeURL) }
        guard case .unknownVersion(let message)? = error else {
            Issue.record("expected unknownVersion, got \(String(describing: error))")
            return
        }
        #expect(message.contains("the store holds model 'UnCloudNotes'"), "\(message)")
    }
}

/// A store damaged after it was opened (or in ways opening does not look at) fails its reads with
/// mapc's own error, which an app can catch and show: never SQLite's (GRDB is not part of the API).
@Suite("Reads of a damaged store")
struct DamagedStoreReadTests {
    /// A store of three notes, opened, then damaged by `damage` (given the file's path).
    private func damagedStore(format: StoreFormat, _ damage: (String) throws -> Void) throws -> (Store, URL) {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("s.db").path
        let store = try Store.create(at: path, schema: try uncloudNotes("v1"), format: format)
        try store.insert((1...3).map { ObjectData(id: "n\($0)", entity: "Note", attributes: ["title": .string("t\($0)"), "body": .string("b"), "dateCreated": .date(Date(timeIntervalSince1970: 1_700_000_000))]) })
        try damage(path)
        return (store, folder)
    }

    /// Every public read of the store, each expected to fail with a `MapcError`.
    private func expectEveryReadFailsWithMapcError(_ store: Store, _ damage: String) {
        let reads: [(String, () throws -> Void)] = [
            ("objects(of:)", { _ = try store.objects(of: "Note") }),
            ("objects(ofExactEntity:)", { _ = try store.objects(ofExactEntity: "Note") }),
            ("forEachObject", { try store.forEachObject(ofExactEntity: "Note") { _ in } }),
            ("object(entity:key:)", { _ = try store.object(entity: "Note", key: 1) }),
            ("object(id:)", { _ = try store.object(id: "Note/p1") }),
            ("count(of:)", { _ = try store.count(of: "Note") }),
        ]
        for (name, read) in reads {
            do {
                try read()
                Issue.record("\(name) read a store whose \(damage) without an error")
            } catch let error as MapcError {
                #expect(error.description.contains("s.db"), "\(name): \(error)")
            } catch {
                Issue.record("\(name) threw \(type(of: error)), not MapcError, for a store whose \(damage): \(error)")
            }
        }
    }

    @Test(arguments: StoreFormat.all.map(\.identifier))
    func aTableDroppedBehindTheStoreFailsWithMapcError(_ format: String) throws {
        let (store, folder) = try damagedStore(format: StoreFormat.named(format) ?? .mapc) { path in
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND upper(name) IN ('NOTE', 'ZNOTE')")
                for name in tables { try db.execute(sql: "DROP TABLE \(name.quotedDatabaseIdentifier)") }
            }
            try queue.close()
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        expectEveryReadFailsWithMapcError(store, "note table was dropped")
    }
}
