import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

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
        let model = try loadMapping(noteToNoteMapping(["policy: App.Prefixing"]))
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(1))
        let destination = try Store.inMemory(schema: try uncloudNotes("v3"))
        _ = try StepMigration(source: source, destination: destination, mapping: model, policies: registry).run()
        #expect(try destination.objects(ofExactEntity: "Note").map { $0.attributes["title"] } == [.string("v3: Note 0")])
    }
}
