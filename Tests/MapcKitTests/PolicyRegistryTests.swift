import Foundation
import Testing
@testable import MapcKit

/// Gives each note's title a prefix it is configured with.
final class PrefixingPolicy: EntityMigrationPolicy {
    let prefix: String
    init(prefix: String) {
        self.prefix = prefix
    }
    required init() {
        prefix = ""
    }
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var note = try manager.makeDestination(for: source, mapping: mapping)
        if case .string(let title) = note["title"] { note["title"] = .string(prefix + title) }
        try manager.insert(note, associatedWith: source, mapping: mapping)
    }
}

/// A policy registered with how to make it is made that way, once per migration.
@Suite("Policy registry")
struct PolicyRegistryTests {
    @Test func aPolicyRegisteredWithAFactoryIsMadeByIt() throws {
        let registry = PolicyRegistry()
        registry.register(PrefixingPolicy.self, as: "App.Prefixing") { PrefixingPolicy(prefix: "v3: ") }
        #expect(registry.policy(named: "Prefixing") == PrefixingPolicy.self)
        #expect((registry.makePolicy(named: "App.Prefixing") as? PrefixingPolicy)?.prefix == "v3: ")
        #expect(registry.makePolicy(named: "App.Prefixing") !== registry.makePolicy(named: "App.Prefixing"))
        let (model, diagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: """
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            policy: App.Prefixing
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }

        """))
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert([ObjectData(id: "n0", entity: "Note", attributes: ["title": .string("Groceries"), "body": .string(""), "dateCreated": .date(Date(timeIntervalSince1970: 0))])])
        let destination = try Store.inMemory(schema: try uncloudNotes("v3"))
        _ = try StepMigration(source: source, destination: destination, mapping: try #require(model), policies: registry).run()
        #expect(try destination.objects(ofExactEntity: "Note").map { $0.attributes["title"] } == [.string("v3: Groceries")])
    }
}
