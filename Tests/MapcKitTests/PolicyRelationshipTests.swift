import Foundation
import MapcExamples
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// A policy that keeps the default `createRelationships` may say so, and mapc then relates all its
/// objects with SQL through their associations instead of calling the hook per object. The result
/// must be the same; a policy that made objects of another entity too is related one by one.
@Suite("Relating a policy's objects")
struct PolicyRelationshipTests {
    /// The tutorial's policy with relationships set one object at a time (the flag left false).
    final class OneByOne: EntityMigrationPolicy {
        let tutorial = AttachmentToImageAttachmentMigrationPolicyV3toV4()
        override class var providedAttributes: Set<String> { AttachmentToImageAttachmentMigrationPolicyV3toV4.providedAttributes }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try tutorial.createDestinationInstances(for: source, mapping: mapping, manager: manager)
        }
    }

    /// Says it keeps the default, and makes a plain `Attachment` (the parent entity) for every
    /// other source: those objects are not of the mapping's destination entity.
    final class MixedEntities: EntityMigrationPolicy {
        override class var providedAttributes: Set<String> { ["caption", "width", "height"] }
        override class var keepsDefaultRelationships: Bool { true }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            let plain = (source.data.key ?? 0) % 2 == 0
            var object = try manager.makeDestination(for: source, mapping: mapping, entity: plain ? "Attachment" : nil)
            if !plain {
                object["caption"] = .string("c")
                object["width"] = .double(1)
                object["height"] = .double(2)
            }
            try manager.insert(object, associatedWith: source, mapping: mapping)
        }
    }

    /// Associates each attachment's object with the attachment's note instead: a source of another
    /// entity, whose keys the attachments' share. The default relationships then read `$source.note`
    /// on a note, as `createRelationships` would for that association.
    class NoteSourced: EntityMigrationPolicy {
        override class var providedAttributes: Set<String> { ["caption", "width", "height"] }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            guard case .object(let note) = try source.value(forKeyPath: "note") else { return }
            var object = try manager.makeDestination(for: source, mapping: mapping)
            object["caption"] = .string("c")
            object["width"] = .double(1)
            object["height"] = .double(2)
            try manager.associate(source: note, destination: try manager.insert(object, mapping: mapping), mapping: mapping)
        }
    }
    final class NoteSourcedInSQL: NoteSourced {
        override class var keepsDefaultRelationships: Bool { true }
    }

    /// Relates nothing, and checks that looking up what the mapping made from an attachment finds
    /// nothing either: its objects came from notes, whose keys the attachments share.
    final class NoteSourcedLookup: NoteSourced {
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
            let found = try manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source.ref])
            if !found.isEmpty { throw MigrationError.setup("the attachment \(source.ref) has objects \(found)") }
        }
        override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {}
    }

    /// Says it keeps the default, but overrides `createRelationships` without calling it: it leaves
    /// every attachment without a note. Its word is checked on the first object, and its hook
    /// relates every object.
    final class OverridesAnyway: EntityMigrationPolicy {
        nonisolated(unsafe) static var calls = 0
        let tutorial = AttachmentToImageAttachmentMigrationPolicyV3toV4()
        override class var providedAttributes: Set<String> { AttachmentToImageAttachmentMigrationPolicyV3toV4.providedAttributes }
        override class var keepsDefaultRelationships: Bool { true }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try tutorial.createDestinationInstances(for: source, mapping: mapping, manager: manager)
        }
        override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            Self.calls += 1
        }
    }

    /// Merges every attachment into the first one's object: one destination with an association
    /// from each source, so `createRelationships` runs once per association and the last one wins.
    /// The other sources are associated at the end, in reverse key order, so the last association
    /// is not the last source row SQL would join.
    class Merging: EntityMigrationPolicy {
        var merged: DestinationObject?
        var others: [ObjectRef] = []
        override class var providedAttributes: Set<String> { ["caption", "width", "height"] }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            if merged != nil {
                others.append(source.ref)
                return
            }
            var object = try manager.makeDestination(for: source, mapping: mapping)
            object["caption"] = .string("merged")
            object["width"] = .double(1)
            object["height"] = .double(2)
            merged = try manager.insert(object, associatedWith: source, mapping: mapping)
        }
        override func endInstanceCreation(_ mapping: EntityMapping, manager: MigrationManager) throws {
            guard let merged else { return }
            for source in others.reversed() { try manager.associate(source: source, destination: merged, mapping: mapping) }
        }
    }
    final class MergingInSQL: Merging {
        override class var keepsDefaultRelationships: Bool { true }
    }

    /// Records the caption each object it relates holds in `createRelationships` (a policy probe
    /// found `attributes` empty there, where Core Data's `dInstance` holds its values).
    final class ReadsValues: EntityMigrationPolicy {
        nonisolated(unsafe) static var seen: [String] = []
        let tutorial = AttachmentToImageAttachmentMigrationPolicyV3toV4()
        override class var providedAttributes: Set<String> { AttachmentToImageAttachmentMigrationPolicyV3toV4.providedAttributes }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            try tutorial.createDestinationInstances(for: source, mapping: mapping, manager: manager)
        }
        override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            Self.seen.append("\(destination["caption"]) \(destination["dateCreated"] == .null ? "no date" : "dated")")
            try super.createRelationships(for: destination, mapping: mapping, manager: manager)
        }
    }

    /// Sets a relationship on an object not inserted yet, or one the entity does not have: said
    /// as such (the first was "no relationship 'note' on ImageAttachment", which it has).
    final class RelatesTooSoon: EntityMigrationPolicy {
        nonisolated(unsafe) static var relationship = "note"
        let tutorial = AttachmentToImageAttachmentMigrationPolicyV3toV4()
        override class var providedAttributes: Set<String> { AttachmentToImageAttachmentMigrationPolicyV3toV4.providedAttributes }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            let object = try manager.makeDestination(for: source, mapping: mapping)
            try manager.setRelationship(Self.relationship, of: object, to: [], mapping: mapping)
        }
    }

    @Test(.serialized, arguments: [("note", "is not in the destination store: insert it (manager.insert) before setting its relationships"),
                                   ("notte", "ImageAttachment has no relationship 'notte' in v4; did you mean 'note'?")])
    func aRelationshipSetTooSoonOrMisspeltIsSaidAsSuch(relationship: String, message: String) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        RelatesTooSoon.relationship = relationship
        let error = #expect(throws: (any Error).self) { _ = try migrate(.mapc, policy: RelatesTooSoon.self, in: folder) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains(message) && !text.contains("no relationship 'note' on"), "\(text)")
        if case .value? = error as? MigrationError {} else { Issue.record("not a value error (exit 3): \(String(describing: error))") }
    }

    @Test(.serialized, arguments: TestLayout.allCases)
    func createRelationshipsSeesTheObjectsValues(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        ReadsValues.seen = []
        let (store, _) = try migrate(layout, policy: ReadsValues.self, in: folder)
        let captions = try store.objects(ofExactEntity: "ImageAttachment").compactMap { object -> String? in
            if case .string(let caption)? = object.attributes["caption"] { return caption }
            return nil
        }
        #expect(!ReadsValues.seen.isEmpty && ReadsValues.seen.count == captions.count, "\(ReadsValues.seen)")
        #expect(Set(ReadsValues.seen) == Set(captions.map { "\(Value.string($0)) dated" }), "\(ReadsValues.seen) \(captions)")
    }

    private func migrate(_ layout: TestLayout, policy: EntityMigrationPolicy.Type, in folder: URL) throws -> (Store, MigrationSummary) {
        let v3 = try uncloudNotes("v3"), v4 = try uncloudNotes("v4")
        let dataPath = packageRoot.appendingPathComponent("Tests/MapcCLITests/Fixtures/expected-v3.json").path
        let data = try JSONParser.parse(try Data(contentsOf: URL(fileURLWithPath: dataPath)), path: dataPath)
        let name = UUID().uuidString
        let source = try Store.create(at: folder.appendingPathComponent("\(name)-v3.db").path, schema: v3, format: layout.format)
        try source.insert(try DataFile.read(data, schema: v3).objects)
        let mappingPath = packageRoot.appendingPathComponent("mappings/mapping_v3_to_v4.yaml").path
        let model = try #require(MappingLoader.parse(source: SourceFile(path: mappingPath, text: try String(contentsOfFile: mappingPath, encoding: .utf8))).mapping)
        let registry = PolicyRegistry()
        registry.register(policy, as: "UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4")
        let destination = try Store.create(at: folder.appendingPathComponent("\(name)-v4.db").path, schema: v4, format: layout.format)
        var step = StepMigration(source: source, destination: destination, mapping: model, policies: registry)
        step.batchSize = 2   // several batches even for the fixture's few attachments
        return (destination, try step.run())
    }

    /// Every object of the store: entity, key, attributes and related keys, in key order.
    private func contents(_ store: Store) throws -> [String] {
        try store.schema.entities.flatMap { entity in
            try store.objects(ofExactEntity: entity.name).map { object in
                let attributes = object.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                let related = object.relatedKeys.sorted { $0.key < $1.key }.map { "\($0.key)->\($0.value.map { "\($0.entity)/\($0.key)" })" }
                return "\(object.entity) \(object.key ?? -1) \(attributes) \(related)"
            }
        }
    }

    @Test(arguments: TestLayout.allCases)
    func sqlRelatesTheTutorialsObjectsAsThePolicyWouldOneByOne(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (together, summary) = try migrate(layout, policy: AttachmentToImageAttachmentMigrationPolicyV3toV4.self, in: folder)
        let (oneByOne, reference) = try migrate(layout, policy: OneByOne.self, in: folder)
        #expect(summary.compiled.contains("AttachmentToImageAttachment.relationships"), "\(summary.compiled)")
        #expect(!reference.compiled.contains("AttachmentToImageAttachment.relationships"), "\(reference.compiled)")
        let attachments = try together.objects(of: "Attachment")
        #expect(attachments.count >= 2)
        #expect(attachments.allSatisfy { $0.relatedKeys["note"]?.count == 1 })
        #expect(try contents(together) == contents(oneByOne))
    }

    @Test(arguments: TestLayout.allCases)
    func objectsOfAnotherEntityAreRelatedOneByOne(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, summary) = try migrate(layout, policy: MixedEntities.self, in: folder)
        #expect(!summary.compiled.contains("AttachmentToImageAttachment.relationships"), "\(summary.compiled)")
        let plain = try store.objects(ofExactEntity: "Attachment"), images = try store.objects(ofExactEntity: "ImageAttachment")
        #expect(!plain.isEmpty && !images.isEmpty)
        #expect((plain + images).allSatisfy { $0.relatedKeys["note"]?.count == 1 }, "\((plain + images).map(\.relatedKeys))")
    }

    /// What a migration leaves: the destination's contents, or the error it stopped with.
    private func outcome(_ layout: TestLayout, policy: EntityMigrationPolicy.Type, in folder: URL) -> (contents: [String], compiled: [String]) {
        do {
            let (store, summary) = try migrate(layout, policy: policy, in: folder)
            return (try contents(store), summary.compiled)
        } catch {
            return (["failed: \(error)"], [])
        }
    }

    /// An object associated with a source of another entity is related as `createRelationships`
    /// would relate it, never through the row of the mapping's source entity that has the same
    /// key: here the hook reads `$source.note` on a note and stops with an error, and so must SQL.
    @Test(arguments: TestLayout.allCases)
    func objectsAssociatedWithSourcesOfAnotherEntityAreRelatedAsTheHookWould(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sql = outcome(layout, policy: NoteSourcedInSQL.self, in: folder), hook = outcome(layout, policy: NoteSourced.self, in: folder)
        #expect(hook.contents.first?.contains("Note has no key 'note'") == true, "\(hook.contents)")
        #expect(sql.contents == hook.contents)
    }

    /// A destination object associated with several sources is related once per association, in
    /// order, as `createRelationships` would be: not by whichever association SQLite joins first.
    @Test(arguments: TestLayout.allCases)
    func anObjectWithSeveralSourcesIsRelatedAsTheHookWould(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sql = outcome(layout, policy: MergingInSQL.self, in: folder), hook = outcome(layout, policy: Merging.self, in: folder)
        #expect(sql.contents == hook.contents)
        #expect(!sql.compiled.contains("AttachmentToImageAttachment.relationships"), "\(sql.compiled)")
        #expect(!sql.contents.contains { $0.hasPrefix("failed") }, "\(sql.contents)")
    }

    /// `$manager` lookups find what a mapping made from a source object, not from an object of
    /// another entity under the same key.
    @Test(arguments: TestLayout.allCases)
    func lookupsTellSourcesOfDifferentEntitiesApart(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, _) = try migrate(layout, policy: NoteSourcedLookup.self, in: folder)
        #expect(try store.objects(ofExactEntity: "ImageAttachment").count >= 2)
    }

    /// Associating an object that exists with another source creates nothing: the summary counts
    /// the one merged object, not one per source.
    @Test(arguments: TestLayout.allCases)
    func associatingAnObjectAgainCreatesNothing(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, summary) = try migrate(layout, policy: Merging.self, in: folder)
        #expect(try store.objects(ofExactEntity: "ImageAttachment").count == 1)
        #expect(summary.created["AttachmentToImageAttachment"] == 1, "\(summary.created)")
    }

    /// Makes an ImageAttachment and a plain Attachment of every source.
    final class Splitting: EntityMigrationPolicy {
        override class var providedAttributes: Set<String> { ["caption", "width", "height"] }
        override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
            var image = try manager.makeDestination(for: source, mapping: mapping)
            image["caption"] = .string("c")
            image["width"] = .double(1)
            image["height"] = .double(2)
            try manager.insert(image, associatedWith: source, mapping: mapping)
            try manager.insert(try manager.makeDestination(for: source, mapping: mapping, entity: "Attachment"), associatedWith: source, mapping: mapping)
        }
        override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {}
    }

    /// An object a policy made of another entity than its mapping's (`makeDestination(…, entity:)`)
    /// took its source's id, which the mapping's own object has: a store of two objects of one id,
    /// which `dump` warned of and `load` refused. It gets an id of its own.
    @Test func anObjectOfAnotherEntityGetsAnIDOfItsOwn() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, _) = try migrate(.mapc, policy: Splitting.self, in: folder)
        let ids = try store.schema.entities.flatMap { try store.objects(ofExactEntity: $0.name).map(\.id) }
        #expect(try store.objects(ofExactEntity: "Attachment").count >= 2)
        #expect(Set(ids).count == ids.count, "\(ids)")
        #expect(try store.objects(ofExactEntity: "Attachment").allSatisfy { $0.id.hasSuffix(".Attachment") })
    }

    /// Merges as `Merging` does, and records what `sourceInstances` gives for the merged object.
    final class MergingLookup: Merging {
        nonisolated(unsafe) static var found: [Int] = []
        override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
            Self.found.append(try manager.sourceInstances(forEntityMappingNamed: mapping.name, destinationInstances: [destination.ref]).count)
        }
    }

    /// `sourceInstances(forEntityMappingNamed:destinationInstances:)` gave the first source of an
    /// object several sources were associated with, where Core Data's gives every one ("the
    /// managed object instances in the source store used to create destinationInstances").
    @Test(.serialized, arguments: TestLayout.allCases)
    func sourceInstancesGivesEverySourceOfAMergedObject(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        MergingLookup.found = []
        let (store, _) = try migrate(layout, policy: MergingLookup.self, in: folder)
        let attachments = try store.objects(ofExactEntity: "ImageAttachment").count
        let sources = try uncloudNotesAttachmentCount()
        #expect(attachments == 1 && sources >= 2 && !MergingLookup.found.isEmpty && MergingLookup.found.allSatisfy { $0 == sources }, "\(MergingLookup.found) of \(sources)")
    }

    /// The attachments of the v3 fixture the tests migrate.
    private func uncloudNotesAttachmentCount() throws -> Int {
        let dataPath = packageRoot.appendingPathComponent("Tests/MapcCLITests/Fixtures/expected-v3.json").path
        let data = try JSONParser.parse(try Data(contentsOf: URL(fileURLWithPath: dataPath)), path: dataPath)
        return try DataFile.read(data, schema: try uncloudNotes("v3")).objects.filter { $0.entity == "Attachment" || $0.entity == "ImageAttachment" }.count
    }

    /// A policy whose `createRelationships` does not run the default, though it says it keeps it,
    /// is related by its own hook, once per object, never by SQL.
    @Test func aPolicyThatSaysItKeepsTheDefaultButDoesNotIsRelatedByItsHook() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        OverridesAnyway.calls = 0
        let (store, summary) = try migrate(.mapc, policy: OverridesAnyway.self, in: folder)
        let attachments = try store.objects(ofExactEntity: "ImageAttachment")
        #expect(attachments.count >= 2)
        #expect(attachments.allSatisfy { $0.relatedKeys["note"]?.isEmpty != false }, "\(attachments.map(\.relatedKeys))")
        #expect(OverridesAnyway.calls == attachments.count, "once per object, the first included once")
        #expect(!summary.compiled.contains("AttachmentToImageAttachment.relationships"), "\(summary.compiled)")
    }
}
