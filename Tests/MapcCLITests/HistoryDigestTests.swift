import Foundation
import GRDB
import MapcKit
import Testing

@Suite("A run's history names the mapping it ran", .serialized)
struct HistoryDigestTests {
    /// An inferred step's digest is the digest of the mapping file `mapc infer` writes for it (the
    /// planner writes that text only when a run records it, never while planning).
    @Test func anInferredStepRecordsTheDigestOfTheMappingInferWrites() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "notes.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v2", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let status = try CLI.run(["status", "--format", "json", "notes.db"], in: folder)
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let recorded = (json?["history"] as? [[String: Any]])?.compactMap { $0["mappingSHA256"] as? String } ?? []
        var expected: [String] = []
        for (from, to) in [("v1", "v2")] {
            let infer = try CLI.run(["infer", "--from", from, "--to", to, "--output", "m.yaml"], in: folder)
            #expect(infer.status == 0, "\(infer.stderr)")
            expected.append(VersionHash.sha256(try folder.read("m.yaml")))
        }
        #expect(recorded == expected)
        #expect(recorded.count == 1)
        // A version added to the history since leaves the step's mapping, and its digest, as they
        // were (the file listed every version of the history, so the same step's digest changed).
        try folder.write(try folder.read("schemas/v4.yaml").replacingOccurrences(of: "version: v4", with: "version: v5"), to: "schemas/v5.yaml")
        try folder.write(try folder.read("schemas/versions.yaml").replacingOccurrences(of: "v4]", with: "v4, v5]"), to: "schemas/versions.yaml")
        let later = try CLI.run(["infer", "--from", "v1", "--to", "v2", "--output", "later.yaml"], in: folder)
        #expect(later.status == 0, "\(later.stderr)")
        #expect(VersionHash.sha256(try folder.read("later.yaml")) == expected.first)
    }

    /// Each step records the build that made it, in both formats, and `--version` names that
    /// build: two builds of one version number (a fleet upgraded in stages) are told apart.
    @Test(arguments: ["mapc", "core-data"])
    func eachStepRecordsTheBuildThatMadeIt(layout: String) throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = try CLI.run(["--version"], in: folder)
        #expect(version.stdout.range(of: #"^\d+\.\d+\.\d+ \(build [0-9a-f]{12}\)\n$"#, options: .regularExpression) != nil, "\(version.stdout)")
        let tool = "mapc " + version.stdout.trimmingCharacters(in: .newlines)
        #expect(try CLI.run(["init", "--schema", "v1", "--layout", layout, "notes.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v2", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let status = try CLI.run(["status", "--format", "json", "notes.db"], in: folder)
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect((json?["history"] as? [[String: Any]])?.map { $0["tool"] as? String } == [tool])
        // The table that keeps them is mapc's own: never an "other table" a migration would drop.
        #expect((json?["otherTables"] as? [Any])?.isEmpty == true, "\(status.stdout)")
        let text = try CLI.run(["status", "notes.db"], in: folder)
        #expect(text.stdout.contains("created  by \(tool)\n"), "\(text.stdout)")
    }

    /// A store whose history was written before tools were recorded (no table of them) reads its
    /// steps without one, and the next step records its own.
    @Test func aHistoryFromBeforeToolsWereRecordedReadsWithoutThem() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "notes.db"], in: folder).status == 0)
        #expect(try CLI.run(["run", "--to", "v2", "notes.db"], in: folder).status == 0)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("notes.db").path)
        try queue.write { try $0.execute(sql: "DROP TABLE _mapc_history_tools") }
        try queue.close()
        let run = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let status = try CLI.run(["status", "--format", "json", "notes.db"], in: folder)
        let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let tools = (json?["history"] as? [[String: Any]])?.map { $0["tool"] as? String }
        #expect(tools?.count == 2 && tools?.first == .some(nil) && tools?.last??.hasPrefix("mapc ") == true, "\(status.stdout)")
    }
}
