import Foundation
import GRDB
import MapcKit
import Testing

/// What an app developer embedding MapcKit found (a Swift 6 package calling the library as the
/// docs show: synchronous and async runs, cancellation, fleets, errors matched by type).
@Suite("Defects found by the library probe")
struct LibraryProbeFindingsTests {
    /// `MigrationOptions.batchSize = 0` replaced a store of three notes with an empty one, exit
    /// without error (the first read of `LIMIT 0` found nothing, and an empty store is valid), and
    /// `-1` trapped the process. A batch size below 1 is refused before anything is read.
    @Test(arguments: [0, -1, Int.min])
    func aBatchSizeBelowOneIsRefused(batchSize: Int) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrator = try Migrator(schemaFiles: [
            "versions.yaml": "versions: [v1, v2]\n",
            "v1.yaml": "model: S\nversion: v1\nentities:\n  Rec:\n    attributes:\n      name: string?\n",
            "v2.yaml": "model: S\nversion: v2\nentities:\n  Rec:\n    attributes:\n      name: string?\n      memo: string?\n",
        ])
        let first = try migrator.schemas.require(version: "v1")
        let url = folder.appendingPathComponent("s.db")
        let store = try Store.create(at: url.path, schema: first)
        try store.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "v1", "objects": {"Rec": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]}}"#.utf8), path: "d.json"), schema: first).objects)
        try store.close()
        let before = try Data(contentsOf: url)
        for allowsSQL in [true, false] {
            var options = MigrationOptions()
            options.batchSize = batchSize
            options.allowsSQL = allowsSQL
            #expect {
                try migrator.migrate(storeAt: url, options: options)
            } throws: { error in
                guard case MapcError.input(let message) = error else { return false }
                return message.contains("batchSize") && message.contains("at least 1")
            }
            #expect(try Data(contentsOf: url) == before)
        }
        // The engine's own entry refuses it too.
        let source = try Store.open(at: url.path, schema: first, readOnly: true)
        defer { try? source.close() }
        let destination = try Store.create(at: folder.appendingPathComponent("d.db").path, schema: try migrator.schemas.require(version: "v2"))
        defer { try? destination.close() }
        var step = StepMigration(source: source, destination: destination, mapping: try #require(MappingInference.infer(from: first, to: try migrator.schemas.require(version: "v2")).mapping))
        step.batchSize = batchSize
        #expect(throws: MapcError.input("StepMigration.batchSize is \(batchSize): it must be at least 1 (the source objects read per batch; 2,000 by default)")) { try step.run() }
    }

    private func twoVersions(in folder: URL) throws -> (Migrator, URL) {
        let migrator = try Migrator(schemaFiles: [
            "versions.yaml": "versions: [v1, v2]\n",
            "v1.yaml": "model: S\nversion: v1\nentities:\n  Rec:\n    attributes:\n      name: string?\n",
            "v2.yaml": "model: S\nversion: v2\nentities:\n  Rec:\n    attributes:\n      name: string?\n      memo: string?\n",
        ])
        let url = folder.appendingPathComponent("s.db")
        try Store.create(at: url.path, schema: try migrator.schemas.require(version: "v1")).close()
        return (migrator, url)
    }

    /// `status`, `version` and `plan` had blocking forms only: called from a task, each held a
    /// thread of the cooperative pool for the whole quick check or lock wait (2 s behind another
    /// process's lock). Their `async` forms run on a thread of their own.
    @Test func statusVersionAndPlanHaveAsyncForms() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-async-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (migrator, url) = try twoVersions(in: folder)
        let status = try await migrator.status(ofStoreAt: url)
        #expect(status.version == "v1")
        #expect(try await migrator.version(ofStoreAt: url).version == "v1")
        let plan = try await migrator.plan(forStoreAt: url)
        #expect(plan.steps.map(\.destination.version) == ["v2"])
        // A task cancelled already does not start them.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await migrator.status(ofStoreAt: url)
        }
        await #expect(throws: MigrationError.self) { try await cancelled.value }
    }

    /// A task cancelled while its migration waited for another connection's lock on the store
    /// ended with "in use" (`MapcError.storeInUse`), as if nobody had asked it to stop: it is
    /// `MigrationError.cancelled`, the store unchanged.
    @Test func aMigrationCancelledWhileWaitingForALockIsCancelled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-lockcancel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (migrator, url) = try twoVersions(in: folder)
        let before = try Data(contentsOf: url)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true
        let holder = try DatabaseQueue(path: url.path, configuration: configuration)
        try await holder.writeWithoutTransaction { try $0.execute(sql: "BEGIN EXCLUSIVE") }
        let task = Task { try await migrator.migrate(storeAt: url) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect {
            _ = try await task.value
        } throws: { error in
            guard case MigrationError.cancelled = error else { Issue.record("\(error)"); return false }
            return true
        }
        try await holder.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
        try holder.close()
        #expect(try Data(contentsOf: url) == before)
    }

    /// A Core Data store of another model (it records no model name) was identified as "no
    /// version in the schemas matches the store's entity hashes", where `version(ofStoreAt:)`
    /// and `plan` say it is another model's store: `status` says what they say.
    @Test func theStatusOfAnotherModelsCoreDataStoreNamesItSo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-other-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (migrator, _) = try twoVersions(in: folder)
        let other = try SchemaCatalog(files: ["v1.yaml": "model: Zoo\nversion: v1\nentities:\n  Zebra:\n    attributes:\n      stripes: int64?\n"])
        let url = folder.appendingPathComponent("zoo.sqlite")
        try Store.create(at: url.path, schema: try other.require(version: "v1"), format: .coreData).close()
        let identification = try await migrator.status(ofStoreAt: url).identification
        #expect(identification.contains("another model"), "\(identification)")
        #expect {
            _ = try migrator.version(ofStoreAt: url) as Schema
        } throws: { error in
            "\(error)".contains("another model")
        }
    }
}
