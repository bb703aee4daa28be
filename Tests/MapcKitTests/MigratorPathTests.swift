import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The store a URL names is the one migrated, however the URL was made, and the output asked for
/// is written whatever the plan.
@Suite("Store and output URLs", .serialized)
struct MigratorPathTests {
    /// `URL(fileURLWithPath: "Notes.sqlite", relativeTo: folder)` names the file in `folder`, not
    /// a file of that name in the current folder.
    @Test func aURLRelativeToAnotherFolderNamesTheStoreThere() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let relative = URL(fileURLWithPath: "Notes.sqlite", relativeTo: URL(fileURLWithPath: app.folder.path, isDirectory: true))
        #expect(FileManager.default.currentDirectoryPath != app.folder.path)
        #expect(try migrator.status(ofStoreAt: relative).version == "v1")
        #expect(try migrator.plan(forStoreAt: relative).steps.count == 3)
        let outcome = try migrator.migrate(storeAt: relative)
        #expect(outcome.result?.standardizedFileURL.path == app.storeURL.standardizedFileURL.path)
        #expect(try migrator.status(ofStoreAt: app.storeURL).version == "v4")
        #expect(try migrator.migrate(storeAt: relative).result?.standardizedFileURL.path == app.storeURL.standardizedFileURL.path)
    }

    /// Two runs of one store that both planned before either took its lock: the second finds
    /// the store migrated by the first. Its plan is refused as outdated, naming the versions
    /// (not as a store that matches no version), and planned again it is current.
    @Test func aPlanMadeBeforeAnotherRunMigratedTheStoreIsMadeAgain() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let stale = try migrator.plan(forStoreAt: app.storeURL)
        _ = try migrator.migrate(storeAt: app.storeURL)
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(stale) }
        guard case .storeChanged(_, let planned, let found)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(planned == "v1" && found == "v4")
        #expect(error?.description.contains("changed after its migration was planned: it was at v1 and is now at v4") == true, "\(String(describing: error))")
        #expect(try migrator.status(ofStoreAt: app.storeURL).version == "v4")
        // Planned again inside one call (the race the lock cannot close), the store is current.
        var calls = 0
        let outcome = try migrator.replanningOnce { () throws -> MigrationOutcome in
            calls += 1
            return try migrator.migrate(calls == 1 ? stale : try migrator.plan(forStoreAt: app.storeURL))
        }
        #expect(calls == 2 && outcome.steps.isEmpty)
    }

    /// A store already at the version asked for is copied to the output unchanged.
    @Test func theOutputOfAStoreWithNothingToDoIsACopy() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        var options = MigrationOptions()
        options.output = app.folder.appendingPathComponent("copy.sqlite")
        let outcome = try migrator.migrate(storeAt: app.storeURL, to: "v1", options: options)
        #expect(outcome.steps.isEmpty && outcome.result?.path == options.output?.path)
        #expect(try migrator.status(ofStoreAt: app.folder.appendingPathComponent("copy.sqlite")).version == "v1")
        #expect(try migrator.status(ofStoreAt: app.storeURL).version == "v1")
        options.dryRun = true
        options.output = app.folder.appendingPathComponent("rehearsal.sqlite")
        #expect(try migrator.migrate(storeAt: app.storeURL, to: "v1", options: options).result == nil)
        #expect(!FileManager.default.fileExists(atPath: app.folder.appendingPathComponent("rehearsal.sqlite").path))
    }

    /// A base without a trailing slash is a file: the relative part replaces its last component,
    /// so the path is the URL's full one even when the base is the current folder.
    @Test func aBaseThatIsAFileNamesItsFolder() {
        let here = FileManager.default.currentDirectoryPath
        let asFile = URL(fileURLWithPath: "Notes.sqlite", relativeTo: URL(fileURLWithPath: here, isDirectory: false))
        #expect(Files.path(of: asFile) == asFile.path && Files.path(of: asFile) != "Notes.sqlite", "\(Files.path(of: asFile))")
        let asFolder = URL(fileURLWithPath: "Notes.sqlite", relativeTo: URL(fileURLWithPath: here, isDirectory: true))
        #expect(Files.path(of: asFolder) == "Notes.sqlite")
        #expect(Files.path(of: URL(fileURLWithPath: "/tmp/x/Notes.sqlite")) == "/tmp/x/Notes.sqlite")
    }

    /// `check` gives an app the warnings `mapc check` prints, not only the errors.
    @Test func checkReturnsTheWarningsOfAPlansMappingFiles() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let mapping = app.resources.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        let text = try String(contentsOf: mapping, encoding: .utf8)
        try text.replacingOccurrences(of: "      title: $source.title", with: "      title: TERNARY($source.displayIndex > 0.30000000000000001, $source.title, $source.title)")
            .write(to: mapping, atomically: true, encoding: .utf8)
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let warnings = try migrator.check(try migrator.plan(forStoreAt: app.storeURL))
        #expect(warnings.contains { $0.severity == .warning && $0.message.contains("0.30000000000000001 has more digits than a double keeps") && $0.location?.line != nil }, "\(warnings)")
    }
}
