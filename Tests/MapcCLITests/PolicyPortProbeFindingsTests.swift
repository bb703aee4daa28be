import Foundation
import Testing

/// What a probe porting six real `NSEntityMigrationPolicy` subclasses found (CoreStore, Cyface,
/// AltStore, BudgetApp, TrainDatabase and a notes app, each ported literally).
@Suite("Defects found by the policy-porting probe")
struct PolicyPortProbeFindingsTests {
    /// A project of one entity whose mapping names the policy `body` (a Swift class body).
    private func project(_ body: String) throws -> URL {
        let folder = try CLI.emptyProject()
        for version in ["v1", "v2"] {
            try folder.write("""
            model: Apps
            version: \(version)
            entities:
              Source:
                attributes: { identifier: string?, sourceURL: string?\(version == "v2" ? ", hasIcon: { type: bool, default: NO }" : "") }
                relationships:
                  apps: { destination: App, toMany: true, inverse: source, optional: true }
              App:
                attributes: { name: string }
                relationships:
                  source: { destination: Source, inverse: apps, optional: true }

            """, to: "schemas/\(version).yaml")
        }
        for sub in ["mappings", "policies"] { try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true) }
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: AppToApp
            source: App
            destination: App
            attributes: { name: $source.name }
            relationships:
              source: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "SourceToSource", $source.source)
          - name: SourceToSource
            source: Source
            destination: Source
            policy: SourcePolicy
            attributes: { identifier: $source.identifier, sourceURL: $source.sourceURL }
            relationships:
              apps: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "AppToApp", $source.apps)

        """, to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write("import MapcKit\n\nfinal class SourcePolicy: EntityMigrationPolicy {\n\(body)\n}\n", to: "policies/SourcePolicy.swift")
        try folder.write(#"{"version": "v1", "objects": {"Source": [{"id": "s1", "identifier": "com.example", "sourceURL": "https://example.com", "apps": ["a1"]}], "App": [{"id": "a1", "name": "A"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        return folder
    }

    private func run(_ folder: URL) throws -> CLIResult {
        try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
    }

    /// A destination key read under a wrong name (`d["identifer"]`) gave nil, sent the ported
    /// policy into its fallback and overwrote the value, exit 0; the same typo on a source object
    /// failed the run, as Core Data's `value(forKey:)` raises on both.
    @Test func aDestinationKeyTheEntityDoesNotHaveFailsTheRun() throws {
        let folder = try project("""
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                var d = try manager.makeDestination(for: source, mapping: mapping)
                if case .null = d["identifer"] { d["identifier"] = .string("recomputed") }
                try manager.insert(d, associatedWith: source, mapping: mapping)
            }
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let typo = try run(folder)
        #expect(typo.status == 3 && typo.stderr.contains("it read 'identifer' of Source 's1', which Source does not have in v2; did you mean 'identifier'?"), "\(typo.stderr)")
        #expect(try CLI.run(["dump", "s.db"], in: folder).stdout.contains("\"version\": \"v1\""), "the store is unchanged")
        // In phase 2, a relationship's name read through the subscript is said as one.
        try folder.write("import MapcKit\n\nfinal class SourcePolicy: EntityMigrationPolicy {\n" + """
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                if case .null = destination["apps"] { try manager.setValue(.bool(true), forKey: "hasIcon", of: destination, mapping: mapping) }
            }
        """ + "\n}\n", to: "policies/SourcePolicy.swift")
        let relationship = try run(folder)
        #expect(relationship.status == 3 && relationship.stderr.contains("it read 'apps' of Source 's1' through the destination object's subscript, which holds its attributes: 'apps' is a relationship"), "\(relationship.stderr)")
        // A key the entity has, nil or not, reads as it is.
        try folder.write("import MapcKit\n\nfinal class SourcePolicy: EntityMigrationPolicy {\n" + """
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                if case .string = destination["sourceURL"], case .bool(false) = destination["hasIcon"] { try manager.setValue(.bool(true), forKey: "hasIcon", of: destination, mapping: mapping) }
            }
        """ + "\n}\n", to: "policies/SourcePolicy.swift")
        let right = try run(folder)
        #expect(right.status == 0, "\(right.stderr)")
        #expect(try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }.contains(#""hasIcon":true"#))
    }

    /// Values set through the subscript of an object already in the store (one handed to
    /// `createRelationships`, or made from a reference `destinationInstances` gave, as CoreStore's
    /// `dInstance.setValue(true, forKey:)` ports) wrote nothing, exit 0, without a word: Core
    /// Data's context saves them, and so does the run now, in the hook's order.
    @Test func aValueSetOnAnObjectInTheStoreIsWritten() throws {
        let folder = try project("""
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
                for ref in try manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source.ref]) {
                    var dInstance = DestinationObject(ref)
                    dInstance["hasIcon"] = .bool(true)
                }
            }
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                var d = destination
                d["sourceURL"] = .string("first")
                try manager.setValue(.string("second"), forKey: "sourceURL", of: destination, mapping: mapping)
                d["identifier"] = .string("com.example.new")
            }
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try run(folder)
        #expect(result.status == 0, "\(result.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }
        #expect(dump.contains(#""hasIcon":true"#) && dump.contains(#""sourceURL":"second""#) && dump.contains(#""identifier":"com.example.new""#), "\(dump)")
        // A value the attribute cannot hold fails the run, naming it; the store is unchanged.
        try folder.write(try folder.read("policies/SourcePolicy.swift").replacingOccurrences(of: #"dInstance["hasIcon"] = .bool(true)"#, with: #"dInstance["hasIcon"] = .string("maybe")"#), to: "policies/SourcePolicy.swift")
        try folder.write(#"{"version": "v1", "objects": {"Source": [{"id": "s1"}]}}"#, to: "e.json")
        #expect(try CLI.run(["load", "e.json", "t.db"], in: folder).status == 0)
        let wrong = try CLI.run(["run", "t.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(wrong.status == 3 && wrong.stderr.contains("hasIcon") && wrong.stderr.contains("SourceToSource"), "\(wrong.stderr)")
    }

    /// `d["titel"] = …` on an object `makeDestination` made said "has no stored attribute" with no
    /// suggestion, where `manager.setValue` gives one.
    @Test func aMistypedKeySetIsGivenTheClosestName() throws {
        let folder = try project("""
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                var d = try manager.makeDestination(for: source, mapping: mapping)
                d["sourceUrl"] = .string("x")
                try manager.insert(d, associatedWith: source, mapping: mapping)
            }
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try run(folder)
        #expect(result.status == 3 && result.stderr.contains("Source has no stored attribute 'sourceUrl'; did you mean 'sourceURL'?"), "\(result.stderr)")
    }

    /// A mistyped key path through `value(forKeyPath:)` said "has no key" with no suggestion; a
    /// required attribute without an expression in a mapping with a policy was told only to add
    /// one, not that the policy may declare it in `providedAttributes`.
    @Test func aMistypedKeyPathAndAnAttributeThePolicySetsAreToldTheirWay() throws {
        let folder = try project("""
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                _ = try source.value(forKeyPath: "sourceUrl")
                try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
            }
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let typo = try run(folder)
        #expect(typo.status == 3 && typo.stderr.contains("has no key 'sourceUrl'; did you mean 'sourceURL'?"), "\(typo.stderr)")
        try folder.write(try folder.read("schemas/v2.yaml").replacingOccurrences(of: "identifier: string?", with: "identifier: string"), to: "schemas/v2.yaml")
        try folder.write(try folder.read("mappings/mapping_v1_to_v2.yaml").replacingOccurrences(of: "identifier: $source.identifier, ", with: ""), to: "mappings/mapping_v1_to_v2.yaml")
        let check = try CLI.run(["check", "mappings/mapping_v1_to_v2.yaml"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(check.stderr.contains("required attribute 'identifier' of Source has neither an expression nor a default") && check.stderr.contains("or, where SourcePolicy sets it, list it in its `providedAttributes`"), "\(check.stderr)")
    }

    /// Ported code guards its reads with `fatalError` (Cyface: `guard case .string(let v) =
    /// source["contxt"] else { fatalError(…) }`): the crash report named the policy and phase but
    /// not the mistyped key, which mapc knew and said only when a hook returned.
    @Test func aCrashAfterAMistypedKeyNamesTheKey() throws {
        let folder = try project("""
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                guard case .string = source["sourceUrl"] else { fatalError("Unable to load the source URL") }
                try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
            }
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let crash = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path, "SWIFT_BACKTRACE": "enable=no"])
        #expect(crash.status != 0 && crash.stderr.contains("Before it crashed, it read 'sourceUrl' of Source 's1', which cannot be read (Source has no attribute 'sourceUrl'; did you mean 'sourceURL'?)"), "\(crash.stderr)")
    }

    /// A uniqueness violation of a value the policy set (BudgetApp's renaming) was followed by a
    /// note that it "comes from $source.title": the policy's hooks are named too.
    @Test func aBrokenRuleOfAValueAPolicyMaySetNamesThePolicy() throws {
        let folder = try project("""
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                var d = try manager.makeDestination(for: source, mapping: mapping)
                d["identifier"] = .string("same")
                try manager.insert(d, associatedWith: source, mapping: mapping)
            }
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(try folder.read("schemas/v2.yaml").replacingOccurrences(of: "  Source:\n", with: "  Source:\n    uniquenessConstraints: [[identifier]]\n"), to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Source": [{"id": "s1", "identifier": "a"}, {"id": "s2", "identifier": "b"}]}}"#, to: "two.json")
        #expect(try CLI.run(["load", "two.json", "t.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "t.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 3 && run.stderr.contains("note: 'identifier' of the objects 'SourceToSource' creates comes from $source.identifier, or from what its custom policy SourcePolicy set in its hooks"), "\(run.stderr)")
    }

    /// A hook kept with Core Data's labels (`createDestinationInstances(forSource:in:manager:)`,
    /// no `override`) compiled and was never called, the mapping's default running in silence.
    @Test func aHookWithCoreDatasLabelsIsWarnedOf() throws {
        let folder = try project("""
            func createDestinationInstances(forSource source: SourceObject, in mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
            }
            // func createRelationships(forDestination d: DestinationObject) in a comment is no hook
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(check.stderr.contains("policies/SourcePolicy.swift:4:5: warning: createDestinationInstances(forSource:in:manager:) is Core Data's hook, which mapc never calls")
                && check.stderr.contains("`override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager)`"), "\(check.stderr)")
        #expect(!check.stderr.contains("createRelationships(forDestination"), "\(check.stderr)")
        // Counted as check's own warnings: `--strict` fails on it, JSON lists it (the upgrade probe).
        #expect(check.stdout.contains("0 errors, 1 warning"), "\(check.stdout)")
        let strict = try CLI.run(["check", "--strict"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(strict.status == 1, "\(strict.stdout)")
        let json = try CLI.run(["check", "--format", "json"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(json.stdout.contains("is Core Data's hook"), "\(json.stdout)")
        // Other commands say it.
        let run = try CLI.run(["run", "s.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.stderr.contains("policies/SourcePolicy.swift:4:5: warning: createDestinationInstances(forSource:in:manager:) is Core Data's hook"), "\(run.stderr)")
    }

    private func policy(_ body: String, in folder: URL) throws {
        try folder.write("import Foundation\nimport MapcKit\n\nfinal class SourcePolicy: EntityMigrationPolicy {\n\(body)\n}\n", to: "policies/SourcePolicy.swift")
    }

    /// The review's finds on values set through the subscript of objects in the store: a copy
    /// made with `DestinationObject(ref)` read nil for every attribute, so `x = x + 1` wrote a
    /// value computed from nothing; a transient attribute set failed the run; a write through
    /// the subscript was not counted as the policy's, so a policy keeping the default relating
    /// had it done for its first object only; a set from a thread of the policy's own was lost.
    @Test func anObjectInTheStoreReadsItsStoredValuesAndItsWritesAreThePolicys() throws {
        let folder = try project("")
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(try folder.read("schemas/v2.yaml").replacingOccurrences(of: "hasIcon: { type: bool, default: NO }", with: "hasIcon: { type: bool, default: NO }, scratch: { type: string, transient: true, optional: true }"), to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Source": [{"id": "s1", "identifier": "one", "apps": ["a1"]}, {"id": "s2", "identifier": "two", "apps": ["a2"]}], "App": [{"id": "a1", "name": "A"}, {"id": "a2", "name": "B"}]}}"#, to: "two.json")
        func run() throws -> (CLIResult, String) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("t.db"))
            #expect(try CLI.run(["load", "two.json", "t.db"], in: folder).status == 0)
            let result = try CLI.run(["run", "t.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
            return (result, try CLI.run(["dump", "t.db"], in: folder).stdout.filter { !$0.isWhitespace })
        }
        try policy("""
            override class var keepsDefaultRelationships: Bool { true }
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                var d = destination
                d["scratch"] = .string("bookkeeping")
                d["sourceURL"] = .string("related")
                guard let source = try manager.sourceObject(for: destination) else { return }
                for ref in try manager.destinationInstances(forEntityMappingNamed: "AppToApp", sourceInstances: try source.value(forKeyPath: "apps").elements?.compactMap { if case .object(let o) = $0 { return o } else { return nil } } ?? []) {
                    var app = DestinationObject(ref)
                    if case .string(let name) = app["name"] { app["name"] = .string(name + "!") } else { app["name"] = .string("nothing read") }
                }
            }
        """, in: folder)
        let (stored, dump) = try run()
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(dump.contains(#""name":"A!""#) && dump.contains(#""name":"B!""#) && !dump.contains("nothing read"), "\(dump)")
        #expect(dump.components(separatedBy: #""sourceURL":"related""#).count == 3, "both objects: \(dump)")
        try policy("""
            override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
                try super.createRelationships(for: destination, mapping: mapping, manager: manager)
                var d = destination
                let thread = Thread { d["sourceURL"] = .string("elsewhere") }
                thread.start()
                while !thread.isFinished { usleep(1_000) }
            }
        """, in: folder)
        let (elsewhere, _) = try run()
        #expect(elsewhere.status == 3 && elsewhere.stderr.contains("it set 'sourceURL' of Source 's1' on a thread of its own"), "\(elsewhere.stderr)")
    }
}
