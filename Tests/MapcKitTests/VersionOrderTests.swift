import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

@Suite("Version order")
struct VersionOrderTests {
    @Test(arguments: [
        (["v2", "v10", "v1"], ["v1", "v2", "v10"]),
        (["1.10", "1.9", "2.0"], ["1.9", "1.10", "2.0"]),
        (["books_18", "books_5", "books_9"], ["books_5", "books_9", "books_18"]),
        (["Moody 3", "Moody", "Moody 2"], ["Moody", "Moody 2", "Moody 3"]),
        (["Modelv3", "Model", "Modelv2"], ["Model", "Modelv2", "Modelv3"]),
        (["only"], ["only"]),
    ])
    func namesThatAllowOneOrder(names: [String], expected: [String]) {
        #expect(VersionOrder.fromNames(names) == expected)
    }

    @Test(arguments: [
        ["initial", "tags", "subtitle"],
        ["v1", "v2", "final"],
        ["v1", "v01"],
        ["v1", "version2"],
        ["Moody", "Other 2"],
        ["a", "b"],
    ])
    func namesThatDoNot(names: [String]) {
        #expect(VersionOrder.fromNames(names) == nil)
    }

    private func folder(_ files: [String: String]) throws -> URL {
        let folder = try temporaryFolder()
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    private static func schema(_ version: String) -> String {
        "model: Blog\nversion: \(version)\nentities:\n  Post:\n    attributes:\n      title: { type: string }\n"
    }

    @Test func undeclaredAmbiguousNamesHaveNoOrderAndPlansRefuse() throws {
        let dir = try folder(["a.yaml": Self.schema("initial"), "b.yaml": Self.schema("tags"), "c.yaml": Self.schema("subtitle")])
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = try SchemaCatalog(directory: dir.path)
        #expect(catalog.order == nil)
        #expect(catalog.orderProblem?.contains("cannot be told from their names") == true)
        #expect(throws: MapcError.self) { try catalog.newest() }
        let tags = try catalog.require(version: "tags"), subtitle = try catalog.require(version: "subtitle")
        #expect(throws: MapcError.self) { try MigrationPlanner.plan(from: subtitle, to: tags, catalog: catalog, mappings: try MappingCatalog(directory: dir.path + "/none")) }
    }

    @Test func aDeclaredOrderDecidesDirection() throws {
        let dir = try folder(["a.yaml": Self.schema("initial"), "b.yaml": Self.schema("tags"), "c.yaml": Self.schema("subtitle"),
                              "versions.yaml": "versions: [initial, tags, subtitle]\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = try SchemaCatalog(directory: dir.path)
        #expect(catalog.schemas.map(\.version) == ["initial", "tags", "subtitle"])
        #expect(try catalog.newest().version == "subtitle")
        let mappings = try MappingCatalog(directory: dir.path + "/none")
        let forward = try MigrationPlanner.plan(from: try catalog.require(version: "initial"), to: try catalog.require(version: "subtitle"), catalog: catalog, mappings: mappings, everyVersion: true)
        #expect(forward.map(\.destination.version) == ["tags", "subtitle"])
        // The same two inferred steps, taken as one (they change nothing), pass through "tags".
        let combined = try MigrationPlanner.plan(from: try catalog.require(version: "initial"), to: try catalog.require(version: "subtitle"), catalog: catalog, mappings: mappings)
        #expect(combined.map(\.destination.version) == ["subtitle"] && combined.map(\.passesThrough) == [["tags"]])
        #expect(forward.allSatisfy { $0.isInferred && !$0.isDowngrade })
        // Backward without a mapping file: refused, never inferred.
        do {
            _ = try MigrationPlanner.plan(from: try catalog.require(version: "subtitle"), to: try catalog.require(version: "initial"), catalog: catalog, mappings: mappings)
            Issue.record("a downgrade without a mapping file was planned")
        } catch let error as PlanError {
            #expect(error.isDowngrade)
            #expect(error.description.contains("mapping_subtitle_to_initial.yaml"))
        }
    }

    @Test func aDowngradeRunsThroughItsMappingFile() throws {
        let mapping = "source: subtitle\ndestination: initial\nentityMappings:\n  - name: PostToPost\n    source: Post\n    destination: Post\n    attributes:\n      title: $source.title\n"
        let dir = try folder(["a.yaml": Self.schema("initial"), "b.yaml": Self.schema("tags"), "c.yaml": Self.schema("subtitle"),
                              "versions.yaml": "versions: [initial, tags, subtitle]\n", "down.yaml": mapping])
        defer { try? FileManager.default.removeItem(at: dir) }
        let schemas = dir.appendingPathComponent("schemas")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        for name in ["a.yaml", "b.yaml", "c.yaml", "versions.yaml"] {
            try FileManager.default.moveItem(at: dir.appendingPathComponent(name), to: schemas.appendingPathComponent(name))
        }
        let catalog = try SchemaCatalog(directory: schemas.path)
        let steps = try MigrationPlanner.plan(from: try catalog.require(version: "subtitle"), to: try catalog.require(version: "initial"), catalog: catalog,
                                              mappings: try MappingCatalog(directory: dir.path))
        #expect(steps.count == 1 && steps[0].isDowngrade && !steps[0].isInferred)
    }

    @Test func theOrderFileMustListExactlyTheVersions() throws {
        let dir = try folder(["a.yaml": Self.schema("v1"), "b.yaml": Self.schema("v2"), "versions.yaml": "versions:\n  - v1\n  - v3\n  - v1\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            _ = try SchemaCatalog(directory: dir.path)
            Issue.record("a wrong version order file was accepted")
        } catch let error as DiagnosticsError {
            let messages = error.diagnostics.map(\.description)
            #expect(messages.contains { $0.contains("versions.yaml:4:5") && $0.contains("'v1' is listed twice") }, "\(messages)")
            #expect(messages.contains { $0.contains("versions.yaml:3:5") && $0.contains("'v3' is listed, but no schema file declares it") && $0.contains("did you mean") }, "\(messages)")
            #expect(messages.contains { $0.contains("'v2'") && $0.contains("missing from the version order") }, "\(messages)")
        }
    }

    @Test func filesAreClassifiedByContentNotByText() {
        let flow = SourceFile(path: "m.yaml", text: #"{ "source": "m1", "destination": "m2", "entityMappings": [] }"#)
        #expect(ProjectFileKind.classify(flow, fallback: .schema) == .mapping)
        let commented = SourceFile(path: "m.yaml", text: "# entityMappings: none here\nmodel: M\nversion: v1\nentities: {}\n")
        #expect(ProjectFileKind.classify(commented, fallback: .mapping) == .schema)
        #expect(ProjectFileKind.classify(SourceFile(path: "versions.yaml", text: "versions: [a, b]"), fallback: .schema) == .versionOrder)
    }

    /// One version joining the others takes the place a whole model's import gives it: the
    /// names' natural order, dotted numbers compared part by part.
    @Test func aVersionJoinsInTheOrderAWholeImportGives() {
        #expect(VersionOrder.adding("v2.0", to: ["v2.7.0"]) == ["v2.0", "v2.7.0"])
        #expect(VersionOrder.adding("v2.5", to: ["v2.0", "v2.5.1"]) == ["v2.0", "v2.5", "v2.5.1"])
        #expect(VersionOrder.adding("Model 10", to: ["Model", "Model 2", "Model 9"]) == ["Model", "Model 2", "Model 9", "Model 10"])
        let all = ["v2.7.0", "v2.0", "v2.5.1", "v2.5", "v10"]
        #expect(all.sorted(by: VersionOrder.naturalOrder) == ["v2.0", "v2.5", "v2.5.1", "v2.7.0", "v10"])
        var oneByOne: [String] = []
        for version in all { oneByOne = VersionOrder.adding(version, to: oneByOne) }
        #expect(oneByOne == all.sorted(by: VersionOrder.naturalOrder))
        // An order of the folder's own is kept, the newcomer last.
        #expect(VersionOrder.adding("b", to: ["z", "a"]) == ["z", "a", "b"])
    }

    /// A number right after the name sorted before one after a space (`Model3` before `Model 2`,
    /// a shipping app's history planned a step backwards), though the docs say numbers compare as
    /// numbers: spaces beside a number do not order names, and names equal but for them keep one
    /// order (of their text).
    @Test func spacesBesideANumberDoNotOrderNames() {
        #expect(["Model4", "Model 2", "Model3", "Model"].sorted(by: VersionOrder.naturalOrder) == ["Model", "Model 2", "Model3", "Model4"])
        #expect(["Model 4", "Model3", "Model 2", "Model"].sorted(by: VersionOrder.naturalOrder) == ["Model", "Model 2", "Model3", "Model 4"])
        #expect(["Model4", "Model3.1WithCascadeBug", "Model 2", "Model3", "Model"].sorted(by: VersionOrder.naturalOrder)
                == ["Model", "Model 2", "Model3", "Model3.1WithCascadeBug", "Model4"])
        // Equal but for a space: one before the other, whichever is asked first.
        #expect(VersionOrder.naturalOrder("Model 2", "Model2") != VersionOrder.naturalOrder("Model2", "Model 2"))
        #expect(VersionOrder.adding("Model 3", to: ["Model", "Model2", "Model4"]) == ["Model", "Model2", "Model 3", "Model4"])
    }

    /// numbers: a version number of any length is a number to both orders (the names' own
    /// order and the order an import gives), not cut at 18 digits by one and refused past 64
    /// bits by the other: dates with seconds (`20261129001200123`) and longer stamps grow past both.
    @Test func numbersOfAnyLengthOrderAlikeInBothOrders() {
        let names = ["m1000000000000000000000", "m999999999999999999", "m18446744073709551616", "m2"]
        let expected = ["m2", "m999999999999999999", "m18446744073709551616", "m1000000000000000000000"]
        #expect(VersionOrder.fromNames(names) == expected)
        #expect(names.sorted(by: VersionOrder.naturalOrder) == expected)
        // Leading zeros are the same number to both: no order between `v01` and `v1` from names.
        #expect(VersionOrder.fromNames(["v0000000000000000000001", "v1"]) == nil)
        #expect(VersionOrder.adding("m3", to: expected) == ["m2", "m3"] + expected.dropFirst())
    }
}
