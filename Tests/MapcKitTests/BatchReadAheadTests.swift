import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

@Suite("Reading source batches ahead on a thread of their own")
struct BatchReadAheadTests {
    /// A file store of `count` v2 notes in the layout.
    private func notes(_ count: Int, layout: TestLayout, in folder: URL) throws -> Store {
        let store = try Store.create(at: folder.appendingPathComponent("v2-\(layout.rawValue).db").path, schema: try uncloudNotes("v2"), format: layout.format)
        try store.insert(v2Notes(count))
        return store
    }

    /// The batches `forEachBatch` hands over (each object's key and values), or the error it threw after them.
    private func batches(_ store: Store, readingAhead: Bool, batchSize: Int, properties: Set<String>? = nil) -> (batches: [[ObjectData]], error: String?) {
        var seen: [[ObjectData]] = []
        do {
            try store.forEachBatch(ofExactEntity: "Note", batchSize: batchSize, properties: properties, readingAhead: readingAhead) { seen.append($0) }
            return (seen, nil)
        } catch {
            return (seen, "\(error)")
        }
    }

    /// How many of this process's open files are the store's file.
    private func openDescriptors(of path: String) throws -> Int {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) == real
        }.count
    }

    /// A batch of 2,000 objects of a megabyte each held 2 GB (the interpreted path grew with the
    /// objects' size): a batch also ends at `Store.batchByteBudget` of texts and data, read ahead
    /// or in line, and every object still comes, once, in order.
    @Test(arguments: [false, true])
    func aBatchEndsAtItsBytes(readingAhead: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.create(at: folder.appendingPathComponent("big.db").path, schema: try uncloudNotes("v2"), format: .mapc)
        let megabyte = Data(repeating: 7, count: 1 << 20)
        try store.insert(v2Notes(40, images: { _ in true }, image: megabyte))
        let (found, error) = batches(store, readingAhead: readingAhead, batchSize: 1_000)
        #expect(error == nil)
        #expect(found.count == 3 && found.allSatisfy { $0.count <= Store.batchByteBudget >> 20 }, "\(found.map(\.count))")
        #expect(found.flatMap { $0 }.map(\.id) == (0..<40).map { "n\($0)" })
    }

    @Test(arguments: TestLayout.allCases, [1, 3, 7, 23, 100])
    func batchesReadAheadAreTheBatchesReadInLine(layout: TestLayout, batchSize: Int) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(23, layout: layout, in: folder)
        // The reader does open its own connection here (what follows would also hold if it fell back).
        let reader = BatchReadAhead(store: store, path: try #require(store.path), entity: "Note", batchSize: batchSize, properties: nil)
        #expect(reader.isAvailable())
        reader.stop()
        let inLine = batches(store, readingAhead: false, batchSize: batchSize)
        let ahead = batches(store, readingAhead: true, batchSize: batchSize)
        #expect(inLine.error == nil && ahead.error == nil)
        #expect(inLine.batches.map(\.count) == Array(repeating: batchSize, count: 23 / batchSize) + (23 % batchSize == 0 ? [] : [23 % batchSize]))
        #expect(ahead.batches == inLine.batches)
        // Some properties only: the same partial objects.
        let partial = batches(store, readingAhead: true, batchSize: batchSize, properties: ["title"])
        #expect(partial.batches == batches(store, readingAhead: false, batchSize: batchSize, properties: ["title"]).batches)
        #expect(partial.batches.joined().allSatisfy { $0.isPartial && $0.attributes.keys.sorted() == ["title"] })
    }

    @Test func anEmptyEntityGivesNoBatch() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(0, layout: .mapc, in: folder)
        let ahead = batches(store, readingAhead: true, batchSize: 5)
        #expect(ahead.batches.isEmpty && ahead.error == nil)
    }

    /// A row that cannot be read stops the reading where reading in line stops: after the batches
    /// before it, with the same error.
    @Test(arguments: TestLayout.allCases)
    func aFailureComesAfterTheBatchesBeforeIt(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(10, layout: layout, in: folder)
        let storage = try store.layout.storage(of: "Note")
        let column = try #require(storage.attributeColumns["displayIndex"])
        try store.database.write { db in
            try db.execute(sql: "UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = 'seven' WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = 8")
        }
        let inLine = batches(store, readingAhead: false, batchSize: 3)
        let ahead = batches(store, readingAhead: true, batchSize: 3)
        #expect(inLine.batches.map(\.count) == [3, 3])
        #expect(ahead.batches == inLine.batches)
        let error = try #require(ahead.error)
        #expect(error == inLine.error)
        #expect(error.contains("displayIndex") && error.contains("seven"))
    }

    /// A reader that cannot open its own connection (here the file is gone, while the store's
    /// connection still reads it) leaves the reading to be done in line: nothing is lost or failed.
    @Test func withoutAConnectionOfItsOwnTheBatchesAreReadInLine() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(12, layout: .mapc, in: folder)
        let inLine = batches(store, readingAhead: false, batchSize: 5)
        try FileManager.default.removeItem(atPath: try #require(store.path))
        let reader = BatchReadAhead(store: store, path: try #require(store.path), entity: "Note", batchSize: 5, properties: nil)
        #expect(!reader.isAvailable())
        reader.stop()
        let ahead = batches(store, readingAhead: true, batchSize: 5)
        #expect(ahead.error == nil)
        #expect(ahead.batches.map(\.count) == [5, 5, 2])
        #expect(ahead.batches == inLine.batches)
    }

    /// A path renamed over while the store is open names another file: the reader does not read
    /// it, and the batches are the store's, read in line.
    @Test func aFileRenamedOverTheStoreIsNotRead() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(12, layout: .mapc, in: folder)
        let inLine = batches(store, readingAhead: false, batchSize: 5)
        let other = try Store.create(at: folder.appendingPathComponent("other.db").path, schema: try uncloudNotes("v2"))
        try other.insert(v2Notes(30).map { var note = $0; note.id = "other-" + note.id; return note })
        try other.database.close()
        let path = try #require(store.path)
        #expect(rename(folder.appendingPathComponent("other.db").path, path) == 0)
        let ahead = batches(store, readingAhead: true, batchSize: 5)
        #expect(ahead.error == nil)
        #expect(ahead.batches == inLine.batches)
    }

    /// A store in WAL mode whose log holds its latest rows (not yet in the file): the reader's
    /// connection reads them as the store's does.
    @Test func aWALStoresLatestRowsAreReadAhead() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(0, layout: .mapc, in: folder)
        let path = try #require(store.path)
        try store.database.close()
        let writer = try DatabaseQueue(path: path)
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        let wal = try Store.open(at: path, schema: try uncloudNotes("v2"))
        try wal.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        try wal.insert(v2Notes(23))
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let reader = BatchReadAhead(store: wal, path: path, entity: "Note", batchSize: 5, properties: nil)
        #expect(reader.isAvailable())
        reader.stop()
        let inLine = batches(wal, readingAhead: false, batchSize: 5)
        let ahead = batches(wal, readingAhead: true, batchSize: 5)
        #expect(inLine.batches.joined().count == 23)
        #expect(ahead.error == nil && ahead.batches == inLine.batches)
        try writer.close()
    }

    /// The caller may stop at any batch: the reader's thread ends and its connection is closed
    /// before `forEachBatch` returns, whether the caller stopped or read to the end.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "counts open files through Linux's /proc"))
    func stoppingEarlyClosesTheReadersConnection() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try notes(50, layout: .mapc, in: folder)
        let path = try #require(store.path)
        let before = try openDescriptors(of: path)
        struct Stop: Error {}
        // Stopped at each batch in turn: a reader left running would hold the file open after the
        // call at some stop.
        for stop in 1...10 {
            var seen = 0
            var during = 0
            #expect(throws: Stop.self) {
                try store.forEachBatch(ofExactEntity: "Note", batchSize: 5, properties: nil, readingAhead: true) { _ in
                    seen += 1
                    during = try openDescriptors(of: path)
                    if seen == stop { throw Stop() }
                }
            }
            #expect(seen == stop)
            // Open while it reads; after the ninth batch it may have read the last already.
            if stop < 9 { #expect(during == before + 1) }
            #expect(try openDescriptors(of: path) == before)
        }
        _ = batches(store, readingAhead: true, batchSize: 5)
        #expect(try openDescriptors(of: path) == before)
    }

    /// The v3 store a step builds from `source` with the interpreter, reading in line and then
    /// reading ahead: each one's created counts, and its objects of every entity.
    private func stepsBuild(_ model: MappingModel, from source: Store, layout: TestLayout, batchSize: Int, in folder: URL) throws -> [(created: [Int], objects: [ObjectData])] {
        let v3 = try uncloudNotes("v3")
        return try [false, true].map { readsAhead in
            let destination = try Store.create(at: folder.appendingPathComponent("v3-\(readsAhead).db").path, schema: v3, format: layout.format)
            var step = StepMigration(source: source, destination: destination, mapping: model)
            step.allowsSQL = false
            step.batchSize = batchSize
            step.readsAhead = readsAhead
            let summary = try step.run()
            return (summary.created.map(\.count), try v3.entities.flatMap { try destination.objects(ofExactEntity: $0.name) })
        }
    }

    /// A step reading its source ahead builds the same store as one reading it in line, with the
    /// interpreter (which reads every source object) and batches much smaller than the store.
    @Test(arguments: TestLayout.allCases)
    func aStepReadingAheadBuildsTheSameStore(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try notes(40, layout: layout, in: folder)
        let path = packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").path
        let model = try #require(MappingLoader.parse(source: SourceFile(path: path, text: try String(contentsOfFile: path, encoding: .utf8))).mapping)
        let built = try stepsBuild(model, from: source, layout: layout, batchSize: 6, in: folder)
        #expect(built[0].created == [40, 14])
        #expect(built[0].objects.count == 54)
        #expect(built[1].created == built[0].created)
        #expect(built[1].objects == built[0].objects)
    }

    /// Xcode's form of a mapping's source, a fetch request with a predicate, reads its entity's
    /// batches ahead as well, with the same objects kept.
    @Test(arguments: TestLayout.allCases)
    func aFetchedSourceReadAheadKeepsTheSameObjects(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try notes(40, layout: layout, in: folder)
        let model = try loadMapping(noteToNoteMapping(["sourceExpression: 'FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"displayIndex >= 13\"), $manager.sourceContext, NO)'"]))
        let built = try stepsBuild(model, from: source, layout: layout, batchSize: 7, in: folder)
        #expect(built[0].objects.count == 27)
        #expect(built[1].objects == built[0].objects)
    }
}
