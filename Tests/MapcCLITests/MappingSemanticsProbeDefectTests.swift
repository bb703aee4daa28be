import Foundation
import Testing

/// Defects a probe of mapping files against the same NSMappingModel in Core Data found: what a
/// mapping does where Apple documents what it must do.
@Suite("Defects found by a probe of mapping semantics", .serialized)
struct MappingSemanticsProbeDefectTests {
    /// People, some with a street, each with an optional friend; v2 moves streets to Address.
    private func splitProject(mapping: String) throws -> URL {
        let folder = try CLI.project(versions: [
            ("v1", "  Person:\n    attributes:\n      name: string\n      street: string?\n    relationships:\n      friend: {destination: Person, inverse: null, optional: true}\n"),
            ("v2", "  Person:\n    attributes:\n      name: string\n    relationships:\n      friend: {destination: Person, inverse: null, optional: true}\n"
                + "  Address:\n    attributes:\n      street: string\n"),
        ])
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write(mapping, to: "mappings/v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p1", "name": "Ann", "friend": "p2"}, {"id": "p2", "name": "Bob", "street": "Main", "friend": "p1"}]}}"#, to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        return folder
    }

    /// One source entity split in two (its street to an Address, first): a relationship set by
    /// its source relationship's name took the first mapping that migrated the related object,
    /// an Address for a friend that had a street, and the run failed on the data only. The
    /// lookup asks the mappings that make what the relationship takes.
    @Test(arguments: [true, false]) func aLookupBySourceRelationshipTakesTheMappingThatFitsTheRelationship(written: Bool) throws {
        let relationships = written ? "    relationships:\n      friend: FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"friend\", $source.friend)\n" : ""
        let folder = try splitProject(mapping: "source: v1\ndestination: v2\nentityMappings:\n"
            + "  - name: PersonToAddress\n    source: Person\n    destination: Address\n    filter: street != nil\n    attributes:\n      street: $source.street\n"
            + "  - name: PersonToPerson\n    source: Person\n    destination: Person\n" + (written ? "    type: transform\n" : "    type: copy\n")
            + "    attributes:\n      name: $source.name\n" + relationships)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.stdout.contains(#""friend": "p2.PersonToPerson""#) && dump.stdout.contains(#""friend": "p1.PersonToPerson""#), "\(dump.stdout)")
    }
}
