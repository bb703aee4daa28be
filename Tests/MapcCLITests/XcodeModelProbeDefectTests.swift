import Foundation
import Testing

/// Defects a probe of every feature of Xcode's model format found in what `import` and the
/// commands after it did with models Core Data accepts.
@Suite("Defects found by a probe of Xcode model features", .serialized)
struct XcodeModelProbeDefectTests {
    /// A version named as Xcode names a copy (`Kitchen 2 (copy)`) was "not a valid version name",
    /// and the import wrote no version at all. Such names are file names, and import.
    @Test func aVersionNamedAsAFileIsImported() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Kitchen.xcdatamodeld")
        try FileManager.default.copyItem(at: ImportCommandTests.fixtures.appendingPathComponent("Kitchen.xcdatamodeld"), to: copy)
        try FileManager.default.moveItem(at: copy.appendingPathComponent("Kitchen 2.xcdatamodel"), to: copy.appendingPathComponent("Kitchen 2 (copy).xcdatamodel"))
        let current = copy.appendingPathComponent(".xccurrentversion")
        try (try String(contentsOf: current, encoding: .utf8)).replacingOccurrences(of: "Kitchen 2.xcdatamodel", with: "Kitchen 2 (copy).xcdatamodel").write(to: current, atomically: false, encoding: .utf8)
        let run = try CLI.run(["import", copy.path, "--output", "out"], in: folder)
        #expect(run.status == 0 && folder.exists("out/Kitchen 2 (copy).yaml") && folder.exists("out/Kitchen.yaml"), "\(run.stdout)\(run.stderr)")
        #expect(try CLI.run(["check", "--schemas", "out"], in: folder).status == 0)
        // A name mapc's files cannot hold (`@` parts a test's expected file from its version) is
        // the version's to rename, said at it; the other versions are written.
        try FileManager.default.moveItem(at: copy.appendingPathComponent("Kitchen 2 (copy).xcdatamodel"), to: copy.appendingPathComponent("Kitchen@2.xcdatamodel"))
        let refused = try CLI.run(["import", copy.path, "--output", "again"], in: folder)
        #expect(refused.status == 1 && refused.stderr.contains("Kitchen@2.xcdatamodel/contents:1:1: error: version 'Kitchen@2' cannot be a version of mapc's")
                && refused.stderr.contains("rename the version in Xcode") && folder.exists("again/Kitchen.yaml"), "\(refused.stderr)")
    }

    /// A composite attribute added (recorded as what mapc does not import) changed no hash mapc
    /// computes: `diff` said "no changes" and `plan` passed a step `run` refuses for a Core Data
    /// store. `diff` says it, and `plan` refuses as `run` does.
    @Test func aCompositeAttributeAddedIsSaidByDiffAndRefusedByPlan() throws {
        let visit = "  Visit:\n    attributes:\n      note: string?\n"
        let folder = try CLI.project(versions: [("c1", visit), ("c2", visit.replacingOccurrences(of: "  Visit:\n", with: "  Visit:\n    notImported: ['address (a composite attribute)']\n"))])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "c1", "c2"], in: folder)
        #expect(diff.stdout.contains("not imported from the Core Data model: none -> address (a composite attribute)"), "\(diff.stdout)")
        try folder.write(#"{"version": "c1", "objects": {"Visit": [{"id": "v", "note": "n"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db", "--layout", "core-data"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "s.db"], in: folder)
        #expect(plan.status == 2 && plan.stderr.contains("version c2 cannot be written as a Core Data store") && plan.stderr.contains("`mapc run --layout mapc` writes mapc's format"), "\(plan.stdout)\(plan.stderr)")
        // Written in mapc's format, the step is carried out (the plan is the library's too, and does not refuse it).
        let run = try CLI.run(["run", "--quiet", "--layout", "mapc", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
    }
    /// Names a schema file cannot hold were said at the version's first entity (`Ñandú` on
    /// `Item`'s line): each is said at its own element.
    @Test func anInvalidNameIsSaidAtItsElement() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("M.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
                  + "    <entity name=\"Item\" syncable=\"YES\">\n        <attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/>\n        <attribute name=\"café\" optional=\"YES\" attributeType=\"String\"/>\n    </entity>\n"
                  + "    <entity name=\"Ñandú\" syncable=\"YES\">\n        <attribute name=\"x\" optional=\"YES\" attributeType=\"String\"/>\n    </entity>\n</model>\n").utf8)
            .write(to: model.appendingPathComponent("contents"))
        let run = try CLI.run(["import", "M.xcdatamodel", "--output", "out"], in: folder)
        #expect(run.status == 1 && run.stderr.contains("contents:5:") && run.stderr.contains("attribute name 'café' of Item is not a valid name")
                && run.stderr.contains("contents:7:") && run.stderr.contains("entity name 'Ñandú' is not a valid name"), "\(run.stderr)")
    }
    /// A derivation made or changed (`lowercase:(name)` -> `canonical:(name)`) is in no hash mapc
    /// computes, and `diff` said "no changes": it says it now.
    @Test func aDerivationChangedIsSaidByDiff() throws {
        let item = "  P:\n    attributes:\n      name: string?\n      key: {type: string, optional: true, derivation: 'lowercase:(name)'}\n"
        let folder = try CLI.project(versions: [("d1", item), ("d2", item.replacingOccurrences(of: "lowercase:", with: "canonical:"))])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "d1", "d2"], in: folder)
        #expect(diff.stdout.contains("P.key: derivation 'lowercase:(name)' -> 'canonical:(name)'"), "\(diff.stdout)\(diff.stderr)")
    }
}
