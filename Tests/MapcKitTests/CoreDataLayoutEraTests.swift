import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Core Data's layout as the stores it wrote show it (../shared/notes/core-data-layout.md): a new
/// store is written as Core Data writes one today, and a store of an earlier era (another join
/// table owner, numbered join columns, a join table where today there is a hidden key, no
/// destination-entity column) is read as it is, from the store itself.
@Suite("Core Data layouts of every era")
struct CoreDataLayoutEraTests {
    /// Albums, artists and artworks related many-to-many, images with a sub-entity, documents kept
    /// by a to-many without an inverse. Numbered as Core Data numbers them: Album 1, Artist 2,
    /// Artwork 3, Document 4, Image 5, LocalImage 6.
    static let gallery = """
        model: Gallery
        version: g1
        entities:
          Album:
            attributes:
              title: string
              rating: double?
              added: date?
              price: decimal?
              count: int32?
            relationships:
              artworks: { destination: Artwork, toMany: true, inverse: collections, optional: true }
              artists: { destination: Artist, toMany: true, inverse: albums, optional: true }
              cover: { destination: Image, inverse: albums, optional: true }
              documents: { destination: Document, toMany: true, optional: true }
          Artist:
            attributes:
              name: string
            relationships:
              albums: { destination: Album, toMany: true, inverse: artists, optional: true }
              artworks: { destination: Artwork, toMany: true, inverse: artists, optional: true }
          Artwork:
            attributes:
              name: string
            relationships:
              collections: { destination: Album, toMany: true, inverse: artworks, optional: true }
              artists: { destination: Artist, toMany: true, inverse: artworks, optional: true }
          Document:
            attributes:
              path: string
          Image:
            attributes:
              url: string
            relationships:
              albums: { destination: Album, toMany: true, inverse: cover, optional: true }
          LocalImage:
            parent: Image
            attributes:
              file: string
        """

    static let data = """
        { "version": "g1", "objects": {
          "Album": [ { "id": "al1", "title": "One", "rating": 4.5, "added": "2024-05-01T10:00:00Z", "price": "12.5", "count": 3,
                       "artworks": ["w1", "w2"], "artists": ["ar1"], "cover": "li1", "documents": ["d1", "d2"] },
                     { "id": "al2", "title": "Two", "artworks": ["w2"], "cover": "im1" } ],
          "Artist": [ { "id": "ar1", "name": "Ada", "artworks": ["w1"] }, { "id": "ar2", "name": "Bo", "albums": ["al2"], "artworks": ["w1", "w2"] } ],
          "Artwork": [ { "id": "w1", "name": "Sun" }, { "id": "w2", "name": "Moon" } ],
          "Document": [ { "id": "d1", "path": "/a" }, { "id": "d2", "path": "/b" }, { "id": "d3", "path": "/c" } ],
          "Image": [ { "id": "im1", "url": "http://x" } ],
          "LocalImage": [ { "id": "li1", "url": "file://y", "file": "y" } ] } }
        """

    private func store(in folder: URL, name: String = "gallery.sqlite") throws -> (path: String, schema: Schema) {
        let schema = try loadSchema(Self.gallery)
        let path = folder.appendingPathComponent(name).path
        let store = try Store.create(at: path, schema: schema, format: .coreData)
        try store.insert(try DataFile.read(try JSONValue.parse(Data(Self.data.utf8), path: "data.json"), schema: schema).objects)
        try store.database.close()
        return (path, schema)
    }

    private func sql(_ path: String, _ query: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: query) }
    }

    @Test func aNewStoreIsLaidOutAsCoreDataLaysItOutToday() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (path, _) = try store(in: folder)
        let tables = try sql(path, "SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        // The lower entity number owns a join table; a column name used by another join table is numbered.
        #expect(tables.contains("CREATE TABLE Z_1ARTWORKS ( Z_1COLLECTIONS INTEGER, Z_3ARTWORKS INTEGER, PRIMARY KEY (Z_1COLLECTIONS, Z_3ARTWORKS) )"), "\(tables)")
        #expect(tables.contains("CREATE TABLE Z_1ARTISTS ( Z_1ALBUMS INTEGER, Z_2ARTISTS INTEGER, PRIMARY KEY (Z_1ALBUMS, Z_2ARTISTS) )"), "\(tables)")
        #expect(tables.contains("CREATE TABLE Z_2ARTWORKS ( Z_2ARTISTS1 INTEGER, Z_3ARTWORKS1 INTEGER, PRIMARY KEY (Z_2ARTISTS1, Z_3ARTWORKS1) )"), "\(tables)")
        // Integers, then foreign keys (each with its destination's entity number when the
        // destination has sub-entities), then dates and doubles, then decimals, strings, blobs.
        #expect(tables.contains { $0.hasPrefix("CREATE TABLE ZALBUM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOUNT INTEGER, ZCOVER INTEGER, Z5_COVER INTEGER, ZADDED TIMESTAMP, ZRATING FLOAT, ZPRICE DECIMAL, ZTITLE VARCHAR") }, "\(tables)")
        // A to-many without an inverse: a hidden key on its objects' table, indexed.
        #expect(tables.contains { $0.hasPrefix("CREATE TABLE ZDOCUMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, Z1DOCUMENTS INTEGER, ZPATH VARCHAR") }, "\(tables)")
        #expect(try sql(path, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZDOCUMENT'") == ["ZDOCUMENT_Z1DOCUMENTS_INDEX"])
        // The destination-entity column holds the entity number of the object the key names.
        #expect(try sql(path, "SELECT ZTITLE || ':' || ifnull(Z5_COVER, 'nil') FROM ZALBUM ORDER BY Z_PK") == ["One:6", "Two:5"])
        #expect(try sql(path, "SELECT ZPATH || ':' || ifnull(Z1DOCUMENTS, 'nil') FROM ZDOCUMENT ORDER BY Z_PK") == ["/a:1", "/b:1", "/c:nil"])
    }

    /// A column name used by three join tables is numbered as Core Data numbers it, 1 then 2
    /// (`Z_3ARTWORKS1`, `Z_3ARTWORKS2` in a real store): mapc wrote the third `…12`.
    @Test func aThirdRepeatOfAJoinColumnIsNumberedTwo() throws {
        let schema = try loadSchema("""
            model: G
            version: g1
            entities:
              Album: { relationships: { artworks: { destination: Artwork, toMany: true, inverse: albums, optional: true } } }
              Artwork: { relationships: { albums: { destination: Album, toMany: true, inverse: artworks, optional: true },
                                          locations: { destination: Location, toMany: true, inverse: artworks, optional: true },
                                          shows: { destination: Show, toMany: true, inverse: artworks, optional: true } } }
              Location: { relationships: { artworks: { destination: Artwork, toMany: true, inverse: locations, optional: true } } }
              Show: { relationships: { artworks: { destination: Artwork, toMany: true, inverse: shows, optional: true } } }
            """ + "\n")
        let layout = StoreFormat.coreData.strategy.layout(for: schema)
        let columns = layout.tables.filter { $0.name.hasPrefix("Z_") }.flatMap { $0.columns.map(\.name) }
        #expect(columns.contains("Z_2ARTWORKS") && columns.contains("Z_2ARTWORKS1") && columns.contains("Z_2ARTWORKS2") && !columns.contains("Z_2ARTWORKS12"), "\(columns)")
    }

    /// A store that numbers a repeated join column otherwise than mapc keeps its numbers through
    /// a migration only where they still mean the same: the new version has the same columns of
    /// that name. With one more (a new relationship to Artwork), all are numbered anew.
    @Test func aStoresNumbersAreKeptOnlyAmongTheSameSiblings() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = """
            model: G
            version: g1
            entities:
              Album: { attributes: { title: string? }, relationships: { artworks: { destination: Artwork, toMany: true, inverse: albums, optional: true } } }
              Artwork: { relationships: { albums: { destination: Album, toMany: true, inverse: artworks, optional: true },
                                          shows: { destination: Show, toMany: true, inverse: artworks, optional: true } } }
              Show: { relationships: { artworks: { destination: Artwork, toMany: true, inverse: shows, optional: true } } }

            """
        let g1 = try loadSchema(base)
        let path = folder.appendingPathComponent("g.sqlite").path
        try Store.create(at: path, schema: g1, format: .coreData).database.close()
        // The store numbers Z_2ARTWORKS the other way round.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "ALTER TABLE Z_1ARTWORKS RENAME COLUMN Z_2ARTWORKS TO Z_2ARTWORKSX; ALTER TABLE Z_2SHOWS RENAME COLUMN Z_2ARTWORKS1 TO Z_2ARTWORKS; ALTER TABLE Z_1ARTWORKS RENAME COLUMN Z_2ARTWORKSX TO Z_2ARTWORKS1")
        }
        let store = try Store.open(at: path, schema: g1, readOnly: true)
        let departures = store.joinTableDepartures
        try store.close()
        #expect(departures.count == 2, "\(departures)")
        func keyColumns(_ layout: StoreLayout, _ table: String) -> [String] { layout.tables.first { $0.name == table }?.columns.prefix(2).map(\.name) ?? [] }
        // The same siblings (an attribute added): the store's numbers.
        let same = try loadSchema(base.replacingOccurrences(of: "version: g1", with: "version: g2").replacingOccurrences(of: "title: string?", with: "title: string?, year: int64?"))
        let kept = StoreFormat.coreData.strategy.layout(for: same).namingJoinTables(as: departures)
        #expect(keyColumns(kept, "Z_1ARTWORKS") == ["Z_1ALBUMS", "Z_2ARTWORKS1"] && keyColumns(kept, "Z_2SHOWS") == ["Z_2ARTWORKS", "Z_3SHOWS"], "\(kept.tables.map(\.name))")
        // One more sibling: numbered anew, as mapc numbers them.
        let more = try loadSchema(base.replacingOccurrences(of: "version: g1", with: "version: g2")
            .replacingOccurrences(of: "shows: { destination: Show, toMany: true, inverse: artworks, optional: true } } }",
                                  with: "shows: { destination: Show, toMany: true, inverse: artworks, optional: true },\n                                      venues: { destination: Venue, toMany: true, inverse: artworks, optional: true } } }")
            + "  Venue: { relationships: { artworks: { destination: Artwork, toMany: true, inverse: venues, optional: true } } }\n")
        let predicted = StoreFormat.coreData.strategy.layout(for: more)
        let renumbered = predicted.namingJoinTables(as: departures)
        #expect(keyColumns(renumbered, "Z_1ARTWORKS") == keyColumns(predicted, "Z_1ARTWORKS") && keyColumns(renumbered, "Z_2SHOWS") == keyColumns(predicted, "Z_2SHOWS"),
                "\(keyColumns(renumbered, "Z_1ARTWORKS")) \(keyColumns(renumbered, "Z_2SHOWS"))")
    }

    /// A relationship that is its own inverse keeps both sides' keys under one name, the second
    /// numbered: a store numbering it otherwise than mapc (another join table took the first
    /// number) could not be read at all ("no column … the store is damaged").
    @Test func aSelfInverseJoinTableIsReadWhateverItsNumbers() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try loadSchema("""
            model: P
            version: p1
            entities:
              Person:
                attributes: { name: string }
                relationships: { friends: { destination: Person, toMany: true, inverse: friends, optional: true } }

            """)
        let path = folder.appendingPathComponent("p.sqlite").path
        let created = try Store.create(at: path, schema: schema, format: .coreData)
        try created.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "p1", "objects": {"Person": [{"id": "a", "name": "A", "friends": ["b"]}, {"id": "b", "name": "B"}]}}"#.utf8), path: "p.json"), schema: schema).objects)
        try created.database.close()
        let table = try sql(path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_1%' ESCAPE '\\'").first ?? ""
        let keys = try sql(path, "SELECT name FROM pragma_table_info('\(table)') ORDER BY cid")
        #expect(keys.count == 2, "\(table): \(keys)")
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "ALTER TABLE \(table) RENAME COLUMN \(keys[1]) TO \(keys[0])2") }
        let reopened = try Store.open(at: path, schema: schema, readOnly: true)
        let dump = try DataFile.dump(reopened).serialized()
        try reopened.close()
        #expect(dump.contains(#""friends":["Person/p2"]"#) || dump.contains(#""friends":["Person/p1"]"#), "\(dump)")
    }

    /// The same store as Core Data 419–519 wrote it (join tables named after the other side,
    /// columns numbered otherwise, no destination-entity column, the to-many without an inverse
    /// in a join table as an earlier mapc wrote it): read the same, and migrated.
    @Test func aStoreOfAnEarlierEraIsReadAsItIsAndMigrates() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (path, schema) = try store(in: folder)
        let expected = try DataFile.dump(try Store.open(at: path, schema: schema, readOnly: true)).serialized(pretty: true)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE Z_3COLLECTIONS ( Z_3ARTWORKS2 INTEGER, Z_1COLLECTIONS INTEGER, PRIMARY KEY (Z_3ARTWORKS2, Z_1COLLECTIONS) );
                INSERT INTO Z_3COLLECTIONS SELECT Z_3ARTWORKS, Z_1COLLECTIONS FROM Z_1ARTWORKS;
                DROP TABLE Z_1ARTWORKS;
                ALTER TABLE Z_2ARTWORKS RENAME COLUMN Z_2ARTISTS1 TO Z_2ARTISTS3;
                ALTER TABLE ZALBUM DROP COLUMN Z5_COVER;
                CREATE TABLE Z_1DOCUMENTS ( Z_1ALBUM INTEGER, Z_4DOCUMENTS INTEGER, PRIMARY KEY (Z_1ALBUM, Z_4DOCUMENTS) );
                INSERT INTO Z_1DOCUMENTS SELECT Z1DOCUMENTS, Z_PK FROM ZDOCUMENT WHERE Z1DOCUMENTS IS NOT NULL;
                DROP INDEX ZDOCUMENT_Z1DOCUMENTS_INDEX;
                ALTER TABLE ZDOCUMENT DROP COLUMN Z1DOCUMENTS;
                """)
        }
        let reopened = try Store.open(at: path, schema: schema)
        #expect(try DataFile.dump(reopened).serialized(pretty: true) == expected)
        // Writing into it keeps its layout: a new album related on every side.
        try reopened.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "g1", "objects": {"Album": [{"id": "al3", "title": "Three", "artworks": ["Artwork/p1"], "documents": ["Document/p3"], "cover": "LocalImage/p2"}]}}"#.utf8), path: "more.json"), schema: schema).objects)
        let grown = try DataFile.dump(reopened)
        #expect(grown.serialized().contains(#""title":"Three""#))
        try reopened.database.close()
        #expect(try sql(path, "SELECT count(*) FROM Z_3COLLECTIONS") == ["4"])
        #expect(try sql(path, "SELECT count(*) FROM Z_1DOCUMENTS") == ["3"])
        // A migration to a version that adds an attribute (inferred) reads it, and writes today's layout.
        let g2 = try loadSchema(Self.gallery.replacingOccurrences(of: "version: g1", with: "version: g2").replacingOccurrences(of: "      path: string", with: "      path: string\n      size: int64?"))
        let migrator = Migrator(schemas: SchemaCatalog(schemas: [schema, g2]))
        _ = try migrator.migrate(storeAt: URL(fileURLWithPath: path), to: "g2")
        let migrated = try Store.open(at: path, schema: g2, readOnly: true)
        let after = try DataFile.dump(migrated).serialized(pretty: true)
        #expect(after.contains(#""title": "Three""#) && after.contains(#""documents": ["Document/p3"]"#), "\(after)")
        #expect(try sql(path, "SELECT count(*) FROM Z_1ARTWORKS") == ["4"])
        #expect(try sql(path, "SELECT ZTITLE || ':' || ifnull(Z5_COVER, 'nil') FROM ZALBUM ORDER BY Z_PK") == ["One:6", "Two:5", "Three:6"])
    }

    /// A join table whose column is not one Core Data names is refused when the store is opened,
    /// naming the table, the column, the relationship and what the table has.
    @Test func aJoinTableWithAColumnOfAnotherNameIsNamedNotASQLError() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (path, schema) = try store(in: folder)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "ALTER TABLE Z_1ARTWORKS RENAME COLUMN Z_3ARTWORKS TO ZRENAMED") }
        let error = #expect(throws: MapcError.self) { try Store.open(at: path, schema: schema) }
        #expect(error?.description.contains("has no column Z_3ARTWORKS in table Z_1ARTWORKS, where relationship 'artworks' of entity 'Album' of version g1 is kept (the table has Z_1COLLECTIONS, ZRENAMED)") == true,
                "\(String(describing: error))")
    }
}
