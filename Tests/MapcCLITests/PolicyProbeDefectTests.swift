import Foundation
import Testing

/// Defects a probe of ported `NSEntityMigrationPolicy` subclasses found.
@Suite("Defects found by a probe of custom policies")
struct PolicyProbeDefectTests {
    /// A project whose Company mapping relates its objects with `policy` (a Swift class body).
    private func project(policy: String, layout: String, relationships: String = "", companyExtra: String = "") throws -> URL {
        let folder = try CLI.emptyProject()
        func schema(_ version: String) -> String {
            """
            model: Crm
            version: \(version)
            entities:
              Company:
                attributes: { name: string\(version == "v2" ? ", headcount: { type: int64, default: 0 }\(companyExtra)" : "") }
                relationships:
                  employees: { destination: Person, toMany: true, inverse: employer, optional: true }
                  tags: { destination: Tag, toMany: true, inverse: companies, optional: true }
              Person:
                attributes: { name: string }
                relationships:
                  employer: { destination: Company, inverse: employees, optional: true }
              Tag:
                attributes: { label: string }
                relationships:
                  companies: { destination: Company, toMany: true, inverse: tags, optional: true }

            """
        }
        try folder.write(schema("v1"), to: "schemas/v1.yaml")
        try folder.write(schema("v2"), to: "schemas/v2.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("policies"), withIntermediateDirectories: true)
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: PersonToPerson
            source: Person
            destination: Person
            attributes: { name: $source.name }
          - name: TagToTag
            source: Tag
            destination: Tag
            attributes: { label: $source.label }
          - name: CompanyToCompany
            source: Company
            destination: Company
            policy: StaffPolicy
            attributes: { name: $source.name }
        \(relationships)

        """, to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write("import MapcKit\n\nfinal class StaffPolicy: EntityMigrationPolicy {\n\(policy)\n}\n", to: "policies/StaffPolicy.swift")
        try folder.write(#"{"version": "v1", "objects": {"Company": [{"id": "c1", "name": "C", "employees": ["p1", "p2", "p3"], "tags": ["t1", "t2"]}, {"id": "c2", "name": "D"}], "Person": [{"id": "p1", "name": "A"}, {"id": "p2", "name": "B"}, {"id": "p3", "name": "Skip"}], "Tag": [{"id": "t1", "label": "x"}, {"id": "t2", "label": "y"}]}}"#, to: "d.json")
        let load = try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        return folder
    }

    /// `setRelationship` on a to-many added links and never took any away: a policy that set
    /// a company's employees and then set them again without one (Core Data's `setValue(_:forKey:)`
    /// replaces the set) kept every link, and an empty list cleared nothing.
    @Test(arguments: ["mapc", "core-data"])
    func setRelationshipReplacesAToManysObjects(layout: String) throws {
        let folder = try project(policy: """
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                guard let source = try manager.sourceObject(for: destination) else { return }
                let staff = try source.value(forKeyPath: "employees").elements?.compactMap { value -> ObjectRef? in
                    if case .object(let ref) = value { return ref } else { return nil }
                } ?? []
                let people = try manager.destinationInstances(forEntityMappingNamed: "PersonToPerson", sourceInstances: staff)
                try manager.setRelationship("employees", of: destination, to: people, mapping: mapping)
                // Second thoughts: one of them is no employee.
                try manager.setRelationship("employees", of: destination, to: Array(people.dropLast()), mapping: mapping)
                let labels = try source.value(forKeyPath: "tags").elements?.compactMap { value -> ObjectRef? in
                    if case .object(let ref) = value { return ref } else { return nil }
                } ?? []
                try manager.setRelationship("tags", of: destination, to: try manager.destinationInstances(forEntityMappingNamed: "TagToTag", sourceInstances: labels), mapping: mapping)
                try manager.setRelationship("tags", of: destination, to: [], mapping: mapping)
            }
        """, layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }
        #expect(dump.components(separatedBy: #""employer":""#).count == 3 && dump.contains(#""employer":null"#), "two people keep an employer: \(dump)")
        #expect(!dump.contains(#""tags":[""#) && !dump.contains(#""companies":[""#), "the tags were cleared: \(dump)")
    }

    /// A value a policy set in `createRelationships` (a count of the related objects, as Core
    /// Data's `dInstance.setValue(_:forKey:)` there is saved) had no way into the store: the
    /// object handed to the hook is a copy, and changing it was dropped in silence. The manager
    /// sets it; a wrong key or type is said, naming the object.
    @Test(arguments: ["mapc", "core-data"])
    func aPolicySetsAValueAfterCreation(layout: String) throws {
        let folder = try project(policy: """
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                guard let source = try manager.sourceObject(for: destination) else { return }
                let count = try source.value(forKeyPath: "employees").elements?.count ?? 0
                try manager.setValue(.integer(Int64(count)), forKey: "headcount", of: destination, mapping: mapping)
            }
        """, layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }
        #expect(dump.contains(#""headcount":3"#), "\(dump)")
        try folder.write("import MapcKit\n\nfinal class StaffPolicy: EntityMigrationPolicy {\n    override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {\n        try manager.setValue(.string(\"many\"), forKey: \"headcount\", of: destination, mapping: mapping)\n    }\n}\n", to: "policies/StaffPolicy.swift")
        let wrong = try CLI.run(["run", "t.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(wrong.status == 3 && wrong.stderr.contains("headcount") && wrong.stderr.contains("CompanyToCompany"), "\(wrong.stderr)")
    }

    /// A policy saying it keeps the default relationships whose override called `super` and did
    /// more had its extra work done for the first object only (the word is checked there, and the
    /// rest related with SQL): a hook that writes anything itself is called for every object.
    @Test(arguments: ["mapc", "core-data"])
    func aPolicyThatKeepsTheDefaultAndWritesMoreIsCalledForEveryObject(layout: String) throws {
        let folder = try project(policy: """
            override class var keepsDefaultRelationships: Bool { true }
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                guard let source = try manager.sourceObject(for: destination) else { return }
                let count = try source.value(forKeyPath: "employees").elements?.count ?? 0
                try manager.setValue(.integer(Int64(count + 10)), forKey: "headcount", of: destination, mapping: mapping)
            }
        """, layout: layout, relationships: """
            relationships:
              employees: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.employees)'
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }
        #expect(dump.contains(#""headcount":13"#) && dump.contains(#""headcount":10"#) && dump.components(separatedBy: #""employer":""#).count == 4, "\(dump)")
    }

    /// Core Data's `NSMigrationManager.userInfo` had no equivalent: state shared by the policies
    /// of several mappings lived in module globals, which every store of a batch shared (the
    /// second store counted on from the first's). The manager's `userInfo` is one run's.
    @Test func policiesShareStateThroughTheManagersUserInfo() throws {
        let folder = try project(policy: """
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                let people = manager.userInfo["people"] as? Int ?? 0
                try manager.setValue(.integer(Int64(people)), forKey: "headcount", of: destination, mapping: mapping)
            }
        }

        final class CountingPolicy: EntityMigrationPolicy {
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
                manager.userInfo["people"] = (manager.userInfo["people"] as? Int ?? 0) + 1
            }
        """, layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        let mapping = try folder.read("mappings/mapping_v1_to_v2.yaml")
        try folder.write(mapping.replacingOccurrences(of: "    destination: Person\n", with: "    destination: Person\n    policy: CountingPolicy\n"), to: "mappings/mapping_v1_to_v2.yaml")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        let run = try CLI.run(["run", "--jobs", "1", "s.db", "t.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for store in ["s.db", "t.db"] {
            let dump = try CLI.run(["dump", store], in: folder).stdout.filter { !$0.isWhitespace }
            #expect(dump.contains(#""name":"C","headcount":3"#), "\(store): \(dump)")
        }
    }

    /// `associate` of an object not inserted (the literal port of `insertNewObject` then
    /// `associate`) said "associate an object after inserting it", naming nothing, exit 2 (a store
    /// problem); a policy function's error lost its own words (`LocalizedError`).
    @Test func aPolicysMistakesAreSaidWithTheirMappingAndWords() throws {
        let folder = try project(policy: """
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try manager.associate(source: source.ref, destination: try manager.makeDestination(for: source, mapping: mapping), mapping: mapping)
            }
        """, layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 3 && run.stderr.contains("CompanyToCompany") && run.stderr.contains("not inserted yet") && run.stderr.contains("manager.insert"), "\(run.status) \(run.stderr)")
        try folder.write("""
        import Foundation
        import MapcKit

        struct SlugError: LocalizedError { var errorDescription: String? { "cannot slugify this name" } }
        final class StaffPolicy: EntityMigrationPolicy {
            override var functions: [String: PolicyFunction] { ["slug:": { _ in throw SlugError() }] }
        }

        """, to: "policies/StaffPolicy.swift")
        let mapping = try folder.read("mappings/mapping_v1_to_v2.yaml")
        try folder.write(mapping.replacingOccurrences(of: "policy: StaffPolicy\n    attributes: { name: $source.name }\n", with: "policy: StaffPolicy\n    attributes: { name: 'FUNCTION($entityPolicy, \"slug:\", $source.name)' }\n"), to: "mappings/mapping_v1_to_v2.yaml")
        let function = try CLI.run(["run", "t.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(function.status == 3 && function.stderr.contains("policy function 'slug:' failed: cannot slugify this name"), "\(function.status) \(function.stderr)")
    }

    /// A policy that made its objects and never inserted them (Core Data's `insertNewObject`
    /// inserts as it makes) dropped every object of its mapping, exit 0, "0 objects created".
    @Test func aPolicyThatCreatesNothingIsSaid() throws {
        let folder = try project(policy: """
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                _ = try manager.makeDestination(for: source, mapping: mapping)
            }
        """, layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0 && run.stderr.contains("note: mapping 'CompanyToCompany' (policy StaffPolicy) was handed 2 source objects and created none"), "\(run.stderr)")
    }

    /// The review's case: bytes a policy set with `setValue` on an attribute Core Data may keep in
    /// a file were written without the inline marker its column holds (bytes starting 01 lost
    /// their first byte when read back).
    @Test func setValueWritesBytesInTheFormTheStoreKeeps() throws {
        let folder = try project(policy: """
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try manager.setValue(.binary(Data([1, 2, 3])), forKey: "logo", of: destination, mapping: mapping)
            }
        """, layout: "core-data", companyExtra: ", logo: { type: binary, optional: true, externalStorage: true }")
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(try folder.read("policies/StaffPolicy.swift").replacingOccurrences(of: "import MapcKit", with: "import Foundation\nimport MapcKit"), to: "policies/StaffPolicy.swift")
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0, "\(run.stderr)")
        let stored = try sqliteOutput(folder, "s.db", "SELECT hex(ZLOGO) FROM ZCOMPANY WHERE ZNAME = 'C'")
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "01010203", "\(stored)")
    }

    /// Migrates a store of `data` (loaded in `layout`) from v1 to v2, each `schema(version)`, with
    /// `mapping` and the policy file `policy` (`policies/<policyName>.swift`): the run, and the
    /// store's dump without white space.
    private func migrated(schema: (String) -> String, mapping: String, policyName: String, policy: String, data: String, layout: String) throws -> (run: CLIResult, dump: String) {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        for version in ["v1", "v2"] { try folder.write(schema(version), to: "schemas/\(version).yaml") }
        for name in ["mappings", "policies"] { try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true) }
        try folder.write(mapping, to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(policy, to: "policies/\(policyName).swift")
        try folder.write(data, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        return (run, try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace })
    }

    /// The review's case: replacing a relationship that is its own inverse (friends) left the
    /// other's row of the pair, so the friend taken away still listed the object.
    @Test(arguments: ["mapc", "core-data"])
    func replacingASelfInverseRelationshipTakesBothRows(layout: String) throws {
        let (run, dump) = try migrated(schema: { version in
            "model: S\nversion: \(version)\nentities:\n  Person:\n    attributes: { name: string\(version == "v2" ? ", nick: string?" : "") }\n    relationships:\n      friends: { destination: Person, toMany: true, inverse: friends, optional: true }\n"
        }, mapping: "source: v1\ndestination: v2\nentityMappings:\n  - name: PersonToPerson\n    source: Person\n    destination: Person\n    policy: Unfriend\n    attributes: { name: $source.name }\n    relationships:\n      friends: 'FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToPerson\", $source.friends)'\n",
           policyName: "Unfriend", policy: """
        import MapcKit

        final class Unfriend: EntityMigrationPolicy {
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                guard let source = try manager.sourceObject(for: destination), try source.value(forKeyPath: "name") == .scalar(.string("B")) else { return }
                try manager.setRelationship("friends", of: destination, to: [], mapping: mapping)
            }
        }

        """, data: #"{"version": "v1", "objects": {"Person": [{"id": "p1", "name": "A", "friends": ["p2"]}, {"id": "p2", "name": "B", "friends": ["p1"]}]}}"#, layout: layout)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(dump.components(separatedBy: #""friends":[]"#).count == 3, "\(dump)")
    }

    /// Replacing an ordered to-many keeps the order given and takes the others away, in both
    /// layouts (positions of the ones taken away cleared, the kept ones renumbered).
    @Test(arguments: ["mapc", "core-data"])
    func replacingAnOrderedToManyKeepsTheOrderGiven(layout: String) throws {
        let (run, dump) = try migrated(schema: { version in
            "model: P\nversion: \(version)\nentities:\n  Playlist:\n    attributes: { name: string\(version == "v2" ? ", note: string?" : "") }\n    relationships:\n      songs: { destination: Song, toMany: true, ordered: true, inverse: playlist, optional: true }\n  Song:\n    attributes: { title: string }\n    relationships:\n      playlist: { destination: Playlist, inverse: songs, optional: true }\n"
        }, mapping: "source: v1\ndestination: v2\nentityMappings:\n  - name: SongToSong\n    source: Song\n    destination: Song\n    attributes: { title: $source.title }\n  - name: PlaylistToPlaylist\n    source: Playlist\n    destination: Playlist\n    policy: Reverse\n    attributes: { name: $source.name }\n",
           policyName: "Reverse", policy: """
        import MapcKit

        final class Reverse: EntityMigrationPolicy {
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                guard let source = try manager.sourceObject(for: destination) else { return }
                let songs = try source.value(forKeyPath: "songs").elements?.compactMap { value -> ObjectRef? in
                    if case .object(let ref) = value { return ref } else { return nil }
                } ?? []
                let made = try manager.destinationInstances(forEntityMappingNamed: "SongToSong", sourceInstances: songs)
                try manager.setRelationship("songs", of: destination, to: made, mapping: mapping)
                // Then the last two, the other way round.
                try manager.setRelationship("songs", of: destination, to: Array(made.suffix(2).reversed()), mapping: mapping)
            }
        }

        """, data: #"{"version": "v1", "objects": {"Playlist": [{"id": "l1", "name": "L", "songs": ["s1", "s2", "s3"]}], "Song": [{"id": "s1", "title": "a"}, {"id": "s2", "title": "b"}, {"id": "s3", "title": "c"}]}}"#, layout: layout)
        #expect(run.status == 0, "\(run.stderr)")
        let expected = layout == "mapc" ? #""songs":["s3","s2"]"# : #""songs":["Song/p3","Song/p2"]"#
        #expect(dump.contains(expected) && dump.components(separatedBy: #""playlist":null"#).count == 2, "\(dump)")
    }
}
