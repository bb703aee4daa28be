import Foundation
import GRDB
import Testing

/// Defects a trial with a 40-version model history found: answers that pointed the user the
/// wrong way.
@Suite("Defects found by a long-history trial", .serialized)
struct HistoryTrialDefectTests {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-history-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        return folder
    }

    /// A store written by a development version (v2 and one more attribute) was said to be
    /// closest to v1, the first of the versions its entity's hash differs from, with the columns
    /// of both added attributes listed: ties are broken by the columns that differ, then the newest.
    @Test func theClosestVersionIsTheOneWhoseColumnsDifferLeast() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  A: { attributes: { x: string } }\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { x: string, y: string?, z: string? } }\n", to: "schemas/v2.yaml")
        try folder.write("model: M\nversion: v2-dev\nentities:\n  A: { attributes: { x: string, y: string?, z: string?, w: string? } }\n", to: "dev.yaml")
        try folder.write(#"{"version": "v2-dev", "objects": {"A": [{"id": "a1", "x": "1"}]}}"#, to: "d.json")
        for layout in ["mapc", "core-data"] {
            let store = "s-\(layout).db"
            #expect(try CLI.run(["load", "--layout", layout, "--schema", "dev.yaml", "d.json", store], in: folder).status == 0)
            let plan = try CLI.run(["plan", store], in: folder)
            #expect(plan.status != 0 && plan.stderr.contains("closest is v2:") && plan.stderr.contains("W") == (layout == "core-data") && !plan.stderr.contains("closest is v1"), "\(layout): \(plan.stderr)")
            #expect(plan.stderr.contains(layout == "mapc" ? "a column w that A in v2 does not" : "a column ZW that A in v2 does not"), "\(layout): \(plan.stderr)")
        }
    }

    /// A schema file with an error (a type misspelt) also brought an error on the version order,
    /// "version 'v2' is listed, but no schema file declares it; did you mean 'v1'?": the file does
    /// declare it. Only the real error is reported.
    @Test func aBrokenSchemaFileIsNotAlsoCalledMissingFromTheOrder() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  A: { attributes: { x: string } }\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { x: string, y: strin? } }\n", to: "schemas/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("unknown type 'strin'") && !check.stderr.contains("is listed, but no schema file declares it"), "\(check.stderr)")
        // A broken copy of a healthy file: the healthy one is listed, nothing is said of the order.
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { x: strng } }\n", to: "schemas/v2-copy.yaml")
        let copy = try CLI.run(["check"], in: folder)
        #expect(copy.stderr.contains("unknown type 'strng'") && !copy.stderr.contains("missing from the version order") && !copy.stderr.contains("is listed, but"), "\(copy.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("schemas/v2-copy.yaml"))
        // A version listed that no file declares at all is still an error.
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        let missing = try CLI.run(["check"], in: folder)
        #expect(missing.stderr.contains("version 'v3' is listed, but no schema file declares it") && !missing.stderr.contains("version 'v2' is listed"), "\(missing.stderr)")
    }

    /// The hint was given only for a text of one word: `via: "v10-skip"` said "unknown key 'v10'"
    /// and "unknown key 'skip'", `"a b"` "unexpected 'b'", `"x+1"` offered a CAST. Any quoted
    /// text that fails says how to write it, once, on its first error; a quoted expression of
    /// the mapping's own (`"$source.x + 1"`) is not taken for text.
    @Test(arguments: ["v10-skip", "a b", "a.b", "x+1"])
    func anyQuotedTextThatFailsSaysHowToWriteIt(text: String) throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("model: M\nversion: v1\nentities:\n  A: { attributes: { x: int64 } }\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { x: int64, via: string } }\n", to: "schemas/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        let mapping = "source: v1\ndestination: v2\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes:\n      x: $source.x\n      via: \"\(text)\"\n"
        try folder.write(mapping, to: "mappings/v1_to_v2.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.components(separatedBy: "YAML removed the quotes around \(text); for the text \"\(text)\", quote it inside YAML's quotes: '\"\(text)\"'").count == 2,
                "\(check.stderr)")
        try folder.write(mapping.replacingOccurrences(of: "via: \"\(text)\"", with: "via: '\"\(text)\"'"), to: "mappings/v1_to_v2.yaml")
        #expect(try CLI.run(["check"], in: folder).status == 0)
        try folder.write(mapping.replacingOccurrences(of: "via: \"\(text)\"", with: "via: \"$source.x + \(text)\""), to: "mappings/v1_to_v2.yaml")
        let expression = try CLI.run(["check"], in: folder)
        #expect(expression.status == 1 && !expression.stderr.contains("YAML removed the quotes"), "\(expression.stderr)")
    }

    /// `kind: "book"`: YAML takes the quotes, the expression is the key `book`, and the error
    /// said only "unknown key 'book' on A; A has: x", the first error a new user met, four times.
    /// It now says how to write the text.
    @Test func aStringLiteralWhoseQuotesYAMLTookIsExplained() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("model: M\nversion: v1\nentities:\n  A: { attributes: { x: string } }\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { x: string, kind: string } }\n", to: "schemas/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        let mapping = "source: v1\ndestination: v2\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes:\n      x: $source.x\n      kind: \"book\"\n"
        try folder.write(mapping, to: "mappings/v1_to_v2.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("unknown key 'book' on A") && check.stderr.contains(#"quote it inside YAML's quotes: '"book"'"#), "\(check.stderr)")
        // Written as the hint says, it checks.
        try folder.write(mapping.replacingOccurrences(of: "kind: \"book\"", with: "kind: '\"book\"'"), to: "mappings/v1_to_v2.yaml")
        let fixed = try CLI.run(["check"], in: folder)
        #expect(fixed.status == 0, "\(fixed.stderr)")
        // A key written plain is not taken for quoted text.
        try folder.write(mapping.replacingOccurrences(of: "kind: \"book\"", with: "kind: book"), to: "mappings/v1_to_v2.yaml")
        let plain = try CLI.run(["check"], in: folder)
        #expect(plain.status == 1 && !plain.stderr.contains("YAML removed the quotes"), "\(plain.stderr)")
        // Near a key, the key comes first; in a filter, no text is offered (a predicate takes none).
        try folder.write(mapping.replacingOccurrences(of: "kind: \"book\"", with: "kind: \"xx\""), to: "mappings/v1_to_v2.yaml")
        let near = try CLI.run(["check"], in: folder)
        #expect(near.stderr.contains("did you mean 'x'?; or, YAML removed the quotes around xx; for the text \"xx\""), "\(near.stderr)")
        try folder.write(mapping.replacingOccurrences(of: "kind: \"book\"", with: "kind: \"kinx\"").replacingOccurrences(of: "    attributes:", with: "    filter: \"book\"\n    attributes:"), to: "mappings/v1_to_v2.yaml")
        let filtered = try CLI.run(["check"], in: folder)
        #expect(filtered.stderr.contains("unknown key 'book' on A") && !filtered.stderr.contains("for the text \"book\""), "\(filtered.stderr)")
    }

    /// Two versions whose hashes are the same (v3 only gives an attribute a default): a Core Data
    /// store written at v2 was taken for v2 and rewritten by a step v2 -> v3 that changes nothing,
    /// where Core Data takes it as compatible with v3. A store of mapc's format records its
    /// version by name and still takes the step (its mapping may move values).
    @Test func aCoreDataStoreWhoseHashesMatchTheTargetIsAtTheTarget() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  A: { attributes: { x: string } }\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { x: string, y: string? } }\n", to: "schemas/v2.yaml")
        try folder.write("model: M\nversion: v3\nentities:\n  A: { attributes: { x: string, y: { type: string, optional: true, default: hi } } }\n", to: "schemas/v3.yaml")
        try folder.write("model: M\nversion: v4\nentities:\n  A: { attributes: { x: string, y: string?, z: string? } }\n", to: "schemas/v4.yaml")
        try folder.write("versions: [v1, v2, v3, v4]\n", to: "schemas/versions.yaml")
        try folder.write(#"{"version": "v2", "objects": {"A": [{"id": "a1", "x": "1"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "c.db"], in: folder).status == 0)
        let atTarget = try CLI.run(["plan", "--to", "v3", "c.db"], in: folder)
        #expect(atTarget.status == 0 && atTarget.stdout.contains("already at v3"), "\(atTarget.stdout)\(atTarget.stderr)")
        let beyond = try CLI.run(["plan", "c.db"], in: folder)
        #expect(beyond.status == 0 && beyond.stdout.contains("1 step to v4") && beyond.stdout.contains("v3 -> v4") && !beyond.stdout.contains("v2 -> v3"), "\(beyond.stdout)")
        // Claimed, the version is the one named.
        let claimed = try CLI.run(["run", "--from", "v2", "--dry-run", "c.db"], in: folder)
        #expect(claimed.status == 0 && (claimed.stdout + claimed.stderr).contains("plan for c.db: v2 -> v4 (inferred through v3 in one step)"), "\(claimed.stdout)\(claimed.stderr)")
        #expect(try CLI.run(["load", "d.json", "m.db"], in: folder).status == 0)
        let named = try CLI.run(["plan", "m.db"], in: folder)
        #expect(named.status == 0 && named.stdout.contains("v2 -> v4 (inferred through v3 in one step)"), "\(named.stdout)")
        let eachVersion = try CLI.run(["plan", "--every-version", "m.db"], in: folder)
        #expect(eachVersion.status == 0 && eachVersion.stdout.contains("v2 -> v3 (inferred)") && eachVersion.stdout.contains("v3 -> v4 (inferred)"), "\(eachVersion.stdout)")
        let run = try CLI.run(["run", "c.db"], in: folder)
        #expect(run.status == 0 && (run.stdout + run.stderr).contains("migrated c.db from v3 to v4"), "\(run.stdout)\(run.stderr)")
        // A mapping file for a step the hashes cannot see does work they cannot see: it runs.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v2\ndestination: v3\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes:\n      x: uppercase:($source.x)\n      y: $source.y\n",
                         to: "mappings/v2_to_v3.yaml")
        try folder.write(#"{"version": "v2", "objects": {"A": [{"id": "a1", "x": "abc"}]}}"#, to: "abc.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "abc.json", "m.sqlite"], in: folder).status == 0)
        let mapped = try CLI.run(["plan", "--to", "v3", "m.sqlite"], in: folder)
        #expect(mapped.status == 0 && mapped.stdout.contains("v2 -> v3 (mapping v2_to_v3.yaml)"), "\(mapped.stdout)\(mapped.stderr)")
        #expect(try CLI.run(["run", "--to", "v3", "m.sqlite"], in: folder).status == 0)
        #expect(try CLI.run(["dump", "m.sqlite"], in: folder).stdout.contains(#""x": "ABC""#))
    }

    /// A mapping file copied from another step (named v2_to_v3, mapping v1 -> v2) got stale
    /// hashes and unknown keys reported, never that its name and its versions disagree.
    @Test func aMappingFileWhoseNameGivesOtherVersionsIsWarned() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        for (index, attributes) in ["x: string", "x: string, y: string?", "x: string, y: string?, z: string?"].enumerated() {
            try folder.write("model: M\nversion: v\(index + 1)\nentities:\n  A: { attributes: { \(attributes) } }\n", to: "schemas/v\(index + 1).yaml")
        }
        let mapping = "source: v1\ndestination: v2\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes:\n      x: $source.x\n"
        try folder.write(mapping, to: "mappings/mapping_v2_to_v3.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.stderr.contains("mapping_v2_to_v3.yaml:1:9: warning: the file's name says v2 -> v3, but it maps v1 -> v2"), "\(check.stderr)")
        // Named for its versions, or with no versions in its name, nothing is said.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"))
        for name in ["mapping_v1_to_v2.yaml", "v1-to-v2.yaml", "split-authors.yaml"] {
            try folder.write(mapping, to: "mappings/\(name)")
            let fine = try CLI.run(["check"], in: folder)
            #expect(!fine.stderr.contains("the file's name says"), "\(name): \(fine.stderr)")
            try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings/\(name)"))
        }
    }

    /// Compatible versions that are not neighbours (v1 and v3 alike, v2 with an attribute more):
    /// a store of v1 is at v3, as Core Data takes it, not planned through v2 (whose step back
    /// would drop an attribute it never had); and a downgrade file does not stop it.
    @Test func compatibleVersionsApartAndADowngradeFileKeepNothingToDo() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("model: M\nversion: v0\nentities:\n  A: { attributes: { name: string, old: string? } }\n", to: "schemas/v0.yaml")
        try folder.write("model: M\nversion: v1\nentities:\n  A: { attributes: { name: string } }\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  A: { attributes: { name: string, x: string? } }\n", to: "schemas/v2.yaml")
        try folder.write("model: M\nversion: v3\nentities:\n  A: { attributes: { name: { type: string, default: none } } }\n", to: "schemas/v3.yaml")
        try folder.write("versions: [v0, v1, v2, v3]\n", to: "schemas/versions.yaml")
        try folder.write("source: v1\ndestination: v0\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes:\n      name: $source.name\n", to: "mappings/v1_to_v0.yaml")
        try folder.write(#"{"version": "v1", "objects": {"A": [{"id": "a1", "name": "n"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "c.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "--to", "v3", "c.db"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("already at v3"), "\(plan.stdout)\(plan.stderr)")
    }

    /// A Core Data store whose join table is named otherwise than mapc predicts (Core Data's
    /// suffixes and owners are read from stores, not derived) was read right, but a migration
    /// wrote mapc's names without a word. The migrated store keeps the numbers the store gave its
    /// columns where the new version has the same table; another owner's name is written by the
    /// rule, as Core Data's own migration does; plan and run say which.
    @Test(arguments: ["column", "table"])
    func aStoreWhoseJoinTableColumnsAreNumberedOtherwiseKeepsTheirNumbers(renaming: String) throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let entities = "  Book:\n    attributes: { title: string }\n    relationships: { tags: { destination: Tag, toMany: true, inverse: books, optional: true } }\n"
            + "  Tag:\n    attributes: { name: string }\n    relationships: { books: { destination: Book, toMany: true, inverse: tags, optional: true } }\n"
        try folder.write("model: M\nversion: v1\nentities:\n" + entities, to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n" + entities.replacingOccurrences(of: "title: string", with: "title: string, note: string?"), to: "schemas/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Book": [{"id": "b1", "title": "A", "tags": ["t1", "t2"]}, {"id": "b2", "title": "B", "tags": ["t2"]}], "Tag": [{"id": "t1", "name": "x"}, {"id": "t2", "name": "y"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "plain.sqlite"], in: folder).status == 0)
        let plain = try CLI.run(["plan", "plain.sqlite"], in: folder)
        #expect(plain.status == 0 && !plain.stdout.contains("names join tables otherwise"), "\(plain.stdout)")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        // As Core Data may have named them: a numbered column, or the table under the other side's name.
        let (renamedTable, column) = renaming == "column" ? ("Z_1TAGS", "Z_1BOOKS1") : ("Z_2BOOKS", "Z_1BOOKS")
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("s.sqlite").path)
        try queue.write { db in
            if renaming == "column" { try db.execute(sql: "ALTER TABLE Z_1TAGS RENAME COLUMN Z_1BOOKS TO Z_1BOOKS1") } else { try db.execute(sql: "ALTER TABLE Z_1TAGS RENAME TO Z_2BOOKS") }
        }
        try queue.close()
        let before = try CLI.run(["dump", "s.sqlite"], in: folder)
        #expect(before.status == 0 && before.stdout.contains(#""tags": ["#), "read under the store's names: \(before.stderr)")
        let plan = try CLI.run(["plan", "s.sqlite"], in: folder)
        let said = renaming == "column" ? "the store numbers join table columns otherwise than mapc would" : "the store names join tables otherwise than mapc would write them"
        #expect(plan.status == 0 && plan.stdout.contains(said) && plan.stdout.contains(renamedTable), "\(plan.stdout)\(plan.stderr)")
        let run = try CLI.run(["run", "s.sqlite"], in: folder)
        #expect(run.status == 0 && run.stderr.contains(said), "\(run.stderr)")
        // A number Core Data gave a column is kept; another owner's name is written by the rule,
        // as Core Data's own migration writes it. Every link either way.
        let (keptTable, keptColumn) = renaming == "column" ? (renamedTable, column) : ("Z_1TAGS", "Z_1BOOKS")
        let names = try DatabaseQueue(path: folder.appendingPathComponent("s.sqlite").path)
        let columns = try names.read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [keptTable]) }
        try names.close()
        #expect(columns.contains(keptColumn), "\(keptTable): \(columns)")
        let after = try CLI.run(["dump", "s.sqlite"], in: folder)
        func links(_ dump: String) -> [String] { dump.split(separator: "\n").filter { $0.contains("\"tags\"") || $0.contains("\"books\"") }.map(String.init) }
        #expect(after.status == 0 && links(after.stdout) == links(before.stdout) && links(before.stdout).count == 4, "\(after.stdout)")
    }
}
