import Foundation
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
}
