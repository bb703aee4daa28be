import Foundation
import Testing

/// Defects an audit of mapc's error paths found (about 440 tried): folders that could not be
/// read taken for empty ones (a wrong plan, exit 0), files the demo replaced, and advice to
/// delete the store being migrated.
@Suite("Defects found by an audit of the error paths")
struct ErrorAuditDefectTests {
    /// A project with a v2 store beside it.
    private func project() throws -> URL {
        let folder = try CLI.project()
        try CLI.addMappingsAndPolicies(to: folder)
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v2.sqlite"), to: folder.appendingPathComponent("s.db"))
        return folder
    }

    /// A mappings "folder" that is a file planned an inferred step dropping every image, exit 0.
    @Test func aMappingsPathThatIsAFileIsNotTakenForAnEmptyFolder() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings"))
        try folder.write("not a folder\n", to: "mappings")
        let plan = try CLI.run(["plan", "--to", "v3", "s.db"], in: folder)
        #expect(plan.status == 1 && plan.stderr.contains("./mappings is not a folder") && !plan.stdout.contains("inferred"), "\(plan.stdout)\(plan.stderr)")
        let named = try CLI.run(["check", "--mappings", "mappings"], in: folder)
        #expect(named.status == 2 && named.stderr.contains("the mappings folder 'mappings' is a file, not a folder"), "\(named.stderr)")
        let schemas = try CLI.run(["check", "--schemas", "s.db"], in: folder)
        #expect(schemas.status == 2 && schemas.stderr.contains("the schemas folder 's.db' is a file, not a folder"), "\(schemas.stderr)")
    }

    /// Folders this user cannot read were empty: `plan` inferred a step that drops values (exit
    /// 0), `check` asked for a mapping file that exists, `status` listed no versions.
    @Test(.enabled(if: CLI.canRunUnprivileged))
    func foldersThisUserCannotReadAreSaidToBe() throws {
        let folder = try project()
        defer { chmod(folder.appendingPathComponent("mappings").path, 0o755); chmod(folder.appendingPathComponent("schemas").path, 0o755); try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o777)
        chown(folder.appendingPathComponent("s.db").path, 65534, 65534)
        chmod(folder.appendingPathComponent("mappings").path, 0o700)
        for arguments in [["plan", "--to", "v3", "s.db"], ["check"], ["run", "--dry-run", "--to", "v3", "s.db"]] {
            let run = try CLI.runUnprivileged(arguments, in: folder)
            #expect(run.status == 1 && run.stderr.contains("cannot read the folder ./mappings (Permission denied)") && !run.stdout.contains("inferred"), "\(arguments): \(run.stdout)\(run.stderr)")
        }
        chmod(folder.appendingPathComponent("mappings").path, 0o755)
        chmod(folder.appendingPathComponent("schemas").path, 0o700)
        for arguments in [["check"], ["hash", "v1"]] {
            let run = try CLI.runUnprivileged(arguments, in: folder)
            #expect(run.status == 1 && run.stderr.contains("cannot read the folder ./schemas (Permission denied)"), "\(arguments): \(run.stdout)\(run.stderr)")
        }
        // `status` still shows the store's own records, saying why no version is named.
        let status = try CLI.runUnprivileged(["status", "s.db"], in: folder)
        #expect(status.status == 0 && status.stderr.contains("note: cannot read the folder ./schemas (Permission denied)"), "\(status.stderr)")
        #expect(status.stdout.contains("version     unknown (the schemas could not be read: see the note above)") && status.stdout.contains("compatible  unknown (the schemas could not be read)"), "\(status.stdout)")
    }

    /// One schema file with errors hid every version from `status`, `dump` and `eval`: a v1 store
    /// was "unknown". A store at the version left out is not taken for another of the same
    /// hashes, and is told to mend its file; two files of one version stay an error.
    @Test func storesAreReadWithTheVersionsThatLoad() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v1.sqlite"), to: folder.appendingPathComponent("v1.db"))
        let v2 = try folder.read("schemas/v2.yaml")
        try folder.write(v2.replacingOccurrences(of: "type: binary", with: "type: bnary"), to: "schemas/v2.yaml")
        let note = "note: the files of v2 in ./schemas have errors (`mapc check` shows them); the versions whose files load are read"
        let status = try CLI.run(["status", "v1.db"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("version     v1 (") && status.stderr.contains(note), "\(status.stdout)\(status.stderr)")
        let json = try CLI.run(["status", "--format", "json", "v1.db"], in: folder)
        #expect(json.stdout.contains(#""identifiedVersion" : "v1""#) || json.stdout.contains(#""identifiedVersion": "v1""#), "\(json.stdout)")
        let dump = try CLI.run(["dump", "v1.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains(#""version": "v1""#) && dump.stderr.contains(note), "\(dump.stderr)")
        let eval = try CLI.run(["eval", "--store", "v1.db", "--entity", "Note", "title"], in: folder)
        #expect(eval.status == 0, "\(eval.stderr)")
        // A store at v2 is told to mend v2's file (it was told to import a version it has).
        let ofV2 = try CLI.run(["dump", "s.db"], in: folder)
        #expect(ofV2.status == 2 && ofV2.stderr.contains("is at version 'v2', whose schema file has errors") && !ofV2.stderr.contains("mapc import"), "\(ofV2.stderr)")
        let statusOfV2 = try CLI.run(["status", "s.db"], in: folder)
        #expect(statusOfV2.stdout.contains("version     unknown (it is at version 'v2', whose schema file has errors: mend that file"), "\(statusOfV2.stdout)")
        // v5, a copy of v4 with the same hashes, half written: a v5 store is not read as v4.
        try folder.write(v2, to: "schemas/v2.yaml")
        try folder.write(try folder.read("schemas/v4.yaml").replacingOccurrences(of: "version: v4", with: "version: v5"), to: "schemas/v5.yaml")
        try folder.write("versions: [v1, v2, v3, v4, v5]\n", to: "schemas/versions.yaml")
        #expect(try CLI.run(["init", "--schema", "v5", "v5.db"], in: folder).status == 0)
        try folder.write(try folder.read("schemas/v5.yaml") + "bogus: 1\n", to: "schemas/v5.yaml")
        let ofV5 = try CLI.run(["dump", "v5.db"], in: folder)
        #expect(ofV5.status == 2 && ofV5.stderr.contains("is at version 'v5', whose schema file has errors") && !ofV5.stdout.contains(#""version": "v4""#), "\(ofV5.stdout)\(ofV5.stderr)")
        // Two files declaring v4: which is it? The errors, as before.
        try folder.write(try folder.read("schemas/v4.yaml"), to: "schemas/v4-draft.yaml")
        let twice = try CLI.run(["dump", "v1.db"], in: folder)
        #expect(twice.status == 1 && twice.stderr.contains("version 'v4' is also declared by"), "\(twice.stderr)")
    }

    /// `mapc demo --directory d` replaced a file of the user's named like one of its stores.
    @Test func theDemoNeverReplacesAFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try folder.write("precious\n", to: "notes-v2.db-journal")
        let demo = try CLI.run(["demo", "--notes", "2", "--directory", folder.path], in: folder)
        #expect(demo.status == 2 && demo.stderr.contains("notes-v2.db is in the way: the demo makes its stores new and never replaces a file"), "\(demo.stderr)")
        #expect(try folder.read("notes-v2.db-journal") == "precious\n" && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("notes-v1.db").path), "nothing written")
    }

    /// `run --output` naming the store itself was told to "delete the file first": the store.
    @Test func anOutputThatIsTheStoreIsSaidToBeIt() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        for output in ["s.db", "./s.db", folder.appendingPathComponent("s.db").path] {
            let run = try CLI.run(["run", "--quiet", "--to", "v3", "--output", output, "s.db"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("is the store being migrated itself: the output must be a new file") && !run.stderr.contains("delete"), "\(run.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
    }
}

extension ErrorAuditDefectTests {
    /// A Core Data store's metadata that is not a property list was said in Foundation's words
    /// ("The operation could not be completed. The data is not in the correct format.").
    @Test func metadataThatIsNotAPropertyListIsSaidInMapcsWords() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v2-coredata.sqlite"), to: folder.appendingPathComponent("c.sqlite"))
        try sqlite(folder, "c.sqlite", "UPDATE Z_METADATA SET Z_PLIST = x'00112233'")
        let status = try CLI.run(["status", "c.sqlite"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("Z_PLIST) cannot be read: it is not a property list (neither binary, XML nor text)") && status.stderr.contains("restore it from a backup"), "\(status.stderr)")
        #expect(!status.stderr.contains("could not be completed"), "\(status.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// A schema file this user cannot read was said twice (once without its path) and then the
    /// version order was wrongly said to list a version "no schema file declares".
    @Test(.enabled(if: CLI.canRunUnprivileged))
    func aSchemaFileThisUserCannotReadIsSaidOnce() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2, v3, v4]\n", to: "schemas/versions.yaml")
        chmod(folder.appendingPathComponent("schemas/v2.yaml").path, 0o000)
        let check = try CLI.runUnprivileged(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.components(separatedBy: "cannot read the file").count == 2 && check.stderr.contains("./schemas/v2.yaml:1:1: error:"), "\(check.stderr)")
        #expect(!check.stderr.contains("no schema file declares it"), "\(check.stderr)")
        // One unreadable file stands for one version: a second version no file declares is said.
        try folder.write("versions: [v1, v2, v3, v4, v44]\n", to: "schemas/versions.yaml")
        let more = try CLI.runUnprivileged(["check"], in: folder)
        #expect(more.stderr.contains("version 'v44' is listed, but no schema file declares it (unless it is the version of a schema file whose version cannot be read)"), "\(more.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// One expression that does not parse hid every other mistake of its entity mapping: fixed,
    /// three more appeared. The others are checked now; the property it sets is not said unset.
    @Test func anExpressionThatDoesNotParseHidesNothingElse() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes:
              dateCreated: $source.dateCreated +
              title: $source.titel
              displayIndex: $source.title
              bogus: $source.body

        """, to: "mappings/mapping_v1_to_v2.yaml")
        let check = try CLI.run(["check", "mappings/mapping_v1_to_v2.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("8:41: error: expected a value"), "\(check.stderr)")
        for said in ["9:22: error: unknown key 'titel' on Note", "10:21: error: a string result cannot be stored in attribute 'Note.displayIndex'", "11:7: error: unknown attribute 'bogus'"] {
            #expect(check.stderr.contains(said), "\(said): \(check.stderr)")
        }
        // `body` is unset, `dateCreated` is the one that did not parse (not "unset").
        #expect(!check.stderr.contains("required attribute 'dateCreated'") && check.stderr.contains("required attribute 'body' of Note has neither an expression nor a default"), "\(check.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// A character YAML refuses (a NUL on line 7) was placed at 1:1: libyaml's reader gives a
    /// byte offset, now read as a line and column, with the character named.
    @Test func aCharacterYAMLRefusesIsPlacedWhereItIs() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      t: { type: string }\n\0\n".utf8).write(to: folder.appendingPathComponent("schemas/n.yaml"))
        try Data("model: M\nversion: v2\nentities:\n  Note:\n    attributes:\n      t: { type: string, default: \"é\u{1}\" }\n".utf8).write(to: folder.appendingPathComponent("schemas/m.yaml"))
        let check = try CLI.run(["check", "schemas/n.yaml", "schemas/m.yaml"], in: folder)
        #expect(check.stderr.contains("schemas/n.yaml:7:1: error: cannot read YAML: control characters are not allowed (U+0000)"), "\(check.stderr)")
        #expect(check.stderr.contains("schemas/m.yaml:6:37: error: cannot read YAML: control characters are not allowed (U+0001)") && check.stderr.contains(#"("\u0001")"#), "\(check.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// Nesting past libyaml's limit was said in its API's words ("set with yaml_set_max_nest_level()").
    @Test func deepNestingIsSaidInMapcsWords() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("a: " + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000) + "\n", to: "schemas/deep.yaml")
        let check = try CLI.run(["check", "schemas/deep.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("error: the YAML nests more than 200 levels deep") && !check.stderr.contains("yaml_set_max_nest_level"), "\(check.stderr.prefix(600))")
    }
}

extension ErrorAuditDefectTests {
    /// A store whose table of entities was emptied was "a store of another model (its entities: )".
    @Test func aStoreThatRecordsNoEntitiesIsSaidToBeDamaged() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "s.db", "DELETE FROM _mapc_entities")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 2 && dump.stderr.contains("records no entities") && dump.stderr.contains("the store is damaged") && !dump.stderr.contains("another model"), "\(dump.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// `graph` of a mapping of a version that does not exist drew it and said nothing.
    @Test func graphOfABrokenMappingSaysWhatCheckFinds() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("source: v1\ndestination: v77\nentityMappings:\n  - name: GhostToNote\n    source: Ghost\n    destination: Note\n", to: "bad.yaml")
        let graph = try CLI.run(["graph", "bad.yaml"], in: folder)
        #expect(graph.status == 0 && graph.stdout.contains("GhostToNote") && graph.stderr.contains("warning: the diagram draws bad.yaml as written, and `mapc check` finds 1 error in it, the first: bad.yaml:2:14: error: unknown destination version 'v77'"), "\(graph.stderr)")
        let sound = try CLI.run(["graph", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(sound.status == 0 && sound.stderr.isEmpty, "\(sound.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// The version order file and a data file named where a schema goes were read as schemas:
    /// "missing 'model:'", "unknown key 'versions'; did you mean 'version'?".
    @Test func anOrderOrDataFileNamedAsASchemaIsSaidToBeOne() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2, v3, v4]\n", to: "schemas/versions.yaml")
        try folder.write(#"{"version": "v2", "objects": {"Note": []}}"#, to: "notes.json")
        for arguments in [["hash", "schemas/versions.yaml"], ["graph", "schemas/versions.yaml"]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 1 && run.stderr.contains("schemas/versions.yaml is the version order file, not a schema") && !run.stderr.contains("unknown key"), "\(arguments): \(run.stderr)")
        }
        // In the schemas folder too (a review's find): one error, not a schema's.
        try FileManager.default.copyItem(at: folder.appendingPathComponent("notes.json"), to: folder.appendingPathComponent("schemas/data.yaml"))
        let folderCheck = try CLI.run(["check"], in: folder)
        #expect(folderCheck.stderr.contains("./schemas/data.yaml is a data file") && !folderCheck.stderr.contains("missing 'model:'"), "\(folderCheck.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("schemas/data.yaml"))
        for arguments in [["hash", "notes.json"], ["graph", "notes.json"], ["check", "notes.json"]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 1 && run.stderr.contains("notes.json is a data file (objects of a version), not a schema: `mapc load notes.json STORE` reads it") && !run.stderr.contains("missing 'model:'"), "\(arguments): \(run.stderr)")
        }
    }
}

extension ErrorAuditDefectTests {
    /// `mapc eval -title` said only "Missing expected argument"; a bad `--layout` showed the root
    /// usage ("mapc <subcommand>") instead of the command's.
    @Test func commandLineMistakesSayTheWayOut() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let eval = try CLI.run(["eval", "-7 / 2"], in: folder)
        #expect(eval.status == 64 && eval.stderr.contains("help: '-7 / 2' was read as an option; an expression that starts with '-' goes after `--`"), "\(eval.stderr)")
        #expect(try CLI.run(["eval", "--", "-7 / 2"], in: folder).stdout == "-3\n")
        let layout = try CLI.run(["init", "--schema", "v1", "--layout", "foo", "x.db"], in: folder)
        #expect(layout.status == 64 && layout.stderr.contains("unknown layout 'foo'") && layout.stderr.contains("Usage: mapc init"), "\(layout.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// A data file that is not an object was said to have no "version"; a missing Xcode model
    /// was exit 2 where every missing input file is 1; a missing `--expected` folder failed every
    /// case instead of being refused as any folder named.
    @Test func inputsThatAreMissingOrOfTheWrongShapeAreSaidSo() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("[1, 2, 3]\n", to: "a.json")
        let load = try CLI.run(["load", "a.json", "x.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains("a.json is not a data file: its top level must be a JSON object"), "\(load.stderr)")
        let model = try CLI.run(["import", "nofile.xcdatamodeld"], in: folder)
        #expect(model.status == 1 && model.stderr.contains("nofile.xcdatamodeld does not exist"), "\(model.stderr)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v1.sqlite"), to: folder.appendingPathComponent("fixtures/v1.sqlite"))
        let test = try CLI.run(["test", "--expected", "nodir"], in: folder)
        #expect(test.status == 2 && test.stderr.contains("the expected folder 'nodir' does not exist") && test.stderr.contains("mapc test --record --expected nodir"), "\(test.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// `eval --object @bad.json` placed its mistakes at `--object:1:9`; a list was "cannot read key
    /// 'a' of a number".
    @Test func evalsObjectIsPlacedInItsFileAndMustBeAnObject() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("{\"a\": 1,,}\n", to: "bad.json")
        let file = try CLI.run(["eval", "--object", "@bad.json", "a"], in: folder)
        #expect(file.status == 1 && file.stderr.contains("bad.json:1:9: not valid JSON"), "\(file.stderr)")
        let list = try CLI.run(["eval", "--object", "[1, 2]", "a"], in: folder)
        #expect(list.status == 1 && list.stderr.contains("--object is not a JSON object"), "\(list.stderr)")
        #expect(try CLI.run(["eval", "--object", "{\"a\": 2}", "a + 1"], in: folder).stdout == "3\n")
    }
}

extension ErrorAuditDefectTests {
    /// Small things the audit found: `minLength` above `maxLength` gave no fix where `min` above
    /// `max` did; an unknown fixture's message ran "did you mean 'v1'?; the fixtures are …".
    @Test func smallMessagesReadRight() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      t: { type: string, minLength: 5, maxLength: 2 }\n", to: "schemas/v1.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.stderr.contains("minLength 5 is above maxLength 2 for 'Note.t'; swap them or correct one"), "\(check.stderr)")
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      t: { type: string, minLength: 1, maxLength: 2 }\n", to: "schemas/v1.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        #expect(try CLI.run(["init", "--schema", "v1", "fixtures/v1.sqlite"], in: folder).status == 0)
        let test = try CLI.run(["test", "v2"], in: folder)
        #expect(test.stderr.contains("no fixture named v2 in ./fixtures; did you mean 'v1'? (the fixtures: v1)"), "\(test.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// libyaml (YAML 1.1) breaks lines at U+2028, U+2029 and U+0085 too; an editor does not: every
    /// diagnostic after one was a line off. In a comment, what follows one is read as YAML: said.
    @Test func positionsAfterALineBreakOnlyYAMLCountsAreTheEditors() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      a: { type: string, default: \"x\u{2028}y\u{85}z\" }\n      t: { type: strin }\n", to: "schemas/v1.yaml")
        let check = try CLI.run(["check", "schemas/v1.yaml"], in: folder)
        #expect(check.stderr.contains("schemas/v1.yaml:7:18: error: unknown type 'strin'"), "\(check.stderr)")
        try folder.write("model: M\nversion: v1\n# a note\u{2028}on two lines\nentities:\n  Note:\n    attributes:\n      t: { type: string }\n", to: "schemas/v1.yaml")
        let comment = try CLI.run(["check", "schemas/v1.yaml"], in: folder)
        #expect(comment.stderr.contains("schemas/v1.yaml:4:1: error: YAML syntax error") && comment.stderr.contains("(while scanning a simple key at line 3, column 10)")
                && comment.stderr.contains("line 3 holds U+2028, U+2029 or U+0085, which YAML takes for a line break"), "\(comment.stderr)")
    }
}

extension ErrorAuditDefectTests {
    /// `5.` said "expected a key after '.'", `1.e3` "cannot read key 'e3' of an integer".
    @Test func aNumberEndingAtItsPointIsSaidToBeOne() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        for text in ["5.", "1.e3"] {
            let eval = try CLI.run(["eval", "--", text], in: folder)
            #expect(eval.status == 1 && eval.stderr.contains("<expression>:1:2: error: a number's point must be followed by digits; write a digit after it (5.0, 1.0e3)"), "\(text): \(eval.stderr)")
        }
        #expect(try CLI.run(["eval", "5.0 + 1e3"], in: folder).stdout == "1005.0\n")
        // A date past the years stores hold is said in the count expressions use (it was 1970's).
        let date = try CLI.run(["eval", #"CAST(1e20, "NSDate")"#], in: folder)
        #expect(date.stderr.contains("a date 1e+20 seconds from 2001-01-01 (NSDate's reference date) is outside the years 0001 to 9999"), "\(date.stderr)")
    }
}
