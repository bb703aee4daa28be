import Foundation
import Testing

/// Defects a probe of stores of unusual shapes at scale found: what stopped working, or stopped
/// being linear, past a size.
@Suite("Defects found by a probe of scale", .serialized)
struct ScaleProbeDefectTests {
    /// A project whose entity has `count` optional integer attributes (v2 adds one, and `rule`).
    private func wideProject(count: Int, rule: String = "") throws -> URL {
        let attributes = (0..<count).map { "      a\($0): {type: int64, optional: true\(rule)}\n" }.joined()
        return try CLI.project(versions: [("w1", "  Wide:\n    attributes:\n" + attributes), ("w2", "  Wide:\n    attributes:\n" + attributes + "      extra: string?\n")])
    }

    /// From 996 attributes every run of the entity failed ("Expression tree is too large
    /// (maximum depth 1000)": the validation's rules were joined in one chain), and from about
    /// 1,000 broken rules the list of them had more columns than SQLite gives a result.
    @Test func anEntityOfOverAThousandAttributesMigratesAndIsValidated() throws {
        let folder = try wideProject(count: 1_200)
        defer { try? FileManager.default.removeItem(at: folder) }
        let objects = (0..<3).map { row in "{\"id\": \"w\(row)\", " + (0..<1_200).map { "\"a\($0)\": \($0 % 3 == 0 ? 5 : 200)" }.joined(separator: ", ") + "}" }
        try folder.write("{\"version\": \"w1\", \"objects\": {\"Wide\": [\(objects.joined(separator: ", "))]}}", to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains("\"a1199\": 200"), "\(dump.stderr)")
        // Every attribute's rule broken by a third of them: 1,200 rules, listed in parts.
        let attributes = (0..<1_200).map { "      a\($0): {type: int64, optional: true, min: 100}\n" }.joined()
        try folder.write("model: S\nversion: w2\nentities:\n  Wide:\n    attributes:\n" + attributes + "      extra: string?\n", to: "schemas/w2.yaml")
        let broken = try CLI.run(["run", "--quiet", "t.db"], in: folder)
        #expect(broken.status == 3 && broken.stderr.contains("breaks validation rules of the destination schema in 1200 places") && broken.stderr.contains("property 'a0': below min 100 (value: 5)"), "\(broken.stderr)")
    }
}
