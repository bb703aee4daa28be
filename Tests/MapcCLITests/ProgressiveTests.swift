import Foundation
import Testing

@Suite("Progressive migration and the demo", .serialized)
struct ProgressiveTests {
    @Test func theDemoRunsFromAnyDirectory() throws {
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-demo-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let demo = try CLI.run(["demo", "--notes", "60", "--directory", "stores"], in: elsewhere)
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("plan: v1 -> v2 (inferred), v2 -> v3 (mapping mapping_v2_to_v3.yaml, filters NoteToAttachment to Note where image != nil), v3 -> v4 (mapping mapping_v3_to_v4.yaml)"))
        #expect(demo.stdout.contains("migrated notes-v1.db from v1 to v4"))
        #expect(demo.stdout.contains("migrated notes-v2.db from v2 to v4"))
        #expect(demo.stdout.contains("\"caption\": \"Groceries: milk, eggs and bread."))
        #expect(demo.stdout.contains("\"image\": \"<"))
        #expect(demo.stderr.contains("[step 3/3 v3->v4] [validate] the migrated store is valid"))
        let status = try CLI.run(["status", "--schemas", CLI.packageRoot.appendingPathComponent("schemas").path, "stores/notes-v1.db"], in: elsewhere)
        #expect(status.stdout.contains("compatible  v4"))
        #expect(status.stdout.contains("v1 -> v2  inferred"))
        #expect(status.stdout.components(separatedBy: "mapping file").count == 3, "two steps used mapping files: \(status.stdout)")
    }

    @Test func aFailureInTheLastStepLeavesTheV1StoreUnchanged() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let fixture = CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/v1.json").path
        #expect(try CLI.run(["load", fixture, "notes.db"], in: folder).status == 0)
        let original = try Data(contentsOf: folder.appendingPathComponent("notes.db"))
        // Step 3 of 3 makes every title nil, which v4 forbids.
        try folder.write(try folder.read("mappings/mapping_v3_to_v4.yaml").replacingOccurrences(of: "      title: $source.title", with: "      title: TERNARY(TRUEPREDICATE, nil, $source.title)"), to: "mappings/mapping_v3_to_v4.yaml")
        let run = try CLI.run(["run", "notes.db"], in: folder)
        #expect(run.status == 3)
        #expect(run.stderr.contains("[step 3/3 v3->v4]"), "the first two steps ran")
        #expect(run.stderr.contains("Note 'n1', property 'title': required value missing"))
        #expect(run.stderr.contains("notes.db was not changed"))
        #expect(try Data(contentsOf: folder.appendingPathComponent("notes.db")) == original)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty, "intermediate stores are removed: \(leftovers)")
        #expect(try CLI.run(["status", "notes.db"], in: folder).stdout.contains("compatible  v1"))
    }

    @Test func everyVersionReachesTheNewestThroughTheCLI() throws {
        for version in ["v1", "v2", "v3"] {
            let folder = try CLI.project()
            defer { try? FileManager.default.removeItem(at: folder) }
            try CLI.addMappingsAndPolicies(to: folder)
            let fixtures = CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes")
            #expect(try CLI.run(["load", fixtures.appendingPathComponent("\(version).json").path, "notes.db"], in: folder).status == 0)
            let run = try CLI.run(["run", "--quiet", "notes.db"], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            let dump = try CLI.run(["dump", "notes.db"], in: folder).stdout
            #expect(dump == (try String(contentsOf: fixtures.appendingPathComponent("expected-v4-from-\(version).json"), encoding: .utf8)), "\(version)")
        }
    }

    @Test func inferAndDiffExplainTheSteps() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("added    Note.image: binary, optional"))
        #expect(diff.stdout.contains("verdict: inferable"))
        let infer = try CLI.run(["infer", "--from", "v1", "--to", "v2", "--output", "mapping_v1_to_v2.yaml"], in: folder)
        #expect(infer.status == 0, "\(infer.stderr)")
        #expect(try CLI.run(["check", "mapping_v1_to_v2.yaml"], in: folder).status == 0)
        try folder.write(try folder.read("schemas/v4.yaml").replacingOccurrences(of: "version: v4", with: "version: v5").replacingOccurrences(of: "displayIndex: { type: int64, default: 0 }", with: "displayIndex: { type: string }"), to: "schemas/v5.yaml")
        try folder.write("versions: [v1, v2, v3, v4, v5]\n", to: "schemas/versions.yaml")
        // Not inferable: a skeleton with the open item under 'todo:', which check reports.
        let skeleton = try CLI.run(["infer", "--from", "v4", "--to", "v5", "--output", "mapping_v4_to_v5.yaml"], in: folder)
        #expect(skeleton.status == 0, "\(skeleton.stderr)")
        #expect(skeleton.stderr.contains("  - NoteToNote: displayIndex: type change int64 -> string can lose data"))
        #expect(try folder.read("mapping_v4_to_v5.yaml").contains("todo:\n      - 'displayIndex: type change int64 -> string can lose data;"))
        let open = try CLI.run(["check", "mapping_v4_to_v5.yaml"], in: folder)
        #expect(open.status == 1 && open.stderr.contains("still to do in mapping 'NoteToNote': displayIndex: type change int64 -> string"), "\(open.stderr)")
        #expect(try CLI.run(["diff", "v4", "v5"], in: folder).stdout.contains("verdict: needs a mapping file, because:"))
    }

    /// A step inference can make only by dropping values, written as a file the user keeps: the
    /// drop is a `todo:` item to accept (as `run` asks for --accept-data-loss), said by `infer`,
    /// and once accepted listed under `drops:`, which keeps `check` quiet about it.
    @Test func anInferredFileThatDropsValuesAsksBeforeItRuns() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["load", CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/v2.json").path, "notes.db"], in: folder).status == 0)
        #expect(try CLI.run(["run", "--to", "v3", "notes.db"], in: folder).stderr.contains("would drop the values of Note.image"))
        let infer = try CLI.run(["infer", "--from", "v2", "--to", "v3", "--output", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(infer.status == 0 && infer.stderr.contains("the mapping drops the values of Note.image") && infer.stderr.contains("delete an item to drop them on purpose"), "\(infer.stderr)")
        let text = try folder.read("mappings/mapping_v2_to_v3.yaml")
        #expect(text.contains("    drops: [image]\n") && text.contains("      - 'image: its values are dropped (v3 has no image here)"), "\(text)")
        let open = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(open.status == 1 && open.stderr.contains("still to do in mapping 'NoteToNote': image: its values are dropped"), "\(open.stderr)")
        let refused = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(try CLI.run(["status", "notes.db"], in: folder).stdout.contains("version     v2"))
        // Accepted: the item deleted, the drop stays listed, and check and run are quiet.
        let accepted = text.components(separatedBy: "\n").filter { !$0.contains("its values are dropped (v3") && !$0.hasSuffix("todo:") && !$0.contains("# Left to do") }.joined(separator: "\n")
        try folder.write(accepted, to: "mappings/mapping_v2_to_v3.yaml")
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(check.status == 0 && check.stderr.isEmpty, "\(check.stderr)\n\(accepted)")
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder).status == 0)
        // Without 'drops:', check says what the mapping loses and how to say it is meant.
        try folder.write(accepted.replacingOccurrences(of: "    drops: [image]\n", with: ""), to: "mappings/mapping_v2_to_v3.yaml")
        let unsaid = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(unsaid.status == 0 && unsaid.stderr.contains("warning: 'image' of Note in v2 is read by no expression of this mapping: its values would be dropped"), "\(unsaid.stderr)")
    }
}

@Suite("Planning with a mapping that skips versions", .serialized)
struct SkippingMappingTests {
    @Test func aMappingFileThatSkipsVersionsIsPreferred() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        // v1 -> v3 in one step: inferable (images never existed in v1), written as a file.
        #expect(try CLI.run(["infer", "--from", "v1", "--to", "v3", "--output", "mappings/mapping_v1_to_v3.yaml"], in: folder).status == 0)
        #expect(try CLI.run(["load", CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/v1.json").path, "notes.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "notes.db"], in: folder)
        #expect(plan.stdout == "notes.db is at v1; 2 steps to v4:\n  1. v1 -> v3 (mapping mapping_v1_to_v3.yaml)\n  2. v3 -> v4 (mapping mapping_v3_to_v4.yaml)\n")
        #expect(try CLI.run(["run", "--quiet", "notes.db"], in: folder).status == 0)
        let dump = try CLI.run(["dump", "notes.db"], in: folder).stdout
        #expect(dump == (try String(contentsOf: CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/expected-v4-from-v1.json"), encoding: .utf8)))
        // Two files for one step are ambiguous: refused, naming both.
        try folder.write(try folder.read("mappings/mapping_v3_to_v4.yaml"), to: "mappings/zz_copy.yaml")
        let ambiguous = try CLI.run(["plan", "--to", "v4", "notes.db"], in: folder)
        #expect(ambiguous.status == 1)
        #expect(ambiguous.stderr.contains("zz_copy.yaml:1:1: error: this file maps v3 to v4, and so does ./mappings/mapping_v3_to_v4.yaml"), "\(ambiguous.stderr)")
    }
}
