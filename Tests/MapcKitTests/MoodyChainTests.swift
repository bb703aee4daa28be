import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// The real Moody store migrated Moody → Moody 2 → … → Moody 6 with the files imported from the
/// app's own Xcode model and mapping models (1 → 2 inferred, as the app does), its 5 → 6 policy
/// ported and registered as a user's policy is.
@Suite("The Moody chain", .enabled(if: Corpus.isAvailable, Corpus.skipReason), .serialized)
struct MoodyChainTests {
    /// A project folder with the imported schemas and mappings.
    static func importedProject(into folder: URL) throws -> (schemas: URL, mappings: URL) {
        let schemas = folder.appendingPathComponent("schemas"), mappings = folder.appendingPathComponent("mappings")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
        let model = try XcodeModelImporter.importModel(at: Corpus.path("moody/Moody.xcdatamodeld"))
        for file in try model.schemaFiles(source: "Moody.xcdatamodeld") { try Data(file.text.utf8).write(to: schemas.appendingPathComponent(file.name)) }
        let catalog = try SchemaCatalog(directory: schemas.path)
        for path in Corpus.mappingModels where path.contains("/moody/") {
            let imported = try XcodeMappingImporter.importMapping(at: path, schemas: catalog)
            try Data(imported.text.utf8).write(to: mappings.appendingPathComponent(imported.fileName))
        }
        return (schemas, mappings)
    }

    @Test func theRealStoreMigratesToMoody6AndStaysACoreDataStore() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = try Self.importedProject(into: folder)
        let policies = PolicyRegistry()
        registerMoodyPolicies(in: policies)
        let migrator = try Migrator(schemasFolder: project.schemas, mappingsFolder: project.mappings, policies: policies)
        let store = try Corpus.copyOfStore("Moody.moody", into: folder)
        let before = try Store.open(at: store.path, catalog: migrator.schemas, readOnly: true)
        let moods = try before.objects(ofExactEntity: "Mood")
        let countries = try before.objects(ofExactEntity: "Country")
        let continentOf = Dictionary(try before.objects(ofExactEntity: "Continent").map { ($0.id, $0.attributes["numericISO3166Code"]) }, uniquingKeysWith: { a, _ in a })
        try before.close()

        let plan = try migrator.plan(forStoreAt: store)
        #expect(plan.steps.map { "\($0.source.version)->\($0.destination.version)\($0.isInferred ? " inferred" : "")" }
                == ["Moody->Moody 2 inferred", "Moody 2->Moody 3", "Moody 3->Moody 4", "Moody 4->Moody 5", "Moody 5->Moody 6"])
        let outcome = try migrator.migrate(storeAt: store)
        #expect(outcome.steps.count == 5)

        let status = try migrator.status(ofStoreAt: store)
        #expect(status.version == "Moody 6" && status.format == "core-data")
        #expect(status.metadata.storeUUID == "374C5961-3E41-43E5-915C-383EA914074C", "the store keeps its UUID")
        #expect(status.metadata.properties["io.objc.Moody.CloudKitUserID"] == "_62a0ed0ad3b375fc9ec7fdf66dfd9c63", "and the app's own metadata")

        let after = try Store.open(at: store.path, catalog: migrator.schemas, readOnly: true)
        let migratedMoods = try after.objects(ofExactEntity: "Mood")
        #expect(migratedMoods.map { $0.attributes["remoteID"] } == moods.map { $0.attributes["remoteIdentifier"] }, "every mood, its renamed remote id kept")
        #expect(migratedMoods.map { $0.attributes["date"] } == moods.map { $0.attributes["date"] }, "dates exactly")
        #expect(migratedMoods.map { $0.attributes["colors"] } == moods.map { $0.attributes["colors"] })
        // Each country is linked to a continent made once per ISO code, with that code.
        let migratedCountries = try after.objects(ofExactEntity: "Country")
        #expect(migratedCountries.map { $0.attributes["numericISO3166Code"] } == countries.map { $0.attributes["numericISO3166Code"] })
        let continents = try after.objects(ofExactEntity: "Continent")
        #expect(Set(continents.compactMap { $0.attributes["numericISO3166Code"] }) == Set(countries.compactMap { continentOf[$0.relationships["continent"]?.first ?? ""] ?? nil }))
        #expect(continents.count == Set(continents.compactMap { $0.attributes["numericISO3166Code"] }).count, "one continent per code")
        let codeOf = Dictionary(continents.map { ($0.id, $0.attributes["numericISO3166Code"]) }, uniquingKeysWith: { a, _ in a })
        for (old, new) in zip(countries, migratedCountries) {
            #expect(codeOf[new.relationships["continent"]?.first ?? ""] == continentOf[old.relationships["continent"]?.first ?? ""], "\(new.id)")
            #expect(new.relationships["moods"]?.count == old.relationships["moods"]?.count)
        }
    }

    /// Core Data itself migrated this store to Moody 3 (the corpus's `Moody 3.moody`, same UUID):
    /// mapc's migration of it writes the same tables, columns, declared types, constraints, indexes
    /// and entity numbering, the same key counters and metadata, and the same objects. Two things
    /// differ by design: `Z_OPT` (Core Data counts its own saves) and the order of keys within one
    /// mapping (Core Data's is its unordered set of new objects; mapc's the source's key order).
    @Test func migratingToMoody3WritesWhatCoreDataWrote() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = try Self.importedProject(into: folder)
        let migrator = try Migrator(schemasFolder: project.schemas, mappingsFolder: project.mappings)
        let store = try Corpus.copyOfStore("Moody.moody", into: folder)
        let reference = try Corpus.copyOfStore("Moody 3.moody", into: folder)
        _ = try migrator.migrate(storeAt: store, to: "Moody 3")

        func read<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
            let queue = try DatabaseQueue(path: url.path, configuration: { var c = Configuration(); c.readonly = true; return c }())
            defer { try? queue.close() }
            return try queue.read(body)
        }
        let ddl = "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY rowid"
        #expect(try read(store) { try String.fetchAll($0, sql: ddl) } == read(reference) { try String.fetchAll($0, sql: ddl) })
        let counters = "SELECT Z_ENT || ' ' || Z_NAME || ' ' || Z_SUPER || ' ' || Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"
        #expect(try read(store) { try String.fetchAll($0, sql: counters) } == read(reference) { try String.fetchAll($0, sql: counters) })
        #expect(try read(store) { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") } == 2)

        // The metadata: same UUID, hashes, identifiers and app keys (mapc adds its history).
        let metadata = { (url: URL) throws -> [String: String] in
            let data = try read(url) { try Data.fetchOne($0, sql: "SELECT Z_PLIST FROM Z_METADATA") } ?? Data()
            let plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            let dictionary = try #require(KeyedArchive.dictionary(plist))
            func text(_ value: Any) -> String {
                if let nested = KeyedArchive.dictionary(value) { return "{" + nested.keys.sorted().map { "\($0): \(text(nested[$0] ?? ""))" }.joined(separator: ", ") + "}" }
                if let data = value as? Data { return data.base64EncodedString() }
                if let list = value as? [Any] { return "[" + list.map(text).joined(separator: ", ") + "]" }
                return "\(value)"
            }
            return dictionary.filter { $0.key != "mapc.history" }.mapValues(text)
        }
        #expect(try metadata(store) == metadata(reference))
        #expect(try read(store) { try String.fetchOne($0, sql: "SELECT Z_UUID FROM Z_METADATA") } == "374C5961-3E41-43E5-915C-383EA914074C")

        // The objects, every value and link, with keys replaced by what they point at.
        let schema = try migrator.schemas.require(version: "Moody 3")
        func canonical(_ url: URL) throws -> [String] {
            let opened = try Store.open(at: url.path, schema: schema, readOnly: true)
            defer { try? opened.close() }
            var label: [String: String] = [:]
            var objects: [ObjectData] = []
            for entity in schema.entities where !entity.isAbstract {
                for object in try opened.objects(ofExactEntity: entity.name) {
                    label[object.id] = "\(entity.name)(\(object.attributes["numericISO3166Code"] ?? object.attributes["remoteID"] ?? .null))"
                    objects.append(object)
                }
            }
            return objects.map { object in
                let values = object.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                let links = object.relationships.sorted { $0.key < $1.key }.map { "\($0.key)->\($0.value.map { label[$0] ?? $0 }.sorted())" }
                return ([label[object.id] ?? object.id] + values + links).joined(separator: " ")
            }.sorted()
        }
        #expect(try canonical(store) == canonical(reference))
    }
}
