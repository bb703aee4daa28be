import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// The project's own migration tests, in the pattern the library offers its users: a fixture for
/// each old version of UnCloudNotes, migrated to v4 and compared with the expected v4 data.
@Suite("UnCloudNotes fixtures migrate to v4")
struct FixtureMigrationTests {
    static let folder = packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes")

    init() { registerUnCloudNotesPolicies() }

    @Test(arguments: ["v1", "v2", "v3"])
    func fixtureReachesV4(_ version: String) throws {
        let store = try FixtureMigration.migrate(fixture: Self.folder.appendingPathComponent("\(version).json").path, to: "v4",
                                                 schemas: packageRoot.appendingPathComponent("schemas").path, mappings: packageRoot.appendingPathComponent("mappings").path)
        #expect(store.schema.version == "v4")
        let dump = try DataFile.dump(store).serialized(pretty: true) + "\n"
        let expected = try String(contentsOf: Self.folder.appendingPathComponent("expected-v4-from-\(version).json"), encoding: .utf8)
        #expect(dump == expected)
        let history = try StoreHistory.read(store)
        #expect(history.map(\.toVersion) == ["v1", "v2", "v3", "v4"].drop { $0 != version }.dropFirst().map { $0 })
        #expect(history.first?.inferred == (version == "v1"), "v1 -> v2 has no mapping file and is inferred")
    }

    @Test func theFixtureHelperDefaultsToTheNewestVersion() throws {
        let store = try FixtureMigration.migrate(fixture: Self.folder.appendingPathComponent("v2.json").path,
                                                 schemas: packageRoot.appendingPathComponent("schemas").path, mappings: packageRoot.appendingPathComponent("mappings").path)
        #expect(store.schema.version == "v4")
        let image = try #require(try store.objects(of: "ImageAttachment").first)
        #expect(image.attributes["width"] == .double(1024) && image.attributes["height"] == .double(768))
        let body = "A sunset over the harbour, taken from the ferry on the way back from the island in late August."
        #expect(image.attributes["caption"] == .string(String(body.prefix(80))))
        #expect(String(body.prefix(80)).count == 80)
    }

    /// A fixture migration checks its mapping files as `Migrator` does: an unknown policy is the
    /// same `DiagnosticsError`, located in the mapping file, not a failure of the run.
    @Test func anUnknownPolicyIsADiagnosticAsForTheMigrator() throws {
        let error = #expect(throws: DiagnosticsError.self) {
            try FixtureMigration.migrate(fixture: Self.folder.appendingPathComponent("v3.json").path, to: "v4",
                                         schemas: packageRoot.appendingPathComponent("schemas").path, mappings: packageRoot.appendingPathComponent("mappings").path,
                                         policies: PolicyRegistry())
        }
        #expect(error?.description.contains("mapping_v3_to_v4.yaml") == true && error?.description.contains("unknown policy") == true, "\(String(describing: error))")
    }

    /// A fixture migration is as strict as `Migrator`: a misspelt mappings folder is an error (not
    /// "every step inferred"), and an inferred step that would drop values is refused unless the
    /// loss is accepted, so a test cannot pass where the app's migration would stop.
    @Test func aFixtureMigrationIsAsStrictAsTheMigrator() throws {
        let schemas = packageRoot.appendingPathComponent("schemas").path
        let misspelt = #expect(throws: MapcError.self) {
            try FixtureMigration.migrate(fixture: Self.folder.appendingPathComponent("v2.json").path, to: "v4", schemas: schemas,
                                         mappings: packageRoot.appendingPathComponent("mapings").path)
        }
        #expect(misspelt?.description.contains("does not exist") == true, "\(String(describing: misspelt))")
        // Without the mapping files, v2 -> v3 is inferred, and drops Note.image.
        let empty = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: empty) }
        let lossy = #expect(throws: MigrationError.self) {
            try FixtureMigration.migrate(fixture: Self.folder.appendingPathComponent("v2.json").path, to: "v3", schemas: schemas, mappings: empty.path)
        }
        #expect(lossy?.description.contains("would drop the values of Note.image") == true, "\(String(describing: lossy))")
        let accepted = try FixtureMigration.migrate(fixture: Self.folder.appendingPathComponent("v2.json").path, to: "v3", schemas: schemas, mappings: empty.path,
                                                    acceptsDataLoss: true)
        #expect(accepted.schema.version == "v3")
    }
}
