import Foundation
import GRDB
import Testing

/// Defects a probe of structural model changes found (renames, inheritance, relationships,
/// constraints between versions), run through the CLI on both store formats.
@Suite("Defects found by a probe of structural changes", .serialized)
struct StructuralProbeDefectTests {
    /// A project of the versions given (`version: yaml of its entities`), in order.
    private func project(_ versions: [(String, String)]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-structural-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        for (version, entities) in versions {
            try folder.write("model: S\nversion: \(version)\nentities:\n\(entities)", to: "schemas/\(version).yaml")
        }
        try folder.write("versions: [\(versions.map(\.0).joined(separator: ", "))]\n", to: "schemas/versions.yaml")
        return folder
    }

    /// A uniqueness constraint added where existing objects share a value: the compiled step
    /// (one `INSERT … SELECT`) failed on the third item, and, on a Core Data store (whose
    /// migration file keeps no journal), left the first two in the file for the interpreter to
    /// meet again: the first item was named as the one breaking the constraint and as the one it
    /// clashed with. The third is named now, with the first, on both formats.
    @Test(arguments: ["mapc", "core-data"])
    func theObjectBreakingANewUniquenessConstraintIsNamed(layout: String) throws {
        let item = "      name: string\n      code: string\n"
        let folder = try project([("v1", "  Item:\n    attributes:\n\(item)"),
                                  ("v2", "  Item:\n    uniquenessConstraints: [[code]]\n    attributes:\n\(item)")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i1", "name": "a", "code": "x"}, {"id": "i2", "name": "b", "code": "y"}, {"id": "i3", "name": "c", "code": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3, "\(run.stderr)")
        let (third, first) = layout == "mapc" ? ("i3", "i1") : ("Item/p3", "Item/p1")
        let line = run.stderr.split(separator: "\n").first { $0.contains("uniqueness constraint") }.map(String.init) ?? run.stderr
        #expect(line.contains("Item '\(third)'") && line.contains("Item '\(first)'") && !line.contains("Item 'Item/p2'") && !line.contains("'i2'"), "\(line)")
    }
}
