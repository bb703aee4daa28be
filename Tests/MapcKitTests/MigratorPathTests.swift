import Foundation
import Testing
@testable import MapcKit

/// The store a URL names is the one migrated, however the URL was made.
@Suite("Store URLs", .serialized)
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
}
