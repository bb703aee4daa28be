import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// Makes each note and one more note that no source object is migrated into.
final class NoteAndExtraPolicy: EntityMigrationPolicy {
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
        var extra = try manager.makeDestination(for: source, mapping: mapping)
        extra.id += ".extra"
        try manager.insert(extra, mapping: mapping)
    }
}

/// Progress counts what each phase visits, so that a bar reaches its end.
@Suite("Migration progress")
struct MigrationProgressTests {
    @Test(arguments: TestLayout.allCases)
    func relateCountsTheObjectsItVisitsAndValidationItsEntities(layout: TestLayout) throws {
        let registry = PolicyRegistry()
        registry.register(NoteAndExtraPolicy.self, as: "NoteAndExtra")
        let model = try loadMapping(noteToNoteMapping(["policy: NoteAndExtra"]))
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(v2Notes(7))
        var step = StepMigration(source: source, destination: try layout.store(try uncloudNotes("v3")), mapping: model, policies: registry)
        var events: [MigrationProgress] = []
        step.progress = { events.append($0) }
        let summary = try step.run()
        #expect(summary.created.first?.count == 14)
        let relate = events.filter { $0.phase == .relate }
        #expect(relate.first?.total == 7 && relate.last?.isFinished == true && relate.last?.completed == 7, "\(relate)")
        let validate = events.filter { $0.phase == .validate }
        #expect(!validate.isEmpty && validate.allSatisfy { $0.total == 2 } && validate.last?.isFinished == true && validate.last?.completed == 2, "\(validate)")
        #expect(events.allSatisfy { $0.mappingCount == 1 } && events.filter { $0.mapping != nil }.allSatisfy { $0.mappingIndex == 0 })
    }

    /// A failure says where in the mapping file its values come from, as notes a library user
    /// renders as the CLI does.
    @Test func aValidationFailurePointsIntoTheMappingFile() throws {
        let model = try loadMapping(noteToNoteMapping([]).replacingOccurrences(of: "title: $source.title", with: "title: nil"))
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(5))
        let step = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model)
        let error = #expect(throws: MigrationError.self) { try step.run() }
        let notes = error?.notes(in: model) ?? []
        #expect(notes.count == 1 && notes.first?.severity == .note, "\(notes)")
        #expect(notes.first?.message == "'title' of the objects 'NoteToNote' creates comes from nil", "\(notes)")
        #expect(notes.first?.location?.path == "m.yaml" && notes.first?.location?.line == 7, "\(notes)")
    }

    /// The whole migration's fraction goes from 0 to 1 and never back, across steps, phases and
    /// mappings whose own counts start again.
    @Test func theOverallFractionNeverGoesBack() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("notes.db")
        let v1 = try Store.create(at: store.path, schema: try uncloudNotes("v1"))
        try v1.insert((0..<30).map { ObjectData(id: "n\($0)", entity: "Note", attributes: ["title": .string("t\($0)"), "body": .string("b"), "dateCreated": .date(Date(timeIntervalSince1970: 0))]) })
        try v1.close()
        registerUnCloudNotesPolicies()
        let migrator = try Migrator(schemasFolder: packageRoot.appendingPathComponent("schemas"), mappingsFolder: packageRoot.appendingPathComponent("mappings"))
        var fractions: [Double] = []
        _ = try migrator.migrate(storeAt: store, to: "v4") { fractions.append($0.fractionCompleted) }
        #expect(fractions.first == 0 && fractions.last == 1, "\(fractions.prefix(3)) … \(fractions.suffix(3))")
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
        #expect(Set(fractions.map { ($0 * 3).rounded(.down) }).count >= 3, "it moves through the three steps")
    }
}
