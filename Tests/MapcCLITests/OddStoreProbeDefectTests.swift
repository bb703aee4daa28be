import Foundation
import Testing

/// Defects a probe of stores whose data breaks the model's promises (valid SQLite, as real apps
/// leave it: dangling keys, duplicate ids, duplicate join rows) found in what mapc said of them.
@Suite("Defects found by a probe of odd store contents", .serialized)
struct OddStoreProbeDefectTests {
    /// Pets with a required owner, in a store of version k1 (k2 adds an attribute: inferred).
    private func project(layout: String) throws -> URL {
        let pets = "  Person:\n    attributes:\n      name: string\n    relationships:\n      pets: {destination: Pet, toMany: true, inverse: owner}\n      groups: {destination: Group, toMany: true, inverse: members}\n      tags: {destination: Tag, toMany: true, optional: true}\n"
            + "  Tag:\n    attributes:\n      label: string\n"
            + "  Pet:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Person, inverse: pets, optional: false}\n"
            + "  Group:\n    attributes:\n      title: string\n    relationships:\n      members: {destination: Person, toMany: true, inverse: groups}\n"
        let folder = try CLI.project(versions: [("k1", pets), ("k2", pets.replacingOccurrences(of: "      title: string\n", with: "      title: string\n      color: {type: string, optional: true}\n"))])
        try folder.write(#"{"version": "k1", "objects": {"Person": [{"id": "ann", "name": "Ann", "tags": ["t1"]}, {"id": "bob", "name": "Bob"}], "#
                         + #""Pet": [{"id": "rex", "name": "Rex", "owner": "ann"}, {"id": "tom", "name": "Tom", "owner": "bob"}], "#
                         + #""Group": [{"id": "g1", "title": "G", "members": ["ann", "bob"]}], "Tag": [{"id": "t1", "label": "T"}]}}"#, to: "data.json")
        let load = try CLI.run(["load", "data.json", "s.db", "--layout", layout], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        return folder
    }

    /// A required to-one whose key names no object (a crash between deletes) was refused as the
    /// inferred mapping's "required relationship empty", as if the step had emptied it; it is the
    /// store's, said so with the key, and the store is left as it was.
    @Test(arguments: ["mapc", "core-data"]) func aDanglingRequiredReferenceIsSaidToBeTheStores(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", layout == "mapc" ? "UPDATE Pet SET owner = 99 WHERE _id = 'rex'" : "UPDATE ZPET SET ZOWNER = 99 WHERE Z_PK = 1")
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("required relationship empty") && run.stderr.contains("so in the store before this run")
                && run.stderr.contains("its key 99 there refers to a missing or wrong-entity object"), "\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
    }

    /// A dump whose data `load` refuses said nothing of it where the store's data is odd in ways
    /// the store's own rules do not see: a dangling required reference (written null), two
    /// objects with one id. The dump is read back as `load` reads it, and what it refuses is said.
    @Test func aDumpThatLoadRefusesIsSaidToBeOne() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "UPDATE Pet SET owner = 99 WHERE _id = 'rex'")
        let dangling = try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder)
        #expect(dangling.status == 0 && dangling.stderr.contains("`mapc load` refuses the dump until they are mended") && dangling.stderr.contains("owner"), "\(dangling.stderr)")
        let folder2 = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder2) }
        try sqlite(folder2, "s.db", "UPDATE Pet SET _id = 'ann' WHERE _id = 'rex'")
        let shared = try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder2)
        #expect(shared.status == 0 && shared.stderr.contains("`mapc load` refuses the dump until they are mended") && shared.stderr.contains("'ann'"), "\(shared.stderr)")
        // A store without such oddities dumps without a note, and loads back.
        let folder3 = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder3) }
        let plain = try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder3)
        #expect(plain.status == 0 && !plain.stderr.contains("note:"), "\(plain.stderr)")
    }

    /// A join table holding one pair twice (its unique index dropped): a to-many is a set, as the
    /// run carries it; the dump listed the member twice, which `load` refused.
    @Test(arguments: ["mapc", "core-data"]) func aToManyIsDumpedAsASet(layout: String) throws {
        let folder = try project(layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let table = try sqliteOutput(folder, "s.db", "SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE '%members%' OR name LIKE '%groups%')")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!table.isEmpty)
        let columns = try sqliteOutput(folder, "s.db", "SELECT group_concat(name) FROM pragma_table_info('\(table)')").trimmingCharacters(in: .whitespacesAndNewlines)
        try sqlite(folder, "s.db", "CREATE TABLE copy AS SELECT * FROM \"\(table)\"; DROP TABLE \"\(table)\"; CREATE TABLE \"\(table)\" (\(columns)); "
                   + "INSERT INTO \"\(table)\" SELECT * FROM copy; INSERT INTO \"\(table)\" SELECT * FROM copy LIMIT 1; DROP TABLE copy")
        let dump = try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder)
        #expect(dump.status == 0 && !dump.stderr.contains("refuses"), "\(dump.stderr)")
        let text = try String(contentsOf: folder.appendingPathComponent("d.json"), encoding: .utf8)
        #expect(!text.contains("\"ann\",\n        \"ann\"") && !text.contains("\"Person/p1\",\n        \"Person/p1\""), "\(text)")
        #expect(try CLI.run(["load", "d.json", "again.db", "--layout", layout], in: folder).status == 0)
    }

    /// Two objects with one id (the store's unique index dropped) were refused with advice for a
    /// policy that makes several objects, where the step has none: the store's ids are the cause.
    @Test func aDuplicateIdInTheStoreIsSaidToBeTheStores() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        let index = try sqliteOutput(folder, "s.db", "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Pet' AND sql LIKE '%_id%'")
            .split(separator: "\n").first.map(String.init) ?? ""
        try sqlite(folder, "s.db", "DROP INDEX \"\(index)\"; UPDATE Pet SET _id = 'rex' WHERE _id = 'tom'")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("already has id 'rex'") && run.stderr.contains("the store being migrated holds more than one object with this id")
                && !run.stderr.contains("policy"), "\(run.stderr)")
    }

    /// A row filed under another entity's number (a `Z_ENT` naming an entity kept in another
    /// table) was counted nowhere by `status`, exit 0, where `run` and `dump` refuse the store: it
    /// is refused alike, and a store at the version asked for is not called current.
    @Test func aMisfiledRowIsRefusedByStatus() throws {
        let folder = try project(layout: "core-data")
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "UPDATE ZPET SET Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person') WHERE Z_PK = 1")
        for arguments in [["status", "s.db"], ["run", "--to", "k1", "s.db"], ["plan", "--to", "k1", "s.db"]] {
            let result = try CLI.run(arguments, in: folder)
            #expect(result.status == 2 && result.stderr.contains("holds objects mapc cannot read") && result.stderr.contains("table ZPET has 1 row of entity"), "\(arguments): \(result.stdout)\(result.stderr)")
        }
    }

    /// Loading into a store that already broke a rule (a nil where a value is required) advised
    /// `mapc run`'s way with references to no object, whatever the rule.
    @Test func aLoadRefusedForTheStoresOwnProblemAdvisesWhatFitsIt() throws {
        let folder = try project(layout: "mapc")
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "UPDATE Person SET name = NULL WHERE _id = 'ann'")
        try folder.write(#"{"version": "k1", "objects": {"Person": [{"id": "cy", "name": "Cy"}]}}"#, to: "more.json")
        let load = try CLI.run(["load", "more.json", "s.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains("every problem above was in the store before this load")
                && load.stderr.contains("with the sqlite3 shell") && !load.stderr.contains("reference to no object"), "\(load.stderr)")
    }

    /// A to-many without an inverse is kept as a hidden key on the destination's rows; one naming
    /// no owner dropped the object from the list in silence, where every other reference to no
    /// object is counted in the run's note.
    @Test func aHiddenKeyNamingNoOwnerIsNoted() throws {
        let folder = try project(layout: "core-data")
        defer { try? FileManager.default.removeItem(at: folder) }
        let column = try sqliteOutput(folder, "s.db", "SELECT name FROM pragma_table_info('ZTAG') WHERE name LIKE 'Z%TAGS'").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!column.isEmpty)
        try sqlite(folder, "s.db", "UPDATE ZTAG SET \(column) = 99")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("1 reference to no object (Tag 'Tag/p1' is in the tags of Person key 99, which is no Person)"), "\(run.stderr)")
    }

    /// A value of another kind in a typed column (text where an integer is kept) was refused with
    /// "the store does not match its model" and no way out: it says what is there and how to mend it.
    @Test(arguments: ["mapc", "core-data"]) func anUnreadableStoredValueSaysHowToMendIt(layout: String) throws {
        let folder = try CLI.project(versions: [("k1", "  Item:\n    attributes:\n      count: int16\n      score: {type: float, optional: true}\n"),
                                                ("k2", "  Item:\n    attributes:\n      count: int16\n      score: {type: float, optional: true}\n      note: {type: string, optional: true}\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "k1", "objects": {"Item": [{"id": "i1", "count": 1}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db", "--layout", layout], in: folder).status == 0)
        let (table, count, score) = layout == "mapc" ? ("Item", "count", "score") : ("ZITEM", "ZCOUNT", "ZSCORE")
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(count) = 'abc'")
        let text = try CLI.run(["run", "s.db"], in: folder)
        #expect(text.status != 0 && text.stderr.contains("stored value \"abc\" cannot be read as int16: another writer stored text where the model keeps an int16")
                && text.stderr.contains("Correct the value in the store"), "\(text.stderr)")
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(count) = 1, \(score) = 0.1")
        let float = try CLI.run(["run", "s.db"], in: folder)
        #expect(float.status != 0 && float.stderr.contains("is not a float's value") && float.stderr.contains("Correct the value in the store"), "\(float.stderr)")
    }

    /// A value in a sibling's column (a Dog's `bark` filled on a Cat's row, by a batch update) was
    /// left out in silence: no app reads it, and the run says so.
    @Test(arguments: ["mapc", "core-data"]) func aValueInASiblingsColumnIsNoted(layout: String) throws {
        let animals = "  Animal:\n    abstract: true\n    attributes:\n      name: string\n"
            + "  Cat:\n    parent: Animal\n    attributes:\n      size: {type: int64, optional: true}\n"
            + "  Dog:\n    parent: Animal\n    attributes:\n      bark: {type: string, optional: true}\n"
        let folder = try CLI.project(versions: [("a1", animals), ("a2", animals + "  Toy:\n    attributes:\n      label: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "a1", "objects": {"Cat": [{"id": "c1", "name": "Tom", "size": 3}], "Dog": [{"id": "d1", "name": "Rex", "bark": "woof"}]}}"#, to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db", "--layout", layout], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        let bark = try sqliteOutput(folder, "s.db", "SELECT name FROM pragma_table_info('\(layout == "mapc" ? "Animal" : "ZANIMAL")') WHERE name LIKE '%bark%' COLLATE NOCASE")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!bark.isEmpty)
        let (table, kind, cat) = layout == "mapc" ? ("Animal", "_entity", "'Cat'") : ("ZANIMAL", "Z_ENT", "(SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Cat')")
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(bark) = 'meow?' WHERE \(kind) = \(cat)")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("1 value in columns of another entity than their row's (\(table).\(bark), Dog's, filled on 1 row of another entity) is left out"), "\(run.stderr)")
    }
    /// A to-one's destination-entity column (`Z1_OWNER`) naming another entity than the object
    /// its key names was read by the object and rewritten in silence: Core Data would fault the
    /// entity the column names. The run repairs it and says so.
    @Test func aDestinationEntityColumnThatDisagreesIsNoted() throws {
        let people = "  Person:\n    attributes:\n      name: string\n    relationships:\n      pets: {destination: Pet, toMany: true, inverse: owner}\n"
            + "  Employee:\n    parent: Person\n    attributes:\n      title: {type: string, optional: true}\n"
            + "  Pet:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Person, inverse: pets, optional: true}\n"
        let folder = try CLI.project(versions: [("e1", people), ("e2", people + "  Toy:\n    attributes:\n      label: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "e1", "objects": {"Person": [{"id": "ann", "name": "Ann"}], "Employee": [{"id": "bob", "name": "Bob"}], "#
                         + #""Pet": [{"id": "rex", "name": "Rex", "owner": "ann"}, {"id": "tom", "name": "Tom", "owner": "bob"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db", "--layout", "core-data"], in: folder).status == 0)
        let column = try sqliteOutput(folder, "s.db", "SELECT name FROM pragma_table_info('ZPET') WHERE name LIKE 'Z%\\_OWNER' ESCAPE '\\'").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!column.isEmpty)
        try sqlite(folder, "s.db", "UPDATE ZPET SET \(column) = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person') WHERE ZNAME = 'Tom'")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("1 to-one reference whose destination-entity column names another entity than its object (Pet 'Pet/p2', owner: ZPET.\(column) says Person, key 2 is an Employee)"), "\(run.stderr)")
        #expect(try sqliteOutput(folder, "s.db", "SELECT \(column) = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Employee') FROM ZPET WHERE ZNAME = 'Tom'").trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }
}
