import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

private let base = """
model: M
version: v1
entities:
  Note:
    attributes:
      title: { type: string }
      count: { type: int64, default: 0 }
    relationships:
      tags: { destination: Tag, toMany: true, inverse: notes, optional: true }
  Tag:
    attributes:
      label: { type: string }
    relationships:
      notes: { destination: Note, toMany: true, inverse: tags, optional: true }

"""

/// A textual edit of the base schema and whether it must change the hash.
struct HashCase: CustomTestStringConvertible, Sendable {
    let name: String
    let find: String
    let replace: String
    let changes: Bool
    var testDescription: String { name }
}

let hashCases: [HashCase] = [
    // Changes that matter to the stored data change the hash.
    .init(name: "attribute type", find: "count: { type: int64", replace: "count: { type: int32", changes: true),
    .init(name: "attribute optionality", find: "title: { type: string }", replace: "title: { type: string, optional: true }", changes: true),
    .init(name: "attribute transient", find: "title: { type: string }", replace: "title: { type: string, transient: true }", changes: true),
    .init(name: "attribute modifier", find: "title: { type: string }", replace: "title: { type: string, versionHashModifier: x }", changes: true),
    .init(name: "attribute renamed", find: "title: { type: string }", replace: "heading: { type: string }", changes: true),
    .init(name: "attribute added", find: "      title: { type: string }\n", replace: "      title: { type: string }\n      body: { type: string, optional: true }\n", changes: true),
    .init(name: "entity modifier", find: "  Tag:\n    attributes:", replace: "  Tag:\n    versionHashModifier: two\n    attributes:", changes: true),
    .init(name: "entity abstract", find: "  Tag:\n    attributes:", replace: "  Tag:\n    abstract: true\n    attributes:", changes: true),
    .init(name: "uniqueness constraint", find: "  Tag:\n    attributes:", replace: "  Tag:\n    uniquenessConstraints: [[label]]\n    attributes:", changes: true),
    .init(name: "relationship to-many", find: "notes: { destination: Note, toMany: true, inverse: tags, optional: true }", replace: "notes: { destination: Note, inverse: tags, optional: true }", changes: true),
    .init(name: "relationship ordered", find: "tags: { destination: Tag, toMany: true,", replace: "tags: { destination: Tag, toMany: true, ordered: true,", changes: true),
    .init(name: "relationship min count", find: "tags: { destination: Tag, toMany: true,", replace: "tags: { destination: Tag, toMany: true, minCount: 1,", changes: true),
    .init(name: "relationship max count", find: "tags: { destination: Tag, toMany: true,", replace: "tags: { destination: Tag, toMany: true, maxCount: 9,", changes: true),
    .init(name: "relationship optionality", find: "inverse: notes, optional: true", replace: "inverse: notes, optional: false", changes: true),
    // Changes that do not matter to the stored data leave it alone.
    .init(name: "default value", find: "default: 0", replace: "default: 42", changes: false),
    .init(name: "validation rule", find: "title: { type: string }", replace: "title: { type: string, maxLength: 80, regex: \"[A-Z].*\" }", changes: false),
    .init(name: "index", find: "  Tag:\n    attributes:", replace: "  Tag:\n    indexes: [label]\n    attributes:", changes: false),
    .init(name: "userInfo", find: "  Tag:\n    attributes:", replace: "  Tag:\n    userInfo: { color: red }\n    attributes:", changes: false),
    .init(name: "delete rule", find: "inverse: notes, optional: true", replace: "inverse: notes, optional: true, deleteRule: cascade", changes: false),
    .init(name: "renaming identifier", find: "title: { type: string }", replace: "title: { type: string, renamingIdentifier: heading }", changes: false),
    .init(name: "version name", find: "version: v1", replace: "version: v9", changes: false),
    .init(name: "property order", find: "      title: { type: string }\n      count: { type: int64, default: 0 }\n", replace: "      count: { type: int64, default: 0 }\n      title: { type: string }\n", changes: false),
    .init(name: "shorthand form", find: "label: { type: string }", replace: "label: string", changes: false),
    .init(name: "comments and spacing", find: "entities:\n", replace: "entities:   # the model\n\n", changes: false),
]

@Suite("Version hashes")
struct VersionHashTests {
    @Test("a schema change changes the hash exactly when it matters", arguments: hashCases)
    func schemaChange(_ testCase: HashCase) throws {
        #expect(base.contains(testCase.find), "the case's text is not in the base schema")
        let original = try loadSchema(base)
        let edited = try loadSchema(base.replacingOccurrences(of: testCase.find, with: testCase.replace))
        let changed = VersionHash.modelHash(of: original) != VersionHash.modelHash(of: edited)
        #expect(changed == testCase.changes)
    }

    @Test func hashesAreSHA256HexAndStable() throws {
        let schema = try loadSchema(base)
        let hashes = VersionHash.entityHashes(of: schema)
        #expect(hashes.count == 2)
        for hash in hashes.values + [VersionHash.modelHash(of: schema)] {
            #expect(hash.count == 64 && hash.allSatisfy { "0123456789abcdef".contains($0) })
        }
        // Pinned: the algorithm is documented, and a change to it would orphan every existing store.
        #expect(VersionHash.sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let note = try #require(schema.entity(named: "Note"))
        #expect(VersionHash.canonicalDescription(of: note, parentHash: nil) ==
            #"["entity","Note",false,null,null,[],[["attribute","count",false,false,null,"int64"],["relationship","tags",true,false,null,"Tag","notes",true,false,0,0],["attribute","title",false,false,null,"string"]]]"#)
        #expect(hashes["Note"] == VersionHash.sha256(VersionHash.canonicalDescription(of: note, parentHash: nil)))
    }

    @Test func anEntityChangeReachesOnlyItsHashAndItsSubentities() throws {
        let yaml = "model: M\nversion: v1\nentities:\n  Attachment:\n    attributes:\n      dateCreated: date\n  Image:\n    parent: Attachment\n  Note:\n    attributes:\n      title: string\n"
        let before = VersionHash.entityHashes(of: try loadSchema(yaml))
        let after = VersionHash.entityHashes(of: try loadSchema(yaml.replacingOccurrences(of: "dateCreated: date", with: "dateCreated: date?")))
        #expect(before["Attachment"] != after["Attachment"])
        #expect(before["Image"] != after["Image"], "the parent's hash is part of the sub-entity's")
        #expect(before["Note"] == after["Note"])
    }

    @Test func uncloudNotesVersionsAllDiffer() throws {
        let hashes = try ["v1", "v2", "v3", "v4"].map { VersionHash.modelHash(of: try uncloudNotes($0)) }
        #expect(Set(hashes).count == 4)
    }
}
