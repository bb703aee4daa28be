import Foundation
import Testing

/// What a damaged Core Data store is told, when what is wrong can be said exactly: each message
/// names what the store has, not what it lacks in general.
@Suite("Messages about damaged Core Data stores")
struct DamagedStoreMessagesTests {
    private func store() throws -> URL {
        let folder = try CLI.emptyProject()
        try folder.write("versions: [v1]\n", to: "schemas/versions.yaml")
        try folder.write("model: L\nversion: v1\nentities:\n  Book:\n    attributes:\n      title: string?\n  Person:\n    attributes:\n      name: string?\n", to: "schemas/v1.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Book": [{"id": "b", "title": "B"}], "Person": [{"id": "p", "name": "P"}]}}"#, to: "d.json")
        let loaded = try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder)
        // Named by an entity of the store's own (it said Note/p1 whatever the model).
        #expect(loaded.status == 0 && loaded.stderr.contains("names them by entity and key (Book/p1, …)"), "\(loaded.stderr)")
        return folder
    }

    @Test func aRowOfAnEntityKeptInAnotherTableIsSaidToBeMisplaced() throws {
        let folder = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.sqlite", "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (7, 2, 1, 'stray')")
        let dump = try CLI.run(["dump", "s.sqlite"], in: folder)
        #expect(dump.status == 2 && dump.stderr.contains("table ZBOOK has 1 row of entity 2, which is Person, whose rows belong in table ZPERSON"), "\(dump.stderr)")
    }

    @Test func metadataWithoutZPrimaryKeyIsSaidToBeIncomplete() throws {
        let folder = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.sqlite", "DROP TABLE Z_PRIMARYKEY")
        let status = try CLI.run(["status", "s.sqlite"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("has Core Data's metadata (Z_METADATA) but not its Z_PRIMARYKEY table"), "\(status.stderr)")
    }

    @Test func versionHashesOfAnotherKindAreNamed() throws {
        let folder = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let script = """
            import sqlite3, plistlib
            c = sqlite3.connect('\(path)')
            d = plistlib.loads(c.execute('SELECT Z_PLIST FROM Z_METADATA').fetchone()[0])
            d['NSStoreModelVersionHashes'] = ['Book', 'Person']
            c.execute('UPDATE Z_METADATA SET Z_PLIST = ?', (plistlib.dumps(d, fmt=plistlib.FMT_BINARY),))
            c.commit()
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        try process.run()
        process.waitUntilExit()
        let status = try CLI.run(["status", "s.sqlite"], in: folder)
        #expect(status.status == 2 && status.stderr.contains(#"NSStoreModelVersionHashes, which identify the store's version, is ["Book", "Person"], not a dictionary"#), "\(status.stderr)")
    }

    /// Sibling entities sharing a table, their same-named columns read by their values: a
    /// missing table or column is named as the store's damage, not as SQLite's error.
    @Test func aMissingTableOfSiblingsIsNamed() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1]\n", to: "schemas/versions.yaml")
        try folder.write("model: L\nversion: v1\nentities:\n  Item:\n    abstract: true\n  Book:\n    parent: Item\n    attributes:\n      size: int32?\n  Film:\n    parent: Item\n    attributes:\n      size: string?\n", to: "schemas/v1.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Book": [{"id": "b", "size": 3}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "DROP TABLE ZITEM")
        let status = try CLI.run(["dump", "s.sqlite"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("has no table ZITEM") && !status.stderr.contains("SQLite"), "\(status.stderr)")
    }

    /// A to-one's destination-entity column numbered otherwise (`Z1_FAVORITE` where mapc writes
    /// `Z2_FAVORITE`: Core Data's number for a destination that is not its hierarchy's root is
    /// not confirmed) is read under its name, and a run says the migrated store renames it.
    @Test func aDestinationEntityColumnNumberedOtherwiseIsSaid() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        for (version, extra) in [("v1", ""), ("v2", "      age: int32?\n")] {
            try folder.write("model: L\nversion: \(version)\nentities:\n  Item:\n    attributes:\n      title: string?\n  Book:\n    parent: Item\n  EBook:\n    parent: Book\n"
                             + "  Person:\n    attributes:\n      name: string?\n\(extra)    relationships:\n      favorite: { destination: Book, optional: true, inverse: null }\n", to: "schemas/\(version).yaml")
        }
        try folder.write(#"{"version": "v1", "objects": {"EBook": [{"id": "e", "title": "E"}], "Person": [{"id": "p", "name": "P", "favorite": "e"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZPERSON RENAME COLUMN Z2_FAVORITE TO Z1_FAVORITE")
        let run = try CLI.run(["run", "--dry-run", "s.sqlite"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("ZPERSON.Z1_FAVORITE where mapc would write Z2_FAVORITE"), "\(run.stderr)")
        #expect(try CLI.run(["dump", "s.sqlite"], in: folder).stdout.contains(#""favorite": "EBook/p1""#))
    }
}
