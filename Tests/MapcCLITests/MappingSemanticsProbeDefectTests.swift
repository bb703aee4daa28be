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
    /// Where no mapping made an object the relationship can hold (the friend was made an Address
    /// only), the lookup gives what was made, and setting it fails the run saying so, as Core Data
    /// raises: the link is not dropped in silence.
    @Test func aLookupBySourceRelationshipWithNothingToHoldFailsTheRun() throws {
        let folder = try splitProject(mapping: "source: v1\ndestination: v2\nentityMappings:\n"
            + "  - name: PersonToAddress\n    source: Person\n    destination: Address\n    filter: street != nil\n    attributes:\n      street: $source.street\n"
            + "  - name: PersonToPerson\n    source: Person\n    destination: Person\n    filter: street == nil\n    attributes:\n      name: $source.name\n    relationships:\n"
            + "      friend: FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"friend\", $source.friend)\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("Address 'p2' is not a Person"), "\(run.stderr)")
    }

    /// `$entityMapping.userInfo.prefix`, `$entityMapping.name` and `$propertyMapping.name` passed
    /// `check` and failed the run ("cannot read key", "unknown variable $propertyMapping"); Core
    /// Data reads them by key-value coding. They are read now, and what cannot be read or stored
    /// is refused by `check`.
    @Test func theMappingVariablesKeysAreRead() throws {
        let folder = try CLI.project(versions: [("v1", "  Tag:\n    attributes:\n      name: string\n"),
                                                ("v2", "  Tag:\n    attributes:\n      name: string\n      label: string\n      origin: string\n      missing: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        let mapping = "source: v1\ndestination: v2\nentityMappings:\n  - name: TagToTag\n    source: Tag\n    destination: Tag\n    userInfo: {prefix: \"#\"}\n"
            + "    attributes:\n      name: $source.name\n"
            + "      label: FUNCTION($entityMapping.userInfo.prefix, \"stringByAppendingString:\", $propertyMapping.name)\n"
            + "      origin: FUNCTION($entityMapping.name, \"stringByAppendingString:\", $entityMapping.sourceEntityName)\n"
            + "      missing: $entityMapping.userInfo.absent\n"
        try folder.write(mapping, to: "mappings/v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Tag": [{"id": "t1", "name": "red"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.stdout.contains(##""label": "#label""##) && dump.stdout.contains(#""origin": "TagToTagTag""#) && dump.stdout.contains(#""missing": null"#), "\(dump.stdout)")

        try folder.write(mapping.replacingOccurrences(of: "$entityMapping.userInfo.absent", with: "$entityMapping.usrInfo"), to: "mappings/v1_to_v2.yaml")
        let misspelt = try CLI.run(["check"], in: folder)
        #expect(misspelt.status == 1 && misspelt.stderr.contains("cannot read key 'usrInfo' of an entity mapping") && misspelt.stderr.contains("did you mean 'userInfo'"), "\(misspelt.stderr)")
        try folder.write(mapping.replacingOccurrences(of: "$entityMapping.userInfo.absent", with: "$entityMapping"), to: "mappings/v1_to_v2.yaml")
        let stored = try CLI.run(["check"], in: folder)
        #expect(stored.status == 1 && stored.stderr.contains("an entity mapping cannot be stored in"), "\(stored.stderr)")
        // A filter is no property mapping's: it has no $propertyMapping (the run failed on it).
        try folder.write(mapping.replacingOccurrences(of: "    attributes:\n", with: "    filter: $propertyMapping.name != \"zzz\"\n    attributes:\n"), to: "mappings/v1_to_v2.yaml")
        let filter = try CLI.run(["check"], in: folder)
        #expect(filter.status == 1 && filter.stderr.contains("unknown variable $propertyMapping"), "\(filter.stderr)")
    }
    /// An ordered to-many set by its own expression (an owner's cats) whose inverse another
    /// mapping sets for other objects (each dog's owner) interleaved the two by their places
    /// (`d1, c3, d2, c1, c2`). Both are kept, whatever the mappings' order: the list's own
    /// objects in its order, then the others in the order they were related.
    @Test(arguments: [true, false]) func anOrderedListSetFromBothSidesKeepsItsOwnOrderFirst(dogsFirst: Bool) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Owner:\n    attributes:\n      name: string\n    relationships:\n      cats: {destination: Cat, toMany: true, ordered: true, inverse: owner, optional: true}\n"
                + "      dogs: {destination: Dog, toMany: true, inverse: owner, optional: true}\n"
                + "  Cat:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: cats, optional: true}\n"
                + "  Dog:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: dogs, optional: true}\n"),
            ("v2", "  Owner:\n    attributes:\n      name: string\n    relationships:\n      pets: {destination: Pet, toMany: true, ordered: true, inverse: owner, optional: true}\n"
                + "  Pet:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: pets, optional: true}\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let dogs = "  - name: DogToPet\n    source: Dog\n    destination: Pet\n    attributes:\n      name: $source.name\n    relationships:\n"
            + "      owner: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"OwnerToOwner\", $source.owner)\n"
        let cats = "  - name: CatToPet\n    source: Cat\n    destination: Pet\n    attributes:\n      name: $source.name\n"
        let owners = "  - name: OwnerToOwner\n    source: Owner\n    destination: Owner\n    attributes:\n      name: $source.name\n    relationships:\n"
            + "      pets: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"CatToPet\", $source.cats)\n"
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n" + (dogsFirst ? dogs + cats + owners : owners + cats + dogs), to: "mappings/v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Owner": [{"id": "o1", "name": "O", "cats": ["c3", "c1", "c2"]}], "#
                         + #""Cat": [{"id": "c1", "name": "c1"}, {"id": "c2", "name": "c2"}, {"id": "c3", "name": "c3"}], "#
                         + #""Dog": [{"id": "d1", "name": "d1", "owner": "o1"}, {"id": "d2", "name": "d2", "owner": "o1"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }
        #expect(dump.contains(#""pets":["c3","c1","c2","d1","d2"]"#), "\(dump)")
    }
    /// A filter is a source fetch's predicate, which Core Data runs as SQL on the store:
    /// `street != "S1"` holds for no object without a street (`<>` with NULL is unknown), nor does
    /// `NOT (rating < 3)` for one without a rating. mapc took both for true (as an in-memory
    /// predicate has it), migrating objects Core Data leaves out, on the interpreted path (text)
    /// and the compiled one (numbers) alike.
    @Test(arguments: ["street != \"S1\"", "NOT (street < \"S2\")", "rating != 3", "NOT (rating < 3)", "rating != 3 OR street == nil"])
    func aFilterTreatsNilAsCoreDatasFetchDoes(filter: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Person:\n    attributes:\n      name: string\n      street: string?\n      rating: int64?\n"),
            ("v2", "  Person:\n    attributes:\n      name: string\n  Address:\n    attributes:\n      street: string?\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        let quoted = "'" + filter.replacingOccurrences(of: "'", with: "''") + "'"
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: PersonToPerson\n    source: Person\n    destination: Person\n    attributes:\n      name: $source.name\n"
                         + "  - name: PersonToAddress\n    source: Person\n    destination: Address\n    filter: \(quoted)\n    attributes:\n      street: $source.street\n", to: "mappings/v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p1", "name": "Ann", "street": "S9", "rating": 5}, {"id": "p2", "name": "Bob", "street": null, "rating": null}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let addresses = try sqliteOutput(folder, "s.db", "SELECT count(*) FROM Address").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(addresses == (filter.contains("OR street == nil") ? "2" : "1"), "\(filter): \(addresses) addresses")
    }
    /// An add mapping with expressions and no policy makes nothing (its expressions never run),
    /// and a lookup naming a remove mapping is always empty: both passed `check` in silence.
    @Test func mappingsThatCanMakeNothingAreWarnedOf() throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Owner:\n    attributes:\n      name: string\n    relationships:\n      dogs: {destination: Dog, toMany: true, inverse: owner, optional: true}\n"
                + "  Dog:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: dogs, optional: true}\n"),
            ("v2", "  Owner:\n    attributes:\n      name: string\n    relationships:\n      pets: {destination: Pet, toMany: true, inverse: owner, optional: true}\n"
                + "  Pet:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: pets, optional: true}\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: ToPet\n    type: add\n    destination: Pet\n    attributes:\n      name: '\"ghost\"'\n"
                         + "  - name: OwnerToOwner\n    source: Owner\n    destination: Owner\n    attributes:\n      name: $source.name\n    relationships:\n"
                         + "      pets: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"DogRemove\", $source.dogs)\n"
                         + "  - name: DogRemove\n    source: Dog\n    type: remove\n", to: "mappings/v1_to_v2.yaml")
        let check = try CLI.run(["check", "mappings/v1_to_v2.yaml"], in: folder)
        #expect(check.stderr.contains("5:11: warning: an add mapping without a source expression or a policy makes no objects, so its property expressions never run"), "\(check.stderr)")
        #expect(check.stderr.contains("warning: mapping 'DogRemove' has no destination entity (a remove mapping makes no objects), so this lookup is always empty"), "\(check.stderr)")
        // With a source expression it makes an object of each object fetched: no warning.
        let mapping = try folder.read("mappings/v1_to_v2.yaml").replacingOccurrences(of: "    destination: Pet\n    attributes:\n      name: '\"ghost\"'\n",
            with: "    destination: Pet\n    sourceExpression: FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Dog\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)\n    attributes:\n      name: $source.name\n")
        try folder.write(mapping, to: "mappings/v1_to_v2.yaml")
        let fetched = try CLI.run(["check", "mappings/v1_to_v2.yaml"], in: folder)
        #expect(fetched.stderr.contains("DogRemove") && !fetched.stderr.contains("an add mapping"), "\(fetched.stderr)")
    }
    /// An add mapping whose source expression fetches another mapping's source objects gave its
    /// objects those objects' bare ids: a Pet 't1' beside the Tag 't1', which `load` refuses.
    @Test func anAddMappingFetchingItsObjectsNamesThemAsALaterMapping() throws {
        let tags = "  Tag:\n    attributes:\n      name: string\n"
        let folder = try CLI.project(versions: [("v1", tags), ("v2", tags + "  Pet:\n    attributes:\n      name: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: TagToTag\n    source: Tag\n    destination: Tag\n"
                         + "  - name: ToPet\n    type: add\n    destination: Pet\n"
                         + "    sourceExpression: FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Tag\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)\n"
                         + "    attributes:\n      name: $source.name\n", to: "mappings/v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Tag": [{"id": "t1", "name": "red"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.stdout.contains(#""id": "t1.ToPet""#) && !dump.stderr.contains("refuses"), "\(dump.stdout)\(dump.stderr)")
    }
}
