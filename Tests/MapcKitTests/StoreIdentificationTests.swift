import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// How a store's version is found, and what mapc says when it cannot be: a store of another model
/// is named as such, not compared entity by entity with the closest version of this one.
@Suite("Identifying a store")
struct StoreIdentificationTests {
    private var schemasFolder: URL { packageRoot.appendingPathComponent("schemas") }

    @Test func aStoreOfAnotherModelIsNamedAsSuch() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let blog = try loadSchema("model: Blog\nversion: v1\nentities:\n  Post:\n    attributes:\n      title: string\n")
        let url = folder.appendingPathComponent("blog.db")
        _ = try Store.create(at: url.path, schema: blog)
        let migrator = try Migrator(schemasFolder: schemasFolder)
        let error = #expect(throws: MapcError.self) { try migrator.version(ofStoreAt: url) }
        let message = error?.description ?? ""
        #expect(message.contains("holds model 'Blog'"), "\(message)")
        #expect(message.contains("model 'UnCloudNotes'") && message.contains("--schemas"), "\(message)")
        #expect(!message.contains("closest is"), "\(message)")
        #expect(try migrator.status(ofStoreAt: url).identification.contains("the store holds model 'Blog'"))
    }

    @Test func aKnownStoreSaysHowItWasRecognised() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("notes.db")
        _ = try Store.create(at: url.path, schema: try uncloudNotes("v3"))
        let status = try Migrator(schemasFolder: schemasFolder).status(ofStoreAt: url)
        #expect(status.version == "v3")
        #expect(status.identification == "recognised by its 2 entity hashes", "\(status.identification)")
    }

    @Test func aMissingSchemasFolderSaysHowToGiveOne() throws {
        let error = #expect(throws: MapcError.self) { try SchemaCatalog(directory: "./no-such-schemas") }
        #expect(error?.description.contains("--schemas") == true, "\(String(describing: error))")
    }

    /// An unknown version lists the known ones; a close name is offered only for a slip of the
    /// keys, not for another number ('v5' is not a misspelt 'v1').
    @Test func anUnknownVersionListsTheKnownOnes() throws {
        let catalog = try SchemaCatalog(directory: schemasFolder.path)
        let five = #expect(throws: MapcError.self) { try catalog.require(version: "v5") }
        #expect(five?.description.contains("known versions: v1, v2, v3, v4") == true, "\(String(describing: five))")
        #expect(five?.description.contains("did you mean") == false, "\(String(describing: five))")
        let upperFive = #expect(throws: MapcError.self) { try catalog.require(version: "V5") }
        #expect(upperFive?.description.contains("did you mean") == false, "\(String(describing: upperFive))")
        let slip = #expect(throws: MapcError.self) { try catalog.require(version: "V3") }
        #expect(slip?.description.contains("did you mean 'v3'?") == true, "\(String(describing: slip))")
        #expect(slip?.description.contains("known versions: v1, v2, v3, v4") == true, "\(String(describing: slip))")
        #expect(slip?.description.hasSuffix("did you mean 'v3'?") == true, "the question ends the message: \(String(describing: slip))")
    }

    /// A Core Data store records no model name: one that shares no entity with any version is
    /// called a store of another model, not compared with "the closest" version of this one.
    @Test func aCoreDataStoreSharingNoEntityIsCalledAnotherModel() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let blog = try loadSchema("model: Blog\nversion: v1\nentities:\n  Post:\n    attributes:\n      title: string\n")
        let url = folder.appendingPathComponent("blog.sqlite")
        _ = try Store.create(at: url.path, schema: blog, format: .coreData)
        let error = #expect(throws: MapcError.self) { try Migrator(schemasFolder: schemasFolder).version(ofStoreAt: url) }
        let message = error?.description ?? ""
        #expect(message.contains("shares no entity with any version") && message.contains("Post"), "\(message)")
        #expect(!message.contains("closest is"), "\(message)")
    }

    /// A store of a version missing from the schemas (an older one not imported) is compared with
    /// the closest version, and told how to add its own.
    @Test func aStoreOfAVersionMissingFromTheSchemasSaysHowToAddIt() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("notes.db")
        _ = try Store.create(at: url.path, schema: try uncloudNotes("v2"))
        let files = try ["v3", "v4"].reduce(into: [String: String]()) { files, version in
            files["\(version).yaml"] = try String(contentsOf: schemasFolder.appendingPathComponent("\(version).yaml"), encoding: .utf8)
        }
        let error = #expect(throws: MapcError.self) { try Migrator(schemaFiles: files).version(ofStoreAt: url) }
        let message = error?.description ?? ""
        #expect(message.contains("closest is v3"), "\(message)")
        // The version the store records, which the schemas lack, is named first.
        #expect(message.contains("it records version 'v2', which they do not have") && message.contains("Add that version's schema"), "\(message)")
    }

    /// An empty schemas folder is said to be empty, not taken for a sign of another model.
    @Test func anEmptySchemasFolderIsSaidToBeEmpty() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("notes.db")
        _ = try Store.create(at: url.path, schema: try uncloudNotes("v2"))
        let empty = folder.appendingPathComponent("schemas")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let error = #expect(throws: MapcError.self) { try Migrator(schemasFolder: empty).version(ofStoreAt: url) }
        let message = error?.description ?? ""
        #expect(message.contains("holds no schema files") && !message.contains("another model"), "\(message)")
    }

    /// A version named after its model, as Xcode names them, is shown once.
    @Test func aVersionNamedAfterItsModelIsShownOnce() throws {
        #expect(try uncloudNotes("v3").displayName == "UnCloudNotes v3")
        let moody = try loadSchema("model: Moody\nversion: Moody 2\nentities:\n  Mood:\n    attributes:\n      x: string\n")
        #expect(moody.displayName == "Moody 2")
        let first = try loadSchema("model: Moody\nversion: Moody\nentities:\n  Mood:\n    attributes:\n      x: string\n")
        #expect(first.displayName == "Moody")
        let moodyish = try loadSchema("model: Mood\nversion: Moody 2\nentities:\n  Mood:\n    attributes:\n      x: string\n")
        #expect(moodyish.displayName == "Mood Moody 2", "a prefix of a word is not the model's name")
    }
}
