import Foundation
import MapcKit
import Testing

/// A plan for one store sets aside a step's problems of entities the store holds no objects of,
/// as Core Data, which validates the objects a migration makes, migrates such a store: but only
/// problems that a run's validation refuses when an object meets them, since the store may gain
/// objects between the plan and the run.
@Suite("Plans for a store that holds no objects of an entity")
struct StoreHeldEntitiesTests {
    private func migrator(tagInV2 tag: String) throws -> Migrator {
        let item = "  Item:\n    attributes:\n      name: string\n"
        return try Migrator(schemaFiles: [
            "versions.yaml": "versions: [v1, v2]\n",
            "v1.yaml": "model: S\nversion: v1\nentities:\n" + item + "  Tag:\n    attributes:\n      label: string?\n",
            "v2.yaml": "model: S\nversion: v2\nentities:\n" + item + "  Tag:\n    attributes:\n" + tag,
        ])
    }

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-held-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private func store(in folder: URL, _ migrator: Migrator, objects: String) throws -> URL {
        let url = folder.appendingPathComponent("\(UUID().uuidString).db")
        let first = try migrator.schemas.require(version: "v1")
        let store = try Store.create(at: url.path, schema: first)
        try store.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "v1", "objects": {\#(objects)}}"#.utf8), path: "data.json"), schema: first).objects)
        try store.close()
        return url
    }

    /// A Tag saved between the plan (which found none) and the run meets the new required
    /// attribute without a value: the run's validation refuses it, and the store is as it was.
    @Test func anObjectSavedAfterThePlanFailsTheRunsValidation() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrator = try migrator(tagInV2: "      label: string?\n      color: string\n")
        let url = try store(in: folder, migrator, objects: #""Item": [{"id": "i", "name": "kept"}]"#)
        let plan = try migrator.plan(forStoreAt: url)
        #expect(plan.steps.count == 1)
        let store = try Store.open(at: url.path, schema: try migrator.schemas.require(version: "v1"))
        try store.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "v1", "objects": {"Tag": [{"id": "t", "label": "red"}]}}"#.utf8), path: "t.json"),
                                           schema: try migrator.schemas.require(version: "v1")).objects)
        try store.close()
        let before = try Data(contentsOf: url)
        #expect(throws: MigrationError.self) { try migrator.migrate(plan) }
        #expect(try Data(contentsOf: url) == before)
    }

    /// A change that would lose a Tag's value (text to a number) is not set aside for a store
    /// holding no Tags: nothing would refuse one saved before the run.
    @Test func aChangeValidationWouldNotCatchStaysRefused() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrator = try migrator(tagInV2: "      label: int32?\n")
        let url = try store(in: folder, migrator, objects: #""Item": [{"id": "i", "name": "kept"}]"#)
        #expect(throws: PlanError.self) { try migrator.plan(forStoreAt: url) }
    }
}
