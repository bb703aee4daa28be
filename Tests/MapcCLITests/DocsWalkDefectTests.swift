import Foundation
import Testing

/// Defects a new user found walking every page of the docs with the installed binary: what the
/// pages promised and the tool did otherwise, and messages that did not say what was wrong.
@Suite("Defects found by a walk through the docs")
struct DocsWalkDefectTests {
    /// cli.md lists `--policies` on `graph` (and the language server loads policies too): both
    /// refused the option, exit 64.
    @Test func graphAndTheLanguageServerTakeThePoliciesFolder() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("policies"), to: folder.appendingPathComponent("elsewhere"))
        let graph = try CLI.run(["graph", "v2", "--policies", "elsewhere"], in: folder)
        #expect(graph.status == 0 && graph.stdout.contains("Note"), "\(graph.stderr)")
        let lsp = try CLI.run(["lsp", "--policies", "elsewhere"], in: folder)
        #expect(lsp.status != 64 && !lsp.stderr.contains("Unknown option"), "\(lsp.stderr)")
    }

    /// Versions whose order neither a file nor their names tell: `infer` wrote a mapping either
    /// way (a downgrade too) where the docs say every command needing the order refuses, and `diff`
    /// called the step inferable.
    @Test func inferRefusesVersionsOfNoOrderAndDiffSaysSo() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        for version in ["initial", "tags", "subtitle"] {
            try folder.write("model: M\nversion: \(version)\nentities:\n  Note:\n    attributes:\n      title: string\n" + (version == "tags" ? "      tag: string?\n" : ""), to: "schemas/\(version).yaml")
        }
        for (from, to) in [("initial", "tags"), ("tags", "initial")] {
            let infer = try CLI.run(["infer", "--from", from, "--to", to], in: folder)
            #expect(infer.status == 1 && infer.stdout.isEmpty && infer.stderr.contains("cannot be told from their names; declare it, oldest first, in"), "\(infer.stderr)")
        }
        let diff = try CLI.run(["diff", "tags", "initial"], in: folder)
        #expect(diff.status == 0 && diff.stdout.contains("verdict: inferable if tags is the older, which cannot be told:"), "\(diff.stdout)")
        // Declared, the same step is a downgrade, and the other way is inferred.
        try folder.write("versions: [initial, tags, subtitle]\n", to: "schemas/versions.yaml")
        #expect(try CLI.run(["infer", "--from", "initial", "--to", "tags"], in: folder).status == 0)
        #expect(try CLI.run(["infer", "--from", "tags", "--to", "initial"], in: folder).stderr.contains("never infers a downgrade"))
    }

    /// `status` of a store no version of the schemas folder matches showed no history, though the
    /// store keeps it itself (JSON said `"history": []`).
    @Test func statusShowsTheHistoryOfAStoreNoSchemaMatches() throws {
        let folder = try CLI.project(versions: [("v1", "  Note:\n    attributes: { title: string }\n"), ("v2", "  Note:\n    attributes: { title: string, tag: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Note\": [{\"id\": \"n1\", \"title\": \"a\"}]}}", to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        #expect(try CLI.run(["run", "--quiet", "s.db"], in: folder).status == 0)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("only"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("schemas/v1.yaml"), to: folder.appendingPathComponent("only/v1.yaml"))
        let status = try CLI.run(["status", "s.db", "--schemas", "only"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("matches no version of the schemas") && status.stdout.contains("records version 'v2'") && status.stdout.contains("v1 -> v2  inferred"), "\(status.stdout)")
        let json = try CLI.run(["status", "s.db", "--schemas", "only", "--format", "json"], in: folder)
        #expect(!json.stdout.contains("\"history\": []") && json.stdout.contains("\"to\": \"v2\""), "\(json.stdout)")
    }

    /// A new store in a folder no file can be made in named the temporary file mapc would have
    /// written ("/proc/.x.db.mapc-…tmp: cannot open as a SQLite store"), not the store asked for.
    @Test func aStoreThatCannotBeMadeIsNamedAsGiven() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let initialize = try CLI.run(["init", "--schema", "v1", "/proc/x.db"], in: folder)
        #expect(initialize.status == 2 && initialize.stderr.contains("cannot create a file beside /proc/x.db") && !initialize.stderr.contains(".tmp"), "\(initialize.stderr)")
    }

    /// An alias that names no anchor was "found undefined alias", naming neither it nor the fix.
    @Test func anUndefinedAliasIsNamed() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: *nope\n", to: "schemas/v1.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("v1.yaml:6:14: error: YAML syntax error: found undefined alias; *nope names no anchor before it: define it with &nope"), "\(check.stderr)")
    }
    /// store-layout.md: a row of mapc's format whose `_id` is NULL (a table made again without its
    /// NOT NULL) is named `Entity/p<key>`, and a migration writes that name as its id.
    @Test func aRowWithoutAnIDIsNamedByItsKey() throws {
        let folder = try CLI.project(versions: [("v1", "  Note:\n    attributes: { title: string? }\n"), ("v2", "  Note:\n    attributes: { title: string?, tag: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "PRAGMA writable_schema=1; UPDATE sqlite_master SET sql=replace(sql, '\"_id\" TEXT NOT NULL', '\"_id\" TEXT') WHERE name='Note'; PRAGMA writable_schema=0;")
        try sqlite(folder, "s.db", "INSERT INTO Note(_pk, _entity, _id, title) VALUES (7, 'Note', NULL, 'a')")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains("\"id\": \"Note/p7\""), "\(dump.stdout)")
        #expect(try CLI.run(["run", "--quiet", "s.db"], in: folder).status == 0)
        #expect(try sqliteOutput(folder, "s.db", "SELECT _id FROM Note") == "Note/p7")
    }
}
