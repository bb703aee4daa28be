import Foundation
import Testing

/// `check` of a whole project checks every step of the declared history, as `plan` would meet it
/// from a store at any version.
@Suite("check and the whole chain", .serialized)
struct CheckChainTests {
    @Test func aStepWithNeitherAMappingFileNorAnInferenceIsAnError() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let v4 = try folder.read("schemas/v4.yaml")
        try folder.write(v4.replacingOccurrences(of: "version: v4", with: "version: v5").replacingOccurrences(of: "      title:        { type: string }", with: "      title:        { type: string }\n      summary:      { type: string }"), to: "schemas/v5.yaml")
        try folder.write("versions: [v1, v2, v3, v4, v5]\n", to: "schemas/versions.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1, "\(check.stderr)")
        #expect(check.stderr.contains("schemas/v5.yaml:") && check.stderr.contains("error: the step v4 -> v5 has no mapping file and cannot be inferred"), "\(check.stderr)")
        #expect(check.stderr.contains("new required attribute without a default") && check.stderr.contains("mapping_v4_to_v5.yaml"), "\(check.stderr)")
        // `plan` from a v4 store holding notes says the same step (one holding none may take it).
        try folder.write(#"{"version": "v4", "objects": {"Note": [{"id": "n", "title": "t", "body": "b", "dateCreated": "2024-05-01T10:00:00Z"}]}}"#, to: "n.json")
        #expect(try CLI.run(["load", "n.json", "notes.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "--to", "v5", "notes.db"], in: folder)
        #expect(plan.status != 0 && plan.stderr.contains("cannot migrate from v4 to v5"), "\(plan.stderr)")
    }

    /// A schema file with an error switched off the check of every step of the history: a
    /// forgotten renaming identifier elsewhere was not reported until the typo was mended. The
    /// steps between versions that load are checked; those next to the version in error, not
    /// (said), with a declared order and with one told by the names.
    @Test(arguments: [true, false])
    func aSchemaFileWithErrorsLeavesTheOtherStepsChecked(declaredOrder: Bool) throws {
        let folder = try CLI.project(versions: [("v1", "  Tag:\n    attributes:\n      name: { type: string }\n"),
                                                ("v2", "  Tag:\n    attributes:\n      title: { type: string }\n"),
                                                ("v3", "  Tag:\n    attributes:\n      title: { type: string }\n      bio: { type: strng }\n"),
                                                ("v4", "  Tag:\n    attributes:\n      title: { type: string }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        if !declaredOrder { try FileManager.default.removeItem(at: folder.appendingPathComponent("schemas/versions.yaml")) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1, "\(check.stderr)")
        #expect(check.stderr.contains("unknown type 'strng'"), "\(check.stderr)")
        #expect(check.stderr.contains("error: the step v1 -> v2 has no mapping file and cannot be inferred") && check.stderr.contains("renamingIdentifier: name"), "\(check.stderr)")
        // Not a step over the version in error (v2 -> v4 is no step of the history).
        #expect(!check.stderr.contains("v2 -> v4") && !check.stderr.contains("v3 ->"), "\(check.stderr)")
        #expect(check.stdout.contains("versions: the steps of the history checked, except those next to v3, whose file has errors"), "\(check.stdout)")
    }

    /// `plan` said what an inferred step drops and fills, but a mapping step was only "mapping
    /// mapping_v1_to_v2.yaml": its `drops:`, its `remove` mappings and its filters, the losses
    /// the file declares, were not said. They are, as the inferred step's are.
    @Test func planSaysWhatAMappingStepDropsAndFilters() throws {
        let folder = try CLI.project(versions: [("v1", "  Note:\n    attributes:\n      title: { type: string }\n      color: { type: string, optional: true }\n      trashed: { type: bool, default: false }\n  Tag:\n    attributes:\n      name: { type: string }\n"),
                                                ("v2", "  Note:\n    attributes:\n      title: { type: string }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    filter: trashed == NO\n    drops: [color]\n    attributes:\n      title: $source.title\n"
                         + "  - name: TagRemove\n    source: Tag\n    type: remove\n", to: "mappings/mapping_v1_to_v2.yaml")
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "s.db"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("v1 -> v2 (mapping mapping_v1_to_v2.yaml, drops entity Tag, Note.color, filters NoteToNote to Note where trashed == NO)"), "\(plan.stdout)\(plan.stderr)")
    }

    /// `plan --format jsonl` gave a step's losses only inside its text (`"v1 -> v2 (inferred,
    /// drops Note.color, …)"`): a fleet's script had to parse English to learn what a step drops.
    /// Each step is an object too, its losses as lists: what the store holds apart from what it
    /// holds none of, a mapping file's declared drops and filters.
    @Test func planJSONGivesEachStepsLossesAsLists() throws {
        let folder = try CLI.project(versions: [("v1", "  Note:\n    attributes:\n      title: string?\n      color: string?\n      size: int64?\n  Tag:\n    attributes:\n      name: string?\n"),
                                                ("v2", "  Note:\n    attributes:\n      title: string?\n  Tag:\n    attributes:\n      name: string?\n"),
                                                ("v3", "  Note:\n    attributes:\n      title: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v2\ndestination: v3\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    filter: title != nil\n    attributes:\n      title: $source.title\n"
                         + "  - name: TagRemove\n    source: Tag\n    type: remove\n", to: "mappings/mapping_v2_to_v3.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n", "title": "t", "color": "red"}]}}"#, to: "n.json")
        #expect(try CLI.run(["load", "n.json", "s.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "--format", "jsonl", "s.db"], in: folder)
        #expect(plan.status == 0, "\(plan.stderr)")
        let line = try #require(plan.stdout.split(separator: "\n").first.map(String.init))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let details = try #require(object["details"] as? [[String: Any]], "\(line)")
        #expect(details.count == 2, "\(line)")
        guard details.count == 2 else { return }
        #expect(details[0]["from"] as? String == "v1" && details[0]["to"] as? String == "v2" && details[0]["kind"] as? String == "inferred", "\(details[0])")
        #expect(details[0]["drops"] as? [String] == ["Note.color"] && details[0]["dropsNotHeld"] as? [String] == ["Note.size"], "\(details[0])")
        #expect(details[1]["kind"] as? String == "mapping" && details[1]["files"] as? [String] == ["mapping_v2_to_v3.yaml"], "\(details[1])")
        #expect(details[1]["declaredDrops"] as? [String] == ["entity Tag"] && details[1]["drops"] as? [String] == [] && details[1]["dropsNotHeld"] as? [String] == [], "\(details[1])")
        #expect(details[1]["filters"] as? [String] == ["NoteToNote to Note where title != nil"], "\(details[1])")
        #expect(details[0]["downgrade"] as? Bool == false, "\(details[0])")
    }

    /// What inference says of an inferred step (hierarchies brought together: a Core Data
    /// store's object IDs change) was said by `check` alone; `plan` and `run` of a store that
    /// takes the step say it too.
    @Test func planAndRunSayWhatInferenceSawInTheirSteps() throws {
        let folder = try CLI.project(versions: [("v1", "  Mood:\n    attributes:\n      color: string?\n  Tag:\n    attributes:\n      name: string?\n"),
                                                ("v2", "  Entry:\n    abstract: true\n    attributes:\n      stamp: date?\n  Mood:\n    parent: Entry\n    attributes:\n      color: string?\n  Tag:\n    parent: Entry\n    attributes:\n      name: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "--layout", "core-data", "s.db"], in: folder).status == 0)
        let said = "v1 -> v2 (inferred): Entry brings together entities of separate hierarchies of v1"
        let plan = try CLI.run(["plan", "s.db"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("  note: \(said)") && plan.stdout.contains("object IDs"), "\(plan.stdout)\(plan.stderr)")
        let json = try CLI.run(["plan", "--format", "jsonl", "s.db"], in: folder)
        #expect(json.stdout.contains(said), "\(json.stdout)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("note: \(said)"), "\(run.stderr)")
    }

    /// `diff` left out a changed default (a developer reviewing a step never learned that new
    /// objects get another value): listed, saying stored values stay.
    @Test func diffListsChangedDefaults() throws {
        let folder = try CLI.project(versions: [("v1", "  Session:\n    attributes:\n      speed: { type: int64, default: 20 }\n      comment: { type: string, default: \"no comment\" }\n"),
                                                ("v2", "  Session:\n    attributes:\n      speed: { type: int64, default: 2 }\n      comment: { type: string, optional: true }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.status == 0 && diff.stdout.contains("changed  Session.speed: default 20 -> 2 (new objects only; stored values stay)")
                && diff.stdout.contains(#"changed  Session.comment: default "no comment" -> none"#), "\(diff.stdout)")
    }

    /// A default given as an attribute is made required was said to be for "new objects only;
    /// stored values stay", beside the line saying stored nils become it.
    @Test func diffSaysADefaultOfAnAttributeMadeRequiredFillsStoredNils() throws {
        let folder = try CLI.project(versions: [("v1", "  Activity:\n    attributes:\n      duration: int64?\n"),
                                                ("v2", "  Activity:\n    attributes:\n      duration: { type: int64, default: 0 }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("nil becomes 0") && diff.stdout.contains("default none -> 0 (for new objects, and stored nils, as it is made required)")
                && !diff.stdout.contains("stored values stay"), "\(diff.stdout)")
    }

    /// `check --strict --mappings ./mapings` (a typo) checked no mapping and passed, exit 0: a
    /// CI gate stayed green. A folder named on purpose must exist, as `run` and `plan` require;
    /// a missing schemas folder is said as such (it was "no .yaml files").
    @Test func checkRefusesAMappingsOrSchemasFolderThatDoesNotExist() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let typo = try CLI.run(["check", "--strict", "--mappings", "./mapings"], in: folder)
        #expect(typo.status == 2 && typo.stderr.contains("mappings folder './mapings' does not exist; did you mean ./mappings?"), "\(typo.stdout)\(typo.stderr)")
        let schemas = try CLI.run(["check", "--schemas", "./schema"], in: folder)
        #expect(schemas.status == 2 && schemas.stderr.contains("schemas folder './schema' does not exist"), "\(schemas.stdout)\(schemas.stderr)")
        #expect(try CLI.run(["check", "--mappings", "./mappings"], in: folder).status == 0)
    }

    /// An attribute made required with a default: nil values become the default, as in Core
    /// Data's lightweight migration, and `plan` (and `run`'s plan line) says so, value by value.
    @Test func anInferredStepThatFillsNilsWithADefaultSaysSo() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let v4 = try folder.read("schemas/v4.yaml")
        let subtitle = "      displayIndex: { type: int64, default: 0 }\n"
        #expect(v4.contains(subtitle), "the fixture's premise")
        try folder.write(v4.replacingOccurrences(of: "version: v4", with: "version: v5")
            .replacingOccurrences(of: subtitle, with: subtitle + "      subtitle: { type: string, optional: true }\n"), to: "schemas/v5.yaml")
        try folder.write(v4.replacingOccurrences(of: "version: v4", with: "version: v6")
            .replacingOccurrences(of: subtitle, with: subtitle + "      subtitle: { type: string, default: \"none\" }\n"), to: "schemas/v6.yaml")
        try folder.write("versions: [v1, v2, v3, v4, v5, v6]\n", to: "schemas/versions.yaml")
        #expect(try CLI.run(["init", "--schema", "v5", "notes.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "notes.db"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains(#"v5 -> v6 (inferred, fills Note.subtitle (nil becomes "none"))"#), "\(plan.stdout)\(plan.stderr)")
    }

    @Test func anInferredStepThatDropsValuesIsAWarning() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("warning: the step v2 -> v3 is inferred and drops the values of Note.image: run refuses it for a store holding any of them unless given --accept-data-loss"), "\(check.stderr)")
        #expect(check.stderr.contains("schemas/v3.yaml:") , "\(check.stderr)")
        // With the shipped mappings, every step has its file: nothing to say.
        try CLI.addMappingsAndPolicies(to: folder)
        let complete = try CLI.run(["check"], in: folder)
        #expect(complete.status == 0 && !complete.stderr.contains("the step"), "\(complete.stderr)")
    }
}

@Suite("diff and forgotten renames")
struct DiffRenameTests {
    @Test func diffAndPlanSuggestTheRenamingIdentifier() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: Blog\nversion: v1\nentities:\n  Post:\n    attributes:\n      name: string\n", to: "schemas/v1.yaml")
        try folder.write("model: Blog\nversion: v2\nentities:\n  Post:\n    attributes:\n      title: string\n", to: "schemas/v2.yaml")
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("note: Post.title is added and Post.name removed, both string: if name was renamed, give 'title' renamingIdentifier: name in v2"), "\(diff.stdout)")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("give 'title' renamingIdentifier: name in v2"), "\(check.stderr)")
        // With a default the step infers, dropping name's values: check and run say the rename too.
        try folder.write("model: Blog\nversion: v2\nentities:\n  Post:\n    attributes:\n      title: { type: string, default: untitled }\n", to: "schemas/v2.yaml")
        let lossy = try CLI.run(["check"], in: folder)
        #expect(lossy.status == 0 && lossy.stderr.contains("drops the values of Post.name") && lossy.stderr.contains("give 'title' renamingIdentifier: name in v2"), "\(lossy.stderr)")
        // A store holding a name is asked about it (one holding none loses nothing, and is not).
        try folder.write(#"{"version":"v1","objects":{"Post":[{"id":"p","name":"Hello"}]}}"#, to: "blog.json")
        #expect(try CLI.run(["load", "blog.json", "blog.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "blog.db"], in: folder)
        // Said once, with the plan's notes before the run.
        #expect(run.status == 2 && run.stderr.contains("note: v1 -> v2 (inferred): Post.title is added and Post.name removed")
                && run.stderr.components(separatedBy: "Post.title is added").count == 2, "\(run.stderr)")
    }
}

@Suite("Files with CRLF line endings")
struct CRLFTests {
    /// A schema written on Windows: its mistakes at their line, with the line shown.
    @Test func aCRLFSchemasMistakeIsShownWithItsLine() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\r\nversion: v1\r\nentities:\r\n  Note:\r\n    attributes:\r\n      title: { type: strng }\r\n", to: "bad.yaml")
        let check = try CLI.run(["check", "bad.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("bad.yaml:6:22: error: unknown type 'strng'"), "\(check.stderr)")
        #expect(check.stderr.contains("      title: { type: strng }\n") && !check.stderr.contains("\r"), "the line itself: \(check.stderr)")
    }
}
