import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Records what a policy sees of its source objects, and may give its object an id of its own.
final class SeeingSourcesPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var seen: [String] = []
    nonisolated(unsafe) static var id: String?
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        Self.seen.append("\(source.data.id) displayIndex=\(source["displayIndex"]) image=\(source["image"]) partial=\(source.data.isPartial)")
        var note = try manager.makeDestination(for: source, mapping: mapping)
        if let id = Self.id { note.id = id }
        try manager.insert(note, associatedWith: source, mapping: mapping)
    }
}

@Suite("Reading only the source properties a mapping uses", .serialized)
struct SourceProjectionTests {
    private func read(_ texts: [String]) throws -> [String]? {
        let expressions = try texts.map { try ExpressionParser.parse($0).get() }
        return SourceProjection.propertiesRead(by: expressions).map { $0.sorted() }
    }

    @Test func keyPathsFromTheSourceNameWhatIsRead() throws {
        #expect(try read(["$source.title", "image != nil", "SELF.body", "$SELF.displayIndex + 1"]) == ["body", "displayIndex", "image", "title"])
        #expect(try read(["$source.note.body", "UPPERCASE($source.title)"]) == ["note", "title"])
        // A reference handed to the manager's lookups reads nothing.
        #expect(try read(["FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)"]) == [])
        #expect(try read(["FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"TagToTag\", $source.tags)"]) == ["tags"])
        #expect(try read(["42", "$destination"]) == [])
        // A constant key is read as a key path is (`$source.title`).
        #expect(try read(["FUNCTION($source, \"valueForKey:\", \"title\")", "FUNCTION($source, \"valueForKeyPath:\", \"note.body\")"]) == ["note", "title"])
    }

    /// What a policy's function is handed it may read whole: a related object given through
    /// `valueForKey:` as through a key path (`$source.note`), its properties counted as read (the
    /// mark was lost, and the check warned that what the function reads was dropped).
    @Test func aPolicysFunctionGivenAKeysValueReadsItWhole() throws {
        let paths = { (text: String) throws in SourceProjection.keyPathsRead(by: [try ExpressionParser.parse(text).get()]) }
        #expect(try paths(#"FUNCTION($entityPolicy, "f:", $source.note)"#) == [["note", SourceProjection.wholeObjects]])
        #expect(try paths(#"FUNCTION($entityPolicy, "f:", FUNCTION($source, "valueForKey:", "note"))"#) == [["note", SourceProjection.wholeObjects]])
        #expect(try paths(#"FUNCTION($entityPolicy, "f:", FUNCTION($source.note, "valueForKeyPath:", "owner.name"))"#) == [["note", "owner", "name", SourceProjection.wholeObjects]])
        #expect(try paths(#"FUNCTION($entityPolicy, "f:", UPPERCASE(FUNCTION($source, "valueForKey:", "title")))"#) == [["title"]])
    }

    @Test func theObjectUsedAsAWholeMeansEveryAttribute() throws {
        #expect(try read(["CAST($source, \"NSString\")"]) == nil)
        #expect(try read(["SELF == nil"]) == nil)
        // A key that is not a constant may be any.
        #expect(try read(["FUNCTION($source, \"valueForKey:\", $source.title)"]) == nil)
        // Operators alone leave no key: the object itself (it trapped on an empty path).
        #expect(try read(["FUNCTION($source, \"valueForKeyPath:\", \"@count\")"]) == nil)
        #expect(try read(["$source.@count"]) == nil)
        #expect(try read(["$source.title", "{$source}"]) == nil)
    }

    @Test func policiesAndCopiesReadEverything() throws {
        let model = try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: """
        source: v2
        destination: v3
        entityMappings:
          - { name: Plain, source: Note, destination: Note, filter: "image != nil", attributes: { title: $source.title } }
          - { name: WithPolicy, source: Note, destination: Note, policy: P, attributes: { title: $source.title } }
          - { name: Copied, source: Note, destination: Note, type: copy }

        """)).mapping)
        #expect(model.entityMappings.map(SourceProjection.creation) == [["image", "title"], nil, nil])
        #expect(model.entityMappings.map(SourceProjection.relationships) == [[], nil, nil])
    }

    /// An object read with some attributes is partial: asked for another, the graph reads it from
    /// its row instead of taking it for nil, so a mapping the analysis misjudged stays right.
    @Test func aPartialObjectAskedForAnAttributeItLacksReadsItFromItsRow() throws {
        let store = try Store.inMemory(schema: try uncloudNotes("v2"))
        try store.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("T"), "body": .string("B"), "dateCreated": .date(Date(timeIntervalSince1970: 0))])])
        var batches: [[ObjectData]] = []
        try store.forEachBatch(ofExactEntity: "Note", properties: ["title"]) { batches.append($0) }
        let object = try #require(batches.first?.first)
        #expect(object.isPartial && object.attributes == ["title": .string("T")])
        let graph = StoreObjectGraph(store: store)
        graph.remember(object)
        #expect(try graph.value(of: graph.ref(object), key: "body") == .scalar(.string("B")))
        #expect(try graph.value(of: graph.ref(object), key: "image") == .scalar(.null))
        var whole: [ObjectData] = []
        try store.forEachBatch(ofExactEntity: "Note") { whole += $0 }
        #expect(whole.first.map { !$0.isPartial && $0.attributes.count == 5 } == true)
    }

    /// A relationship left out is read when asked for, and so is a to-many list of an object
    /// prefetched through a to-one (prefetches read no lists).
    @Test func aPartialObjectAskedForARelationshipItLacksReadsIt() throws {
        let store = try Store.inMemory(schema: try uncloudNotes("v3"))
        let date = ISO8601.parse("2024-05-01T10:00:00Z")!
        try store.insert([
            ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("T"), "body": .string("B"), "dateCreated": .date(date)]),
            ObjectData(id: "a1", entity: "Attachment", attributes: ["image": .binary(Data([1])), "dateCreated": .date(date)], relationships: ["note": ["n1"]]),
            ObjectData(id: "a2", entity: "Attachment", attributes: ["image": .binary(Data([2])), "dateCreated": .date(date)], relationships: ["note": ["n1"]]),
        ])
        var notes: [ObjectData] = []
        try store.forEachBatch(ofExactEntity: "Note", properties: ["title"]) { notes += $0 }
        let note = try #require(notes.first)
        #expect(note.isPartial && note.relationships.isEmpty)
        let graph = StoreObjectGraph(store: store)
        graph.remember(note)
        #expect(try graph.value(of: graph.ref(note), key: "attachments")?.elements?.count == 2)

        var attachments: [ObjectData] = []
        try store.forEachBatch(ofExactEntity: "Attachment", properties: ["note"]) { attachments += $0 }
        graph.remember(batch: attachments)
        let first = try #require(attachments.first)
        graph.remember(first)
        guard case .object(let owner)? = try graph.value(of: graph.ref(first), key: "note") else { Issue.record("no note"); return }
        #expect(try graph.value(of: owner, key: "body") == .scalar(.string("B")))
        #expect(try graph.value(of: owner, key: "attachments")?.elements?.count == 2)
    }

    /// A policy's source objects are whole, even when another mapping read the same object
    /// partly just before and the graph still holds that copy (a source expression that is not
    /// Xcode's literal fetch hands out objects through the graph).
    @Test func aPolicyGetsWholeSourceObjectsAfterAPartialRead() throws {
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("T"), "body": .string("B"), "dateCreated": .date(Date(timeIntervalSince1970: 0)),
                                                                            "displayIndex": .integer(7), "image": .binary(Data([1, 2]))])])
        let registry = PolicyRegistry()
        registry.register(SeeingSourcesPolicy.self, as: "Seeing")
        SeeingSourcesPolicy.seen = []
        SeeingSourcesPolicy.id = nil
        let model = try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: """
        source: v2
        destination: v3
        entityMappings:
          - { name: First, source: Note, destination: Note, attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated } }
          - name: Second
            source: Note
            destination: Note
            policy: Seeing
            sourceExpression: 'FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", FUNCTION("TRUE", "stringByAppendingString:", "PREDICATE")), $manager.sourceContext, NO)'
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated }

        """)).mapping)
        var step = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model, policies: registry)
        step.allowsSQL = false
        _ = try step.run()
        #expect(SeeingSourcesPolicy.seen == ["n1 displayIndex=7 image=<2 bytes> partial=false"])
    }

    /// An id with a NUL character is refused where it is written, named (SQLite would keep the
    /// bytes but read the text back cut short).
    @Test func aPolicyIdWithANulIsRefused() throws {
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("T"), "body": .string("B"), "dateCreated": .date(Date(timeIntervalSince1970: 0))])])
        let registry = PolicyRegistry()
        registry.register(SeeingSourcesPolicy.self, as: "Seeing")
        SeeingSourcesPolicy.id = "a\u{0}b"
        defer { SeeingSourcesPolicy.id = nil }
        let model = try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: """
        source: v2
        destination: v3
        entityMappings:
          - { name: Notes, source: Note, destination: Note, policy: Seeing, attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated } }

        """)).mapping)
        let error = #expect(throws: MigrationError.self) {
            _ = try StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model, policies: registry).run()
        }
        #expect(error.map { "\($0)" }?.contains("property 'id': an id cannot contain the NUL character") == true, "\(String(describing: error))")
    }
}
