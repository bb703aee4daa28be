import Foundation
import MapcKit
import Testing

/// A v3 UnCloudNotes project with two notes, one with two attachments.
private func v3Store() throws -> URL {
    let folder = try CLI.project()
    try folder.write("""
    {"version": "v3", "objects": {
      "Note": [
        {"id": "n1", "title": "Groceries", "body": "Milk and eggs", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": 0, "attachments": ["a1", "a2"]},
        {"id": "n2", "title": "Ideas", "body": "Short", "dateCreated": "2024-05-02T10:00:00Z", "displayIndex": 1}],
      "Attachment": [
        {"id": "a1", "image": "iVBORw0KGgo=", "dateCreated": "2024-05-01T10:00:00Z"},
        {"id": "a2", "image": "/9j/4AAQ", "dateCreated": "2024-05-03T10:00:00Z"}]}}
    """, to: "notes.json")
    let loaded = try CLI.run(["load", "notes.json", "notes.db"], in: folder)
    #expect(loaded.status == 0, "\(loaded.stderr)")
    return folder
}

@Suite("Defects found by a new user and a hostile-input review", .serialized)
struct DefectRegressionTests {
    @Test func evalOverAStoreFollowsEveryKindOfKeyPath() throws {
        let folder = try v3Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(entity: String, arguments: [String], expected: String)] = [
            ("Attachment", ["$source.note.body"], "Attachment 'a1': \"Milk and eggs\"\nAttachment 'a2': \"Milk and eggs\"\n"),
            ("Note", ["attachments.@count"], "Note 'n1': 2\nNote 'n2': 0\n"),
            ("Note", ["--where", "ANY attachments.dateCreated > CAST(\"2024-05-02T00:00:00Z\", \"NSDate\")", "title"], "Note 'n1': \"Groceries\"\n"),
            ("Note", ["SUBQUERY(attachments, $a, $a.note.title == \"Groceries\").@count"], "Note 'n1': 2\nNote 'n2': 0\n"),
            ("Note", ["FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Attachment\", \"note.displayIndex == 0\"), $manager.sourceContext, NO).@count"],
             "Note 'n1': 2\nNote 'n2': 2\n"),
            ("Attachment", ["--predicate", "note.attachments.@count == 2"], "Attachment 'a1': true\nAttachment 'a2': true\n"),
            ("Note", ["--where", "$id == \"n2\"", "title"], "Note 'n2': \"Ideas\"\n"),
            ("Attachment", ["$id"], "Attachment 'a1': \"a1\"\nAttachment 'a2': \"a2\"\n"),
        ]
        for test in cases {
            let result = try CLI.run(["eval", "--store", "notes.db", "--entity", test.entity] + test.arguments, in: folder)
            #expect(result.status == 0, "\(test.arguments): \(result.stderr)")
            #expect(result.stdout == test.expected, "\(test.arguments)")
        }
    }

    @Test func aBareIdInWhereSaysHowToReadTheObjectsId() throws {
        let folder = try v3Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "--where", "id == \"n1\"", "title"], in: folder)
        #expect(result.status == 1 && result.stderr.contains("unknown key 'id' on Note; the object's id is $id"), "\(result.stderr)")
        let none = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "--where", "$id == \"nope\"", "title"], in: folder)
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("note: no Note object passes --where"), "\(none.stderr)")
    }

    @Test func aStoreLockedByAWriterInAnotherProcessIsReportedAsInUse() throws {
        let folder = try v3Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A rollback-journal store with an exclusive write transaction open in another process.
        let holder = try StoreHolder(folder, "notes.db", holding: "c.execute('BEGIN EXCLUSIVE')")
        defer { holder.release() }
        let original = try Data(contentsOf: folder.appendingPathComponent("notes.db"))
        for arguments in [["status", "notes.db"], ["run", "notes.db"], ["load", "notes.json", "notes.db"]] {
            let result = try CLI.run(arguments, in: folder)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("notes.db is in use: another process holds a lock on it"), "\(arguments): \(result.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("notes.db")) == original)
    }

    /// A reader that holds the store only stops the run when the new store replaces it: every
    /// step was done by then, and the report says so, not that the run stopped in the last step.
    @Test func aReaderFoundWhenReplacingIsNotBlamedOnAStep() throws {
        let folder = try v3Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let holder = try StoreHolder(folder, "notes.db", holding: "c.execute('BEGIN'); c.execute('SELECT count(*) FROM sqlite_master').fetchall()")
        defer { holder.release() }
        for arguments in [["run", "--accept-data-loss", "--to", "v4", "notes.db"], ["run", "--accept-data-loss", "--to", "v4", "--format", "json", "notes.db"]] {
            let result = try CLI.run(arguments, in: folder)
            #expect(result.status == 2 && result.stderr.contains("in use"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("stopped in step") && !result.stdout.contains("failedStep"), "\(arguments): \(result.stderr)\(result.stdout)")
            #expect(result.stderr.contains("notes.db was not changed (every step was done; the new store could not replace it)"), "\(arguments): \(result.stderr)")
        }
    }

    /// A value an inferred step cannot store (a decimal NaN into a double, which SQLite keeps as
    /// nil) says how to decide what it becomes: write the step's mapping, with the command, its
    /// version names quoted for the shell.
    @Test func aValueAnInferredStepCannotStoreSaysHowToChooseWhatItBecomes() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: E\nversion: Edge 1\nentities:\n  Tag:\n    attributes:\n      amount: decimal?\n", to: "schemas/e1.yaml")
        try folder.write("model: E\nversion: Edge 2\nentities:\n  Tag:\n    attributes:\n      amount: double?\n", to: "schemas/e2.yaml")
        try folder.write("versions: [Edge 1, Edge 2]\n", to: "schemas/versions.yaml")
        try folder.write(#"{"version": "Edge 1", "objects": {"Tag": [{"id": "t1", "amount": "NaN"}]}}"#, to: "tags.json")
        let load = try CLI.run(["load", "tags.json", "tags.db"], in: folder)
        try #require(load.status == 0, "\(load.stderr)")
        let run = try CLI.run(["run", "tags.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("NaN is not a number a store can hold"), "\(run.stderr)")
        #expect(run.stderr.contains("note: the step Edge 1 -> Edge 2 is inferred; to choose what such values become, write its mapping (`mapc infer --from 'Edge 1' --to 'Edge 2' --output 'mappings/mapping_Edge 1_to_Edge 2.yaml'`) and give 'amount' of mapping 'TagToTag' an expression for them"), "\(run.stderr)")
        let plan = try CLI.run(["diff", "Edge 1", "Edge 2"], in: folder)
        #expect(plan.stdout.contains("`mapc infer --from 'Edge 1' --to 'Edge 2'` shows the mapping"), "\(plan.stdout)")
    }

    /// Versions named like options: the commands messages suggest run as shown (`--from=-a`,
    /// `mapc diff -- -a -b`); `--from -a` was taken for a missing value.
    @Test func suggestedCommandsRunForVersionsNamedLikeOptions() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: D\nversion: -a\nentities:\n  Note:\n    attributes:\n      title: string\n", to: "schemas/a.yaml")
        try folder.write("model: D\nversion: -b\nentities:\n  Note:\n    attributes:\n      title: string\n      body: string?\n", to: "schemas/b.yaml")
        try folder.write("versions: [-a, -b]\n", to: "schemas/versions.yaml")
        let diff = try CLI.run(["diff", "--", "-a", "-b"], in: folder)
        #expect(diff.status == 0 && diff.stdout.contains("`mapc infer --from=-a --to=-b` shows the mapping"), "\(diff.stdout)\(diff.stderr)")
        let infer = try CLI.run(["infer", "--from=-a", "--to=-b"], in: folder)
        #expect(infer.status == 0 && infer.stdout.contains("body: "), "\(infer.stdout)\(infer.stderr)")
    }

    @Test func damagedHistoryAndMetadataNeverTrap() throws {
        let folder = try v3Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["run", "--accept-data-loss", "--to", "v4", "notes.db"], in: folder).status == 0)
        try sqlite(folder, "notes.db", "UPDATE _mapc_history SET from_version = x'00ff', mapping_sha256 = 7")
        let status = try CLI.run(["status", "notes.db"], in: folder)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("<2 bytes> -> v4"), "\(status.stdout)")
        try sqlite(folder, "notes.db", "UPDATE _mapc_metadata SET value = x'ff' WHERE key = 'version'")
        let metadata = try CLI.run(["status", "notes.db"], in: folder)
        #expect(metadata.status == 2 && metadata.stderr.contains("metadata is incomplete"), "\(metadata.stderr)")
        try sqlite(folder, "notes.db", "UPDATE _mapc_metadata SET value = 'v4' WHERE key = 'version'; UPDATE Note SET _id = x'ff00' WHERE _id = 'n1'")
        let dump = try CLI.run(["dump", "notes.db"], in: folder)
        #expect(dump.status == 2 && dump.stderr.contains("where an object id of Note was expected"), "\(dump.stderr)")
    }

    @Test func checkUpdateHashesQuotesTheRewrittenLines() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        // No hashes yet: --update-hashes adds lines above the error, which must be quoted from the new text.
        try folder.write("""
        source: v2
        destination: v3
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes:
              title: $source.title
              body: $source.body
              dateCreated: $source.dateCreated
              displayIndex: $source.titel
        """, to: "mappings/m.yaml")
        let check = try CLI.run(["check", "--update-hashes", "mappings/m.yaml"], in: folder)
        #expect(check.status == 1)
        let rewritten = try folder.read("mappings/m.yaml").split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(rewritten.firstIndex { $0.contains("displayIndex: $source.titel") }) + 1
        #expect(check.stderr.contains("mappings/m.yaml:\(line):"), "\(check.stderr)")
        #expect(check.stderr.contains("displayIndex: $source.titel\n"), "the quoted line is the one the position names: \(check.stderr)")
    }

    @Test func checkRefusesTwoMappingFilesForOneStep() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"), to: folder.appendingPathComponent("mappings/copy.yaml"))
        let whole = try CLI.run(["check"], in: folder)
        #expect(whole.status == 1 && whole.stderr.contains("and so does"), "\(whole.stderr)")
        let one = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(one.status == 1 && one.stderr.contains("mappings/copy.yaml"), "a sibling file mapping the same step is found too: \(one.stderr)")
    }

    /// The command `run` suggests when a step has no mapping works as printed, also in a project
    /// with no mappings folder yet: `infer --output` makes the folder.
    @Test func theSuggestedInferCommandWorksAsPrinted() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        // v4 -> v5 adds a required attribute without a default: not inferable.
        try folder.write(try folder.read("schemas/v4.yaml").replacingOccurrences(of: "version: v4", with: "version: v5")
            .replacingOccurrences(of: "      title:", with: "      priority:     { type: int64 }\n      title:"), to: "schemas/v5.yaml")
        try folder.write(try folder.read("schemas/versions.yaml").replacingOccurrences(of: "v4]", with: "v4, v5]"), to: "schemas/versions.yaml")
        try folder.write(#"{"version": "v4", "objects": {"Note": [{"id": "n1", "title": "t", "body": "b", "dateCreated": "2024-01-01"}]}}"#, to: "one.json")
        #expect(try CLI.run(["load", "one.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v5", "s.db"], in: folder)
        let suggested = try #require(run.stderr.split(separator: "`").first { $0.hasPrefix("mapc infer ") }, "\(run.stderr)")
        let infer = try CLI.run(suggested.split(separator: " ").dropFirst().map(String.init), in: folder)
        #expect(infer.status == 0, "\(infer.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("mappings/mapping_v4_to_v5.yaml").path))
    }

    /// `check` reports the file's structural mistakes and what the checker finds in the rest in one
    /// run: an unknown key in one entity mapping does not hide an unknown entity in another.
    @Test func checkReportsStructuralAndSemanticMistakesTogether() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let text = try folder.read("mappings/mapping_v2_to_v3.yaml")
            .replacingOccurrences(of: "    attributes:\n      title:", with: "    atributes:\n      title:")
            .replacingOccurrences(of: "    source: Note\n    destination: Attachment", with: "    source: Not\n    destination: Attachment")
        try folder.write(text, to: "mappings/mapping_v2_to_v3.yaml")
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(check.status == 1)
        #expect(check.stderr.contains("unknown key 'atributes' in an entity mapping; did you mean 'attributes'?"), "\(check.stderr)")
        #expect(check.stderr.contains("unknown source entity 'Not'"), "\(check.stderr)")
        // What could not be read is not reported again as missing.
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "atributes:", with: "attributes:")
            .replacingOccurrences(of: "      title: $source.title", with: "      title: $source.title +"), to: "mappings/mapping_v2_to_v3.yaml")
        let parse = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(parse.stderr.contains("error:") && parse.stderr.contains("unknown source entity 'Not'"), "\(parse.stderr)")
        #expect(!parse.stderr.contains("required attribute 'title'") && !parse.stderr.contains("no entity mapping reads"), "\(parse.stderr)")
    }

    /// diff's verdict agrees with infer and run on a downgrade and on one version with itself.
    @Test func diffGivesNoInferableVerdictForADowngrade() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let down = try CLI.run(["diff", "v2", "v1"], in: folder)
        #expect(down.stdout.contains("verdict: a downgrade") && !down.stdout.contains("inferable"), "\(down.stdout)")
        #expect(try CLI.run(["diff", "v1", "v1"], in: folder).stdout.contains("verdict: the same version; nothing to migrate"))
    }

    @Test func messagesAndExitStatuses() throws {
        let folder = try CLI.project()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("empty-model"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("x", to: "existing.yaml")
        let infer = try CLI.run(["infer", "--from", "v1", "--to", "v2", "--output", "existing.yaml"], in: folder)
        #expect(infer.status == 2 && infer.stderr.contains("existing.yaml already exists"), "\(infer.stderr)")
        let help = try CLI.run(["help", "nosuch"], in: folder)
        #expect(help.status == 64 && help.stderr.contains("unknown command 'nosuch'"), "\(help.stderr)")
        #expect(try CLI.run(["--version"], in: folder).stdout.hasPrefix(MapcVersion.current + " (build "))
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "t", "body": "b", "dateCreated": "2024-01-01"}]}}"#, to: "one.json")
        #expect(try CLI.run(["load", "one.json", "one.db"], in: folder).stdout.contains("with 1 object\n"))
        #expect(try CLI.run(["init", "--schema", "v1", "empty.db"], in: folder).stdout.contains("1 entity\n"))
        #expect(try CLI.run(["plan", "--to", "v1", "empty.db"], in: folder).stdout == "empty.db is already at v1; nothing to do\n")
        try folder.write("model: M\nversion: x1\nentities:\n  Author:\n    uniquenessConstraints: [emial]\n    attributes:\n      email: string\n", to: "author.yaml")
        let plain = Process()
        plain.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        plain.arguments = ["sqlite3", folder.appendingPathComponent("plain.db").path, "CREATE TABLE t (x)"]
        try plain.run()
        plain.waitUntilExit()
        let status = try CLI.run(["status", "one.db", "plain.db"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("error: plain.db: not a store mapc knows") && !status.stderr.contains("plain.db: plain.db"), "\(status.stderr)")
        try folder.write("model: Z\nversion: z1\nentities: {}\n", to: "empty-model/z1.yaml")
        #expect(try CLI.run(["init", "--schemas", "empty-model", "--schema", "z1", "z.db"], in: folder).status == 0)
        let none = try CLI.run(["status", "--schemas", "empty-model", "z.db"], in: folder)
        #expect(none.status == 0 && none.stdout.contains("objects     none: version z1 has no entities"), "\(none.stdout)\(none.stderr)")
        let device = try CLI.run(["hash", "/dev/zero"], in: folder)
        #expect(device.status == 1 && device.stderr.contains("/dev/zero is a character device, not a file mapc can read"), "\(device.stderr)")
        let caret = try CLI.run(["check", "author.yaml"], in: folder)
        #expect(caret.stderr.contains("author.yaml:5:29: error: uniqueness constraint 1 of 'Author' names unknown property 'emial'"), "\(caret.stderr)")
    }

    @Test func inferenceRefusesAnAttributeBecomingARelationship() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  Post:\n    attributes:\n      title: string\n      author: string?\n  Author:\n    attributes:\n      name: string\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  Post:\n    attributes:\n      title: string\n    relationships:\n      author: { destination: Author, optional: true }\n  Author:\n    attributes:\n      name: string\n", to: "schemas/v2.yaml")
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("needs a mapping file") && diff.stdout.contains("'author' was an attribute and is now a relationship"), "\(diff.stdout)")
        let infer = try CLI.run(["infer", "--from", "v1", "--to", "v2", "--output", "m.yaml"], in: folder)
        #expect(infer.status == 0 && infer.stderr.contains("; wrote m.yaml: 2 entity mappings from v1 to v2, with 1 item left to do (under 'todo:'):"), "\(infer.stderr)")
        let skeleton = try folder.read("m.yaml")
        #expect(skeleton.contains("todo:") && skeleton.contains("was an attribute and is now a relationship"), "\(skeleton)")
        let check = try CLI.run(["check", "m.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("still to do in mapping 'PostToPost'"), "\(check.stderr)")
    }

    /// A step that both needs work and drops values: `infer` counts and lists every item it
    /// wrote under `todo:`, the drops too (it said "1 item" of two, and nothing of the drop).
    @Test func inferCountsAndListsEveryItemLeftToDo() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: string\n      mood: string?\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  Note:\n    attributes:\n      title: string\n      words: int32\n", to: "schemas/v2.yaml")
        let infer = try CLI.run(["infer", "--from", "v1", "--to", "v2", "--output", "m.yaml"], in: folder)
        let skeleton = try folder.read("m.yaml")
        let items = skeleton.components(separatedBy: "\n").drop { !$0.contains("todo:") }.dropFirst().prefix { $0.hasPrefix("      - ") }
        #expect(items.count == 2, "\(skeleton)")
        #expect(infer.status == 0 && infer.stderr.contains("with 2 items left to do (under 'todo:'):"), "\(infer.stderr)")
        #expect(infer.stderr.contains("  - NoteToNote: words: new required attribute") && infer.stderr.contains("  - NoteToNote: mood: its values are dropped"), "\(infer.stderr)")
    }

    /// From a Core Data team's walk through the docs: an unknown entity exits 2 like an unknown
    /// version name (the documented table), with the close name; status without a schemas folder says so and how to
    /// name one, still showing what the store records; a file that is no store says how to make one
    /// with the command, not with the library.
    @Test func messagesACoreDataTeamTrippedOn() throws {
        let folder = try v3Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let eval = try CLI.run(["eval", "--store", "notes.db", "--entity", "Not", "title"], in: folder)
        #expect(eval.status == 2 && eval.stderr.contains("no entity 'Not' in version v3; did you mean 'Note'?"), "\(eval.status) \(eval.stderr)")
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let status = try CLI.run(["status", "../notes.db"], in: elsewhere)
        #expect(status.status == 0 && status.stdout.contains("model       UnCloudNotes"), "\(status.stdout)\(status.stderr)")
        #expect(status.stderr.contains("schemas folder './schemas' does not exist") && status.stderr.contains("--schemas"), "\(status.stderr)")
        try folder.write("", to: "empty.db")
        let empty = try CLI.run(["status", "empty.db"], in: folder)
        #expect(empty.status == 2 && empty.stderr.contains("mapc init") && !empty.stderr.contains("Store.create"), "\(empty.stderr)")
    }

    /// The second new user's trial: a missing file is called missing, a mistyped command gets the
    /// closest name, a duplicated key is explained in YAML's own terms, and `check` lists a file's
    /// diagnostics in line order.
    @Test func aSecondNewUsersMessages() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check", "nosuch.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("nosuch.yaml: no such file; check the path"), "\(check.stderr)")
        #expect(!check.stderr.contains("operation could not be completed"), "\(check.stderr)")
        let hash = try CLI.run(["hash", "nosuch.yaml"], in: folder)
        #expect(hash.status == 1 && hash.stderr.contains("nosuch.yaml: no such file"), "\(hash.stderr)")
        #expect(try CLI.run(["hash", "v2"], in: folder).status == 0, "a version name still works")
        let typo = try CLI.run(["runn", "b.db"], in: folder)
        #expect(typo.status == 64 && typo.stderr.contains("unknown command 'runn'; did you mean 'run'?\ncommands: "), "\(typo.stderr)")
        try folder.write("model: M\nversion: x1\nentities:\n  Note:\n    attributes:\n      title: string\n      title: string\n", to: "dup.yaml")
        let duplicate = try CLI.run(["check", "dup.yaml"], in: folder)
        #expect(duplicate.status == 1 && duplicate.stderr.contains("dup.yaml:7:7: error: duplicate key 'title'"), "\(duplicate.stderr)")
        #expect(duplicate.stderr.contains("indented alike under one parent") && !duplicate.stderr.contains("in a mapping"), "\(duplicate.stderr)")
        // A duplicated mapping name on line 9 is found when the file is read, the missing values of
        // line 4 when it is checked: listed by line all the same.
        try folder.write("source: v2\ndestination: v3\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    attributes:\n      title: $source.nosuch\n"
                         + "  - name: NoteToNote\n    source: Note\n    destination: Note\n", to: "two.yaml")
        let two = try CLI.run(["check", "two.yaml"], in: folder)
        let lines = two.stderr.split(separator: "\n").filter { $0.hasPrefix("two.yaml:") }.map { Int($0.split(separator: ":")[1]) ?? 0 }
        #expect(lines.contains(9) && lines.contains(4), "\(two.stderr)")
        // A store and the options the user gave with it.
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "t", "body": "b", "dateCreated": "2024-01-01"}]}}"#, to: "one.json")
        #expect(try CLI.run(["load", "one.json", "a.db"], in: folder).status == 0)
        let unknownFrom = try CLI.run(["run", "--from", "v9", "a.db"], in: folder)
        #expect(unknownFrom.status == 2 && unknownFrom.stderr.contains("unknown version 'v9'"), "\(unknownFrom.stderr)")
        let wrongFrom = try CLI.run(["run", "--from", "v2", "a.db"], in: folder)
        #expect(wrongFrom.status == 2 && wrongFrom.stderr.contains("a.db is at version v1, not v2"), "\(wrongFrom.stderr)")
        let backup = try CLI.run(["run", "--keep-backup", "--output", "b.db", "a.db"], in: folder)
        #expect(backup.status == 64 && backup.stderr.contains("--output leaves the store untouched; --keep-backup has nothing to keep"), "\(backup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("b.db").path))
        #expect(two.status == 1 && lines.count >= 2 && lines == lines.sorted(), "\(two.stderr)")
    }
}

/// Another process holding a store: a python3 sqlite3 connection that runs `holding` (a lock, a
/// read transaction) and keeps it until `release`; made once it holds it.
struct StoreHolder {
    private let process = Process()
    private let input = Pipe()

    init(_ folder: URL, _ store: String, holding statements: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import sqlite3, sys\nc = sqlite3.connect('\(store)', isolation_level=None)\n\(statements)\nprint('holding', flush=True)\nsys.stdin.read()\n"]
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        _ = output.fileHandleForReading.availableData   // waits for "holding"
    }

    /// Lets the store go and waits for the process to end.
    func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// Runs SQL on a store with the sqlite3 shell, as a hostile editor would.
func sqlite(_ folder: URL, _ store: String, _ sql: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", store, sql]
    process.currentDirectoryURL = folder
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "sqlite3 \(sql)")
}

/// What a second new user hit: messages that named the wrong cause.
@Suite("Defects found by a second new-user trial", .serialized)
struct SecondTrialDefectTests {
    /// `--version` in a command with arguments (`mapc init --version v2 s.db`, "version" being the
    /// model's word) printed mapc's version, did nothing and succeeded. It is a usage error that
    /// names the command's options for a model version; alone, it still prints the version.
    @Test func aModelVersionGivenToVersionIsAUsageError() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let initialize = try CLI.run(["init", "--version", "v2", "s.db"], in: folder)
        #expect(initialize.status == 64 && initialize.stderr.contains("--version prints mapc's own version and takes no value, so nothing was done")
                && initialize.stderr.contains("--schema <version>") && initialize.stderr.contains("mapc init --help"), "\(initialize.stderr)")
        #expect(!folder.exists("s.db"))
        let plan = try CLI.run(["plan", "s.db", "--version", "v3"], in: folder)
        #expect(plan.status == 64 && plan.stderr.contains("--to <version>"), "\(plan.stderr)")
        let hash = try CLI.run(["hash", "--version", "v2"], in: folder)
        #expect(hash.status == 64 && hash.stderr.contains("one of its arguments"), "\(hash.stderr)")
        let status = try CLI.run(["status", "--version", "s.db"], in: folder)
        #expect(status.status == 64 && status.stderr.contains("`mapc status` takes no model version"), "\(status.stderr)")
        let alone = try CLI.run(["init", "--version"], in: folder)
        #expect(alone.status == 0 && !alone.stdout.isEmpty, "\(alone.stderr)")
    }

    /// A policy file that is a symbolic link to nothing (an example copied with `cp -r`, whose
    /// policies link into the checkout) is said to be one, not "permission denied".
    @Test func aDanglingPolicyLinkIsNamedAsOne() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("policies"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("policies/Gone.swift").path, withDestinationPath: "../nowhere/Gone.swift")
        let check = try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(check.status != 0)
        #expect(check.stderr.contains("symbolic link") && check.stderr.contains("nowhere/Gone.swift") && !check.stderr.contains("permission"), "\(check.stderr)")
    }

    /// A store to create in a folder that does not exist is refused as such before anything runs,
    /// by init, load and run --output alike.
    @Test func aMissingOutputFolderIsNamedAsMissing() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("nodir")
        let initResult = try CLI.run(["init", "--schema", "v1", missing.appendingPathComponent("a.db").path], in: folder)
        #expect(initResult.status != 0 && initResult.stderr.contains("does not exist") && !initResult.stderr.contains("cannot write"), "\(initResult.stderr)")
        _ = try CLI.run(["init", "--schema", "v1", "s.db"], in: folder)
        let run = try CLI.run(["run", "--to", "v2", "s.db", "--output", missing.appendingPathComponent("out.db").path], in: folder)
        #expect(run.status != 0 && run.stderr.contains("does not exist") && !run.stderr.contains("cannot write") && !run.stderr.contains("stopped in step"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    /// `--policies` naming a folder that does not exist says so.
    @Test func aMissingPoliciesFolderIsNamedAsMissing() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check", "--policies", folder.appendingPathComponent("nope").path], in: folder)
        #expect(check.status != 0 && check.stderr.contains("does not exist"), "\(check.stderr)")
    }
}

extension SecondTrialDefectTests {
    /// Loading into a Core Data store says that its ids are not kept (they name the objects
    /// `Entity/p<key>` there); a store in mapc's format keeps them and says nothing.
    @Test func loadingIntoACoreDataStoreSaysIdsAreNotKept() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "my-note", "title": "T", "body": "B", "dateCreated": "2024-01-01T00:00:00Z"}]}}"#, to: "n.json")
        let coreData = try CLI.run(["load", "--layout", "core-data", "n.json", "cd.sqlite"], in: folder)
        #expect(coreData.status == 0 && coreData.stderr.contains("keeps no ids"), "\(coreData.stderr)")
        let dump = try CLI.run(["dump", "cd.sqlite"], in: folder)
        #expect(dump.stdout.contains("Note/p1") && !dump.stdout.contains("my-note"), "\(dump.stdout)")
        let mapc = try CLI.run(["load", "n.json", "m.db"], in: folder)
        #expect(mapc.status == 0 && !mapc.stderr.contains("keeps no ids"), "\(mapc.stderr)")
    }
}

extension SecondTrialDefectTests {
    /// A policy that traps ends the process (it is the user's code, run in it), but the report
    /// says which policy and mapping it was, and that the store was not changed; it is not.
    @Test func aCrashingPolicyIsNamedAndTheStoreKept() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        // The v3 -> v4 mapping's policy, replaced by one that traps on its first object.
        let className = try CLI.replaceV3toV4PolicyWithOneThatTraps(in: folder)
        try folder.write(#"{"version": "v3", "objects": {"Note": [{"id": "n1", "title": "T", "body": "B", "dateCreated": "2024-01-01T00:00:00Z"}], "Attachment": [{"id": "a1", "image": "AA==", "dateCreated": "2024-01-01T00:00:00Z", "note": "n1"}]}}"#, to: "n.json")
        let cache = folder.appendingPathComponent("cache").path
        #expect(try CLI.run(["load", "n.json", "s.db"], in: folder).status == 0)
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        let run = try CLI.run(["run", "--to", "v4", "s.db"], in: folder, environment: ["MAPC_CACHE": cache, "SWIFT_BACKTRACE": "enable=no"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("mapc: the custom policy") && run.stderr.contains(className) && run.stderr.contains("crashed while creating objects (phase 1)")
                && run.stderr.contains("The store was not changed"), "\(run.stderr)")
        // The runtime names the policy's file MapcProjectPolicies/…: where that is is said.
        #expect(run.stderr.contains("names the policy's function (the runtime's MapcProjectPolicies/ is ./policies/)"), "\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
    }
}

extension SecondTrialDefectTests {
    /// A store written by a schema changed by hand (an attribute added without a new version)
    /// matches no version; the message names the column that differs, not only the entity, in
    /// both formats, and the attribute a version has that the store lacks.
    @Test(arguments: ["mapc", "core-data"]) func noVersionMatchesNamesTheColumnThatDiffers(layout: String) throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let edited = folder.appendingPathComponent("edited")
        try FileManager.default.createDirectory(at: edited, withIntermediateDirectories: true)
        let v1 = try folder.read("schemas/v1.yaml")
        try folder.write(v1.replacingOccurrences(of: "      body:", with: "      pages: { type: int32, optional: true }\n      body:"), to: "edited/v1.yaml")
        #expect(try CLI.run(["init", "--schemas", "edited", "--schema", "v1", "--layout", layout, "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v2", "s.db"], in: folder)
        #expect(run.status != 0 && run.stderr.contains("matches no version"), "\(run.stderr)")
        #expect(run.stderr.contains("has a column") && run.stderr.uppercased().contains("PAGES") && run.stderr.contains("without a new model version"), "\(run.stderr)")
    }
}

extension SecondTrialDefectTests {
    /// A run of several steps says, per step, how many objects of each entity the step's store
    /// holds: a policy's own objects (created under the mapping that runs it) show there by entity.
    @Test func eachStepOfARunSaysTheObjectsItsStoreHolds() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("mappings"), to: folder.appendingPathComponent("mappings"))
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "T", "body": "B", "dateCreated": "2024-01-01T00:00:00Z"}]}}"#, to: "n.json")
        #expect(try CLI.run(["load", "n.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v3", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let perStep = run.stdout.split(separator: "\n").filter { $0.hasPrefix("    objects: ") }
        #expect(perStep.count == 2 && perStep.last == "    objects: Note 1, Attachment 0", "\(run.stdout)")
        #expect(run.stdout.contains("\n  objects: Note 1, Attachment 0"), "\(run.stdout)")
    }
}

extension SecondTrialDefectTests {
    /// A store of another model is named as such by every command that identifies it (dump said
    /// to add a version to the wrong model); a store newer than the schemas is told to bring the
    /// newer version, not an older one.
    @Test func everyCommandGivesTheSameDiagnosisOfAnUnidentifiedStore() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = folder.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try folder.write("model: Library\nversion: l1\nentities:\n  Book:\n    attributes:\n      title: string\n", to: "other/l1.yaml")
        #expect(try CLI.run(["init", "--schemas", "other", "--schema", "l1", "lib.db"], in: folder).status == 0)
        for command in [["dump", "lib.db"], ["run", "--to", "v4", "lib.db"], ["eval", "--store", "lib.db", "--entity", "Book", "title"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 2 && result.stderr.contains("holds model 'Library'") && result.stderr.contains("use Library's schema files"), "\(command): \(result.stderr)")
        }
        // A v4 store, and schemas that stop at v3.
        #expect(try CLI.run(["init", "--schema", "v4", "new.db"], in: folder).status == 0)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("schemas/v4.yaml"))
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        let newer = try CLI.run(["dump", "new.db"], in: folder)
        #expect(newer.status == 2 && newer.stderr.contains("it records version 'v4', which they do not have") && !newer.stderr.contains("an older model version"), "\(newer.stderr)")
    }
}

extension SecondTrialDefectTests {
    /// A store file cut short (an incomplete copy) is named as such, with its size and the size
    /// its header gives, not only "malformed".
    @Test func aTruncatedStoreIsNamedAnIncompleteCopy() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = (0..<400).map { #"{"id": "n\#($0)", "title": "Note \#($0)", "body": "\#(String(repeating: "b", count: 200))", "dateCreated": "2024-01-01T00:00:00Z"}"# }
        try folder.write(#"{"version": "v1", "objects": {"Note": ["# + notes.joined(separator: ", ") + "]}}", to: "n.json")
        #expect(try CLI.run(["load", "n.json", "s.db"], in: folder).status == 0)
        let whole = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        try whole.prefix(whole.count / 2 / 4096 * 4096).write(to: folder.appendingPathComponent("cut.db"))
        for command in [["status", "cut.db"], ["dump", "cut.db"], ["run", "--to", "v2", "cut.db"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 2 && result.stderr.contains("incomplete copy") && result.stderr.contains("its header says \(whole.count)"), "\(command): \(result.stderr)")
        }
    }
}
