import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Records nothing and changes nothing: a custom policy whose presence alone matters.
final class PlainPolicy: EntityMigrationPolicy {}

/// A mapping's to-one relationships that name objects earlier mappings made are written with its
/// objects' rows in phase 1; anything that could see or change the difference waits for phase 2.
@Suite("Relationships written with the rows")
struct RelationshipsAtCreationTests {
    private static let lookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)"

    private func model(_ yaml: String) throws -> MappingModel {
        try loadMapping(yaml)
    }

    /// The shipped v2 -> v3 shape, with the attachment's relationship expression and extra
    /// mapping text given.
    private func v2ToV3(note: String = lookup, attachmentFirst: Bool = false, noteToNote extra: String = "", policy: String = "") throws -> MappingModel {
        let noteToNote = """
          - name: NoteToNote
            source: Note
            destination: Note
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
        \(extra)
        """
        let noteToAttachment = """
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            filter: image != nil
            attributes: { image: $source.image, dateCreated: $source.dateCreated }
            relationships: { note: '\(note)' }

        """
        let ordered = attachmentFirst ? noteToAttachment + noteToNote : noteToNote + noteToAttachment
        return try model("source: v2\ndestination: v3\nentityMappings:\n" + ordered + policy)
    }

    /// Runs the model through the interpreter: the destination, and the mappings phase 2 related
    /// one by one (those it reported progress for).
    private func migrate(_ model: MappingModel, layout: TestLayout, policies: PolicyRegistry = .shared, destinationSchema: Schema? = nil) throws -> (store: Store, related: Set<String>) {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(v2Notes(7))
        let destination = try layout.store(try destinationSchema ?? uncloudNotes("v3"))
        var step = StepMigration(source: source, destination: destination, mapping: model, policies: policies)
        step.allowsSQL = false
        step.batchSize = 2
        var related: Set<String> = []
        step.progress = { progress in
            if progress.phase == .relate, let mapping = progress.mapping { related.insert(mapping) }
        }
        _ = try step.run()
        return (destination, related)
    }

    /// Each attachment's note: "the attachment's date (seconds) -> the note's title", and each
    /// note's attachments the same way, so both sides are read back from the store.
    private func owners(_ store: Store) throws -> [String] {
        func text(_ value: Value?) -> String {
            switch value {
            case .string(let title)?: return title
            case .date(let date)?: return "\(Int(date.secondsSince1970))"
            default: return "?"
            }
        }
        let notes = try store.objects(ofExactEntity: "Note"), attachments = try store.objects(ofExactEntity: "Attachment")
        let titles = Dictionary(uniqueKeysWithValues: notes.map { ($0.id, text($0.attributes["title"])) })
        let dates = Dictionary(uniqueKeysWithValues: attachments.map { ($0.id, text($0.attributes["dateCreated"])) })
        return (attachments.map { "\(text($0.attributes["dateCreated"])) -> \(($0.relationships["note"] ?? []).map { titles[$0] ?? "?" })" }
            + notes.map { "\(text($0.attributes["title"])) <- \(($0.relationships["attachments"] ?? []).map { dates[$0] ?? "?" })" }).sorted()
    }

    @Test(arguments: TestLayout.allCases)
    func aLookupOfAnEarlierMappingIsWrittenWithTheRowAsPhaseTwoWouldSetIt(layout: TestLayout) throws {
        let early = try migrate(try v2ToV3(), layout: layout)
        #expect(!early.related.contains("NoteToAttachment"), "\(early.related)")
        #expect(try owners(early.store).filter { $0.contains("->") } == ["0 -> [\"Note 0\"]", "3 -> [\"Note 3\"]", "6 -> [\"Note 6\"]"])
        #expect(try owners(early.store).contains("Note 3 <- [\"3\"]") && owners(early.store).contains("Note 4 <- []"))
        // The same lookup, refused by the analysis for naming $destination: phase 2 sets it.
        let late = try migrate(try v2ToV3(note: "TERNARY($destination != nil, \(Self.lookup), nil)"), layout: layout)
        #expect(late.related.contains("NoteToAttachment"), "\(late.related)")
        #expect(try owners(early.store) == owners(late.store))
    }

    @Test(arguments: TestLayout.allCases)
    func relationshipsWaitForPhaseTwoWhenTheWritesOrderMatters(layout: TestLayout) throws {
        let reference = try owners(try migrate(try v2ToV3(), layout: layout).store)
        // The looked-up mapping comes later: its objects do not exist yet in phase 1.
        let later = try migrate(try v2ToV3(attachmentFirst: true), layout: layout)
        #expect(later.related.contains("NoteToAttachment"))
        #expect(try owners(later.store) == reference)
        // Another mapping sets the inverse: which write stays depends on the order of phase 2.
        let inverse = "    relationships: { attachments: 'FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToAttachment\", $source)' }\n"
        let both = try migrate(try v2ToV3(attachmentFirst: true, noteToNote: inverse), layout: layout)
        #expect(both.related.contains("NoteToAttachment") && both.related.contains("NoteToNote"), "\(both.related)")
        #expect(try owners(both.store) == reference)
        // A custom policy anywhere may set anything in any phase.
        let registry = PolicyRegistry()
        registry.register(PlainPolicy.self, as: "Plain")
        let policy = """
          - name: Nothing
            source: Note
            destination: Note
            policy: Plain
            filter: "title == 'none'"
            attributes: { title: $source.title }

        """
        let withPolicy = try migrate(try v2ToV3(policy: policy), layout: layout, policies: registry)
        #expect(withPolicy.related.contains("NoteToAttachment"))
        #expect(try owners(withPolicy.store) == reference)
    }

    /// A to-one given two objects fails at creation with phase 2's error, naming the object by
    /// its stored identity as phase 2 did (Core Data's names it by entity and key).
    @Test(arguments: TestLayout.allCases)
    func aToOneGivenTwoObjectsFailsAsInPhaseTwo(layout: TestLayout) throws {
        let two = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", {$source, SELF})"
        let error = #expect(throws: MigrationError.self) { try migrate(try v2ToV3(note: two), layout: layout) }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("to-one relationship was given 2 objects"), "\(message)")
        #expect(message.contains("Attachment '\(layout.id("n0.NoteToAttachment", entity: "Attachment", key: 1))'"), "\(message)")
    }

    /// A uniqueness constraint over the relationship is checked by phase 2's UPDATE, as before.
    @Test(arguments: TestLayout.allCases)
    func aRelationshipInAUniquenessConstraintWaitsForPhaseTwo(layout: TestLayout) throws {
        var v3 = try uncloudNotes("v3")
        let position = try #require(v3.entities.firstIndex { $0.name == "Attachment" })
        v3.entities[position].uniquenessConstraints = [["dateCreated", "note"]]
        let run = try migrate(try v2ToV3(), layout: layout, destinationSchema: v3)
        #expect(run.related.contains("NoteToAttachment"), "\(run.related)")
        #expect(try owners(run.store).filter { $0.contains("->") } == ["0 -> [\"Note 0\"]", "3 -> [\"Note 3\"]", "6 -> [\"Note 6\"]"])
    }

    /// A `$manager` lookup inside a fetch request's predicate string counts like any other: the
    /// mapping looked up records its associations, and the lookup finds its objects.
    @Test(arguments: TestLayout.allCases)
    func lookupsInsideAFetchPredicateFindTheirObjects(layout: TestLayout) throws {
        let rest = """
          - name: NotesWithoutImages
            source: Note
            destination: Note
            sourceExpression: 'FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"NoteToNote\\", SELF).@count == 0"), $manager.sourceContext, NO)'
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }

        """
        let model = try model("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            filter: image != nil
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
        \(rest)
        """)
        let run = try migrate(model, layout: layout)
        // Three notes with an image, four without: each once.
        #expect(try run.store.objects(ofExactEntity: "Note").count == 7)
    }

    /// Mappings are told apart by name: a model made in code with two of one name is refused.
    @Test func twoMappingsOfOneNameAreRefused() throws {
        let model = try v2ToV3()
        var twice = model.entityMappings
        twice[1].name = "NoteToNote"
        let error = #expect(throws: MigrationError.self) {
            try migrate(MappingModel(source: "v2", destination: "v3", entityMappings: twice), layout: .mapc)
        }
        #expect(error.map { "\($0)" }?.contains("two entity mappings are named 'NoteToNote'") == true, "\(String(describing: error))")
    }

    @Test func theAnalysisAcceptsOnlyWhatPhaseOneAlreadyKnows() throws {
        let model = try v2ToV3()
        func accepts(_ text: String, at index: Int = 1) throws -> Bool {
            MigrationAnalysis.evaluatesAtCreation(try ExpressionParser.parse(text).get(), mappingIndex: index, in: model)
        }
        #expect(try accepts(Self.lookup))
        #expect(try !accepts(Self.lookup, at: 0))   // its own objects are not all made yet
        #expect(try accepts("FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", SELF)"))
        #expect(try accepts("SUBQUERY(\(Self.lookup), $n, $n != nil)"))
        #expect(try accepts("FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)"))
        #expect(try !accepts("FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"Unknown\", $source)"))
        #expect(try !accepts("FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", $source.title, $source)"))
        #expect(try !accepts("FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"note\", $source)"))
        #expect(try !accepts("$destination"))
        #expect(try !accepts("$entityMapping"))
        #expect(try !accepts("SUBQUERY(\(Self.lookup), $destination, $destination != nil)"))
        #expect(try !accepts("$manager.destinationContext"))
        // The predicate string of a fetch is evaluated with the mapping's variables bound.
        let fetch = { (predicate: String) in "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \(predicate)), $manager.sourceContext, NO)" }
        #expect(try accepts(fetch("\"image != nil AND title == $source.title\"")))
        #expect(try !accepts(fetch("\"FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'NoteToAttachment', SELF).@count > 0\"")))
        #expect(try !accepts(fetch("\"$destination != nil\"")))
        #expect(try !accepts(fetch("$source.title")))   // not a literal: unknown until run
    }
}
