import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

@Suite("Importing Xcode data models", .enabled(if: Corpus.isAvailable, Corpus.skipReason))
struct CoreDataModelImportTests {
    @Test func everyModelOfTheCorpusImportsAndItsVersionsLoadWithoutErrors() throws {
        let models = Corpus.models
        #expect(models.count >= 4)
        for path in models {
            let model = try XcodeModelImporter.importModel(at: path)
            #expect(model.schemas.count > 1, "\(path)")
            #expect(model.schemas.last?.version == model.currentVersion, "the current version is the newest")
            let files = try model.schemaFiles(source: URL(fileURLWithPath: path).lastPathComponent)
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            for file in files { try Data(file.text.utf8).write(to: folder.appendingPathComponent(file.name)) }
            let catalog = try SchemaCatalog(directory: folder.path)
            #expect(try catalog.orderedSchemas().map(\.version) == model.schemas.map(\.version))
            for imported in model.schemas {
                let loaded = try catalog.require(version: imported.version)
                // What is written reads back as the same model, by both hash schemes.
                #expect(CoreDataVersionHash.entityHashes(of: loaded) == CoreDataVersionHash.entityHashes(of: imported), "\(imported.version)")
                #expect(VersionHash.entityHashes(of: loaded) == VersionHash.entityHashes(of: imported), "\(imported.version)")
            }
        }
    }

    @Test func moodyVersionsImportInXcodesOrderWithTheirIdentifiersAndRenames() throws {
        let model = try XcodeModelImporter.importModel(at: Corpus.path("moody/Moody.xcdatamodeld"))
        #expect(model.schemas.map(\.version) == ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5", "Moody 6"])
        #expect(model.currentVersion == "Moody 6")
        let three = model.schemas[2]
        #expect(three.versionIdentifier == "3")
        let mood = try #require(three.entity(named: "Mood"))
        #expect(mood.attributes.first { $0.name == "remoteID" }?.renamingIdentifier == "remoteIdentifier")
        #expect(mood.attributes.first { $0.name == "colors" }?.valueTransformer == "ColorsTransformer")
        let region = try #require(model.schemas[0].entity(named: "GeographicRegion"))
        #expect(region.isAbstract && region.uniquenessConstraints == [["numericISO3166Code", "uniquenessDummy"]])
        #expect(model.schemas[0].subentities(of: region).map(\.name) == ["Continent", "Country"])
    }

    /// The hashes Core Data recorded in the real stores, computed from the imported models.
    @Test(arguments: [("Moody.moody", "Moody"), ("Moody 3.moody", "Moody 3")])
    func theRealStoresAreIdentifiedByTheirCoreDataVersionHashes(store: String, version: String) throws {
        let model = try XcodeModelImporter.importModel(at: Corpus.path("moody/Moody.xcdatamodeld"))
        let catalog = SchemaCatalog(schemas: model.schemas)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = try Corpus.copyOfStore(store, into: folder)
        let (format, metadata) = try Store.metadata(at: copy.path)
        #expect(format.identifier == "core-data")
        #expect(catalog.versions(matching: metadata, format: format).map(\.version) == [version])
        #expect(metadata.storeUUID == "374C5961-3E41-43E5-915C-383EA914074C")
    }

    /// Every value and relationship of the real stores, as mapc reads them, is what the store holds:
    /// re-encoded, each attribute is the stored SQLite value, bit for bit; each to-one is the stored key.
    @Test(arguments: [("Moody.moody", "Moody"), ("Moody 3.moody", "Moody 3")])
    func theRealStoresAreReadExactly(store: String, version: String) throws {
        let model = try XcodeModelImporter.importModel(at: Corpus.path("moody/Moody.xcdatamodeld"))
        let schema = try #require(model.schemas.first { $0.version == version })
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let opened = try Store.open(at: try Corpus.copyOfStore(store, into: folder).path, schema: schema, readOnly: true)
        var values = 0
        for entity in schema.entities where !entity.isAbstract {
            let storage = try opened.layout.storage(of: entity.name)
            for object in try opened.objects(ofExactEntity: entity.name) {
                let row = try #require(try opened.database.read { db in
                    try Row.fetchOne(db, sql: "SELECT * FROM \(storage.table.quotedDatabaseIdentifier) WHERE Z_PK = ?", arguments: [object.key])
                })
                #expect(row["Z_ENT"] as DatabaseValue == storage.discriminator)
                for attribute in schema.allAttributes(of: entity) where !attribute.isTransient {
                    let column = try #require(storage.attributeColumns[attribute.name])
                    #expect(opened.strategy.encode(object.attributes[attribute.name] ?? .null, as: attribute.type) == row[column] as DatabaseValue,
                            "\(entity.name) \(object.id) \(attribute.name)")
                    values += 1
                }
                for relationship in schema.allRelationships(of: entity) where !relationship.isToMany {
                    guard case .foreignKey(let column, _, _)? = storage.relationships[relationship.name] else { continue }
                    let stored: Int64? = row[column]
                    #expect(object.relatedKeys[relationship.name]?.first?.key == stored, "\(entity.name) \(object.id) \(relationship.name)")
                }
            }
        }
        #expect(values > 30)
    }
}
