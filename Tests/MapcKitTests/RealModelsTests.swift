import Foundation
import Testing
@testable import MapcKit

/// Xcode models as real apps write them, authored here from what their files hold: what Core
/// Data accepts imports, keeps what Core Data hashes, and round-trips unchanged.
@Suite("Real apps' models")
struct RealModelsTests {
    /// A `.xcdatamodeld` in a temporary folder with one `.xcdatamodel` per version, each holding
    /// `entities` (the XML between `<model>` and `</model>`).
    static func model(_ versions: [(name: String, entities: String)], current: String? = nil, in folder: URL, named name: String = "App") throws -> String {
        let bundle = folder.appendingPathComponent("\(name).xcdatamodeld")
        for (version, entities) in versions {
            let contents = bundle.appendingPathComponent("\(version).xcdatamodel/contents")
            try FileManager.default.createDirectory(at: contents.deletingLastPathComponent(), withIntermediateDirectories: true)
            try """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22F66" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                \(entities)
                </model>
                """.write(to: contents, atomically: true, encoding: .utf8)
        }
        if let current {
            try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "\(current).xcdatamodel"], format: .xml, options: 0)
                .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle.path
    }

    /// Writes an imported model's files and loads them back, as `mapc import` then a command would.
    static func roundTrip(_ model: ImportedModel, in folder: URL) throws -> SchemaCatalog {
        let schemas = folder.appendingPathComponent("schemas")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        for file in try model.schemaFiles(source: "App.xcdatamodeld") { try Data(file.text.utf8).write(to: schemas.appendingPathComponent(file.name)) }
        return try SchemaCatalog(directory: schemas.path)
    }

    /// Xcode writes `minCount="1" maxCount="1"` on to-one relationships, optional or not, and Core
    /// Data's version hash includes the counts: they are kept, and written and read back.
    @Test func theCountsOfAToOneAreKeptForCoreDatasHash() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.model([("App", """
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="folder" optional="YES" maxCount="1" minCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
            </entity>
            <entity name="Folder" representedClassName="Folder" syncable="YES">
                <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
            </entity>
            """)], in: folder)
        let model = try XcodeModelImporter.importModel(at: path)
        let schema = try #require(model.schemas.first)
        let folderRelationship = try #require(schema.entity(named: "Note")?.relationships.first { $0.name == "folder" })
        #expect(folderRelationship.minCount == 1 && folderRelationship.declaredMaxCount == 1)
        var without = folderRelationship
        without.minCount = nil
        let hash = CoreDataVersionHash.hash(of: folderRelationship, in: schema, owner: try #require(schema.entity(named: "Note")))
        #expect(hash != CoreDataVersionHash.hash(of: without, in: schema, owner: try #require(schema.entity(named: "Note"))), "the count is hashed")
        let loaded = try Self.roundTrip(model, in: folder).require(version: "App")
        #expect(CoreDataVersionHash.entityHashes(of: loaded) == CoreDataVersionHash.entityHashes(of: schema))
        // Still an optional to-one: nil is a value it may hold.
        #expect(RelationshipCountRule.rules(of: folderRelationship).isEmpty)
    }
}
