import Foundation
import GRDB
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `mapc test` on the shipped UnCloudNotes fixtures (a store of each version and what each must
/// become), and on broken expectations.
@Suite("mapc test", .serialized)
struct TestCommandTests {
    /// A copy of the example project with its fixtures and expected results.
    private func project() throws -> URL { try CLI.projectWithFixtures() }

    @Test func theShippedFixturesPassAndReportAsJUnit() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: folder.appendingPathComponent("fixtures/notes-v1.sqlite"))
        let test = try CLI.run(["test", "--junit", "report.xml"], in: folder)
        #expect(test.status == 0, "\(test.stdout)\(test.stderr)")
        #expect(test.stdout.contains("PASS notes-v1 -> v4") && test.stdout.contains("PASS notes-v2-coredata -> v4") && test.stdout.hasSuffix("4 passed, 0 failed\n"), "\(test.stdout)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("fixtures/notes-v1.sqlite")) == before, "fixtures are migrated on copies")
        let xml = try folder.read("report.xml")
        #expect(xml.contains("<testsuite name=\"mapc test\" tests=\"4\" failures=\"0\"") && xml.components(separatedBy: "<testcase ").count == 5, "\(xml)")
        // To an intermediate version too: nothing recorded for it, so it says what to do.
        let v3 = try CLI.run(["test", "--to", "v3"], in: folder)
        #expect(v3.status == 1 && v3.stdout.contains("FAIL notes-v1 -> v3") && v3.stdout.contains("nothing to compare with: write ./expected/notes-v1@v3.json"), "\(v3.stdout)")
        let record = try CLI.run(["test", "--to", "v3", "--record"], in: folder)
        #expect(record.status == 0 && folder.exists("expected/notes-v1@v3.json"), "\(record.stdout)")
        #expect(try CLI.run(["test", "--to", "v3", "--to", "v4"], in: folder).stdout.hasSuffix("8 passed, 0 failed\n"))
        // A fixture newer than the version asked for is skipped, not failed.
        let v2 = try CLI.run(["test", "--to", "v2", "--record", "--expected", "new-expected"], in: folder)
        #expect(v2.status == 0 && v2.stdout.contains("SKIP notes-v3 -> v2: the fixture is at v3, newer than v2") && folder.exists("new-expected/notes-v1@v2.json"), "\(v2.stdout)")
        #expect(v2.stdout.hasSuffix("3 passed, 0 failed, 1 skipped\n"), "\(v2.stdout)")
    }

    /// One case named runs alone (a failing one, while it is mended), by its fixture's name or
    /// path; a name no fixture has is said before anything runs, with the names there are.
    @Test func namedCasesRunAlone() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let one = try CLI.run(["test", "notes-v2"], in: folder)
        #expect(one.status == 0 && one.stdout.contains("PASS notes-v2 -> v4") && one.stdout.hasSuffix("1 passed, 0 failed\n"), "\(one.stdout)")
        let two = try CLI.run(["test", "fixtures/notes-v1.sqlite", "notes-v3", "--to", "v4"], in: folder)
        #expect(two.status == 0 && two.stdout.hasSuffix("2 passed, 0 failed\n") && !two.stdout.contains("notes-v2"), "\(two.stdout)")
        // The other cases' expected files are not orphans of a run that names one.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("fixtures/notes-v3.sqlite"))
        #expect(try CLI.run(["test", "notes-v1"], in: folder).status == 0)
        let unknown = try CLI.run(["test", "notes-v4"], in: folder)
        #expect(unknown.status == 2 && unknown.stderr.contains("no fixture named notes-v4 in ./fixtures") && unknown.stderr.contains("notes-v1, notes-v2, notes-v2-coredata"), "\(unknown.stderr)")
        #expect(!unknown.stdout.contains("PASS"), "\(unknown.stdout)")
        // A name with a dot is not cut at it, and a path names that file, not its file name elsewhere.
        try FileManager.default.copyItem(at: folder.appendingPathComponent("fixtures/notes-v1.sqlite"), to: folder.appendingPathComponent("fixtures/notes-v1.0.sqlite"))
        try FileManager.default.copyItem(at: folder.appendingPathComponent("expected/notes-v1.json"), to: folder.appendingPathComponent("expected/notes-v1.0.json"))
        let dotted = try CLI.run(["test", "notes-v1.0"], in: folder)
        #expect(dotted.status == 0 && dotted.stdout.contains("PASS notes-v1.0 -> v4") && dotted.stdout.hasSuffix("1 passed, 0 failed\n"), "\(dotted.stdout)")
        let elsewhere = try CLI.run(["test", "/nonexistent/notes-v1.sqlite"], in: folder)
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("no fixture named /nonexistent/notes-v1.sqlite"), "\(elsewhere.stderr)")
    }

    /// A broken mapping of a later step fails the cases that reach it with its diagnostics, not
    /// with the note on how far a store can be migrated now, which is for a store someone keeps.
    /// A value that differed after several steps said only "Note 'n1', displayIndex: expected
    /// 0, got 1", with no step to look at (a team with 70 versions had to bisect). Each differing
    /// property names the last mapping file line of the run that sets it.
    @Test func aDifferenceNamesTheLastMappingLineThatSetsTheValue() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mapping = try folder.read("mappings/mapping_v2_to_v3.yaml")
        try folder.write(mapping.replacingOccurrences(of: "      displayIndex: $source.displayIndex", with: "      displayIndex: $source.displayIndex + 1"), to: "mappings/mapping_v2_to_v3.yaml")
        let line = mapping.components(separatedBy: "\n").firstIndex { $0.contains("displayIndex: $source.displayIndex") }.map { $0 + 1 } ?? 0
        let test = try CLI.run(["test", "notes-v1"], in: folder)
        #expect(test.status == 1 && test.stdout.contains("displayIndex: expected"), "\(test.stdout)")
        // The v3 -> v4 mapping carries it over (`$source.displayIndex`): said as such, after the line that computes it.
        let carried = try folder.read("mappings/mapping_v3_to_v4.yaml").components(separatedBy: "\n").firstIndex { $0.contains("displayIndex: $source.displayIndex") }.map { $0 + 1 } ?? 0
        #expect(test.stdout.contains("Note.displayIndex is last computed by ./mappings/mapping_v2_to_v3.yaml:\(line):7 (step v2 -> v3); carried over after it by ./mappings/mapping_v3_to_v4.yaml:\(carried):7 (step v3 -> v4)"),
                "\(test.stdout)")
    }

    @Test func aBrokenLaterStepFailsItsCasesWithoutTheNoteForAStore() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(try folder.read("mappings/mapping_v3_to_v4.yaml").replacingOccurrences(of: "$source.dateCreated", with: "$source.dateCreatd"), to: "mappings/mapping_v3_to_v4.yaml")
        let test = try CLI.run(["test"], in: folder)
        #expect(test.status == 1 && test.stdout.contains("FAIL notes-v1 -> v4") && test.stdout.contains("dateCreatd"), "\(test.stdout)")
        #expect(!test.stdout.contains("can be migrated to"), "\(test.stdout)")
    }

    /// A policy that traps (the user's code, in the process that migrates) fails the cases that
    /// run it, each migrated in a `mapc run` of its own; the other cases, the summary and the
    /// JUnit file go on, and no copy is left behind.
    @Test func aPolicyThatCrashesFailsItsCasesAndTheRunGoesOn() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try CLI.replaceV3toV4PolicyWithOneThatTraps(in: folder)
        let temporary = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        // What a `mapc test` stopped by Ctrl-C left (its process gone) goes; a running one's stays.
        try FileManager.default.createDirectory(at: temporary.appendingPathComponent("mapc-test-999999999-A"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: temporary.appendingPathComponent("mapc-test-\(getpid())-B"), withIntermediateDirectories: true)
        let test = try CLI.run(["test", "--junit", "report.xml"], in: folder, environment: ["TMPDIR": temporary.path])
        #expect(test.status == 1, "\(test.stdout)\(test.stderr)")
        #expect(test.stdout.contains("FAIL notes-v3 -> v4") && test.stdout.contains("the migration failed: the migration crashed (signal"), "\(test.stdout)")
        #expect(test.stdout.contains("mapc: the custom policy") && test.stdout.contains("crashed while creating objects (phase 1)"), "\(test.stdout)")
        // What the note says of the store is not said of a fixture's copy.
        #expect(!test.stdout.contains("The store was not changed"), "\(test.stdout)")
        #expect(test.stdout.contains("PASS notes-v1 -> v4") && test.stdout.hasSuffix("1 passed, 3 failed\n"), "\(test.stdout)")
        #expect(try folder.read("report.xml").components(separatedBy: "<testcase ").count == 5)
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.hasPrefix("mapc-test-") }
        #expect(left == ["mapc-test-\(getpid())-B"], "the copies are removed: \(left)")
    }

    /// Each case's `mapc run` is given the options as `--option=value`: a folder named "-s…"
    /// was taken for an option, and every case failed.
    @Test func optionValuesThatStartWithADashReachEachCase() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.moveItem(at: folder.appendingPathComponent("schemas"), to: folder.appendingPathComponent("-schemas"))
        let test = try CLI.run(["test", "--schemas=-schemas", "--policies=policies"], in: folder)
        #expect(test.status == 0 && test.stdout.hasSuffix("4 passed, 0 failed\n"), "\(test.stdout)\(test.stderr)")
    }

    @Test func aChangedResultFailsWithWhatDiffers() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let expected = try folder.read("expected/notes-v1.json")
        try folder.write(expected.replacingOccurrences(of: "\"First note\"", with: "\"The first note\""), to: "expected/notes-v1.json")
        try folder.write("Note: count == 9\nNote: every body == nil\nNote: some title == \"nope\"\nNote: no title != nil\nNotes: count == 1\nNote: every titel != nil\n", to: "expected/notes-v1.assertions")
        let test = try CLI.run(["test", "--junit", "report.xml"], in: folder)
        #expect(test.status == 1, "\(test.stdout)")
        #expect(test.stdout.contains("FAIL notes-v1 -> v4") && test.stdout.contains("Note 'n1', title: expected \"The first note\", got \"First note\""), "\(test.stdout)")
        #expect(test.stdout.contains("expected/notes-v1.assertions:1:1: Note: count == 9 does not hold: there are 3"), "\(test.stdout)")
        #expect(test.stdout.contains("expected/notes-v1.assertions:2:1: Note: every body == nil does not hold for 3 of 3"), "\(test.stdout)")
        #expect(test.stdout.contains("assertions:3:1: Note: some title == \"nope\" does not hold: no Note satisfies it"), "\(test.stdout)")
        #expect(test.stdout.contains("assertions:4:1: Note: no title != nil does not hold: 3 do"), "\(test.stdout)")
        #expect(test.stdout.contains("assertions:5:1: no entity 'Notes' in v4; did you mean 'Note'?"), "\(test.stdout)")
        // A key the entity lacks is named with the closest one it has.
        #expect(test.stdout.contains("assertions:6:13: unknown key 'titel' on Note; did you mean 'title'?"), "\(test.stdout)")
        #expect(test.stdout.hasSuffix("3 passed, 1 failed\n"), "\(test.stdout)")
        #expect(try folder.read("report.xml").contains("<failure message=\"differs from ./expected/notes-v1.json:&#10;"))
    }

    /// Expected data is compared as the values a store holds, not as spellings: one instant at
    /// another offset and a whole number written with a fraction of zero pass (they failed); a
    /// number beyond a double (read as null: a case passed that should not have) and an object
    /// listed twice (the second was ignored) fail, saying why.
    @Test func expectedValuesAreComparedAsStoredValues() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let expected = try folder.read("expected/notes-v1.json")
        let respelled = expected.replacingOccurrences(of: "\"2023-01-01T09:00:00Z\"", with: "\"2023-01-01T11:00:00.000+02:00\"")
            .replacingOccurrences(of: "\"displayIndex\": 1,", with: "\"displayIndex\": 1.0,")
        #expect(respelled != expected)
        try folder.write(respelled, to: "expected/notes-v1.json")
        let passed = try CLI.run(["test"], in: folder)
        #expect(passed.status == 0, "\(passed.stdout)")
        // A number no double holds is no value of the store.
        try folder.write(expected.replacingOccurrences(of: "\"displayIndex\": 1,", with: "\"displayIndex\": 1e400,"), to: "expected/notes-v1.json")
        let beyond = try CLI.run(["test"], in: folder)
        #expect(beyond.status == 1 && beyond.stdout.contains("displayIndex"), "\(beyond.stdout)")
        // An object twice: the copy that differs is not passed over.
        let twice = expected.replacingOccurrences(of: "    \"Note\": [\n", with: "    \"Note\": [\n      {\"id\": \"n1\", \"title\": \"Another\", \"body\": null, \"dateCreated\": null, \"displayIndex\": 9, \"attachments\": []},\n")
        #expect(twice != expected)
        try folder.write(twice, to: "expected/notes-v1.json")
        let duplicated = try CLI.run(["test"], in: folder)
        #expect(duplicated.status == 1 && duplicated.stdout.contains("Note 'n1' is listed twice"), "\(duplicated.stdout)")
        // A file that is not JSON is the expected file's problem, not the migration's.
        try folder.write(expected.replacingOccurrences(of: "\"title\": \"Second\",", with: "\"title\": \"Second\", \"title\": \"Again\","), to: "expected/notes-v1.json")
        let invalid = try CLI.run(["test"], in: folder)
        #expect(invalid.status == 1 && invalid.stdout.contains("the expected data cannot be read: ") && invalid.stdout.contains("notes-v1.json:")
                && !invalid.stdout.contains("the migration failed"), "\(invalid.stdout)")
    }

    /// A project of one version, v1, of the entities given, with empty fixtures and expected folders.
    private func oneVersion(_ entities: String) throws -> URL {
        let folder = try CLI.emptyProject()
        try folder.write("model: S\nversion: v1\nentities:\n\(entities)", to: "schemas/v1.yaml")
        for name in ["fixtures", "expected"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        return folder
    }

    /// A store keeps no sign of zero (SQLite stores -0.0 as 0): an expected -0.0 is the 0 stored,
    /// and passes (it failed, "expected -0.0, got 0.0"); a long text against nil says so plainly,
    /// and where two texts with escaped characters differ is counted in the text, not its JSON.
    @Test func zeroSignNilAndEscapesAreComparedAsTheStoreHoldsThem() throws {
        let folder = try oneVersion("  Rec:\n    attributes: { score: double?, text: string? }\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = String(repeating: "\\n", count: 10) + String(repeating: "a", count: 140)
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "score": 0.0, "text": "\#(body)"}, {"id": "r2", "score": 1.5, "text": null}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "fixtures/recs.db"], in: folder).status == 0)
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "score": -0.0, "text": "\#(body)"}, {"id": "r2", "score": 1.5, "text": null}]}}"#, to: "expected/recs.json")
        let zero = try CLI.run(["test"], in: folder)
        #expect(zero.status == 0, "\(zero.stdout)")
        let differing = String(repeating: "\\n", count: 10) + String(repeating: "a", count: 10) + "b" + String(repeating: "a", count: 129)
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "score": 0.0, "text": "\#(differing)"}, {"id": "r2", "score": 1.5, "text": "\#(body)"}]}}"#, to: "expected/recs.json")
        let test = try CLI.run(["test"], in: folder)
        #expect(test.status == 1 && test.stdout.contains("(150 characters each; they first differ at character 21)"), "\(test.stdout)")
        #expect(test.stdout.contains("Rec 'r2', text: expected \"") && test.stdout.contains("(150 characters), got null"), "\(test.stdout)")
    }

    /// An expected file giving a relationship on one side only is read as `load` reads it, the
    /// other side following (it failed: "expected null"); texts that differ only in their Unicode
    /// form fail, and are shown where they differ (it said "character 124" of 123).
    @Test func oneSidedRelationshipsAndUnicodeFormsInExpectedData() throws {
        let folder = try oneVersion("  Rec:\n    attributes: { s: string? }\n    relationships:\n      kids: { destination: Kid, toMany: true, inverse: rec, optional: true }\n  Kid:\n    attributes: { n: int64? }\n    relationships:\n      rec: { destination: Rec, inverse: kids, optional: true }\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let long = String(repeating: "a", count: 120)
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "s": "\#(long)é zz"}], "Kid": [{"id": "k1", "n": 1, "rec": "r1"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "fixtures/f.db"], in: folder).status == 0)
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "s": "\#(long)é zz"}], "Kid": [{"id": "k1", "n": 1, "rec": "r1"}]}}"#, to: "expected/f.json")
        let oneSided = try CLI.run(["test"], in: folder)
        #expect(oneSided.status == 0, "\(oneSided.stdout)")
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "s": "\#(long)é zz"}], "Kid": [{"id": "k1", "n": 1, "rec": "r1"}]}}"#, to: "expected/f.json")
        let forms = try CLI.run(["test"], in: folder)
        #expect(forms.status == 1 && forms.stdout.contains("they first differ at character 121, written U+"), "\(forms.stdout)")
    }

    /// A fixture at the newest version holding a row of no entity: nothing was migrated, so the
    /// case says the fixture cannot be compared (it said "the migration failed").
    @Test func aFixtureThatCannotBeComparedIsNotCalledAFailedMigration() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let current = #"{"version": "v4", "objects": {"Note": [{"id": "n1", "title": "t", "body": "b", "dateCreated": "2024-01-01T00:00:00Z", "displayIndex": 0}]}}"#
        try folder.write(current, to: "v4.json")
        #expect(try CLI.run(["load", "v4.json", "fixtures/notes-v4.sqlite"], in: folder).status == 0)
        try sqlite(folder, "fixtures/notes-v4.sqlite", "UPDATE Note SET _entity = 'Bogus'")
        let test = try CLI.run(["test"], in: folder)
        let line = test.stdout.split(separator: "\n").drop { !$0.contains("notes-v4") }.dropFirst().first.map(String.init) ?? ""
        #expect(test.status == 1 && line.contains("cannot be compared") && !line.contains("the migration failed"), "\(test.stdout)")
    }

    /// A long value that differs (a long text, a picture's base64) is shown around where the two
    /// first differ, with their lengths, rather than whole: one letter of a 3,000-letter body.
    @Test func aLongValueThatDiffersIsShownWhereItDiffers() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = folder.appendingPathComponent("fixtures/notes-v2.sqlite").path
        func setBody(_ sql: String) throws {
            let queue = try DatabaseQueue(path: fixture)
            try queue.write { try $0.execute(sql: "UPDATE Note SET body = \(sql) WHERE _id = 'n2'") }
            try queue.close()
        }
        let letters = { (count: Int) in "replace(hex(zeroblob(\(count / 2))), '0', 'a')" }
        try setBody(letters(3000))
        let record = try CLI.run(["test", "--record"], in: folder)
        #expect(record.status == 0, "\(record.stdout)\(record.stderr)")
        try setBody("\(letters(2000)) || 'b' || \(letters(998)) || 'a'")
        let test = try CLI.run(["test"], in: folder)
        #expect(test.status == 1, "\(test.stdout)")
        let line = test.stdout.split(separator: "\n").first { $0.contains("body: expected") }.map(String.init) ?? ""
        #expect(line.contains("expected \"…aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\", got \"…aaaaaaaaaaaaaaaaaaaabaaaaaaaaaaaaaaaaaaa…\""), "\(line)")
        #expect(line.contains("(3000 characters each; they first differ at character 2001)"), "\(test.stdout)")
        #expect(line.count < 200, "\(line.count) characters: \(line)")
    }

    /// What a team meets beyond the happy path: an assertion that can never hold is refused as
    /// `eval` refuses it, a step that drops values runs when the team accepts it, and a fixture
    /// that cannot be read is named by its own path, not by the copy the test migrates.
    @Test func assertionsAreCheckedLossyStepsRunWhenAcceptedAndFixturesAreNamedByTheirPath() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("Note: every title == 3\nNote: count == 3\n", to: "expected/notes-v1.assertions")
        let checked = try CLI.run(["test"], in: folder)
        #expect(checked.status == 1 && checked.stdout.contains("expected/notes-v1.assertions:1:") && checked.stdout.contains("never true"), "\(checked.stdout)")
        #expect(!checked.stdout.contains("assertions:2:"), "\(checked.stdout)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("expected/notes-v1.assertions"))
        // A fifth version without displayIndex: its inferred step drops values.
        let v4 = try folder.read("schemas/v4.yaml")
        try folder.write(v4.replacingOccurrences(of: "version: v4", with: "version: v5").replacingOccurrences(of: "      displayIndex: { type: int64, default: 0 }\n", with: ""), to: "schemas/v5.yaml")
        try folder.write(try folder.read("schemas/versions.yaml").replacingOccurrences(of: "v4]", with: "v4, v5]"), to: "schemas/versions.yaml")
        let refused = try CLI.run(["test"], in: folder)
        #expect(refused.status == 1 && refused.stdout.contains("would drop") && refused.stdout.contains("--accept-data-loss"), "\(refused.stdout)")
        let accepted = try CLI.run(["test", "--accept-data-loss", "--record", "--expected", "v5-expected"], in: folder)
        #expect(accepted.status == 0 && accepted.stdout.contains("PASS notes-v1 -> v5") && !accepted.stdout.contains("would drop"), "\(accepted.stdout)")
        #expect(try !folder.read("v5-expected/notes-v1.json").contains("displayIndex"))
        // A damaged fixture.
        let fixture = try Data(contentsOf: folder.appendingPathComponent("fixtures/notes-v1.sqlite"))
        try fixture.prefix(3000).write(to: folder.appendingPathComponent("fixtures/broken.sqlite"))
        let broken = try CLI.run(["test", "--accept-data-loss", "--expected", "v5-expected"], in: folder)
        #expect(broken.status == 1 && broken.stdout.contains("FAIL broken") && broken.stdout.contains("fixtures/broken.sqlite") && !broken.stdout.contains("mapc-test-"), "\(broken.stdout)")
    }
}
