import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The shapes of expression answered without the evaluator are recognised exactly, and answer as
/// the evaluator does.
@Suite("Expressions answered without walking them")
struct EvaluationShortcutsTests {
    private func model(filter: String) throws -> MappingModel {
        try loadMapping(noteToNoteMapping(["filter: '\(filter)'"]))
    }

    private func source() throws -> Store {
        let store = try Store.inMemory(schema: try uncloudNotes("v2"))
        try store.insert(v2Notes(7, image: Data()))   // empty data, which is not nil
        return store
    }

    @Test func nilTestsAreRecognisedOnlyInTheirExactShape() throws {
        func test(_ filter: String) throws -> String? {
            let model = try model(filter: filter)
            return MigrationAnalysis.nilTest(model.entityMappings[0].filter!.expression, in: model.entityMappings[0], sourceSchema: try uncloudNotes("v2")).map { "\($0.attribute) \($0.keepsNil)" }
        }
        #expect(try test("image != nil") == "image false")
        #expect(try test("nil == $source.image") == "image true")
        #expect(try test("SELF.image == nil") == "image true")
        #expect(try test("image != nil AND title != nil") == nil)
        #expect(try test("title ==[c] nil") == nil)
        #expect(try test("image > nil") == nil)
        #expect(try test("unknownKey == nil") == nil)
    }

    @Test func lookupsOfTheSourceAreRecognisedOnlyInTheirExactShape() throws {
        func name(_ text: String) throws -> String? { MigrationAnalysis.lookupOfTheSource(try ExpressionParser.parse(text).get()) }
        let selector = "\"destinationInstancesForEntityMappingNamed:sourceInstances:\""
        #expect(try name("FUNCTION($manager, \(selector), \"NoteToNote\", $source)") == "NoteToNote")
        #expect(try name("FUNCTION($manager, \(selector), \"NoteToNote\", SELF)") == "NoteToNote")
        #expect(try name("FUNCTION($manager, \(selector), \"NoteToNote\", $source.note)") == nil)
        #expect(try name("FUNCTION($manager, \(selector), $source.title, $source)") == nil)
        #expect(try name("FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"note\", $source)") == nil)
    }

    /// A nil test keeps exactly the objects the evaluator keeps, whichever way it is written,
    /// with empty data (not nil) kept as a value.
    @Test(arguments: ["image != nil", "nil != image", "image == nil", "SELF.image == nil", "NOT (image == nil)"])
    func nilTestsKeepWhatTheEvaluatorKeeps(filter: String) throws {
        let destination = try Store.inMemory(schema: try uncloudNotes("v3"))
        var step = StepMigration(source: try source(), destination: destination, mapping: try model(filter: filter))
        step.allowsSQL = false
        _ = try step.run()
        let titles = try destination.objects(ofExactEntity: "Note").compactMap { note -> String? in
            if case .string(let title)? = note.attributes["title"] { return title }
            return nil
        }.sorted()
        let withImages = ["Note 0", "Note 3", "Note 6"]
        #expect(titles == (filter.contains("==") && !filter.hasPrefix("NOT") ? ["Note 1", "Note 2", "Note 4", "Note 5"] : withImages), "\(filter): \(titles)")
    }
}
