import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// How a migration numbers the objects it creates: an inferred step keeps every key, as Core Data's
/// lightweight migration keeps `Z_PK`; a mapping model's step numbers each table from 1 in creation
/// order (mapping by mapping, source key order within one), as Core Data's migration manager does.
/// Both paths (compiled SQL and the interpreter) give the same keys, and relationships follow.
@Suite("Key numbering")
struct KeyNumberingTests {
    /// A v2 store with notes under keys 1, 2, 3, 5, 8 (others deleted), every other one with an image.
    private func sparseStore(_ layout: TestLayout, in folder: URL) throws -> Store {
        let v2 = try uncloudNotes("v2")
        let store = try Store.create(at: folder.appendingPathComponent("v2.db").path, schema: v2, format: layout.format)
        var notes: [ObjectData] = []
        for index in 1...8 {
            let image: Value = index % 2 == 1 ? .binary(Data([UInt8(index)])) : .null
            notes.append(ObjectData(id: "n\(index)", entity: "Note", attributes: [
                "title": .string("Note \(index)"), "body": .string("b"), "dateCreated": .date(Date(timeIntervalSince1970: Double(index))),
                "displayIndex": .integer(Int64(index)), "image": image,
            ]))
        }
        try store.insert(notes)
        let storage = try store.layout.storage(of: "Note")
        try store.database.write { db in
            try db.execute(sql: "DELETE FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) IN (4, 6, 7)")
        }
        return store
    }

    private func run(_ source: Store, to v3: Schema, layout: TestLayout, in folder: URL, keepsKeys: Bool, compiled: Bool) throws -> Store {
        let path = packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").path
        let model = try #require(MappingLoader.parse(source: SourceFile(path: path, text: try String(contentsOfFile: path, encoding: .utf8))).mapping)
        let destination = try Store.create(at: folder.appendingPathComponent("v3-\(keepsKeys)-\(compiled).db").path, schema: v3, format: layout.format)
        var step = StepMigration(source: source, destination: destination, mapping: model)
        step.keepsKeys = keepsKeys
        step.allowsSQL = compiled
        _ = try step.run()
        return destination
    }

    @Test(arguments: TestLayout.allCases, [true, false])
    func aMappingModelsStepNumbersEachTableFromOneAndAnInferredStepKeepsKeys(layout: TestLayout, compiled: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try sparseStore(layout, in: folder)
        let v3 = try uncloudNotes("v3")

        let renumbered = try run(source, to: v3, layout: layout, in: folder, keepsKeys: false, compiled: compiled)
        let notes = try renumbered.objects(ofExactEntity: "Note")
        #expect(notes.map(\.key) == [1, 2, 3, 4, 5])
        #expect(notes.map { $0.attributes["displayIndex"] } == [1, 2, 3, 5, 8].map { Value.integer($0) })
        // Notes 1, 3 and 5 have images (7 was deleted): their attachments are numbered 1 to 3.
        let attachments = try renumbered.objects(ofExactEntity: "Attachment")
        #expect(attachments.map(\.key) == [1, 2, 3])
        var displayIndexOf: [String: Value] = [:]
        for note in notes { displayIndexOf[note.id] = note.attributes["displayIndex"] }
        let related = attachments.map { attachment in attachment.relationships["note"]?.first.flatMap { displayIndexOf[$0] } }
        #expect(related == [.integer(1), .integer(3), .integer(5)])

        // The same step as inference would run it keeps the notes' keys.
        let kept = try run(source, to: v3, layout: layout, in: folder, keepsKeys: true, compiled: compiled)
        #expect(try kept.objects(ofExactEntity: "Note").map(\.key) == [1, 2, 3, 5, 8])
        let keptAttachments = try kept.objects(ofExactEntity: "Attachment")
        #expect(keptAttachments.map(\.key) == [1, 3, 5], "attachments keep their notes' keys: theirs are free in the new table")
        #expect(keptAttachments.compactMap { $0.relationships["note"]?.first }.count == 3)
    }

    /// A broken rule names the mapping that made the object, also when the object was created by
    /// SQL and recorded no association (nothing looks it up).
    @Test(arguments: TestLayout.allCases, [true, false])
    func validationNamesTheMappingOfObjectsThatRecordedNoAssociation(layout: TestLayout, compiled: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try sparseStore(layout, in: folder)
        let model = try loadMapping(noteToNoteMapping(more: """
          - name: EveryNoteToAttachment
            source: Note
            destination: Attachment
            attributes: { image: $source.image, dateCreated: $source.dateCreated }

        """))
        let destination = try Store.create(at: folder.appendingPathComponent("v3.db").path, schema: try uncloudNotes("v3"), format: layout.format)
        var step = StepMigration(source: source, destination: destination, mapping: model)
        step.allowsSQL = compiled
        let error = #expect(throws: MigrationError.self) { try step.run() }
        guard case .validation(let violations, let total)? = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(total == 2, "notes 2 and 8 have no image")
        #expect(violations.allSatisfy { $0.mapping == "EveryNoteToAttachment" && $0.property == "image" }, "\(violations)")
    }
}
