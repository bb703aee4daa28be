import Foundation
import MapcKit
import Testing

/// A plan for one store leaves out of `droppedValues` what the store holds no value of; the run
/// asks again under its lock, so a value saved between the plan and the run is never dropped
/// unasked.
@Suite("Dropped values asked again by the run")
struct DroppedValuesRecheckTests {
    @Test func aValueSavedAfterThePlanIsAskedAbout() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-dropped-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrator = try Migrator(schemaFiles: [
            "versions.yaml": "versions: [v1, v2]\n",
            "v1.yaml": "model: S\nversion: v1\nentities:\n  Rec:\n    attributes:\n      name: string?\n      memo: string?\n",
            "v2.yaml": "model: S\nversion: v2\nentities:\n  Rec:\n    attributes:\n      name: string?\n",
        ])
        let first = try migrator.schemas.require(version: "v1")
        let url = folder.appendingPathComponent("s.db")
        func insert(_ objects: String) throws {
            let store = try Store.open(at: url.path, schema: first)
            try store.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "v1", "objects": {"Rec": \#(objects)}}"#.utf8), path: "d.json"), schema: first).objects)
            try store.close()
        }
        try Store.create(at: url.path, schema: first).close()
        try insert(#"[{"id": "a", "name": "A"}]"#)
        let plan = try migrator.plan(forStoreAt: url)
        #expect(plan.droppedValues.isEmpty, "the store holds no memo")
        try insert(#"[{"id": "b", "name": "B", "memo": "saved after the plan"}]"#)
        let before = try Data(contentsOf: url)
        #expect {
            try migrator.migrate(plan)
        } throws: { error in
            guard case MigrationError.dataLoss(_, let dropped) = error else { return false }
            return dropped == ["Rec.memo"]
        }
        #expect(try Data(contentsOf: url) == before)
        var accepting = MigrationOptions()
        accepting.acceptsDataLoss = true
        _ = try migrator.migrate(plan, options: accepting)
        #expect(try Store.metadata(at: url.path).metadata.version == "v2")
    }
}
