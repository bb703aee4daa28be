import Foundation
import Testing

/// Defects a probe of more real apps' Xcode models (long histories, features of shipping apps)
/// found in what `import`, `plan` and `run` did with them. The models here are our own, written
/// in the shapes the apps' models have.
@Suite("Defects found by a probe of real apps' models", .serialized)
struct RealModelsProbeDefectTests {
    /// One version's `contents` in a folder of its own.
    private func model(_ entities: String, in folder: URL, name: String = "M") throws {
        let version = folder.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
                  + entities + "</model>\n").utf8).write(to: version.appendingPathComponent("contents"))
    }

    /// A fetch index whose first element is a to-many relationship (Xcode takes it, and a shipping
    /// app's model has one) failed the whole import: every version refused, nothing written, the
    /// error said at the entity. The element is left out with a warning at it; the index keeps its
    /// other elements (or is left out, when it has none). A relationship's `indexed` flag, which
    /// both formats honour for a to-one anyway, is no longer warned of (72 warnings in one history).
    @Test func aFetchIndexElementOnAToManyIsLeftOutWithAWarning() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try model("    <entity name=\"Article\" syncable=\"YES\">\n        <attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/>\n"
                  + "        <relationship name=\"lists\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"List\" inverseName=\"articles\" inverseEntity=\"List\"/>\n"
                  + "        <relationship name=\"owner\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"List\" indexed=\"YES\"/>\n"
                  + "        <fetchIndex name=\"compoundIndex3\">\n            <fetchIndexElement property=\"lists\" type=\"Binary\" order=\"ascending\"/>\n"
                  + "            <fetchIndexElement property=\"title\" type=\"Binary\" order=\"ascending\"/>\n        </fetchIndex>\n"
                  + "        <fetchIndex name=\"byLists\">\n            <fetchIndexElement property=\"lists\" type=\"Binary\" order=\"ascending\"/>\n        </fetchIndex>\n    </entity>\n"
                  + "    <entity name=\"List\" syncable=\"YES\">\n        <attribute name=\"name\" optional=\"YES\" attributeType=\"String\"/>\n"
                  + "        <relationship name=\"articles\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"Article\" inverseName=\"lists\" inverseEntity=\"Article\"/>\n"
                  + "    </entity>\n", in: folder)
        let run = try CLI.run(["import", "M.xcdatamodel", "--output", "out"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("contents:8:") && run.stderr.contains("fetch index Article.compoundIndex3: the element on to-many relationship 'lists' is not imported")
                && run.stderr.contains("the index keeps its other elements"), "\(run.stderr)")
        #expect(run.stderr.contains("contents:12:") && run.stderr.contains("fetch index Article.byLists") && run.stderr.contains("the index has no other element and is not imported"), "\(run.stderr)")
        #expect(!run.stderr.contains("indexed"), "\(run.stderr)")
        let schema = try String(contentsOf: folder.appendingPathComponent("out/M.yaml"), encoding: .utf8)
        #expect(schema.contains("{ name: compoundIndex3, properties: [title] }") && !schema.contains("byLists"), "\(schema)")
        #expect(try CLI.run(["check", "--schemas", "out"], in: folder).status == 0)
    }
}
