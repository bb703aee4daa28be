import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// An app tells apart the store problems it handles differently: a store in use (try again
/// later) and a store of no known version (ship its schema), by the error's case.
@Suite("Kinds of store errors", .serialized)
struct StoreErrorKindTests {
    @Test func aStoreInUseIsStoreInUse() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let held = try StoreLock(store: app.storeURL.path)
        defer { held.release() }
        let error = #expect(throws: MapcError.self) { try migrator.migrate(storeAt: app.storeURL) }
        guard case .storeInUse(let message)? = error else {
            Issue.record("expected storeInUse, got \(String(describing: error))")
            return
        }
        #expect(message.contains("is writing"))
        #expect(try migrator.status(ofStoreAt: app.storeURL).version == "v1")
    }

    @Test func aStoreOfNoKnownVersionIsUnknownVersion() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let other = try Migrator(schemaFiles: ["v1.yaml": "model: Contacts\nversion: v1\nentities:\n  Person:\n    attributes:\n      name: { type: string }\n",
                                               "versions.yaml": "versions: [v1]\n"])
        let error = #expect(throws: MapcError.self) { try other.migrate(storeAt: app.storeURL) }
        guard case .unknownVersion(let message)? = error else {
            Issue.record("expected unknownVersion, got \(String(describing: error))")
            return
        }
        #expect(message.contains("the store holds model 'UnCloudNotes'"), "\(message)")
    }
}
