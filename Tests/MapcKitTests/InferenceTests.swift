import Foundation
import Testing
import Yams
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

@Suite("Lightweight inference")
struct InferenceTests {
    private func schema(_ version: String, _ entities: String) throws -> Schema {
        try loadSchema("model: M\nversion: \(version)\nentities:\n" + entities)
    }

    /// Infers a -> b, migrates `objects` with the inferred mapping, and returns the destination store.
    private func migrate(_ a: Schema, _ b: Schema, _ objects: [ObjectData], through: [Schema] = []) throws -> Store {
        let result = MappingInference.infer(from: a, to: b, through: through)
        #expect(result.problems.isEmpty, "\(result.problems)")
        let mapping = try #require(result.mapping)
        // The mapping must also check clean, as an explicit file would.
        var checker = MappingChecker(mapping: mapping)
        #expect(!checker.check(source: a, destination: b).hasErrors)
        let source = try Store.inMemory(schema: a)
        try source.insert(objects)
        let destination = try Store.inMemory(schema: b)
        _ = try StepMigration(source: source, destination: destination, mapping: mapping).run()
        return destination
    }

    private func problems(_ a: Schema, _ b: Schema) -> [InferenceProblem] {
        MappingInference.infer(from: a, to: b).problems
    }

    private let note = ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t"), "count": .integer(7)])

    /// Changes said alike are equal whatever a store keeps of what they drop; every other field
    /// counts (`==` is synthesized: a field added later is compared too).
    @Test func changesAreEqualAsTheyAreSaid() {
        var a = SchemaChange(kind: .removed, entity: "Note", property: "legacy", detail: "attribute of Note")
        var b = a
        a.keptIn = [EntityProperty(entity: "Note", property: "legacy")]
        b.sourceOwner = "Item"
        #expect(a == b)
        b.conversion = "double -> float"
        #expect(a != b)
        var c = a
        c.defaultForNil = "0"
        #expect(a != c)
        #expect(a.keptIn == [EntityProperty(entity: "Note", property: "legacy")] && b.sourceOwner == "Item")
    }

    @Test func addedOptionalAndDefaultedAttributes() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: string\n      count: int16\n")
        let b = try schema("b", "  Note:\n    attributes:\n      title: string\n      count: int16\n      subtitle: string?\n      rank: { type: int64, default: 5 }\n")
        let object = try #require(try migrate(a, b, [note]).objects(of: "Note").first)
        #expect(object.attributes["subtitle"] == .null)
        #expect(object.attributes["rank"] == .integer(5))
        #expect(object.attributes["title"] == .string("t"))
    }

    /// A property removed and one of the same type added in one entity look like a rename whose
    /// renaming identifier was forgotten: inference says so, and with the identifier the values move.
    @Test func aForgottenRenameIsSuggested() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      name: string\n      count: int16\n      old: date?\n")
        let b = try schema("b", "  Note:\n    attributes:\n      title: string\n      count: int16\n      stamp: date?\n      extra: int64?\n")
        let result = MappingInference.infer(from: a, to: b)
        #expect(Set(result.probableRenames) == [
            "Note.stamp is added and Note.old removed, both date: if old was renamed, give 'stamp' renamingIdentifier: old in b, and its values are carried over",
            "Note.title is added and Note.name removed, both string: if name was renamed, give 'title' renamingIdentifier: name in b, and its values are carried over",
        ], "\(result.probableRenames)")
        // Two of a type added: no guess.
        let two = try schema("c", "  Note:\n    attributes:\n      title: string\n      subtitle: string\n      count: int16\n      old: date?\n")
        #expect(!MappingInference.infer(from: a, to: two).probableRenames.contains { $0.contains("both string") })
        // Taken: the rename is inferred.
        let renamed = try schema("b", "  Note:\n    attributes:\n      title: { type: string, renamingIdentifier: name }\n      count: int16\n      old: date?\n")
        #expect(MappingInference.infer(from: a, to: renamed).probableRenames.isEmpty)
        let object = try #require(try migrate(a, renamed, [ObjectData(id: "n1", entity: "Note", attributes: ["name": .string("kept"), "count": .integer(1)])]).objects(of: "Note").first)
        #expect(object.attributes["title"] == .string("kept"))
        // Misspelt: the hint says the identifier written names nothing.
        let misspelt = try schema("b", "  Note:\n    attributes:\n      title: { type: string, renamingIdentifier: nmae }\n      count: int16\n      old: date?\n")
        #expect(MappingInference.infer(from: a, to: misspelt).probableRenames.contains {
            $0.contains("give 'title' renamingIdentifier: name in b (its renamingIdentifier 'nmae' names no property of Note in a)")
        }, "\(MappingInference.infer(from: a, to: misspelt).probableRenames)")
    }

    @Test func optionalToRequiredWithADefaultFillsNils() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: string?\n      count: int16\n")
        let b = try schema("b", "  Note:\n    attributes:\n      title: { type: string, default: untitled }\n      count: int16\n")
        let objects = [note, ObjectData(id: "n2", entity: "Note", attributes: ["count": .integer(1)])]
        let migrated = try migrate(a, b, objects).objects(of: "Note").map { $0.attributes["title"] }
        #expect(migrated == [.string("t"), .string("untitled")])
    }

    @Test func requiredToOptionalRemovedAndWidened() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: string\n      count: int16\n      legacy: string?\n")
        let b = try schema("b", "  Note:\n    attributes:\n      title: string?\n      count: int64\n")
        let result = MappingInference.infer(from: a, to: b)
        #expect(result.changes.contains(SchemaChange(kind: .changed, entity: "Note", property: "count", detail: "int16 -> int64")))
        #expect(result.changes.contains(SchemaChange(kind: .removed, entity: "Note", property: "legacy", detail: "attribute of Note")))
        let object = try #require(try migrate(a, b, [note]).objects(of: "Note").first)
        #expect(object.attributes["count"] == .integer(7))
    }

    /// Validation rules that tighten (they are not in the hashes) are listed as changes, since stored
    /// values may break them after migrating; loosened ones are not.
    @Test func tightenedValidationRulesAreListed() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: { type: string, maxLength: 60 }\n      count: { type: int16, min: 1, max: 9 }\n      code: { type: string, minLength: 2 }\n")
        let b = try schema("b", "  Note:\n    attributes:\n      title: { type: string, maxLength: 20, regex: '[A-Z].*' }\n      count: { type: int16, min: 10, max: 20 }\n      code: { type: string }\n")
        let result = MappingInference.infer(from: a, to: b)
        let listed = result.changes.filter { $0.detail.contains("stored values may break") }.map(\.description)
        #expect(listed == [
            "changed  Note.title: maxLength 60 -> 20, regex none -> '[A-Z].*': stored values may break the rules, and validation then refuses the migration",
            "changed  Note.count: min 1 -> 10: stored values may break the rules, and validation then refuses the migration",
        ], "\(result.changes)")
        #expect(result.problems.isEmpty, "still inferable: the rules are checked after migrating")
    }

    /// Removing an abstract parent loses nothing when its sub-entities keep the properties (Moody 3
    /// to 4 does this with GeographicRegion): its objects are theirs. A property the sub-entity
    /// loses with it is still a loss, named on the sub-entity.
    @Test func removingAnAbstractParentDropsNoValuesOfItsOwn() throws {
        let a = try schema("a", "  Region:\n    abstract: true\n    attributes:\n      name: string\n      code: string?\n  Country:\n    parent: Region\n    attributes:\n      flag: string?\n")
        let kept = try schema("b", "  Country:\n    attributes:\n      name: string\n      code: string?\n      flag: string?\n")
        let result = MappingInference.infer(from: a, to: kept)
        #expect(result.droppedValues.isEmpty, "\(result.droppedValues)")
        #expect(result.changes.contains { $0.kind == .removed && $0.entity == "Region" && $0.property == nil })
        let country = ObjectData(id: "c1", entity: "Country", attributes: ["name": .string("Norway"), "code": .string("NO"), "flag": .string("🇳🇴")])
        let migrated = try #require(try migrate(a, kept, [country]).objects(of: "Country").first)
        #expect(migrated.attributes["code"] == .string("NO") && migrated.attributes["name"] == .string("Norway"))
        let lost = try schema("c", "  Country:\n    attributes:\n      name: string\n      flag: string?\n")
        #expect(MappingInference.infer(from: a, to: lost).droppedValues == ["Country.code"])
    }

    /// Every change that moves a version hash is listed (`mapc diff` shows these): a type change
    /// inference refuses, and settings only the hashes see.
    @Test func everyChangeToTheHashesIsListed() throws {
        let a = try schema("a", "  Item:\n    attributes:\n      year: int32\n      n: int64\n")
        let b = try schema("b", "  Item:\n    versionHashModifier: v2\n    attributes:\n      year: string\n      n: { type: int64, versionHashModifier: x }\n")
        let changes = MappingInference.infer(from: a, to: b).changes.map(\.description)
        #expect(changes == ["changed  Item.year: int32 -> string, not a widening", "changed  Item.n: versionHashModifier none -> x", "changed  entity Item: versionHashModifier none -> v2"], "\(changes)")
        // What a listed change does not say is listed too; optionality is named.
        let c = try schema("c", "  Item:\n    attributes:\n      year: int32\n      n: int64\n    relationships:\n      items: { destination: Item, toMany: true, inverse: itemOf, optional: true }\n      itemOf: { destination: Item, toMany: true, inverse: items, optional: true }\n")
        let d = try schema("d", "  Item:\n    attributes:\n      year: int32?\n      n: int64\n    relationships:\n      items: { destination: Item, toMany: true, ordered: true, inverse: itemOf, optional: true, maxCount: 5 }\n      itemOf: { destination: Item, toMany: true, inverse: items, optional: true }\n")
        let more = MappingInference.infer(from: c, to: d).changes.map(\.description)
        #expect(more.contains("changed  Item.items: unordered -> ordered (the objects take the store's order)") && more.contains("changed  Item.items: counts 0...any -> 0...5"), "\(more)")
        #expect(more.contains("changed  Item.year: required -> optional"), "\(more)")
    }

    @Test func renamesByRenamingIdentifier() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: string\n      count: int16\n")
        let b = try schema("b", "  Memo:\n    renamingIdentifier: Note\n    attributes:\n      heading: { type: string, renamingIdentifier: title }\n      count: int16\n")
        let memo = try #require(try migrate(a, b, [note]).objects(of: "Memo").first)
        #expect(memo.id == "n1" && memo.attributes["heading"] == .string("t"))
        #expect(MappingInference.infer(from: a, to: b).changes.contains(SchemaChange(kind: .renamed, entity: "Memo", property: nil, detail: "from Note")))
    }

    /// A relationship whose destination entity was renamed says so, not only that its hash changed.
    @Test func aRelationshipToARenamedEntitySaysItsNewDestination() throws {
        let a = try schema("a", "  Item:\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: items, optional: true }\n  Tag:\n    attributes:\n      name: string\n    relationships:\n      items: { destination: Item, toMany: true, inverse: tags, optional: true }\n")
        let b = try schema("b", "  Item:\n    relationships:\n      tags: { destination: Label, toMany: true, inverse: items, optional: true }\n  Label:\n    renamingIdentifier: Tag\n    attributes:\n      name: string\n    relationships:\n      items: { destination: Item, toMany: true, inverse: tags, optional: true }\n")
        let changes = MappingInference.infer(from: a, to: b).changes.map(\.description)
        #expect(changes.contains("changed  Item.tags: destination Tag -> Label"), "\(changes)")
        #expect(!changes.contains { $0.contains("settings in its version hash changed") }, "\(changes)")
    }

    /// Core Data's rule: a source and a destination element that share an identifier (the
    /// renaming identifier, else the name) are one. Apple's guide: "the renaming identifier creates
    /// a canonical name", kept when the property is renamed again (the corpus' Moody does so).
    @Test func renamingIdentifiersAreCanonicalAsCoreDataReadsThem() throws {
        let a = try schema("a", "  Query:\n    attributes:\n      remoteIdentifier: string?\n      count: int16\n")
        let b = try schema("b", "  Select:\n    renamingIdentifier: Query\n    attributes:\n      remoteID: { type: string, optional: true, renamingIdentifier: remoteIdentifier }\n      count: int16\n")
        let c = try schema("c", "  Search:\n    renamingIdentifier: Query\n    attributes:\n      serverID: { type: string, optional: true, renamingIdentifier: remoteIdentifier }\n      count: int16\n      extra: string?\n")
        let query = ObjectData(id: "q1", entity: "Query", attributes: ["remoteIdentifier": .string("r1"), "count": .integer(2)])
        let select = ObjectData(id: "q1", entity: "Select", attributes: ["remoteID": .string("r1"), "count": .integer(2)])
        // The second rename, b to c, and straight from a to c.
        for (from, object) in [(a, query), (b, select)] {
            let result = MappingInference.infer(from: from, to: c)
            #expect(result.cautions.isEmpty && result.probableRenames.isEmpty, "\(from.version): \(result.hints)")
            let search = try #require(try migrate(from, c, [object]).objects(of: "Search").first)
            #expect(search.attributes["serverID"] == .string("r1"), "\(from.version)")
        }
    }

    /// Identifiers decide before names: swapping two properties' identifiers moves the value to the
    /// one whose identifier is the old one's, and the other starts empty, as Core Data has it.
    @Test func aPropertyWhoseIdentifierIsAnothersDoesNotKeepItsOwnValues() throws {
        let a = try schema("a", "  Query:\n    attributes:\n      from: string?\n")
        let b = try schema("b", "  Query:\n    attributes:\n      from: { type: string, optional: true, renamingIdentifier: where2 }\n      where2: { type: string, optional: true, renamingIdentifier: from }\n")
        let object = ObjectData(id: "q1", entity: "Query", attributes: ["from": .string("x")])
        let query = try #require(try migrate(a, b, [object]).objects(of: "Query").first)
        #expect(query.attributes["where2"] == .string("x") && query.attributes["from"] == .null, "\(query.attributes)")
    }

    /// An identifier that names the previous version's name, where that property had an identifier
    /// of its own, is matched (no value is lost), and said: Core Data would not match it.
    @Test func anIdentifierNamingAPreviousNameIsMatchedAndSaid() throws {
        let b = try schema("b", "  Memo:\n    renamingIdentifier: Note\n    attributes:\n      heading: { type: string, renamingIdentifier: title }\n      count: int16\n")
        let c = try schema("c", "  Entry:\n    renamingIdentifier: Memo\n    attributes:\n      caption: { type: string, renamingIdentifier: heading }\n      count: int16\n")
        let memo = ObjectData(id: "m1", entity: "Memo", attributes: ["heading": .string("t"), "count": .integer(1)])
        let entry = try #require(try migrate(b, c, [memo]).objects(of: "Entry").first)
        #expect(entry.attributes["caption"] == .string("t"))
        let cautions = MappingInference.infer(from: b, to: c).cautions
        #expect(cautions.contains { $0.hasPrefix("Entry has renamingIdentifier 'Memo'") && $0.contains("Core Data's own migration would not") && $0.contains("renamingIdentifier: Note") }, "\(cautions)")
        #expect(cautions.contains { $0.hasPrefix("Entry.caption has renamingIdentifier 'heading'") && $0.contains("renamingIdentifier: title") }, "\(cautions)")
    }

    /// The rename a removed and an added property suggest names the old property's identifier.
    @Test func aSuggestedRenameGivesTheOldPropertysIdentifier() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      remoteID: { type: string, renamingIdentifier: remoteIdentifier }\n")
        let b = try schema("b", "  Note:\n    attributes:\n      serverID: string\n")
        let hints = MappingInference.infer(from: a, to: b).probableRenames
        #expect(hints.contains { $0.contains("give 'serverID' renamingIdentifier: remoteIdentifier in b") }, "\(hints)")
    }

    /// Two hierarchies brought under one new parent: inferred (the objects keep their values),
    /// and said, as Core Data's lightweight migration refuses it and a Core Data store's IDs change.
    @Test func mergedHierarchiesAreSaid() throws {
        let a = try schema("a", "  Mood:\n    attributes:\n      color: string?\n  Tag:\n    attributes:\n      name: string?\n")
        let b = try schema("b", "  Entry:\n    abstract: true\n    attributes:\n      stamp: date?\n  Mood:\n    parent: Entry\n    attributes:\n      color: string?\n  Tag:\n    parent: Entry\n    attributes:\n      name: string?\n")
        let result = MappingInference.infer(from: a, to: b)
        #expect(result.problems.isEmpty)
        #expect(result.cautions.contains { $0.hasPrefix("Entry brings together entities of separate hierarchies of a (Mood, Tag") && $0.contains("object IDs") }, "\(result.cautions)")
        // One entity moved under a new parent merges nothing.
        let c = try schema("c", "  Entry:\n    abstract: true\n  Mood:\n    parent: Entry\n    attributes:\n      color: string?\n  Tag:\n    attributes:\n      name: string?\n")
        #expect(!MappingInference.infer(from: a, to: c).cautions.contains { $0.contains("separate hierarchies") })
    }

    /// An identifier naming a property (or entity) whose values go to another, which shares its
    /// identifier, is said as such (it was "names no property"), and an inherited property's
    /// caution once, at its own entity.
    @Test func anIdentifierLosingToASharedOneIsSaidAsSuch() throws {
        let b = try schema("b", "  Note:\n    attributes:\n      fullName: { type: string, optional: true, renamingIdentifier: name }\n")
        let c = try schema("c", "  Note:\n    attributes:\n      displayName: { type: string, optional: true, renamingIdentifier: fullName }\n      name: string?\n")
        let cautions = MappingInference.infer(from: b, to: c).cautions
        #expect(cautions.contains { $0.hasPrefix("Note.displayName has renamingIdentifier 'fullName', but Note.fullName of b goes to Note.name") }, "\(cautions)")
        let memo = try schema("d", "  Memo:\n    renamingIdentifier: Note\n    attributes:\n      t: string?\n")
        let split = try schema("e", "  Note:\n    attributes:\n      t: string?\n  Entry:\n    renamingIdentifier: Memo\n    attributes:\n      t: string?\n")
        #expect(MappingInference.infer(from: memo, to: split).cautions.contains { $0.hasPrefix("Entry has renamingIdentifier 'Memo', but Memo's objects of d go to Note") })
        let parent = try schema("f", "  Item:\n    attributes:\n      title: { type: string, renamingIdentifier: heading }\n  Book:\n    parent: Item\n    attributes:\n      isbn: string?\n")
        let child = try schema("g", "  Item:\n    attributes:\n      caption: { type: string, renamingIdentifier: title }\n  Book:\n    parent: Item\n    attributes:\n      isbn: string?\n")
        #expect(MappingInference.infer(from: parent, to: child).cautions.filter { $0.contains("caption has renamingIdentifier") }.count == 1)
    }

    @Test func renameChainsAcrossSeveralVersions() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: string\n      count: int16\n")
        let b = try schema("b", "  Memo:\n    renamingIdentifier: Note\n    attributes:\n      heading: { type: string, renamingIdentifier: title }\n      count: int16\n")
        let c = try schema("c", "  Entry:\n    renamingIdentifier: Memo\n    attributes:\n      caption: { type: string, renamingIdentifier: heading }\n      count: int16\n")
        // Straight from a to c, following the renames recorded in b.
        let entry = try #require(try migrate(a, c, [note], through: [b]).objects(of: "Entry").first)
        #expect(entry.attributes["caption"] == .string("t"))
        // Without b the chain is unknown: Entry looks new and Note removed.
        #expect(MappingInference.infer(from: a, to: c).changes.contains(SchemaChange(kind: .removed, entity: "Note", property: nil, detail: "")))
    }

    @Test func relationshipsToOneToToManyAndOrdering() throws {
        let a = try schema("a", """
          Note:
            attributes: { title: string }
            relationships:
              folder: { destination: Folder, inverse: notes, optional: true }
              tags: { destination: Tag, toMany: true, inverse: notes, optional: true }
          Folder:
            attributes: { name: string }
            relationships:
              notes: { destination: Note, toMany: true, inverse: folder, optional: true }
          Tag:
            attributes: { name: string }
            relationships:
              notes: { destination: Note, toMany: true, ordered: true, inverse: tags, optional: true }

        """)
        let b = try schema("b", """
          Note:
            attributes: { title: string }
            relationships:
              folders: { destination: Folder, toMany: true, inverse: notes, optional: true, renamingIdentifier: folder }
              tags: { destination: Tag, toMany: true, ordered: true, inverse: notes, optional: true }
          Folder:
            attributes: { name: string }
            relationships:
              notes: { destination: Note, toMany: true, inverse: folders, optional: true }
          Tag:
            attributes: { name: string }
            relationships:
              notes: { destination: Note, toMany: true, inverse: tags, optional: true }

        """)
        let objects = [
            ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("x")], relationships: ["folder": ["f1"], "tags": ["t1", "t2"]]),
            ObjectData(id: "f1", entity: "Folder", attributes: ["name": .string("inbox")]),
            ObjectData(id: "t1", entity: "Tag", attributes: ["name": .string("a")]),
            ObjectData(id: "t2", entity: "Tag", attributes: ["name": .string("b")]),
        ]
        let store = try migrate(a, b, objects)
        let migrated = try #require(try store.objects(of: "Note").first)
        #expect(migrated.relationships["folders"] == ["f1"])
        #expect(Set(migrated.relationships["tags"] ?? []) == ["t1", "t2"])
        #expect(try store.objects(of: "Folder").first?.relationships["notes"] == ["n1"])
    }

    @Test func newParentEntityWithPropertiesMovedUp() throws {
        let a = try schema("a", "  Photo:\n    attributes:\n      title: string\n      url: uri\n  Video:\n    attributes:\n      title: string\n      seconds: double\n")
        let b = try schema("b", "  Media:\n    abstract: true\n    attributes:\n      title: string\n  Photo:\n    parent: Media\n    attributes:\n      url: uri\n  Video:\n    parent: Media\n    attributes:\n      seconds: double\n")
        let store = try migrate(a, b, [ObjectData(id: "p", entity: "Photo", attributes: ["title": .string("beach"), "url": .uri("file:///b.png")]),
                                       ObjectData(id: "v", entity: "Video", attributes: ["title": .string("waves"), "seconds": .double(12.5)])])
        #expect(try store.objects(of: "Media").map { $0.attributes["title"] } == [.string("beach"), .string("waves")])
    }

    @Test func addedAndRemovedEntities() throws {
        let a = try schema("a", "  Note:\n    attributes:\n      title: string\n      count: int16\n  Draft:\n    attributes:\n      text: string\n")
        let b = try schema("b", "  Note:\n    attributes:\n      title: string\n      count: int16\n  Label:\n    attributes:\n      name: string\n")
        let result = MappingInference.infer(from: a, to: b)
        #expect(result.mapping?.entityMappings.contains { $0.name == "RemoveDraft" && $0.type == .remove } == true)
        let store = try migrate(a, b, [note, ObjectData(id: "d", entity: "Draft", attributes: ["text": .string("x")])])
        #expect(try store.count(of: "Note") == 1)
        #expect(try store.count(of: "Label") == 0)
    }

    @Test func refusalsNameTheEntityPropertyAndFix() throws {
        let base = "  Note:\n    attributes:\n      title: string\n      count: int16\n"
        let a = try schema("a", base)
        let cases: [(String, String, String?, String)] = [
            ("  Note:\n    attributes:\n      title: int64\n      count: int16\n", "Note", "title", "type change string -> int64 can lose data"),
            ("  Note:\n    attributes:\n      title: string\n      count: int16\n      rank: int64\n", "Note", "rank", "new required attribute without a default"),
            ("  Note:\n    attributes:\n      title: string\n      count: int16\n  Copy:\n    renamingIdentifier: Note\n    attributes:\n      title: string\n      count: int16\n",
             "Note", nil, "entity Note would split into Copy and Note"),
        ]
        for (entities, entity, property, reason) in cases {
            let found = problems(a, try schema("b", entities))
            #expect(found.contains { $0.entity == entity && $0.property == property && $0.reason.contains(reason) }, "\(found)")
        }
        let optional = try schema("a2", "  Note:\n    attributes:\n      title: string?\n      count: int16\n")
        #expect(problems(optional, a).contains { $0.property == "title" && $0.reason.contains("optional -> required without a default") && $0.fix.contains("give it a default") })
        let toMany = try schema("r1", "  Note:\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: note, optional: true }\n  Tag:\n    relationships:\n      note: { destination: Note, inverse: tags, optional: true }\n")
        let toOne = try schema("r2", "  Note:\n    relationships:\n      tags: { destination: Tag, inverse: note, optional: true }\n  Tag:\n    relationships:\n      note: { destination: Note, inverse: tags, optional: true }\n")
        #expect(problems(toMany, toOne).contains { $0.property == "tags" && $0.reason.contains("to-many -> to-one would drop") })
        let required = try schema("r3", "  Note:\n    relationships:\n      owner: { destination: Tag }\n  Tag: {}\n")
        #expect(problems(try schema("r0", "  Note: {}\n  Tag: {}\n"), required).contains { $0.property == "owner" && $0.reason.contains("new required relationship") })
    }

    @Test func theWrittenMappingLoadsBackAndChecksClean() throws {
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let v1 = try catalog.require(version: "v1"), v2 = try catalog.require(version: "v2")
        let result = MappingInference.infer(from: v1, to: v2)
        let text = MappingWriter.yaml(try #require(result.mapping), source: v1, destination: v2, changes: result.changes, notes: result.notes)
        #expect(text.contains("#   added    Note.image: binary, optional"))
        #expect(text.contains("    # image: new attribute, gets nil"))
        let (reloaded, diagnostics) = MappingLoader.parse(source: SourceFile(path: "inferred.yaml", text: text))
        #expect(diagnostics.isEmpty)
        var checker = MappingChecker(mapping: try #require(reloaded))
        #expect(checker.check(source: v1, destination: v2).isEmpty, "hashes are filled in and current")
        #expect(YAMLText.scalar("a: b") == "'a: b'" && YAMLText.scalar("$source.title") == "$source.title" && YAMLText.scalar("it's: x") == "'it''s: x'")
        // Every scalar reads back as the same text, whatever it holds.
        for text in ["", "yes", "- x", "a\nb", "tab\there", "nul\u{0}x", "'quoted'", "\"dq\"", " lead", "#hash", "[list]", "{map}", "@at", "%pct", "x: y # z"] {
            let yaml = "value: " + YAMLText.scalar(text) + "\n"
            let node = try #require(try Yams.compose(yaml: yaml))
            #expect(node["value"]?.scalar?.string == text, "\(text.debugDescription) written as \(yaml.debugDescription)")
        }
    }

    /// Text YAML would read as a number, a boolean or null (a hash of digits only, `yes`, `1.0`)
    /// was written plain: mapc reads it as text, but the editor's schema checker and any YAML
    /// tool read `24919349` as a number and flagged the files mapc wrote. Written quoted now.
    @Test func textThatYAMLWouldReadAsAnotherTypeIsQuoted() throws {
        for text in ["24919349", "0123", "-5", "+5", "1.0", ".5", "1e5", ".inf", "-.Inf", ".NaN", "0x1F", "0o17", "2024-01-01", "12:30:00",
                     "true", "False", "YES", "no", "On", "off", "y", "N", "null", "Null", "NULL", "~"] {
            let yaml = "value: " + YAMLText.scalar(text) + "\nflow: { k: " + YAMLText.flowScalar(text) + " }\n"
            let loaded = try #require(try Yams.load(yaml: yaml) as? [String: Any])
            #expect(loaded["value"] as? String == text, "\(text) written as \(yaml.debugDescription)")
            #expect((loaded["flow"] as? [String: Any])?["k"] as? String == text, "\(text) written as \(yaml.debugDescription)")
        }
        for text in ["abc", "v2", "Note", "$source.title", "x1"] { #expect(YAMLText.scalar(text) == text) }
        // The recorded hashes a mapping file carries, as `infer` and `check --update-hashes` write them.
        let recorded = MappingWriter.recorded("24919349", ["title": "00012345", "@constraints": "987"])
        let loaded = try #require(try Yams.load(yaml: "h: " + recorded + "\n") as? [String: Any])
        let hash = try #require(loaded["h"] as? [String: Any])
        #expect(hash["hash"] as? String == "24919349" && (hash["properties"] as? [String: Any])?["title"] as? String == "00012345", "\(recorded)")
    }

    /// Names come from files (an imported Xcode mapping model's policy class, entity and mapping
    /// names): written unquoted, a newline in one added keys to the mapping file.
    @Test func namesAreWrittenAsScalarsThatCannotAddKeys() throws {
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let v1 = try catalog.require(version: "v1"), v2 = try catalog.require(version: "v2")
        var mapping = try #require(MappingInference.infer(from: v1, to: v2).mapping)
        mapping.entityMappings[0].policy = "X\n    filter: FALSEPREDICATE"
        mapping.entityMappings[0].name = "Evil\n  - name: Other"
        let text = MappingWriter.yaml(mapping, source: v1, destination: v2)
        let node = try #require(try Yams.compose(yaml: text))
        let mappings = try #require(node["entityMappings"]?.sequence)
        #expect(mappings.count == 1, "\(text)")
        #expect(mappings.first?["policy"]?.scalar?.string == "X\n    filter: FALSEPREDICATE" && mappings.first?["filter"] == nil, "\(text)")
        #expect(mappings.first?["name"]?.scalar?.string == "Evil\n  - name: Other")
        // Comments made from a file's text (an imported model's file name in the header) stay comments.
        let header = MappingWriter.yaml(mapping, source: v1, destination: v2, header: ["Imported from X.xcmappingmodel\nfilter: FALSEPREDICATE"])
        #expect(try #require(try Yams.compose(yaml: header))["filter"] == nil, "\(header)")
    }
}

/// A to-many already required (empty allowed, as Core Data validates it) that is given a
/// minCount is said so, not as "optional -> required" (its optional flag did not change).
@Suite("Inference wording")
struct InferenceWordingTests {
    @Test func aMinCountGivenToARequiredToManyIsSaidAsSuch() throws {
        let schema = { (version: String, counts: String) in
            "model: W\nversion: \(version)\nentities:\n  Book:\n    attributes: { title: string }\n    relationships:\n      authors: { destination: Author, toMany: true, inverse: books\(counts) }\n"
                + "  Author:\n    attributes: { name: string }\n    relationships:\n      books: { destination: Book, toMany: true, optional: true, inverse: authors }\n"
        }
        let catalog = try SchemaCatalog(files: ["w1.yaml": schema("w1", ""), "w2.yaml": schema("w2", ", minCount: 1"), "versions.yaml": "versions: [w1, w2]\n"])
        let result = MappingInference.infer(from: try catalog.require(version: "w1"), to: try catalog.require(version: "w2"))
        let details = result.changes.filter { $0.property == "authors" }.map(\.detail)
        #expect(details.contains { $0.hasPrefix("may be empty -> minCount 1") } && !details.contains { $0.hasPrefix("optional -> required") }, "\(details)")
    }
}
