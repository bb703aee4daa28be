import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

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

    /// An attribute named `id` (WooCommerce has one in 95 of its 117 versions) imports unchanged,
    /// and data files name such an entity's objects by `$id`, its attribute by `id`.
    @Test func anAttributeNamedIdImportsAndItsObjectsRoundTrip() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.model([("Model 23", """
            <entity name="Order" representedClassName="Order" syncable="YES">
                <attribute name="id" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="total" optional="YES" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="order" inverseEntity="Item"/>
            </entity>
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="order" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Order" inverseName="items" inverseEntity="Order"/>
            </entity>
            """)], in: folder)
        let model = try XcodeModelImporter.importModel(at: path)
        let schema = try Self.roundTrip(model, in: folder).require(version: "Model 23")
        #expect(CoreDataVersionHash.entityHashes(of: schema) == CoreDataVersionHash.entityHashes(of: try #require(model.schemas.first)))
        let json = #"{"version": "Model 23", "objects": {"Order": [{"$id": "o1", "id": 42, "total": "9.50", "items": ["i1"]}], "Item": [{"id": "i1", "name": "pen"}]}}"#
        for format in [StoreFormat.mapc, .coreData] {
            let store = try Store.inMemory(schema: schema, format: format)
            try store.insert(try DataFile.read(try JSONValue.parse(Data(json.utf8), path: "d.json"), schema: schema).objects)
            let dumped = try DataFile.dump(store)
            let order = try #require(dumped["objects"]?["Order"].flatMap { if case .array(let items) = $0 { return items.first } else { return nil } })
            #expect(order["id"] == .integer(42) && order["$id"] != nil, "\(order.serialized())")
            let item = try #require(dumped["objects"]?["Item"].flatMap { if case .array(let items) = $0 { return items.first } else { return nil } })
            #expect(item["$id"] == nil && item["id"] != nil, "an entity without an id property keeps \"id\": \(item.serialized())")
            // And the dump loads back as the same objects.
            let again = try Store.inMemory(schema: schema, format: format)
            try again.insert(try DataFile.read(dumped, schema: schema).objects)
            #expect(try DataFile.dump(again) == dumped)
        }
        // Without "$id", the object has no identity, and the message says why.
        let missing = #"{"version": "Model 23", "objects": {"Order": [{"id": 42}]}}"#
        let error = #expect(throws: DataValidationError.self) { try DataFile.read(try JSONValue.parse(Data(missing.utf8), path: "d.json"), schema: schema) }
        #expect(error?.description.contains("Order has a property named \"id\", so its objects' identities are written \"$id\"") == true, "\(String(describing: error))")
    }

    /// Xcode warns about, and Core Data accepts, a relationship whose inverse points back
    /// elsewhere, and a to-many that is its own inverse: they import with a warning, and their
    /// stores are written, read and migrated.
    @Test func inversesCoreDataAcceptsImportWithAWarningAndTheirStoresMigrate() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let entities = """
            <entity name="Artist" representedClassName="Artist" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="thumbnail" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Image" inverseName="thumbnail" inverseEntity="Image"/>
                <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Artist" inverseName="friends" inverseEntity="Artist"/>
            </entity>
            <entity name="Image" representedClassName="Image" syncable="YES">
                <attribute name="url" optional="YES" attributeType="String"/>
                <relationship name="artist" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Artist" inverseName="thumbnail" inverseEntity="Artist"/>
                <relationship name="thumbnail" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Artist" inverseName="thumbnail" inverseEntity="Artist"/>
            </entity>
            """
        let path = try Self.model([("V1", entities), ("V2", entities.replacingOccurrences(of: "<attribute name=\"url\"", with: "<attribute name=\"size\" optional=\"YES\" attributeType=\"Integer 64\"/>\n        <attribute name=\"url\""))],
                                  current: "V2", in: folder)
        let model = try XcodeModelImporter.importModel(at: path)
        #expect(model.failures.isEmpty, "\(model.failures)")
        #expect(model.warnings.contains { $0.message.contains("inverse pair does not point at each other: 'Image.artist' names 'Artist.thumbnail'") && $0.location?.path.hasSuffix("V1.xcdatamodel/contents") == true },
                "\(model.warnings.map(\.description))")
        #expect(model.warnings.contains { $0.message.contains("'Artist.friends' is its own inverse") })
        let catalog = try Self.roundTrip(model, in: folder)
        let v1 = try catalog.require(version: "V1")
        let data = #"{"version": "V1", "objects": {"Artist": [{"id": "a1", "name": "Ada", "friends": ["a2"], "thumbnail": "i2"}, {"id": "a2", "name": "Bo"}], "Image": [{"id": "i1", "url": "u1", "artist": "a1"}, {"id": "i2", "url": "u2"}]}}"#
        for format in [StoreFormat.mapc, .coreData] {
            let storePath = folder.appendingPathComponent("\(format.identifier).sqlite").path
            try Store.create(at: storePath, schema: v1, format: format).insert(try DataFile.read(try JSONValue.parse(Data(data.utf8), path: "d.json"), schema: v1).objects)
            let before = try DataFile.dump(try Store.open(at: storePath, schema: v1, readOnly: true))
            let text = before.serialized()
            // Each side as declared; the symmetric to-many both ways.
            #expect(text.contains(#""friends":["#) && text.contains(#""url":"u1","artist":"#), "\(text)")
            let friendsOfBo = text.components(separatedBy: #""name":"Bo""#).last ?? ""
            #expect(friendsOfBo.contains(#""friends":[""#), "the link is kept both ways: \(text)")
            for interpret in [false, true] {
                let copy = folder.appendingPathComponent("\(format.identifier)-\(interpret).sqlite").path
                try FileManager.default.copyItem(atPath: storePath, toPath: copy)
                var options = MigrationOptions()
                options.allowsSQL = !interpret
                _ = try Migrator(schemas: catalog).migrate(storeAt: URL(fileURLWithPath: copy), to: "V2", options: options)
                let after = try DataFile.dump(try Store.open(at: copy, schema: try catalog.require(version: "V2"), readOnly: true)).serialized()
                #expect(after.replacingOccurrences(of: #","size":null"#, with: "") == text.replacingOccurrences(of: #""version":"V1""#, with: #""version":"V2""#), "\(format) interpreted \(interpret)")
            }
        }
    }

    /// A version that cannot be imported is reported at its place, and the others import.
    @Test func oneVersionThatCannotBeImportedDoesNotStopTheOthers() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = "<entity name=\"Note\" representedClassName=\"Note\" syncable=\"YES\"><attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/></entity>"
        let path = try Self.model([("V1", good), ("V2", "<entity name=\"Note\"><attribute name=\"title\" attributeType=\"String\"></entity>"), ("V3", good)], in: folder)
        let model = try XcodeModelImporter.importModel(at: path)
        #expect(model.schemas.map(\.version) == ["V1", "V3"])
        #expect(model.failedVersions == ["V2"])
        #expect(model.failures.first?.location?.path.hasSuffix("V2.xcdatamodel/contents") == true && model.failures.first?.location?.line == 4, "\(model.failures)")
    }

    /// A to-many that is not optional, with no minCount, may be empty, as Core Data validates it
    /// (Olvid ships 27 such relationships): objects load without it, a step that adds one is
    /// inferred (its objects start with the empty set), and a mapping need not set it.
    @Test func aToManyThatIsNotOptionalMayBeEmpty() throws {
        let v1 = try loadSchema("model: M\nversion: m1\nentities:\n  Group:\n    attributes:\n      name: string\n  Member:\n    attributes:\n      name: string\n")
        let v2 = try loadSchema("""
            model: M
            version: m2
            entities:
              Group:
                attributes:
                  name: string
                relationships:
                  members: { destination: Member, toMany: true, inverse: groups }
              Member:
                attributes:
                  name: string
                relationships:
                  groups: { destination: Group, toMany: true, inverse: members, minCount: 0 }
            """)
        for format in [StoreFormat.mapc, .coreData] {
            let store = try Store.inMemory(schema: v2, format: format)
            try store.insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "m2", "objects": {"Group": [{"id": "g1", "name": "a"}], "Member": [{"id": "p1", "name": "b"}]}}"#.utf8), path: "d.json"), schema: v2).objects)
            #expect(try store.count(of: "Group", exactly: true) == 1)
        }
        let inferred = MappingInference.infer(from: v1, to: v2)
        #expect(inferred.problems.isEmpty, "\(inferred.problems)")
        // A step into it migrates, the new relationships empty.
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("m.sqlite").path
        try Store.create(at: path, schema: v1, format: .coreData).insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "m1", "objects": {"Group": [{"id": "g1", "name": "a"}]}}"#.utf8), path: "d.json"), schema: v1).objects)
        _ = try Migrator(schemas: SchemaCatalog(schemas: [v1, v2])).migrate(storeAt: URL(fileURLWithPath: path), to: "m2")
        #expect(try DataFile.dump(try Store.open(at: path, schema: v2, readOnly: true)).serialized().contains(#""members":[]"#))
        // With a minCount of 1 it is required, and the same objects are refused.
        let required = try loadSchema("model: M\nversion: m3\nentities:\n  Group:\n    attributes:\n      name: string\n    relationships:\n      members: { destination: Member, toMany: true, inverse: groups, minCount: 1 }\n  Member:\n    attributes:\n      name: string\n    relationships:\n      groups: { destination: Group, toMany: true, inverse: members, optional: true }\n")
        let error = #expect(throws: DataValidationError.self) {
            try DataFile.read(try JSONValue.parse(Data(#"{"version": "m3", "objects": {"Group": [{"id": "g1", "name": "a"}]}}"#.utf8), path: "d.json"), schema: required)
            try Store.inMemory(schema: required).insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "m3", "objects": {"Group": [{"id": "g1", "name": "a"}]}}"#.utf8), path: "d.json"), schema: required).objects)
        }
        #expect(error?.description.contains("required relationship 'members' is empty") == true, "\(String(describing: error))")
    }

    /// Every change that changes a hash is said (external storage and preservation after
    /// deletion are in Core Data's; ObvEngine's v21 -> v22 adds six), and a delete rule's change,
    /// in no hash, too; a property of an abstract parent is said once, at the parent.
    @Test func diffSaysWhatChangedWheneverAHashDiffers() throws {
        let v1 = try loadSchema("""
            model: M
            version: v1
            entities:
              Item:
                abstract: true
                attributes:
                  name: string
                relationships:
                  owner: { destination: Person, inverse: items, optional: true }
              Book:
                parent: Item
                attributes:
                  photo: binary?
              Disc:
                parent: Item
              Person:
                attributes:
                  name: string
                  key: string?
                relationships:
                  items: { destination: Item, toMany: true, inverse: owner, optional: true }
            """)
        var v2 = v1
        v2.version = "v2"
        func edit(_ entity: String, _ body: (inout Entity) -> Void) {
            guard let index = v2.entities.firstIndex(where: { $0.name == entity }) else { return }
            body(&v2.entities[index])
        }
        edit("Item") { $0.attributes.append(Attribute(name: "added", type: .date, isOptional: true)); $0.relationships[0].deleteRule = .cascade }
        edit("Book") { $0.attributes[0].allowsExternalStorage = true }
        edit("Person") { $0.attributes[1].preservesAfterDeletion = true }
        let changes = MappingInference.infer(from: v1, to: v2).changes.map(\.description)
        #expect(changes.contains { $0.contains("Item.added") } && !changes.contains { $0.contains("Book.added") || $0.contains("Disc.added") }, "\(changes)")
        #expect(changes.contains { $0.contains("Book.photo") && $0.contains("now allows external storage") }, "\(changes)")
        #expect(changes.contains { $0.contains("Person.key") && $0.contains("now preserved after deletion") }, "\(changes)")
        #expect(changes.contains { $0.contains("Item.owner") && $0.contains("delete rule nullify -> cascade") }, "\(changes)")
        // Each property's change once.
        #expect(changes.count == 4, "\(changes)")
    }

    /// Core Data's lightweight migration converts numbers (WooCommerce shipped
    /// `OrderGiftCard.amount` int64 -> double as one): inferred, saying what it can cost, and run.
    @Test func numberTypeChangesAreInferredWithWhatTheyCanCost() throws {
        let v1 = try loadSchema("model: W\nversion: w1\nentities:\n  Card:\n    attributes:\n      amount: int64?\n      ratio: double?\n      code: string?\n")
        let v2 = try loadSchema("model: W\nversion: w2\nentities:\n  Card:\n    attributes:\n      amount: double?\n      ratio: float?\n      code: string?\n")
        let inferred = MappingInference.infer(from: v1, to: v2)
        #expect(inferred.problems.isEmpty, "\(inferred.problems)")
        let changes = inferred.changes.map(\.description)
        #expect(changes.contains { $0.contains("int64 -> double, converted: integers beyond 2^53") }, "\(changes)")
        #expect(changes.contains { $0.contains("double -> float, converted: values are rounded to single precision") }, "\(changes)")
        // A string into a number is not a conversion Core Data infers.
        let v3 = try loadSchema("model: W\nversion: w3\nentities:\n  Card:\n    attributes:\n      amount: double?\n      ratio: float?\n      code: int64?\n")
        #expect(!MappingInference.infer(from: v2, to: v3).problems.isEmpty)
        for format in [StoreFormat.mapc, .coreData] {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("w.sqlite").path
            try Store.create(at: path, schema: v1, format: format).insert(try DataFile.read(try JSONValue.parse(Data(#"{"version": "w1", "objects": {"Card": [{"id": "c1", "amount": 1250, "ratio": 0.1}]}}"#.utf8), path: "d.json"), schema: v1).objects)
            _ = try Migrator(schemas: SchemaCatalog(schemas: [v1, v2])).migrate(storeAt: URL(fileURLWithPath: path), to: "w2")
            let dumped = try DataFile.dump(try Store.open(at: path, schema: v2, readOnly: true)).serialized()
            #expect(dumped.contains(#""amount":1250"#) && dumped.contains(#""ratio":0.1"#), "\(dumped)")
        }
    }
}
