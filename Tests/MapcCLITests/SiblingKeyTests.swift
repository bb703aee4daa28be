import Foundation
import Testing

/// Same-named to-one relationships of sibling entities sharing a table get one key column each
/// (`ZOWNER`, `ZOWNER1`), numbered in an order the corpus cannot confirm. A key column holds
/// values of its own entity's rows only, so the store's values say which is whose, as they do
/// for same-named attributes: a store numbered the other way keeps every link.
@Suite("Sibling to-one keys read by their values")
struct SiblingKeyTests {
    @Test func keysNumberedTheOtherWayKeepTheirLinks() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        for (version, extra) in [("v1", ""), ("v2", "      email: { type: string, optional: true }\n")] {
            try folder.write("""
                model: Media
                version: \(version)
                entities:
                  Item:
                    abstract: true
                    attributes:
                      title: { type: string, optional: true }
                  Film:
                    parent: Item
                    relationships:
                      owner: { destination: Person, inverse: films, optional: true }
                  Music:
                    parent: Item
                    relationships:
                      owner: { destination: Person, inverse: songs, optional: true }
                  Person:
                    attributes:
                      name: { type: string, optional: true }
                \(extra)    relationships:
                      films: { destination: Film, toMany: true, inverse: owner, optional: true }
                      songs: { destination: Music, toMany: true, inverse: owner, optional: true }

                """, to: "schemas/\(version).yaml")
        }
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Bo"}], "Film": [{"id": "f", "title": "f", "owner": "p1"}], "Music": [{"id": "m", "title": "m", "owner": "p2"}]}}"#, to: "d.json")
        let loaded = try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder)
        #expect(loaded.status == 0, "\(loaded.stderr)")
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZITEM RENAME COLUMN ZOWNER TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZOWNER1 TO ZOWNER; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZOWNER1")
        for step in ["dump", "run"] {
            if step == "run" { #expect(try CLI.run(["run", "--quiet", "s.sqlite"], in: folder).status == 0) }
            let dump = try CLI.run(["dump", "s.sqlite"], in: folder)
            #expect(dump.status == 0, "\(dump.stderr)")
            for link in [#""owner": "Person/p1""#, #""owner": "Person/p2""#, #""films": ["#, #""songs": ["#] {
                #expect(dump.stdout.contains(link), "\(step): \(link) in \(dump.stdout)")
            }
            #expect(!dump.stdout.contains(#""owner": null"#), "\(step): \(dump.stdout)")
        }
    }

    /// A key whose destination has sub-entities has a column of the destination's entity
    /// (`Z5_OWNER`) that goes with it: read otherwise, the key keeps its column (a `load` into the
    /// store rewrote it from the other key, every existing row's entity wrong, exit 0).
    @Test func theDestinationEntityColumnGoesWithItsKey() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        let schema = """
            model: Media
            version: v1
            entities:
              Item:
                abstract: true
                attributes:
                  title: { type: string, optional: true }
              Film:
                parent: Item
                relationships:
                  owner: { destination: Person, inverse: films, optional: true }
              Music:
                parent: Item
                relationships:
                  owner: { destination: Company, inverse: songs, optional: true }
              Person:
                relationships:
                  films: { destination: Film, toMany: true, inverse: owner, optional: true }
              Actor:
                parent: Person
              Company:
                relationships:
                  songs: { destination: Music, toMany: true, inverse: owner, optional: true }
              Label:
                parent: Company

            """
        try folder.write(schema, to: "schemas/v1.yaml")
        try folder.write(schema.replacingOccurrences(of: "version: v1", with: "version: v2").replacingOccurrences(of: "title: { type: string, optional: true }", with: "title: { type: string, optional: true }\n      year: { type: int32, optional: true }"), to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Actor": [{"id": "a"}], "Person": [{"id": "p"}], "Company": [{"id": "c"}], "Film": [{"id": "f", "owner": "a"}, {"id": "g", "owner": "p"}], "Music": [{"id": "m", "owner": "c"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        let companion = try sqliteOutput(folder, "s.sqlite", "SELECT name FROM pragma_table_info('ZITEM') WHERE name LIKE 'Z%\\_OWNER%' ESCAPE '\\' AND name NOT LIKE 'ZOWNER%' ORDER BY name DESC LIMIT 1")
        let before = try sqliteOutput(folder, "s.sqlite", "SELECT group_concat(coalesce(\(companion), 'null'), ',') FROM (SELECT \(companion) FROM ZITEM ORDER BY Z_PK)")
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZITEM RENAME COLUMN ZOWNER TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZOWNER1 TO ZOWNER; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZOWNER1")
        try folder.write(#"{"version": "v1", "objects": {"Music": [{"id": "n", "owner": "Company/p1"}]}}"#, to: "more.json")
        let more = try CLI.run(["load", "more.json", "s.sqlite"], in: folder)
        #expect(more.status == 0, "\(more.stderr)")
        let after = try sqliteOutput(folder, "s.sqlite", "SELECT group_concat(coalesce(\(companion), 'null'), ',') FROM (SELECT \(companion) FROM ZITEM ORDER BY Z_PK)")
        #expect(after == before + ",null", "\(companion): \(before) then \(after)")
        // The columns keep mapc's names: nothing to say about them.
        let plan = try CLI.run(["run", "--dry-run", "s.sqlite"], in: folder)
        #expect(plan.status == 0 && !plan.stderr.contains("where mapc would write"), "\(plan.stderr)")
    }

    /// Two sibling keys to the same destination have numbered destination-entity columns too
    /// (`Z4_OWNER`, `Z4_OWNER1`): read by their values as the keys are. A store with only the keys
    /// numbered the other way kept each row's entity in its column through a `load` (it was moved
    /// to the other column, exit 0).
    @Test func numberedDestinationEntityColumnsAreReadByTheirValues() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1]\n", to: "schemas/versions.yaml")
        try folder.write("""
            model: Media
            version: v1
            entities:
              Item:
                abstract: true
                attributes:
                  title: { type: string, optional: true }
              Film:
                parent: Item
                relationships:
                  owner: { destination: Person, inverse: films, optional: true }
              Music:
                parent: Item
                relationships:
                  owner: { destination: Person, inverse: songs, optional: true }
              Person:
                relationships:
                  films: { destination: Film, toMany: true, inverse: owner, optional: true }
                  songs: { destination: Music, toMany: true, inverse: owner, optional: true }
              Actor:
                parent: Person

            """, to: "schemas/v1.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Actor": [{"id": "a"}], "Person": [{"id": "p"}], "Film": [{"id": "f", "owner": "a"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        let companions = try sqliteOutput(folder, "s.sqlite", "SELECT group_concat(name, ' ') FROM pragma_table_info('ZITEM') WHERE name LIKE 'Z_\\_OWNER%' ESCAPE '\\'")
        #expect(companions == "Z4_OWNER Z4_OWNER1", "\(companions)")
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZITEM RENAME COLUMN ZOWNER TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZOWNER1 TO ZOWNER; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZOWNER1")
        let before = try sqliteOutput(folder, "s.sqlite", "SELECT coalesce(Z4_OWNER, 'null') || '|' || coalesce(Z4_OWNER1, 'null') FROM ZITEM WHERE Z_PK = 1")
        try folder.write(#"{"version": "v1", "objects": {"Music": [{"id": "x", "owner": "Actor/p1"}], "Film": [{"id": "y", "owner": "Actor/p1"}]}}"#, to: "more.json")
        let more = try CLI.run(["load", "more.json", "s.sqlite"], in: folder)
        #expect(more.status == 0, "\(more.stderr)")
        let after = try sqliteOutput(folder, "s.sqlite", "SELECT coalesce(Z4_OWNER, 'null') || '|' || coalesce(Z4_OWNER1, 'null') FROM ZITEM WHERE Z_PK = 1")
        #expect(after == before, "\(before) then \(after)")
        #expect(try CLI.run(["dump", "s.sqlite"], in: folder).stdout.contains(#""owner": "Actor/p1""#))
    }

    /// A store numbering both an attribute and a key of sibling entities the other way keeps its
    /// numbering of both through a migration (the attributes kept the store's and the keys took
    /// mapc's: one entity's title and owner in columns of different numbering, a layout neither
    /// the store's nor mapc's).
    @Test func aMigrationKeepsTheStoresNumberingOfAttributesAndKeysAlike() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try library(folder, orderedBooks: false, actors: false)
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p", "name": "P"}], "Album": [{"id": "a", "title": "Trip", "owner": "p"}], "Book": [{"id": "b", "title": "Dune", "owner": "p"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZITEM RENAME COLUMN ZTITLE TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZTITLE1 TO ZTITLE; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZTITLE1; "
                   + "ALTER TABLE ZITEM RENAME COLUMN ZOWNER TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZOWNER1 TO ZOWNER; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZOWNER1")
        let layout = "SELECT group_concat(Z_ENT || ':' || (ZTITLE IS NOT NULL) || (ZTITLE1 IS NOT NULL) || (ZOWNER IS NOT NULL) || (ZOWNER1 IS NOT NULL), ' ') FROM (SELECT * FROM ZITEM ORDER BY Z_ENT)"
        let before = try sqliteOutput(folder, "s.sqlite", layout)
        let run = try CLI.run(["run", "--quiet", "s.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try sqliteOutput(folder, "s.sqlite", layout) == before)
        let dump = try CLI.run(["dump", "s.sqlite"], in: folder).stdout
        #expect(dump.contains(#""title": "Trip""#) && dump.contains(#""title": "Dune""#) && !dump.contains(#""owner": null"#), "\(dump)")
    }

    /// The library of two siblings with same-named titles and owners, the books' inverse ordered
    /// where `orderedBooks`, and the people with sub-entity actors where `actors`.
    private func library(_ folder: URL, orderedBooks: Bool, actors: Bool) throws {
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        for (version, extra) in [("v1", ""), ("v2", "      email: { type: string, optional: true }\n")] {
            try folder.write("""
                model: Library
                version: \(version)
                entities:
                  Item:
                    abstract: true
                  Album:
                    parent: Item
                    attributes:
                      title: { type: string, optional: true }
                    relationships:
                      owner: { destination: Person, inverse: albums, optional: true }
                  Book:
                    parent: Item
                    attributes:
                      title: { type: string, optional: true }
                    relationships:
                      owner: { destination: Person, inverse: books, optional: true }
                  Person:
                    attributes:
                      name: { type: string, optional: true }
                \(extra)    relationships:
                      albums: { destination: Album, toMany: true, inverse: owner, optional: true }
                      books: { destination: Book, toMany: true, ordered: \(orderedBooks), inverse: owner, optional: true }

                """ + (actors ? "  Actor:\n    parent: Person\n" : ""), to: "schemas/\(version).yaml")
        }
    }

    /// Keys numbered the other way, one of them with a position column (the books' ordered
    /// inverse): the migrated store names the position column after its key, as the store does
    /// (the key was renamed without it: the run exited 0 and the store could not be read again).
    @Test func aCarriedKeyTakesItsPositionColumnAlong() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try library(folder, orderedBooks: true, actors: false)
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p", "name": "P", "albums": ["a3", "a"], "books": ["b3", "b2"]}], "Album": [{"id": "a", "title": "Trip"}, {"id": "a3", "title": "T3"}], "Book": [{"id": "b2", "title": "B2"}, {"id": "b3", "title": "B3"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZITEM RENAME COLUMN ZOWNER TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZOWNER1 TO ZOWNER; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZOWNER1; "
                   + "ALTER TABLE ZITEM RENAME COLUMN Z_FOK_OWNER1 TO Z_FOK_OWNER")
        let before = try CLI.run(["dump", "s.sqlite"], in: folder)
        #expect(before.status == 0 && before.stdout.contains(#""books": ["#), "\(before.stderr)")
        let run = try CLI.run(["run", "--quiet", "s.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let after = try CLI.run(["dump", "s.sqlite"], in: folder)
        #expect(after.status == 0 && after.stdout.contains(#""title": "B3""#), "\(after.stderr)")
        #expect(try sqliteOutput(folder, "s.sqlite", "SELECT group_concat(name, ' ') FROM pragma_table_info('ZITEM') WHERE name LIKE '%OWNER%'").split(separator: " ").contains("Z_FOK_OWNER"))
        // Loaded again from its dump, a new store holds the same.
        try folder.write(after.stdout, to: "again.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "again.json", "again.sqlite"], in: folder).status == 0)
        #expect(try CLI.run(["dump", "again.sqlite"], in: folder).stdout == after.stdout)
    }

    /// Keys and their destination-entity columns numbered the other way: the migrated store pairs
    /// them as the store does (each key went with the other's entity column: an app numbering as
    /// the store does would read the albums' owners' entities from an empty column).
    @Test func aCarriedKeyKeepsItsDestinationEntityColumn() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try library(folder, orderedBooks: false, actors: true)
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p", "name": "P"}], "Actor": [{"id": "x", "name": "X"}], "Album": [{"id": "a", "title": "Trip", "owner": "x"}], "Book": [{"id": "b", "title": "Dune", "owner": "p"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        let companion = try sqliteOutput(folder, "s.sqlite", "SELECT name FROM pragma_table_info('ZITEM') WHERE name LIKE 'Z_\\_OWNER' ESCAPE '\\'")
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZITEM RENAME COLUMN ZOWNER TO ZX; ALTER TABLE ZITEM RENAME COLUMN ZOWNER1 TO ZOWNER; ALTER TABLE ZITEM RENAME COLUMN ZX TO ZOWNER1; "
                   + "ALTER TABLE ZITEM RENAME COLUMN \(companion) TO ZX; ALTER TABLE ZITEM RENAME COLUMN \(companion)1 TO \(companion); ALTER TABLE ZITEM RENAME COLUMN ZX TO \(companion)1")
        let pairing = "SELECT group_concat(Z_ENT || ':' || (ZOWNER IS NOT NULL) || (ZOWNER1 IS NOT NULL) || (\(companion) IS NOT NULL) || (\(companion)1 IS NOT NULL), ' ') FROM (SELECT * FROM ZITEM ORDER BY Z_ENT)"
        let before = try sqliteOutput(folder, "s.sqlite", pairing)
        #expect(try CLI.run(["run", "--quiet", "s.sqlite"], in: folder).status == 0)
        #expect(try sqliteOutput(folder, "s.sqlite", pairing) == before)
        #expect(try CLI.run(["dump", "s.sqlite"], in: folder).stdout.contains(#""owner": "Actor/"#))
    }
}
