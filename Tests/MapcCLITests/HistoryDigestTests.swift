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
    }
}
