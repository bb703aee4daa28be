import Foundation
import Testing

/// What a probe of two more real model histories found (Wire's ZMEventModel and zmessaging,
/// Molten's six versions), imported and migrated as a team adopting mapc would.
@Suite("Defects found by the second model-history probe")
struct ModelHistoryProbe2FindingsTests {
    /// `load --layout core-data` of decimals a Core Data column cannot keep said the first one
    /// only, at no place, after every other problem was fixed, and told to "round it in the
    /// mapping" where no mapping takes part: each is said with the others, at its place.
    @Test func decimalsACoreDataStoreCannotKeepAreSaidAtOnceInTheirPlaces() throws {
        let folder = try CLI.project(versions: [("v1", "  Plan:\n    attributes:\n      high: decimal?\n      low: decimal?\n      title: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("""
        { "version": "v1", "objects": { "Plan": [
          { "id": "p1", "high": "99999999999999999999.999999999999999999", "low": "0.1234567890123456789", "titel": "typo" },
          { "id": "p2", "high": "12.5" }
        ] } }
        """, to: "data.json")
        let load = try CLI.run(["load", "--layout", "core-data", "data.json", "s.sqlite"], in: folder)
        #expect(load.status == 1 && !folder.exists("s.sqlite"), "\(load.stderr)")
        #expect(load.stderr.contains("data.json:2:25: Plan 'p1', key 'high': decimal 99999999999999999999.999999999999999999 has more digits than a Core Data DECIMAL column keeps"), "\(load.stderr)")
        #expect(load.stderr.contains("data.json:2:75: Plan 'p1', key 'low': decimal 0.1234567890123456789"), "\(load.stderr)")
        #expect(load.stderr.contains("key 'titel': unknown key 'titel'") && !load.stderr.contains("in the mapping"), "\(load.stderr)")
        // mapc's own layout keeps them.
        try folder.write(try folder.read("data.json").replacingOccurrences(of: "titel", with: "title"), to: "data.json")
        #expect(try CLI.run(["load", "data.json", "s.db"], in: folder).status == 0)
    }

    /// `import --replace` of a model whose old versions were deleted (Wire pruned its first
    /// ones) wrote a versions.yaml without them and said nothing of their schema files, which
    /// `check` then refused as listed nowhere.
    @Test func schemaFilesOfVersionsTheModelNoLongerHasAreNamed() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let item = #"<entity name="Item" syncable="YES"><attribute name="title" optional="YES" attributeType="String"/></entity>"#
        try xcodeModel([("M", item), ("M 2", item), ("M 3", item), ("M 4", item)], named: "M", in: folder)
        let first = try CLI.run(["import", "M.xcdatamodeld", "--output", "out"], in: folder)
        #expect(first.status == 0 && !first.stderr.contains("no longer has"), "\(first.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("M.xcdatamodeld/M.xcdatamodel"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("M.xcdatamodeld/M 2.xcdatamodel"))
        let again = try CLI.run(["import", "--replace", "M.xcdatamodeld", "--output", "out"], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("warning: out/M 2.yaml (M 2), out/M.yaml (M) hold versions of M the model no longer has") && again.stderr.contains("Delete them once no store is at those versions"), "\(again.stderr)")
        #expect(folder.exists("out/M.yaml"), "nothing is deleted")
    }
}
