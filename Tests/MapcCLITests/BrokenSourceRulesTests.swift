import Foundation
import Testing

/// Core Data checks no rules in a lightweight migration or a batch update, so a real store can
/// hold a nil where its model requires a value. A run that finds such a value in the migrated
/// store says it was in the store before, and what to do: it blamed the step, with no way out.
@Suite("Rules the store broke before the run")
struct BrokenSourceRulesTests {
    @Test func aRequiredValueTheStoreLackedIsSaidToBeTheStores() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write("model: T\nversion: v1\nentities:\n  Tag:\n    attributes:\n      name: string\n", to: "schemas/v1.yaml")
        try folder.write("model: T\nversion: v2\nentities:\n  Tag:\n    attributes:\n      name: string\n      color: string?\n", to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Tag": [{"id": "a", "name": "x"}, {"id": "b", "name": "y"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "UPDATE ZTAG SET ZNAME = NULL WHERE Z_PK = 2")
        let run = try CLI.run(["run", "s.sqlite"], in: folder)
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("Tag 'Tag/p2', property 'name'") && run.stderr.contains("(so in the store before this run)"), "\(run.stderr)")
        #expect(run.stderr.contains("every rule above was broken in the store before this run"), "\(run.stderr)")
        #expect(try CLI.run(["status", "s.sqlite"], in: folder).stdout.contains("v1"))
    }

    /// A mapping step may give objects other identities (a Core Data store's keys are renumbered,
    /// a filter leaves some out): the destination object named the same is not the source's, so
    /// nothing is said to be the store's (a mapping's own nil was blamed on the store).
    @Test func aMappingStepsFailuresAreTheSteps() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        for version in ["v1", "v2"] {
            try folder.write("model: N\nversion: \(version)\nentities:\n  Note:\n    attributes:\n      title: string\n      body: string\n", to: "schemas/\(version).yaml")
        }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("""
            source: v1
            destination: v2
            entityMappings:
              - name: NoteToNote
                source: Note
                destination: Note
                filter: "title != 'a'"
                attributes:
                  title: $source.title
                  body: "TERNARY(title == 'b', nil, $source.body)"

            """, to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "a", "title": "a", "body": "x"}, {"id": "b", "title": "b", "body": "y"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "UPDATE ZNOTE SET ZBODY = NULL WHERE Z_PK = 1")
        let run = try CLI.run(["run", "--dry-run", "s.sqlite"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("required value missing") && !run.stderr.contains("before this run"), "\(run.stderr)")
        // The migrated store's object is named with the source object it was made from, or said to be the migrated store's.
        for interpret in [false, true] {
            let named = try CLI.run(["run", "--dry-run"] + (interpret ? ["--interpret"] : []) + ["s.sqlite"], in: folder)
            #expect(named.stderr.contains("Note 'Note/p1', property 'body': required value missing (value: nil) [created by mapping 'NoteToNote'"), "\(named.stderr)")
            #expect(named.stderr.contains("from source object Note 'Note/p2']") || named.stderr.contains("the id is the migrated store's, which numbered its objects anew]"), "\(named.stderr)")
        }
    }
}

/// An attribute made required with a default the inferred fill cannot write (bytes) is refused
/// saying so (it said the attribute had no default).
@Suite("Inference of a required attribute's fill")
struct RequiredFillTests {
    @Test func aDefaultTheFillCannotWriteIsSaid() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write("model: P\nversion: v1\nentities:\n  Photo:\n    attributes:\n      image: { type: binary, optional: true }\n", to: "schemas/v1.yaml")
        try folder.write("model: P\nversion: v2\nentities:\n  Photo:\n    attributes:\n      image: { type: binary, default: \"aGk=\" }\n", to: "schemas/v2.yaml")
        let plan = try CLI.run(["infer", "--from", "v1", "--to", "v2"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("image: optional -> required, with a default no mapping expression can write (the expression language has no binary literal)") && !plan.stdout.contains("without a default"), "\(plan.stdout)")
    }
}

/// A single store's run stopped by SIGTERM says `stopped` in its JSON, as a batch does of a store
/// it did not finish (it said `failed`, "cancelled"). The signal comes from the fault-injection
/// hook at a known point of the run (`MAPC_FAULT=term@N`), not from a timer.
@Suite("A stopped run's JSON")
struct StoppedRunJSONTests {
    /// A store at v1 of a one-entity project, run with the fault-injection hook sending the
    /// signal `fault` names (`term@1`, `hup@1`) at the run's first operation.
    private func stoppedRun(_ fault: String) throws -> (run: CLIResult, folder: URL) {
        let folder = try CLI.project(versions: [("v1", "  Tag:\n    attributes:\n      name: string\n"),
                                                ("v2", "  Tag:\n    attributes:\n      name: string\n      color: string?\n")])
        try folder.write(#"{"version": "v1", "objects": {"Tag": [{"id": "a", "name": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        return (try CLI.run(["run", "--format", "json", "s.db"], in: folder, environment: ["MAPC_FAULT": fault]), folder)
    }

    @Test func aSingleStoreStoppedBySIGTERMSaysStopped() throws {
        let (run, folder) = try stoppedRun("term@1")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(run.status == 143, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains(#""result": "stopped""#), "\(run.stdout)")
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v1"))
    }

    /// A terminal or ssh session that closes sends SIGHUP, which killed a run outright (its
    /// temporary files left, a batch's report never written); it stops the run as SIGTERM does.
    @Test func aRunStoppedBySIGHUPStopsAtASafePoint() throws {
        let (run, folder) = try stoppedRun("hup@1")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(run.status == 129, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains(#""result": "stopped""#), "\(run.stdout)")
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v1"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.hasSuffix(".tmp") })
    }
}
