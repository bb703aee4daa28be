import Foundation
import Testing

/// Defects a probe of stores of unusual shapes at scale found: what stopped working, or stopped
/// being linear, past a size.
@Suite("Defects found by a probe of scale", .serialized)
struct ScaleProbeDefectTests {
    /// A project whose entity has `count` optional integer attributes (v2 adds one, and `rule`).
    private func wideProject(count: Int, rule: String = "") throws -> URL {
        let attributes = (0..<count).map { "      a\($0): {type: int64, optional: true\(rule)}\n" }.joined()
        return try CLI.project(versions: [("w1", "  Wide:\n    attributes:\n" + attributes), ("w2", "  Wide:\n    attributes:\n" + attributes + "      extra: string?\n")])
    }

    /// From 996 attributes every run of the entity failed ("Expression tree is too large
    /// (maximum depth 1000)": the validation's rules were joined in one chain), and from about
    /// 1,000 broken rules the list of them had more columns than SQLite gives a result.
    @Test func anEntityOfOverAThousandAttributesMigratesAndIsValidated() throws {
        let folder = try wideProject(count: 1_200)
        defer { try? FileManager.default.removeItem(at: folder) }
        let objects = (0..<3).map { row in "{\"id\": \"w\(row)\", " + (0..<1_200).map { "\"a\($0)\": \($0 % 3 == 0 ? 5 : 200)" }.joined(separator: ", ") + "}" }
        try folder.write("{\"version\": \"w1\", \"objects\": {\"Wide\": [\(objects.joined(separator: ", "))]}}", to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains("\"a1199\": 200"), "\(dump.stderr)")
        // Every attribute's rule broken by a third of them: 1,200 rules, listed in parts.
        let attributes = (0..<1_200).map { "      a\($0): {type: int64, optional: true, min: 100}\n" }.joined()
        try folder.write("model: S\nversion: w2\nentities:\n  Wide:\n    attributes:\n" + attributes + "      extra: string?\n", to: "schemas/w2.yaml")
        let broken = try CLI.run(["run", "--quiet", "t.db"], in: folder)
        #expect(broken.status == 3 && broken.stderr.contains("breaks validation rules of the destination schema in 1200 places") && broken.stderr.contains("property 'a0': below min 100 (value: 5)"), "\(broken.stderr)")
    }
    /// `$source.folder.items.@count` made the folder's whole list of objects for every item, so
    /// one folder of n items took n² (10,000 items 8.3 s, 30,000 77 s): the count is read from the
    /// list of keys. The counts are the same, ordered or not, both formats.
    @Test(arguments: ["mapc", "core-data"], [false, true])
    func aSharedListsCountIsReadOncePerObject(layout: String, ordered: Bool) throws {
        let folders = "  Folder:\n    attributes:\n      name: string\n    relationships:\n      items: {destination: Item, toMany: true, ordered: \(ordered), inverse: folder, optional: true}\n"
        let items = "  Item:\n    attributes:\n      title: string\n    relationships:\n      folder: {destination: Folder, inverse: items, optional: true}\n"
        let folder = try CLI.project(versions: [("f1", folders + items), ("f2", folders + items.replacingOccurrences(of: "      title: string\n", with: "      title: string\n      total: string?\n"))])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: f1\ndestination: f2\nentityMappings:\n  - name: FolderToFolder\n    source: Folder\n    destination: Folder\n    attributes:\n      name: $source.name\n"
                         + "  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      title: $source.title\n      total: CAST($source.folder.items.@count, \"NSString\")\n"
                         + "    relationships:\n      folder: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)\n", to: "mappings/f1_to_f2.yaml")
        let members = (0..<30).map { "{\"id\": \"i\($0)\", \"title\": \"t\", \"folder\": \"\($0 < 20 ? "a" : "b")\"}" } + ["{\"id\": \"lone\", \"title\": \"t\"}"]
        try folder.write("{\"version\": \"f1\", \"objects\": {\"Folder\": [{\"id\": \"a\", \"name\": \"A\"}, {\"id\": \"b\", \"name\": \"B\"}], \"Item\": [\(members.joined(separator: ", "))]}}", to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db", "--layout", layout], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let table = layout == "mapc" ? "Item" : "ZITEM", total = layout == "mapc" ? "total" : "ZTOTAL"
        let counts = try sqliteOutput(folder, "s.db", "SELECT coalesce(\(total), 'nil'), count(*) FROM \(table) GROUP BY 1 ORDER BY 1")
        // The item in no folder: `@count` after a nil to-one is nil, as key-value coding gives it.
        #expect(counts.trimmingCharacters(in: .whitespacesAndNewlines) == "10|10\n20|20\nnil|1", "\(counts)")
    }

    /// `load` into mapc's format asked every table for each new object's id (20,000 objects under
    /// a model of 100 entities: 21 s); ids are now asked table by table, many at a time. Those
    /// taken are still each named, past a batch's end and in a sub-entity's table.
    @Test func takenIdsAreFoundAcrossBatchesAndTables() throws {
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes:\n      name: string?\n  Special:\n    parent: Item\n  Other:\n    attributes:\n      label: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = (0..<1_200).map { #"{"id": "i\#($0)"}"# }.joined(separator: ", ")
        try folder.write(#"{"version": "v1", "objects": {"Item": [\#(first)], "Special": [{"id": "s"}], "Other": [{"id": "o"}]}}"#, to: "a.json")
        #expect(try CLI.run(["load", "a.json", "s.db"], in: folder).status == 0)
        var second = (0..<1_200).map { #"{"id": "n\#($0)"}"# }
        second[900] = #"{"id": "i1100"}"#
        second[1_100] = #"{"id": "s"}"#
        try folder.write(#"{"version": "v1", "objects": {"Other": [\#(second.joined(separator: ", "))]}}"#, to: "b.json")
        let refused = try CLI.run(["load", "b.json", "s.db"], in: folder)
        #expect(refused.status == 1 && refused.stderr.contains("Other 'i1100', key 'id': the store already has an Item object with id 'i1100'")
                && refused.stderr.contains("Other 's', key 'id': the store already has a Special object with id 's'"), "\(refused.stderr)")
        #expect(refused.stderr.components(separatedBy: "already has").count == 3, "\(refused.stderr)")
    }

    /// An entity of 666 to-one relationships passed `check`, and `load` wrote a store that
    /// `dump`, `eval` and every run then failed to read ("too many columns in result set": an
    /// object is read in one statement, three columns a to-one). Refused where the file is
    /// checked, in both formats; 665 still pass.
    @Test(arguments: [665, 666])
    func anEntityReadInMoreColumnsThanSQLiteGivesIsRefused(toOnes: Int) throws {
        let forward = (0..<toOnes).map { "      r\($0): { destination: B, inverse: back\($0), optional: true }\n" }.joined()
        let back = (0..<toOnes).map { "      back\($0): { destination: A, inverse: r\($0), toMany: true, optional: true }\n" }.joined()
        let folder = try CLI.project(versions: [("v1", "  A:\n    attributes:\n      name: string?\n    relationships:\n" + forward + "  B:\n    attributes:\n      name: string?\n    relationships:\n" + back)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        try folder.write(#"{"version": "v1", "objects": {"A": [{"id": "a", "r0": "b"}], "B": [{"id": "b"}]}}"#, to: "d.json")
        if toOnes == 665 {
            #expect(check.status == 0, "\(check.stderr)")
            return
        }
        #expect(check.status == 1 && check.stderr.contains("entity A is read in 2001 columns") && check.stderr.contains("SQLite allows 2000 in a result"), "\(check.stderr)")
        // Said once, though both formats meet the limit; a table too wide is said as such alone.
        #expect(check.stderr.components(separatedBy: "is read in").count == 2, "\(check.stderr)")
        let wide = try CLI.project(versions: [("v1", "  W:\n    attributes:\n" + (0..<1_999).map { "      a\($0): int64?\n" }.joined())])
        defer { try? FileManager.default.removeItem(at: wide) }
        let tooWide = try CLI.run(["check"], in: wide)
        #expect(tooWide.status == 1 && tooWide.stderr.contains("table W needs 2002 columns") && !tooWide.stderr.contains("is read in"), "\(tooWide.stderr)")
        for layout in ["mapc", "core-data"] {
            let load = try CLI.run(["load", "--layout", layout, "d.json", "\(layout).db"], in: folder)
            #expect(load.status != 0 && load.stderr.contains("entity A is read in 2001 columns"), "\(load.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("\(layout).db").path))
        }
    }

    /// Each property a uniqueness constraint or index names was searched for in the file whether
    /// or not it was in error, by a search that moved its whole queue per step: 1,600 constraints
    /// took `check` 33 s. Searched for only to place an error, which is placed as before.
    @Test func manyConstraintsAreCheckedAndAnErrorAmongThemIsPlaced() throws {
        var constraints = (0..<1_500).map { "      - [a\($0)]\n" }
        constraints[1_499] = "      - [nosuch]\n"
        let attributes = (0..<1_500).map { "      a\($0): int64?\n" }.joined()
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  E:\n    uniquenessConstraints:\n" + constraints.joined() + "    attributes:\n" + attributes, to: "schemas/v1.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("schemas/v1.yaml:1505:10: error: uniqueness constraint 1500 of 'E' names unknown property 'nosuch'"), "\(check.stderr.prefix(600))")
    }

    /// Prepared statements are kept up to `RowWriter.statementsKept` (a statement per entity of a
    /// wide hierarchy held 312 MB for 1,800 sub-entities): past it they are prepared again, and the
    /// objects of 150 sub-entities linked across them load, migrate object by object and dump
    /// whole, both formats.
    @Test(arguments: ["mapc", "core-data"])
    func statementsPreparedAgainPastTheCacheWriteTheSameObjects(layout: String) throws {
        let count = 150
        func version(_ name: String, extra: String) -> String {
            "  Parent:\n    abstract: true\n    attributes:\n      name: string?\n\(extra)    relationships:\n"
                + "      next: { destination: Parent, inverse: previous, optional: true }\n      previous: { destination: Parent, inverse: next, optional: true }\n"
                + (0..<count).map { "  Sub\($0):\n    parent: Parent\n    attributes:\n      a\($0): int64?\n" }.joined()
        }
        let folder = try CLI.project(versions: [("v1", version("v1", extra: "")), ("v2", version("v2", extra: "      extra: string?\n"))])
        defer { try? FileManager.default.removeItem(at: folder) }
        let objects = (0..<count).map { "\"Sub\($0)\": [{\"id\": \"o\($0)\", \"name\": \"n\($0)\", \"a\($0)\": \($0)\($0 + 1 < count ? ", \"next\": \"o\($0 + 1)\"" : "")}]" }
        try folder.write("{\"version\": \"v1\", \"objects\": {\(objects.joined(separator: ", "))}}", to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db", "--layout", layout], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        // The interpreter writes each object through the writer's prepared statements.
        #expect(try CLI.run(["run", "--quiet", "--interpret", "s.db"], in: folder).status == 0)
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains("\"version\": \"v2\""), "\(dump.stderr)")
        for index in [0, 75, 148] {
            #expect(dump.stdout.contains("\"a\(index)\": \(index)") && dump.stdout.contains("\"name\": \"n\(index + 1)\""), "Sub\(index)")
        }
        #expect(dump.stdout.components(separatedBy: "\"next\": \"").count == count, "every link kept")
    }
}
