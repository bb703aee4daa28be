import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

func kitchenSchema() throws -> Schema {
    try SchemaLoader.load(path: packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/kitchen.yaml").path).schema
}

/// Loads data-file JSON into a fresh in-memory store and dumps it back as text.
func roundTrip(_ json: JSONValue, schema: Schema) throws -> String {
    let store = try Store.inMemory(schema: schema)
    let contents = try DataFile.read(json, schema: schema)
    try store.insert(contents.objects)
    return try DataFile.dump(store).serialized(pretty: true)
}

/// Kitchen-sink data in the dump's canonical form, so a round trip must reproduce it exactly.
func kitchenData(blobSize: Int = 16, decimal: String = "12345678901234567890.123456789") -> JSONValue {
    var generator = SystemRandomNumberGenerator()
    let blob = Data((0..<blobSize).map { _ in UInt8.random(in: 0...255, using: &generator) })
    func item(_ id: String, extra: JSONValue? = nil, values: [(String, JSONValue)], tags: [String], steps: [String], owner: String?) -> JSONValue {
        var pairs: [(String, JSONValue)] = [("id", .string(id))]
        let names = ["name", "i16", "i32", "i64", "dec", "dbl", "flt", "str", "flag", "when", "blob", "uid", "link", "thing"]
        for name in names { pairs.append((name, values.first { $0.0 == name }?.1 ?? .null)) }
        if let extra { pairs.append(("extra", extra)) }
        pairs.append(("tags", .array(tags.map(JSONValue.string))))
        pairs.append(("steps", .array(steps.map(JSONValue.string))))
        pairs.append(("owner", owner.map(JSONValue.string) ?? .null))
        return .object(pairs)
    }
    // The date's fraction is one both stores' counts of seconds hold exactly (an eighth), so that
    // it crosses formats unrounded (`ValueRoundTripTests` covers the rounding of the others).
    let full: [(String, JSONValue)] = [
        ("name", .string("Ünïcödé ✓ 🍣 \"quoted\" \\ back\nslash\ttab")), ("i16", .integer(-32768)), ("i32", .integer(2147483647)),
        ("i64", .integer(Int64.max)), ("dec", .string(decimal)), ("dbl", .double(0.1)),
        ("flt", .float(1.1)), ("str", .string("")), ("flag", .bool(true)), ("when", .string("2024-05-01T10:00:00.125Z")),
        ("blob", .string(blob.base64EncodedString())), ("uid", .string("123e4567-e89b-12d3-a456-426614174000")),
        ("link", .string("https://example.com/a?b=c#d")), ("thing", .string("AAEC")),
    ]
    return .object([
        ("version", .string("k1")),
        ("objects", .object([
            ("Item", .array([
                item("i1", values: full, tags: ["t1", "t2"], steps: ["s2", "s1", "s3"], owner: "p1"),
                item("i2", values: [("name", .string("no")), ("i64", .integer(Int64.min)), ("dbl", .double(-1e300)), ("when", .string("1969-07-20T20:17:40Z")), ("flag", .bool(false))], tags: [], steps: [], owner: nil),
            ])),
            ("SpecialItem", .array([
                item("x1", extra: .string("only on the sub-entity"), values: [("name", .string("special")), ("dec", .string("-0.5"))], tags: ["t1"], steps: ["s4"], owner: "p1"),
            ])),
            ("Tag", .array([
                .object([("id", .string("t1")), ("label", .string("one")), ("items", .array([.string("i1"), .string("x1")])), ("chapters", .array([.string("c2"), .string("c1")]))]),
                .object([("id", .string("t2")), ("label", .string("two")), ("items", .array([.string("i1")])), ("chapters", .array([.string("c1")]))]),
            ])),
            ("Chapter", .array([
                .object([("id", .string("c1")), ("title", .string("first")), ("tags", .array([.string("t2"), .string("t1")]))]),
                .object([("id", .string("c2")), ("title", .string("second")), ("tags", .array([.string("t1")]))]),
            ])),
            ("Step", .array([
                .object([("id", .string("s1")), ("text", .string("b")), ("item", .string("i1"))]),
                .object([("id", .string("s2")), ("text", .string("a")), ("item", .string("i1"))]),
                .object([("id", .string("s3")), ("text", .string("c")), ("item", .string("i1"))]),
                .object([("id", .string("s4")), ("text", .string("d")), ("item", .string("x1"))]),
            ])),
            ("Person", .array([
                .object([("id", .string("p1")), ("name", .string("Ada")), ("items", .array([.string("i1"), .string("x1")])), ("passport", .string("pp1"))]),
                .object([("id", .string("p2")), ("name", .string("Bob")), ("items", .array([])), ("passport", .null)]),
            ])),
            ("Passport", .array([
                .object([("id", .string("pp1")), ("number", .string("X123")), ("person", .string("p1"))]),
            ])),
        ])),
    ])
}

@Suite("Store round trips")
struct StoreRoundTripTests {
    @Test func everyTypeAndRelationshipKindSurvivesLoadAndDump() throws {
        let schema = try kitchenSchema()
        let json = kitchenData()
        #expect(try roundTrip(json, schema: schema) == json.serialized(pretty: true))
    }

    @Test func largeBlobsSurvive() throws {
        let schema = try kitchenSchema()
        let json = kitchenData(blobSize: 1024 * 1024)
        #expect(try roundTrip(json, schema: schema) == json.serialized(pretty: true))
    }

    @Test func dumpIsDeterministicAndReloadable() throws {
        let schema = try kitchenSchema()
        let first = try roundTrip(kitchenData(), schema: schema)
        let reparsed = try JSONValue.parse(Data(first.utf8), path: "dump.json")
        #expect(try roundTrip(reparsed, schema: schema) == first)
    }

    @Test func oneSidedRelationshipsAreDerivedFromTheirInverse() throws {
        let schema = try kitchenSchema()
        // Only the to-one side of steps, only one side of the many-to-many, only the person side of the one-to-one.
        let json = try JSONValue.parse(Data("""
        {"version": "k1", "objects": {
          "Item": [{"id": "i1"}],
          "Step": [{"id": "s1", "text": "a", "item": "i1"}, {"id": "s2", "text": "b", "item": "i1"}],
          "Tag": [{"id": "t1", "label": "x", "items": ["i1"]}],
          "Person": [{"id": "p1", "name": "Ada", "passport": "pp1", "items": ["i1"]}],
          "Passport": [{"id": "pp1", "number": "1"}]
        }}
        """.utf8), path: "data.json")
        let store = try Store.inMemory(schema: schema)
        try store.insert(try DataFile.read(json, schema: schema).objects)
        let item = try #require(try store.objects(ofExactEntity: "Item").first)
        #expect(item.relationships["steps"] == ["s1", "s2"])
        #expect(item.relationships["tags"] == ["t1"])
        #expect(item.relationships["owner"] == ["p1"])
        #expect(item.attributes["name"] == .string("no"), "the default applies when a value is not given")
        #expect(try store.objects(ofExactEntity: "Passport").first?.relationships["person"] == ["p1"])
    }

    @Test(arguments: ["v1", "v2", "v3", "v4"])
    func uncloudNotesVersionsRoundTrip(_ version: String) throws {
        let schema = try uncloudNotes(version)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]).base64EncodedString()
        func note(_ id: String, _ title: String, image: Bool, attachments: [String]) -> JSONValue {
            var pairs: [(String, JSONValue)] = [("id", .string(id)), ("title", .string(title)), ("body", .string("Body of \(title) — ✎")),
                                                ("dateCreated", .string("2024-05-01T10:00:00Z")), ("displayIndex", .integer(3))]
            if version == "v2" { pairs.append(("image", image ? .string(png) : .null)) }
            if version >= "v3" { pairs.append(("attachments", .array(attachments.map(JSONValue.string)))) }
            return .object(pairs)
        }
        var groups: [(String, JSONValue)] = [("Note", .array([note("n1", "Groceries", image: true, attachments: ["a1"]), note("n2", "日本語", image: false, attachments: [])]))]
        if version == "v3" {
            groups.append(("Attachment", .array([.object([("id", .string("a1")), ("image", .string(png)), ("dateCreated", .string("2024-05-01T10:00:00Z")), ("note", .string("n1"))])])))
        }
        if version == "v4" {
            groups.append(("ImageAttachment", .array([.object([("id", .string("a1")), ("dateCreated", .string("2024-05-01T10:00:00Z")), ("image", .string(png)),
                                                                ("caption", .string("Body of Groceries")), ("width", .float(640)), ("height", .float(480.5)), ("note", .string("n1"))])])))
        }
        let json = JSONValue.object([("version", .string(version)), ("objects", .object(groups))])
        #expect(try roundTrip(json, schema: schema) == json.serialized(pretty: true))
    }

    @Test func aParentFetchIncludesSubentities() throws {
        let schema = try uncloudNotes("v4")
        let store = try Store.inMemory(schema: schema)
        try store.insert([
            ObjectData(id: "a1", entity: "Attachment", attributes: ["dateCreated": .date(Date(timeIntervalSince1970: 0))]),
            ObjectData(id: "i1", entity: "ImageAttachment", attributes: ["dateCreated": .date(Date(timeIntervalSince1970: 1)), "caption": .string("c"), "width": .double(1), "height": .double(2)]),
        ])
        #expect(try store.objects(of: "Attachment").map(\.id) == ["a1", "i1"])
        #expect(try store.objects(of: "ImageAttachment").map(\.id) == ["i1"])
        #expect(try store.count(of: "Attachment") == 2)
        #expect(try store.count(of: "Attachment", exactly: true) == 1)
    }
}


@Suite("Entity order in a schema file")
struct EntityOrderTests {
    /// Xcode writes entities by name, so sub-entities often come before their parent.
    @Test(arguments: TestLayout.allCases)
    func aSubEntityDeclaredBeforeItsParentIsPartOfItsHierarchy(layout: TestLayout) throws {
        let schema = try loadSchema("""
        model: M
        version: v1
        entities:
          Apple: { parent: Fruit, attributes: { crisp: bool } }
          Fruit: { abstract: true, attributes: { name: string } }
          Banana: { parent: Fruit }
        """)
        let fruit = try #require(schema.entity(named: "Fruit"))
        #expect(schema.subentities(of: fruit).map(\.name) == ["Apple", "Banana"])
        #expect(schema.hierarchy(under: fruit).map(\.name) == ["Fruit", "Apple", "Banana"])
        let store = try layout.store(schema)
        try store.insert([ObjectData(id: "a", entity: "Apple", attributes: ["name": .string("Cox"), "crisp": .bool(true)]),
                          ObjectData(id: "b", entity: "Banana", attributes: ["name": .string("Cavendish")])])
        #expect(try store.count(of: "Fruit") == 2)
        #expect(try store.objects(of: "Fruit").map(\.entity).sorted() == ["Apple", "Banana"])
    }
}

/// Long lists keep their order and their links however they were given: the positions and
/// memberships of long lists are looked up through indexes (one tag on every recipe).
@Suite("Long relationship lists")
struct LongRelationshipListTests {
    @Test(arguments: TestLayout.allCases)
    func longOrderedAndSharedListsKeepTheirOrderAndLinks(layout: TestLayout) throws {
        let schema = try loadSchema("""
            model: Music
            version: v1
            entities:
              Playlist:
                attributes:
                  name: string
                relationships:
                  songs: { destination: Song, toMany: true, ordered: true, inverse: playlist, optional: true }
                  tags: { destination: Tag, toMany: true, inverse: playlists, optional: true }
              Song:
                attributes:
                  title: string
                relationships:
                  playlist: { destination: Playlist, inverse: songs, optional: true }
              Tag:
                attributes:
                  name: string
                relationships:
                  playlists: { destination: Playlist, toMany: true, inverse: tags, optional: true }
            """ + "\n")
        let store = try layout.store(schema)
        var random = SystemRandomNumberGenerator()
        // One playlist lists its 40 songs in a shuffled order; the other's 40 songs name it, in data order.
        let listed = (0..<40).map { "a\($0)" }.shuffled(using: &random)
        let songs = (0..<40).map { ObjectData(id: "a\($0)", entity: "Song", attributes: ["title": .string("a\($0)")]) }
            + (0..<40).map { ObjectData(id: "b\($0)", entity: "Song", attributes: ["title": .string("b\($0)")], relationships: ["playlist": ["p2"]]) }
        let playlists = (0..<60).map { ObjectData(id: "x\($0)", entity: "Playlist", attributes: ["name": .string("x\($0)")], relationships: ["tags": ["t1"]]) }
        try store.insert([ObjectData(id: "t1", entity: "Tag", attributes: ["name": .string("all")]),
                          ObjectData(id: "p1", entity: "Playlist", attributes: ["name": .string("one")], relationships: ["songs": listed]),
                          ObjectData(id: "p2", entity: "Playlist", attributes: ["name": .string("two")])] + songs + playlists)
        let byName = Dictionary(try store.objects(ofExactEntity: "Playlist").map { (($0.attributes["name"]).flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        let titles = Dictionary(try store.objects(ofExactEntity: "Song").map { ($0.id, $0.attributes["title"]) }, uniquingKeysWith: { a, _ in a })
        let one = try #require(byName["one"]), two = try #require(byName["two"])
        #expect((one.relationships["songs"] ?? []).map { titles[$0] } == listed.map { .string($0) })
        #expect((two.relationships["songs"] ?? []).map { titles[$0] } == (0..<40).map { .string("b\($0)") })
        let tag = try #require(try store.objects(ofExactEntity: "Tag").first)
        #expect(tag.relationships["playlists"]?.count == 60)
    }
}

/// A store used after `close()` throws, whatever is asked of it; SQLite never sees a closed connection.
@Suite("A closed store")
struct ClosedStoreTests {
    @Test func aClosedStoreThrowsInsteadOfTouchingItsConnection() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        let store = try Store.create(at: path, schema: try uncloudNotes("v2"))
        try store.close()
        try store.close()
        #expect(throws: MapcError.self) { try store.count(of: "Note") }
        #expect(throws: MapcError.self) { try store.objects(ofExactEntity: "Note") }
        #expect(throws: MapcError.self) { try store.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t")])]) }
        #expect(throws: MapcError.self) { try store.metadata() }
        #expect(throws: MapcError.self) { try DataFile.dump(store) }
        // Opened again, it is whole; opened read only, writing it is mapc's error, not SQLite's.
        let readOnly = try Store.open(at: path, schema: try uncloudNotes("v2"), readOnly: true)
        #expect(try readOnly.count(of: "Note") == 0)
        let refused = #expect(throws: MapcError.self) {
            try readOnly.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t"), "body": .string("b"), "dateCreated": .date(Date(timeIntervalSince1970: 0))])])
        }
        #expect(refused?.description.contains("cannot add the objects") == true, "\(String(describing: refused))")
    }
}
