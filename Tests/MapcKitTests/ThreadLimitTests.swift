import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// At the system's thread limit no thread starts (`DetachedThread`): the work meant for one is
/// done on the caller's thread, and a migration gives what it gives with threads. Foundation's
/// `Thread.detachNewThread` never ran such work, and the waits for it never returned
/// (`withoutThreads` turns such a hang into a failure).
@Suite("At the system's thread limit")
struct ThreadLimitTests {
    private func v2Store(_ name: String, notes: Int, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent(name).path
        let store = try Store.create(at: path, schema: try uncloudNotes("v2"))
        try store.insert(v2Notes(notes))
        try store.database.close()
        return path
    }

    /// Every object of the store's entities, in key order, and nil for a store that cannot be read.
    private func objects(at path: String, schema: Schema) throws -> [ObjectData] {
        let store = try Store.open(at: path, schema: schema, readOnly: true)
        defer { try? store.database.close() }
        var all: [ObjectData] = []
        for entity in schema.entities where !entity.isAbstract {
            try store.forEachBatch(ofExactEntity: entity.name, batchSize: 7) { all += $0 }
        }
        return all
    }

    private func migrate(_ path: String) throws {
        let mapping = try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: try String(contentsOf: packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"), encoding: .utf8))).mapping)
        _ = try StoreMigration.run(store: path, source: try uncloudNotes("v2"), destination: try uncloudNotes("v3"), mapping: mapping)
    }

    @Test func withoutAThreadTheBatchesAreReadInLine() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.open(at: try v2Store("v2.db", notes: 23, in: folder), schema: try uncloudNotes("v2"))
        var inLine: [[ObjectData]] = []
        try store.forEachBatch(ofExactEntity: "Note", batchSize: 5, properties: nil, readingAhead: false) { inLine.append($0) }
        let path = try #require(store.path)
        let ahead = withoutThreads { () throws -> (available: Bool, batches: [[ObjectData]]) in
            let reader = BatchReadAhead(store: store, path: path, entity: "Note", batchSize: 5, properties: nil)
            let available = reader.isAvailable()
            reader.stop()
            var batches: [[ObjectData]] = []
            try store.forEachBatch(ofExactEntity: "Note", batchSize: 5, properties: nil, readingAhead: true) { batches.append($0) }
            return (available, batches)
        }
        let read = try #require(try ahead?.get(), "the reading did not finish")
        #expect(!read.available)
        #expect(read.batches == inLine && inLine.count == 5)
    }

    @Test func withoutAThreadTheSourceChecksRunBeforeTheStepStarts() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try v2Store("v2.db", notes: 3, in: folder)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE \"Note\" SET \"_entity\" = 'Stranger' WHERE \"_id\" = 'n1'") }
        let schema = try uncloudNotes("v2")
        let checked = withoutThreads { () -> (failedAtOnce: Bool, found: String?) in
            let checks = SourceChecks(path: path, schema: schema)
            // Already run, here: their failure is known before anything waits for it.
            let failedAtOnce = checks.hasFailed
            do { try checks.wait(); return (failedAtOnce, nil) } catch { return (failedAtOnce, "\(error)") }
        }
        let outcome = try #require(try checked?.get(), "the checks did not finish")
        #expect(outcome.failedAtOnce)
        #expect(outcome.found?.contains("Stranger") == true, "\(outcome.found ?? "nothing found")")
    }

    @Test func aMigrationWithoutThreadsBuildsWhatItBuildsWithThem() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let withThreads = try v2Store("with.db", notes: 40, in: folder)
        let withoutThreadsPath = try v2Store("without.db", notes: 40, in: folder)
        try migrate(withThreads)
        try #require(withoutThreads { try migrate(withoutThreadsPath) }, "the migration did not finish").get()
        let built = try objects(at: withoutThreadsPath, schema: try uncloudNotes("v3"))
        #expect(built.count == 40 + 14)
        #expect(built == (try objects(at: withThreads, schema: try uncloudNotes("v3"))))
        // A damaged store is refused the same way, and left as it was.
        let damaged = try v2Store("damaged.db", notes: 5, in: folder)
        try DatabaseQueue(path: damaged).write { try $0.execute(sql: "UPDATE \"Note\" SET \"_entity\" = 'Stranger' WHERE \"_id\" = 'n2'") }
        let before = try Data(contentsOf: URL(fileURLWithPath: damaged))
        let refused = try #require(withoutThreads { try migrate(damaged) }, "the migration did not finish")
        #expect(throws: (any Error).self) { try refused.get() }
        if case .failure(let error) = refused { #expect("\(error)".contains("Stranger"), "\(error)") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == before)
    }
}
