import Foundation
import Testing
@testable import MapcKit

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
    }
}
