import Foundation
import Synchronization
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// Records every hook call, in order, into a shared log.
final class RecordingPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var log: [String] = []
    static let lock = NSLock()
    static func record(_ entry: String) { lock.withLock { log.append(entry) } }

    override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws { Self.record("begin \(mapping.name)") }
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        Self.record("create \(mapping.name) \(source.data.id)")
        try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
    }
    override func endInstanceCreation(_ mapping: EntityMapping, manager: MigrationManager) throws { Self.record("endInstanceCreation \(mapping.name)") }
    override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        Self.record("relate \(mapping.name) \(destination.id)")
        try super.createRelationships(for: destination, mapping: mapping, manager: manager)
    }
    override func endRelationshipCreation(_ mapping: EntityMapping, manager: MigrationManager) throws { Self.record("endRelationshipCreation \(mapping.name)") }
    override func performCustomValidation(_ mapping: EntityMapping, manager: MigrationManager) throws { Self.record("validate \(mapping.name)") }
    override func end(_ mapping: EntityMapping, manager: MigrationManager) throws { Self.record("end \(mapping.name)") }
    override var functions: [String: PolicyFunction] { ["shout:": { arguments in
        guard case .scalar(.string(let text))? = arguments.first else { return .null }
        return .scalar(.string(text.uppercased() + "!"))
    }] }
}

/// A policy that relates the source object instead of the destination one (a mistake).
final class SourceOwnerPolicy: EntityMigrationPolicy {
    override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        guard let source = try manager.sourceObject(for: destination) else { return }
        try manager.setRelationship("attachments", of: DestinationObject(source.ref), to: [], mapping: mapping)
    }
}

/// A policy that rejects the result in phase 3.
final class RejectingPolicy: EntityMigrationPolicy {
    override func performCustomValidation(_ mapping: EntityMapping, manager: MigrationManager) throws {
        throw MigrationError.policy(mapping: mapping.name, message: "custom validation says no")
    }
}

/// A policy counting the objects it is asked to make.
final class CountingPolicy: EntityMigrationPolicy {
    static let made = Mutex(0)
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        Self.made.withLock { $0 += 1 }
        try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
    }
}

/// A policy that adds a note in its last hook, after validation has counted the objects.
final class LateInsertingPolicy: EntityMigrationPolicy {
    override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
        try manager.insert(DestinationObject(entity: "Note", id: "late", attributes: [
            "title": .string("Late"), "body": .string("Added"), "dateCreated": .date(Date(timeIntervalSince1970: 0)), "displayIndex": .integer(99),
        ]), mapping: mapping)
    }
}

/// A policy that adds a note breaking a rule (no body, which is required) in its last hook.
final class LateBreakingPolicy: EntityMigrationPolicy {
    override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
        try manager.insert(DestinationObject(entity: "Note", id: "late", attributes: [
            "title": .string("Late"), "dateCreated": .date(Date(timeIntervalSince1970: 0)),
        ]), mapping: mapping)
    }
}

/// A policy that relates each attachment it made to its note in `performCustomValidation`,
/// where the relationship is required: Core Data calls the hook before its own validation.
final class RelatingInValidationPolicy: EntityMigrationPolicy {
    private var made: [DestinationObject] = []
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        made.append(try manager.insert(try manager.makeDestination(for: source, mapping: mapping), associatedWith: source, mapping: mapping))
    }
    override func performCustomValidation(_ mapping: EntityMapping, manager: MigrationManager) throws {
        for attachment in made {
            guard let source = try manager.sourceObject(for: attachment) else { continue }
            try manager.setRelationship("note", of: attachment, to: try manager.destinationInstances(forEntityMappingNamed: "NoteToNote", sourceInstances: [source.ref]), mapping: mapping)
        }
    }
}

@Suite("Migration manager")
struct MigrationManagerTests {
    private func mapping(_ yaml: String) throws -> MappingModel {
        try loadMapping(yaml)
    }

    /// Runs a v2 -> v3 (or given) migration that must fail, returning its error.
    private func failure(_ model: MappingModel, source: Store, to version: String = "v3", layout: TestLayout, policies: PolicyRegistry = .shared) throws -> MigrationError? {
        let destination = try uncloudNotes(version)
        return #expect(throws: MigrationError.self) {
            _ = try StepMigration(source: source, destination: try layout.store(destination), mapping: model, policies: policies).run()
        }
    }

    private func notes(_ count: Int, images: (Int) -> Bool = { $0 % 3 == 0 }) -> [ObjectData] {
        v2Notes(count, images: images)
    }

    /// A lookup finds a mapping's objects once they exist: in its own phase 1 a mapping finds
    /// none of its objects not yet made, a later mapping finds every one, and phase 2 finds them
    /// with their identities (the lookup of a complete declarative mapping reads no row).
    @Test(arguments: TestLayout.allCases) func lookupsFindObjectsOnceCreated(layout: TestLayout) throws {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(4, images: { $0 != 2 }))
        let lookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)"
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: '\(lookup).@count' }
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            filter: image != nil
            attributes: { image: $source.image, dateCreated: 'CAST(\(lookup).@count, "NSDate")' }
            relationships: { note: '\(lookup)' }

        """)
        let destination = try layout.store(try uncloudNotes("v3"))
        var step = StepMigration(source: source, destination: destination, mapping: model)
        step.allowsSQL = false
        _ = try step.run()
        let notes = try destination.objects(ofExactEntity: "Note"), attachments = try destination.objects(ofExactEntity: "Attachment")
        #expect(notes.count == 4 && notes.allSatisfy { $0.attributes["displayIndex"] == .integer(0) }, "\(notes.map(\.attributes))")
        // One second after 2001: the later mapping found one note per source object.
        #expect(attachments.count == 3 && attachments.allSatisfy { $0.attributes["dateCreated"] == .date(Date(timeIntervalSinceReferenceDate: 1)) })
        let byID = Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0) })
        // Each attachment belongs to the note made from its own source note (those with an image).
        var owners: [String] = []
        for attachment in attachments {
            let note = try #require(attachment.relationships["note"]?.first.flatMap { byID[$0] })
            #expect(note.relationships["attachments"] == [attachment.id])
            if case .string(let title)? = note.attributes["title"] { owners.append(title) }
        }
        #expect(owners.sorted() == ["Note 0", "Note 1", "Note 3"])
    }

    @Test(.serialized, arguments: TestLayout.allCases) func hooksRunInCoreDataOrder(layout: TestLayout) throws {
        let registry = PolicyRegistry()
        registry.register(RecordingPolicy.self, as: "Recording")
        RecordingPolicy.lock.withLock { RecordingPolicy.log = [] }
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(2, images: { $0 == 1 }))
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            policy: Recording
            attributes: { title: "FUNCTION($entityPolicy, 'shout:', $source.title)", body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            policy: Recording
            filter: image != nil
            attributes: { image: $source.image, dateCreated: $source.dateCreated }
            relationships:
              note: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source)
        """ + "\n")
        let destination = try layout.store(try uncloudNotes("v3"))
        _ = try StepMigration(source: source, destination: destination, mapping: model, policies: registry).run()
        let log = RecordingPolicy.lock.withLock { RecordingPolicy.log }
        let n0 = layout.id("n0", entity: "Note", key: 1), n1 = layout.id("n1", entity: "Note", key: 2)
        #expect(log == [
            "begin NoteToNote", "create NoteToNote \(n0)", "create NoteToNote \(n1)", "endInstanceCreation NoteToNote",
            "begin NoteToAttachment", "create NoteToAttachment \(n1)", "endInstanceCreation NoteToAttachment",
            "relate NoteToNote \(n0)", "relate NoteToNote \(n1)", "endRelationshipCreation NoteToNote",
            "relate NoteToAttachment \(layout.id("n1.NoteToAttachment", entity: "Attachment", key: 1))", "endRelationshipCreation NoteToAttachment",
            "validate NoteToNote", "validate NoteToAttachment", "end NoteToNote", "end NoteToAttachment",
        ])
        #expect(try destination.objects(of: "Note").first?.attributes["title"] == .string("NOTE 0!"), "policy functions are callable from expressions")
        #expect(try destination.objects(of: "Attachment").first?.relationships["note"] == [n1])
    }

    /// The summary's object counts come from validation's scans, unless something was written
    /// after them: then they are counted again.
    @Test(arguments: TestLayout.allCases, [false, true]) func summaryCountsEveryObject(layout: TestLayout, insertsLate: Bool) throws {
        let registry = PolicyRegistry()
        registry.register(LateInsertingPolicy.self, as: "LateInserting")
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(5, images: { $0 < 2 }))
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            \(insertsLate ? "policy: LateInserting" : "")
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            filter: image != nil
            attributes: { image: $source.image, dateCreated: $source.dateCreated }
        """ + "\n")
        let destination = try layout.store(try uncloudNotes("v3"))
        let summary = try StepMigration(source: source, destination: destination, mapping: model, policies: registry).run()
        let notes = insertsLate ? 6 : 5
        #expect(try destination.count(of: "Note", exactly: true) == notes)
        #expect(summary.destinationCounts.map { "\($0.name) \($0.count)" } == ["Note \(notes)", "Attachment 2"])
        if layout == .coreData {
            // Core Data hands out keys above Z_MAX: it covers the late note's too.
            let (max, largest) = try destination.database.read { db in
                (try Int.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'"), try Int.fetchOne(db, sql: "SELECT max(Z_PK) FROM ZNOTE"))
            }
            #expect(max == largest && largest == notes)
        }
    }

    /// What a hook writes after validation is validated too: a rule it breaks fails the step.
    @Test(arguments: TestLayout.allCases) func objectsWrittenAfterValidationAreValidated(layout: TestLayout) throws {
        let registry = PolicyRegistry()
        registry.register(LateBreakingPolicy.self, as: "LateBreaking")
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(2))
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            policy: LateBreaking
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
        """ + "\n")
        let error = try failure(model, source: source, layout: layout, policies: registry)
        guard case .validation(let violations, let total)? = error else { Issue.record("expected a validation error, got \(String(describing: error))"); return }
        #expect(total == 1)
        #expect(violations.first.map { "\($0.property ?? "-") \($0.rule)" } == "body required value missing")
    }

    /// `performCustomValidation` ran after the declarative validation, where Apple calls it
    /// before: a policy completing the objects there (a required relationship) failed the run
    /// before its hook was called.
    @Test(arguments: TestLayout.allCases) func customValidationRunsBeforeTheDeclarativeOne(layout: TestLayout) throws {
        let registry = PolicyRegistry()
        registry.register(RelatingInValidationPolicy.self, as: "RelatingInValidation")
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(4, images: { $0 < 2 }))
        let v3 = try String(contentsOf: packageRoot.appendingPathComponent("schemas/v3.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "inverse: attachments, deleteRule: nullify, optional: true", with: "inverse: attachments, deleteRule: nullify, optional: false")
        let model = try mapping(noteToNoteMapping(more: """
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            filter: image != nil
            policy: RelatingInValidation
            attributes: { image: $source.image, dateCreated: $source.dateCreated }

        """))
        let destination = try layout.store(try loadSchema(v3))
        _ = try StepMigration(source: source, destination: destination, mapping: model, policies: registry).run()
        #expect(try destination.count(of: "Attachment", exactly: true) == 2)
    }

    @Test(arguments: TestLayout.allCases) func everyRelationshipKindSurvivesACopyMigration(layout: TestLayout) throws {
        let k1 = try kitchenSchema()
        let k2Text = try String(contentsOf: packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/kitchen.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "version: k1", with: "version: k2")
            .replacingOccurrences(of: "      thing: { type: transformable", with: "      added: string?\n      thing: { type: transformable")
        let k2 = try loadSchema(k2Text)
        let source = try layout.store(k1)
        // Core Data's DECIMAL column holds what a double holds (see CrossLayoutTests).
        try source.insert(try DataFile.read(layout == .coreData ? kitchenData(decimal: "-12345.0625") : kitchenData(), schema: k1).objects)
        var yaml = "source: k1\ndestination: k2\nentityMappings:\n"
        for entity in k1.entities { yaml += "  - { name: \(entity.name)Copy, source: \(entity.name), destination: \(entity.name) }\n" }
        let model = try mapping(yaml)
        #expect(model.entityMappings.allSatisfy { $0.type == .copy })
        let destination = try layout.store(k2)
        let summary = try StepMigration(source: source, destination: destination, mapping: model).run()
        #expect(summary.created.map(\.count).reduce(0, +) == 14)
        var expected = try DataFile.dump(source).serialized(pretty: true)
        expected = expected.replacingOccurrences(of: "\"version\": \"k1\"", with: "\"version\": \"k2\"")
            .replacingOccurrences(of: "        \"thing\":", with: "        \"added\": null,\n        \"thing\":")
        let got = try DataFile.dump(destination).serialized(pretty: true)
        #expect(got == expected)
        if got != expected {
            for (a, b) in zip(got.split(separator: "\n"), expected.split(separator: "\n")) where a != b { print("GOT  \(a)\nWANT \(b)") }
        }
    }

    @Test(arguments: TestLayout.allCases) func anExpressionFailureNamesMappingPropertyObjectAndPosition(layout: TestLayout) throws {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(1_200))
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes:
              title: $source.title
              body: $source.body
              dateCreated: $source.dateCreated
              displayIndex: modulus:by:(1000, $source.displayIndex - 999)
        """ + "\n")
        let error = try failure(model, source: source, layout: layout)
        guard case .expression(let name, let property, let object, let diagnostic)? = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(name == "NoteToNote" && property == "displayIndex" && object == ObjectRef(entity: "Note", id: layout.id("n999", entity: "Note", key: 1_000)))
        #expect(diagnostic.message == "modulus by zero")
        #expect(diagnostic.location == FileLocation(path: "m.yaml", line: 11, column: 21))
    }

    @Test(arguments: TestLayout.allCases) func validationFailuresAreListedWithMappingEntityObjectPropertyValueAndRule(layout: TestLayout) throws {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(30))
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes:
              title: TERNARY($source.displayIndex > 4, $source.title, nil)
              body: $source.body
              dateCreated: $source.dateCreated
              displayIndex: $source.displayIndex
        """ + "\n")
        let error = try failure(model, source: source, layout: layout)
        guard case .validation(let violations, let total)? = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(total == 5)
        #expect(violations.first == ValidationViolation(mapping: "NoteToNote", entity: "Note", object: layout.id("n0", entity: "Note", key: 1), property: "title", value: "nil",
                                                        rule: "required value missing", sameRuleCount: 5))
        // A few examples of the rule, and how many more break it.
        #expect(violations.count == StoreValidator.examplesPerRule)
        #expect(error?.description.contains("Note '\(layout.id("n0", entity: "Note", key: 1))', property 'title': required value missing (value: nil) [created by mapping 'NoteToNote']") == true)
        #expect(error?.description.contains("  ... and 2 more breaking the same rule") == true, "\(String(describing: error))")
    }

    /// A v2 -> v3 mapping whose NoteToNote skips the first note (so new notes' keys differ from
    /// the old ones'), followed by a NoteToAttachment whose body a test appends.
    private static let notesSkippingTheFirst = """
    source: v2
    destination: v3
    entityMappings:
      - name: NoteToNote
        source: Note
        destination: Note
        filter: displayIndex > 0
        attributes:
          title: $source.title
          body: $source.body
          dateCreated: $source.dateCreated
          displayIndex: $source.displayIndex
      - name: NoteToAttachment
        source: Note
        destination: Attachment

    """

    /// `note: $source` relates an attachment to the old store's note, whose key is not that of the
    /// new note: `check` refuses it, and a run that was never checked refuses it too, instead of
    /// linking to whichever new note has that key.
    @Test(arguments: TestLayout.allCases) func aRelationshipGivenSourceObjectsIsRefused(layout: TestLayout) throws {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(6))
        let model = try mapping(Self.notesSkippingTheFirst + """
            filter: image != nil
            attributes:
              image: $source.image
              dateCreated: $source.dateCreated
            relationships:
              note: $source
        """ + "\n")
        let error = try failure(model, source: source, layout: layout)
        #expect(error?.description.contains("is an object of the source store; a relationship takes the destination objects created from it") == true, "\(String(describing: error))")
    }

    /// A compiled mapping is one long `INSERT … SELECT`: a cancellation is noticed while it runs
    /// (SQLite's progress handler asks every 10,000 steps), not only when it ends. Counted in
    /// questions asked, not time: the run is asked hundreds of times, and stops at the 100th.
    @Test func aCompiledStatementNoticesACancellationWhileItRuns() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = try Store.create(at: folder.appendingPathComponent("s.db").path, schema: try uncloudNotes("v2"), format: .mapc)
        try source.database.write { db in
            try db.execute(sql: "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < 99999) "
                           + "INSERT INTO Note (_entity, _id, title, body, dateCreated, displayIndex) SELECT 'Note', 'n' || i, 'Note ' || i, 'Body ' || i, 1714557600 + i, i FROM seq")
        }
        let model = try mapping(String(contentsOf: packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"), encoding: .utf8))
        let asked = NSLock(), count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        count.initialize(to: 0)
        defer { count.deallocate() }
        var migration = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model)
        migration.isCancelled = { asked.withLock { count.pointee += 1; return count.pointee >= 100 } }
        let error = #expect(throws: MigrationError.self) { _ = try migration.run() }
        guard case .cancelled? = error else { Issue.record("not cancelled: \(String(describing: error))"); return }
        #expect(count.pointee >= 100, "asked \(count.pointee) times")
    }

    /// An interpreted mapping asked whether to stop every 10,000 objects, so a stop waited for
    /// them all where each object takes long (a FETCH per object: 23 s after SIGTERM): it asks
    /// every 64. Counted in objects made after the stop was asked for, not in time.
    @Test func anInterpretedMappingNoticesAStopWithinAFewObjects() throws {
        let registry = PolicyRegistry()
        registry.register(CountingPolicy.self, as: "Counting")
        CountingPolicy.made.withLock { $0 = 0 }
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert(notes(1_000))
        let model = try mapping("source: v2\ndestination: v3\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    policy: Counting\n"
                                + "    attributes:\n      title: $source.title\n      body: $source.body\n      dateCreated: $source.dateCreated\n      displayIndex: $source.displayIndex\n")
        var migration = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model, policies: registry)
        migration.isCancelled = { CountingPolicy.made.withLock { $0 } > 0 }
        let error = #expect(throws: MigrationError.self) { _ = try migration.run() }
        guard case .cancelled? = error else { Issue.record("not cancelled: \(String(describing: error))"); return }
        #expect(CountingPolicy.made.withLock { $0 } <= 64)
    }

    /// A policy that sets a relationship on a source object (wrapped as a destination object) is
    /// refused: its key is the source's, and would name another destination row.
    @Test(arguments: TestLayout.allCases) func aPolicyRelatingASourceObjectIsRefused(layout: TestLayout) throws {
        let registry = PolicyRegistry()
        registry.register(SourceOwnerPolicy.self, as: "SourceOwnerPolicy")
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(3))
        let model = try mapping("source: v2\ndestination: v3\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    policy: SourceOwnerPolicy\n"
                                + "    attributes:\n      title: $source.title\n      body: $source.body\n      dateCreated: $source.dateCreated\n      displayIndex: $source.displayIndex\n")
        let error = try failure(model, source: source, layout: layout, policies: registry)
        #expect(error?.description.contains("is an object of the source store; relationships are set on the destination objects created from it") == true, "\(String(describing: error))")
    }

    /// A key path on destination objects would be read through the source store, where their
    /// keys name other rows: refused at run time (and by check), not read wrongly.
    @Test(arguments: TestLayout.allCases) func keyPathsOnDestinationObjectsAreRefused(layout: TestLayout) throws {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(6))
        let model = try mapping(Self.notesSkippingTheFirst + """
            filter: image != nil AND displayIndex > 0
            attributes:
              image: $source.image
              dateCreated: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source).dateCreated
        """ + "\n")
        let error = try failure(model, source: source, layout: layout)
        #expect(error?.description.contains("is an object of the destination store; key paths read the source store's objects only") == true, "\(String(describing: error))")
    }

    @Test(arguments: TestLayout.allCases) func customValidationCanRejectTheResult(layout: TestLayout) throws {
        let registry = PolicyRegistry()
        registry.register(RejectingPolicy.self, as: "Rejecting")
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(3))
        let model = try mapping("source: v2\ndestination: v2\nentityMappings:\n  - { name: Copy, source: Note, destination: Note, type: copy, policy: Rejecting }\n")
        let error = try failure(model, source: source, to: "v2", layout: layout, policies: registry)
        #expect(error?.description == "mapping 'Copy': custom policy failed: custom validation says no")
    }

    @Test(arguments: TestLayout.allCases) func valuesThatDoNotFitAreReportedWithTheObject(layout: TestLayout) throws {
        let source = try layout.store(try uncloudNotes("v2"))
        try source.insert(notes(2))
        let model = try mapping("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: "$source.displayIndex + 0.5" }
        """ + "\n")
        let error = try failure(model, source: source, layout: layout)
        #expect(error?.description.hasPrefix("mapping 'NoteToNote', Note '\(layout.id("n0", entity: "Note", key: 1))', property 'displayIndex': 0.5 has a fraction") == true, "\(String(describing: error))")
    }

    @Test(arguments: TestLayout.allCases) func theUnCloudNotesPolicyReadsImageSizesAndCaptions(layout: TestLayout) throws {
        registerUnCloudNotesPolicies()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0x03, 0x20, 0, 0, 0x02, 0x58, 8, 6, 0, 0, 0])
        #expect(ImageHeader.size(of: png)! == (800, 600))
        let jpeg = try #require(ImageHeader.size(of: Data([0xFF, 0xD8, 0xFF, 0xC0, 0, 17, 8, 0x01, 0x2C, 0x01, 0x90, 3])), "a baseline JPEG frame header gives its size")
        #expect(jpeg == (400, 300))
        #expect(ImageHeader.size(of: Data("GIF89a".utf8)) == nil)
        #expect(ImageHeader.size(of: Data([0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF])) == nil, "a length past the data is not trusted")
        let v3 = try uncloudNotes("v3")
        let source = try layout.store(v3)
        try source.insert([
            ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t"), "body": .string(String(repeating: "é", count: 100)), "dateCreated": .date(Date()), "displayIndex": .integer(0)]),
            ObjectData(id: "a1", entity: "Attachment", attributes: ["image": .binary(png), "dateCreated": .date(Date())], relationships: ["note": ["n1"]]),
        ])
        let model = try mapping(try String(contentsOf: packageRoot.appendingPathComponent("mappings/mapping_v3_to_v4.yaml"), encoding: .utf8))
        let destination = try layout.store(try uncloudNotes("v4"))
        _ = try StepMigration(source: source, destination: destination, mapping: model).run()
        let image = try #require(try destination.objects(of: "ImageAttachment").first)
        #expect(image.attributes["width"] == .double(800) && image.attributes["height"] == .double(600))
        #expect(image.attributes["caption"] == .string(String(repeating: "é", count: 80)))
        #expect(image.relationships["note"] == [layout.id("n1", entity: "Note", key: 1)])
        #expect(try destination.objects(of: "Note").first?.relationships["attachments"] == [layout.id("a1", entity: "ImageAttachment", key: 1)])
    }
}

@Suite("Source expressions")
struct SourceExpressionTests {
    @Test(arguments: TestLayout.allCases) func xcodesFetchFormReadsTheEntityAndItsSubentitiesThroughThePredicate(layout: TestLayout) throws {
        let v4 = try uncloudNotes("v4")
        let source = try layout.store(v4)
        try source.insert([
            ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("a"), "body": .string("b"), "dateCreated": .date(Date()), "displayIndex": .integer(1)]),
            ObjectData(id: "n2", entity: "Note", attributes: ["title": .string("skip"), "body": .string("b"), "dateCreated": .date(Date()), "displayIndex": .integer(2)]),
        ])
        let yaml = """
        source: v4
        destination: v4
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            sourceExpression: 'FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "title != ''skip''"), $manager.sourceContext, NO)'
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
          - { name: NoAttachments, source: Attachment, type: remove }
          - { name: NoImages, source: ImageAttachment, type: remove }
        """ + "\n"
        let (model, diagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let mapping = try #require(model)
        var checker = MappingChecker(mapping: mapping)
        #expect(checker.check(source: v4, destination: v4).isEmpty)
        #expect(MigrationAnalysis.standardFetch(mapping.entityMappings[0].sourceExpression!.expression)?.entity == "Note")
        let destination = try layout.store(v4)
        _ = try StepMigration(source: source, destination: destination, mapping: mapping).run()
        #expect(try destination.objects(of: "Note").map(\.id) == [layout.id("n1", entity: "Note", key: 1)])
    }

    /// `$source.key` is read from the source object as read, without the evaluator (a fast path);
    /// the same key read through the evaluator (`SELF.key`) must give the same value for every
    /// type, nil, a sub-entity's object, a value converted to another type, and a transient.
    @Test(arguments: TestLayout.allCases) func sourceKeysReadDirectlyGiveTheEvaluatorsValues(layout: TestLayout) throws {
        let types = ["text": "string", "small": "int16", "ratio": "double", "price": "decimal", "when": "date", "blob": "binary", "flag": "bool", "uid": "uuid"]
        let attributes = types.sorted { $0.key < $1.key }.map { "      \($0.key): { type: \($0.value), optional: true }" }.joined(separator: "\n")
        let source = try loadSchema("""
            model: Items
            version: v1
            entities:
              Item:
                attributes:
            \(attributes)
                  scratch: { type: string, optional: true, transient: true }
              Special:
                parent: Item
                attributes:
                  extra: { type: string, optional: true }
            """ + "\n")
        // Each key twice (direct and evaluated); `small` into a wider type, `scratch` (transient) into a stored one.
        let destinationAttributes = types.sorted { $0.key < $1.key }.flatMap { name, type in
            ["      d_\(name): { type: \(name == "small" ? "int64" : type), optional: true }", "      e_\(name): { type: \(name == "small" ? "int64" : type), optional: true }"]
        }.joined(separator: "\n")
        let destination = try loadSchema("""
            model: Items
            version: v2
            entities:
              Item:
                attributes:
            \(destinationAttributes)
                  d_scratch: { type: string, optional: true }
                  e_scratch: { type: string, optional: true }
            """ + "\n")
        let expressions = (Array(types.keys) + ["scratch"]).map { "      d_\($0): $source.\($0)\n      e_\($0): SELF.\($0)" }.joined(separator: "\n")
        let (parsed, diagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: """
            source: v1
            destination: v2
            entityMappings:
              - name: ItemToItem
                source: Item
                destination: Item
                attributes:
            \(expressions)
              - name: SpecialToItem
                source: Special
                destination: Item
                attributes:
            \(expressions)
            """ + "\n"))
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        let model = try #require(parsed)
        let full: [String: Value] = ["text": .string("é 😀"), "small": .integer(-7), "ratio": .double(2.5), "price": .decimal(Decimal(string: "12.25")!),
                                     "when": .date(Date(timeIntervalSince1970: 1_700_000_000.5)), "blob": .binary(Data([0, 255])), "flag": .bool(true),
                                     "uid": .uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!)]
        let store = try layout.store(source)
        try store.insert([
            ObjectData(id: "full", entity: "Item", attributes: full),
            ObjectData(id: "empty", entity: "Item"),
            ObjectData(id: "sub", entity: "Special", attributes: full.merging(["extra": .string("x")]) { first, _ in first }),
        ])
        let target = try layout.store(destination)
        _ = try StepMigration(source: store, destination: target, mapping: model).run()
        let migrated = try target.objects(of: "Item")
        #expect(migrated.count == 3)
        for object in migrated {
            for name in Array(types.keys) + ["scratch"] {
                #expect(object.attributes["d_\(name)"] == object.attributes["e_\(name)"], "\(object.id).\(name): \(String(describing: object.attributes["d_\(name)"])) read directly")
            }
        }
        // And the values are the source's (not nil everywhere).
        #expect(migrated.contains { $0.attributes["d_small"] == .integer(-7) && $0.attributes["d_text"] == .string("é 😀") })
        #expect(migrated.allSatisfy { $0.attributes["d_scratch"] == .null })
    }
}

/// Keeps the manager it is handed, past the migration.
final class ManagerKeepingPolicy: EntityMigrationPolicy, @unchecked Sendable {
    nonisolated(unsafe) static var kept: MigrationManager?
    override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
        Self.kept = manager
    }
}

extension MigrationManagerTests {
    /// The manager a policy is handed is a face of the run, not the run: kept past its migration,
    /// it says so when called (it neither crashes nor reaches a closed connection), and it lets
    /// the run and its connection go.
    @Test func aManagerKeptPastItsMigrationRefusesCalls() throws {
        let registry = PolicyRegistry()
        registry.register(ManagerKeepingPolicy.self, as: "Keeping")
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(3))
        let destination = try Store.inMemory(schema: try uncloudNotes("v3"))
        _ = try StepMigration(source: source, destination: destination, mapping: try loadMapping(noteToNoteMapping(["policy: Keeping"])), policies: registry).run()
        let manager = try #require(ManagerKeepingPolicy.kept)
        ManagerKeepingPolicy.kept = nil
        #expect(manager.mapping.entityMappings.map(\.name) == ["NoteToNote"])
        let error = #expect(throws: MigrationError.self) {
            try manager.destinationInstances(forEntityMappingNamed: "NoteToNote", sourceInstances: [])
        }
        #expect(error?.description.contains("has ended") == true, "\(String(describing: error))")
    }
}
