import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The policy the Kitchen mapping model names, as an app would port it.
final class ItemMigrationPolicy: EntityMigrationPolicy {
    override var functions: [String: PolicyFunction] { ["shout:": { arguments in
        guard case .scalar(.string(let text))? = arguments.first else { return .null }
        return .scalar(.string(text.uppercased()))
    }] }
}

/// Xcode files authored for mapc's tests (`Fixtures/xcode`, and `make-mapping-model.py` for the
/// mapping model's archived expressions): every feature the importers handle, on any machine.
@Suite("Importing authored Xcode files")
struct XcodeFixtureImportTests {
    static let fixtures = packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/xcode")

    @Test func everyModelFeatureImportsOrIsReported() throws {
        let model = try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path)
        #expect(model.schemas.map(\.version) == ["Kitchen", "Kitchen 2"] && model.currentVersion == "Kitchen 2")
        let schema = model.schemas[0]
        #expect(schema.versionIdentifier == "1")
        let item = try #require(schema.entity(named: "Item"))
        func attribute(_ name: String) throws -> Attribute { try #require(item.attributes.first { $0.name == name }) }
        #expect(item.className == "Item" && item.userInfo == ["owner": "kitchen"] && item.uniquenessConstraints == [["name"]])
        #expect(item.indexes.map(\.properties) == [["name"], ["created"]])
        #expect(try attribute("amount").defaultValue == .decimal(Decimal(string: "12.5")!))
        #expect(try attribute("count").validation.min == .integer(0) && attribute("count").validation.max == .integer(100) && attribute("count").defaultValue == .integer(3))
        #expect(try attribute("created").defaultValue == .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        #expect(try attribute("flag").defaultValue == .bool(true))
        let name = try attribute("name")
        #expect(name.renamingIdentifier == "title" && name.validation.minLength == 1 && name.validation.maxLength == 40 && name.validation.regex == "[A-Za-z ]+")
        #expect(try attribute("photo").allowsExternalStorage && attribute("scratch").isTransient && attribute("small").versionHashModifier == "v2")
        #expect(try attribute("colors").valueTransformer == "ColorsTransformer" && attribute("colors").className == "[UIColor]")
        #expect(try [attribute("identifier").type, attribute("link").type, attribute("weight").type, attribute("ratio").type] == [.uuid, .uri, .float, .double])
        let tags = try #require(item.relationships.first { $0.name == "tags" })
        #expect(tags.isToMany && tags.minCount == 1 && tags.maxCount == 5 && tags.inverse == "items")
        let steps = try #require(item.relationships.first { $0.name == "steps" })
        #expect(steps.isOrdered && steps.deleteRule == .cascade)
        #expect(schema.entity(named: "Tag")?.relationships.first?.deleteRule == .deny)
        #expect(schema.entity(named: "SpecialItem")?.parent == "Item")
        // What mapc cannot hold is a warning naming it, at its line.
        let messages = model.warnings.filter { $0.location?.path.hasSuffix("Kitchen.xcdatamodel/contents") == true }.map(\.message)
        #expect(messages.contains { $0.hasPrefix("attribute Item.objectRef (Object ID) is not imported") })
        #expect(messages.contains { $0.hasPrefix("fetched property Item.recent is not imported") })
        #expect(messages.contains { $0.contains("descending order on 'created' is not kept") })
        #expect(messages.contains { $0.hasPrefix("configuration 'Cloud' is not imported") })
        #expect(model.warnings.allSatisfy { ($0.location?.line ?? 0) > 1 })
    }

    /// A composite attribute (iOS 17) is said where it stands, with what leaving it out costs:
    /// the version's hashes are not Core Data's, so no store of it is recognised.
    @Test func aCompositeAttributeIsSaidWithWhatLeavingItOutCosts() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-composite-\(UUID().uuidString)/C.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23C71" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Person" representedClassName="Person" syncable="YES" codeGenerationType="class">
                <attribute name="name" optional="YES" attributeType="String"/>
                <compositeAttribute name="address" optional="YES" attributeType="Composite" composite="Address"/>
                <attribute name="billing" optional="YES" attributeType="Composite" composite="Address"/>
            </entity>
            <composite name="Address">
                <attribute name="city" optional="YES" attributeType="String"/>
            </composite>
        </model>
        """.utf8).write(to: folder.appendingPathComponent("contents"))
        let model = try XcodeModelImporter.importModel(at: folder.path)
        let messages = model.warnings.map { "\($0.location?.line ?? 0): \($0.message)" }
        #expect(messages.contains { $0.hasPrefix("5: composite attribute Person.address is not imported") && $0.contains("a store of it matches no version") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("6: attribute Person.billing is a composite attribute and is not imported") && $0.contains("a store of it matches no version") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("8: composite 'Address' is not imported") }, "\(messages)")
        // The version says so itself, through its schema file, and means it: no Core Data store of
        // it is written (one would match no version of the app's model), none is recognised as of
        // it (its hashes are not Core Data's: a store of the version before, hashed alike, was).
        let schema = try #require(model.schemas.first)
        #expect(schema.entities.first?.notImported == ["address (a composite attribute)", "billing (a composite attribute)"])
        let written = try SchemaLoader.load(source: SourceFile(path: "C.yaml", text: SchemaWriter.yaml(schema))).schema
        #expect(written.entities.first?.notImported == schema.entities.first?.notImported)
        let error = #expect(throws: MapcError.self) { try Store.create(at: folder.deletingLastPathComponent().appendingPathComponent("s.sqlite").path, schema: written, format: .coreData) }
        #expect(error?.description.contains("cannot be written as a Core Data store: Person has address (a composite attribute), billing (a composite attribute)") == true, "\(String(describing: error))")
        #expect(try Store.inMemory(schema: written).count(of: "Person") == 0, "mapc's own format stores it")
        var without = written
        without.entities[0].notImported = []
        #expect(StoreFormat.coreData.entityHashes(of: written)["Person"] != StoreFormat.coreData.entityHashes(of: without)["Person"])
    }

    /// A derived attribute keeps its derivation in the schema (it was dropped, the import's warning
    /// the only trace), and a run into its version says mapc computes none.
    @Test func aDerivedAttributeKeepsItsDerivation() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-derived-\(UUID().uuidString)/D.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23C71" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Country" representedClassName="Country" syncable="YES">
                <attribute name="moodCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="moods.@count" usesScalarValueType="YES"/>
            </entity>
        </model>
        """.utf8).write(to: folder.appendingPathComponent("contents"))
        let schema = try #require(try XcodeModelImporter.importModel(at: folder.path).schemas.first)
        #expect(schema.entities.first?.attributes.first?.derivation == "moods.@count")
        let written = try SchemaLoader.load(source: SourceFile(path: "D.yaml", text: SchemaWriter.yaml(schema))).schema
        #expect(written.entities.first?.attributes.first?.derivation == "moods.@count")
        #expect(StoreMigration.derivedNotes(of: written).first?.hasPrefix("Country.moodCount (moods.@count) is derived in the Core Data model: mapc keeps the values the migration gives and computes none") == true)
    }

    @Test func aSingleVersionImportsFromItsFolderOrItsContentsFile() throws {
        let folder = Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld/Kitchen 2.xcdatamodel")
        for path in [folder.path, folder.appendingPathComponent("contents").path] {
            let model = try XcodeModelImporter.importModel(at: path)
            #expect(model.name == "Kitchen" && model.schemas.map(\.version) == ["Kitchen 2"] && model.currentVersion == nil, "\(path)")
        }
        #expect(throws: MapcError.self) { try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Nowhere.xcdatamodeld").path) }
    }

    /// An expression that cannot be read from the mapping model is left out with a warning and a
    /// `todo:` item, so `mapc check` keeps reporting it until it is written by hand (the warning
    /// alone is seen once, and the attribute would silently get nil).
    @Test func anUnreadableExpressionBecomesATodoThatCheckReports() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path)
        let catalog = SchemaCatalog(schemas: model.schemas)
        let damaged = folder.appendingPathComponent("Damaged.xcmappingmodel")
        try FileManager.default.createDirectory(at: damaged, withIntermediateDirectories: true)
        let xml = try String(contentsOf: Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let range = try #require(xml.range(of: #"<attribute name="valueexpressiondata" type="binary">"#))
        try (xml[..<range.upperBound] + "AAAA" + xml[range.upperBound...].drop { $0 != "<" }).write(to: damaged.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
        let imported = try XcodeMappingImporter.importMapping(at: damaged.path, schemas: catalog)
        #expect(imported.warnings.contains { $0.message.contains("left out of the mapping") })
        let todo = imported.mapping.entityMappings.flatMap(\.todo).map(\.text)
        #expect(todo.count == 1 && todo.first?.contains("could not be read from the Xcode mapping model and was left out") == true, "\(todo)")
        #expect(imported.text.contains("todo:"))
        var checker = MappingChecker(mapping: imported.mapping)
        #expect(checker.check(source: imported.source, destination: imported.destination).contains { $0.severity == .error && $0.message.hasPrefix("still to do in mapping") })
    }

    /// With 'autogenerate' on, Xcode reads a mapping's objects from its source entity and filter,
    /// whatever source expression the file keeps from an earlier edit (1 in 1,923 real entity
    /// mappings has one): it is not imported, and no to-do is left.
    @Test func aLeftoverSourceExpressionOfAnAutogeneratedMappingIsNotImported() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path)
        let catalog = SchemaCatalog(schemas: model.schemas)
        let leftover = folder.appendingPathComponent("Leftover.xcmappingmodel")
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
        let xml = try String(contentsOf: Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        let range = try #require(xml.range(of: #"<object type="XDDEVENTITYMAPPING" id="z120">"#))
        try (xml[..<range.upperBound] + "\n        <attribute name=\"autogenerateexpression\" type=\"bool\">1</attribute>\n        <attribute name=\"sourceexpressiondata\" type=\"binary\">AAAA</attribute>" + xml[range.upperBound...])
            .write(to: leftover.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
        let imported = try XcodeMappingImporter.importMapping(at: leftover.path, schemas: catalog)
        #expect(imported.warnings.contains { $0.message.contains("its stored source expression is not imported: 'autogenerate' is on") }, "\(imported.warnings)")
        #expect(imported.mapping.entityMappings.flatMap(\.todo).isEmpty)
        #expect(imported.mapping.entityMappings.allSatisfy { $0.sourceExpression == nil })
    }

    /// Importing asks for a policy to be ported only when it is not registered already.
    @Test func anUnregisteredPolicyIsAWarningARegisteredOneIsNot() throws {
        let model = try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path)
        let path = Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel").path
        let unknown = try XcodeMappingImporter.importMapping(at: path, schemas: SchemaCatalog(schemas: model.schemas), policies: PolicyRegistry())
        #expect(unknown.warnings.contains { $0.message.contains("uses the custom policy") })
        let registry = PolicyRegistry()
        registry.register(ItemMigrationPolicy.self, as: "ItemMigrationPolicy")
        let known = try XcodeMappingImporter.importMapping(at: path, schemas: SchemaCatalog(schemas: model.schemas), policies: registry)
        #expect(!known.warnings.contains { $0.message.contains("uses the custom policy") }, "\(known.warnings)")
    }

    @Test func theMappingModelImportsAndMigratesACoreDataStore() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path)
        let schemasFolder = folder.appendingPathComponent("schemas"), mappingsFolder = folder.appendingPathComponent("mappings")
        try FileManager.default.createDirectory(at: schemasFolder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: mappingsFolder, withIntermediateDirectories: true)
        for file in try model.schemaFiles(source: "Kitchen.xcdatamodeld") { try Data(file.text.utf8).write(to: schemasFolder.appendingPathComponent(file.name)) }
        let catalog = try SchemaCatalog(directory: schemasFolder.path)
        let imported = try XcodeMappingImporter.importMapping(at: Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel").path, schemas: catalog)
        #expect(imported.mapping.entityMappings.map(\.name) == ["ItemToItem", "StepToStep", "TagToTag", "SpecialItemToSpecialItem"], "Xcode's order; the stale mapping is not read")
        #expect(imported.mapping.entityMappings[0].filter?.source.text == "count > 0")
        #expect(imported.mapping.entityMappings[0].attributeMapping(named: "shout")?.expression.source.text == #"FUNCTION($entityPolicy, "shout:", $source.name)"#)
        #expect(imported.mapping.entityMappings[2].attributeMapping(named: "rank")?.expression.source.text == "7")
        try Data(imported.text.utf8).write(to: mappingsFolder.appendingPathComponent(imported.fileName))

        let policies = PolicyRegistry()
        policies.register(ItemMigrationPolicy.self, as: "ItemMigrationPolicy")
        var checker = MappingChecker(mapping: imported.mapping, policies: policies)
        #expect(checker.check(source: imported.source, destination: imported.destination).filter { $0.severity == .error }.isEmpty)

        // A Core Data store at Kitchen, migrated with the imported files.
        let storeURL = folder.appendingPathComponent("Kitchen.sqlite")
        let store = try Store.create(at: storeURL.path, schema: imported.source, format: .coreData)
        let date = Date(timeIntervalSinceReferenceDate: 600_000_000.123456)
        func item(_ id: String, _ name: String, count: Int64, entity: String = "Item", steps: [String] = []) -> ObjectData {
            ObjectData(id: id, entity: entity, attributes: ["name": .string(name), "count": .integer(count), "created": .date(date), "flag": .bool(false)],
                       relationships: ["steps": steps, "tags": ["t1"]])
        }
        try store.insert([
            item("i1", "Apple", count: 2, steps: ["s2", "s1"]), item("i2", "Pear", count: 0), item("x1", "Quince", count: 1, entity: "SpecialItem"),
            ObjectData(id: "t1", entity: "Tag", attributes: ["label": .string("fruit")], relationships: ["items": ["i1", "i2", "x1"]]),
            ObjectData(id: "s1", entity: "Step", attributes: ["text": .string("wash")], relationships: ["item": ["i1"]]),
            ObjectData(id: "s2", entity: "Step", attributes: ["text": .string("peel")], relationships: ["item": ["i1"]]),
        ])
        try store.close()
        let migrator = try Migrator(schemasFolder: schemasFolder, mappingsFolder: mappingsFolder, policies: policies)
        _ = try migrator.migrate(storeAt: storeURL)
        let migrated = try Store.open(at: storeURL.path, catalog: migrator.schemas, readOnly: true)
        #expect(migrated.format.identifier == "core-data" && migrated.schema.version == "Kitchen 2")
        let items = try migrated.objects(ofExactEntity: "Item")
        #expect(items.map { $0.attributes["name"] } == [.string("Apple")], "the filter count > 0 leaves Pear out")
        #expect(items.first?.attributes["shout"] == .string("APPLE"))
        #expect(items.first?.attributes["created"] == .date(date))
        let steps = try migrated.objects(ofExactEntity: "Step")
        let textOf = Dictionary(steps.map { ($0.id, $0.attributes["text"]) }, uniquingKeysWith: { a, _ in a })
        #expect(items.first?.relationships["steps"]?.map { textOf[$0] ?? nil } == [.string("peel"), .string("wash")], "the order of an ordered relationship")
        let tag = try #require(try migrated.objects(ofExactEntity: "Tag").first)
        #expect(tag.attributes["rank"] == .integer(7))
        // The relationship mapping names ItemToItem: only that mapping's objects (Apple), as in
        // Core Data; Quince was made by SpecialItemToSpecialItem.
        #expect(tag.relationships["items"]?.count == 1)
    }
}

extension XcodeFixtureImportTests {
    /// Parts of a mapping model that name nothing were passed over in silence: an entity mapping
    /// the model lists but the file does not hold (its objects then migrated by nothing), a property
    /// mapping without a name, an object of the wrong kind where entity mappings are listed, two
    /// objects of one id (the second replaced the first). Each is a damaged file, said with its place.
    @Test func partsOfAMappingModelThatNameNothingAreErrors() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try XcodeModelImporter.importModel(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path)
        let catalog = SchemaCatalog(schemas: model.schemas)
        let xml = try String(contentsOf: Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        func importing(_ replace: String, with replacement: String) throws -> [Diagnostic] {
            #expect(xml.contains(replace), "the fixture no longer holds \(replace)")
            let damaged = folder.appendingPathComponent("Damaged.xcmappingmodel")
            try? FileManager.default.removeItem(at: damaged)
            try FileManager.default.createDirectory(at: damaged, withIntermediateDirectories: true)
            try xml.replacingOccurrences(of: replace, with: replacement).write(to: damaged.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
            do {
                _ = try XcodeMappingImporter.importMapping(at: damaged.path, schemas: catalog)
                return []
            } catch let error as DiagnosticsError {
                return error.diagnostics
            }
        }
        let missing = try importing(#"idrefs="z130 z110 z120 z140""#, with: #"idrefs="z130 z110 z120 z140 z999""#)
        #expect(missing.contains { $0.message.contains("z999") && $0.message.contains("entitymappings") && $0.location?.line == 10 }, "\(missing)")
        let nameless = try importing(#"<attribute name="name" type="string">amount</attribute>"#, with: "")
        #expect(nameless.contains { $0.message.contains("no name") && $0.location?.line == 15 }, "\(nameless)")
        let wrongKind = try importing(#"idrefs="z130 z110 z120 z140""#, with: #"idrefs="z130 z110 z120 z140 z200""#)
        #expect(wrongKind.contains { $0.message.contains("z200") && $0.message.contains("XDDEVATTRIBUTEMAPPING") }, "\(wrongKind)")
        let twice = try importing(#"<object type="XDDEVATTRIBUTEMAPPING" id="z201">"#, with: #"<object type="XDDEVATTRIBUTEMAPPING" id="z200">"#)
        #expect(twice.contains { $0.message.contains("z200") && $0.message.contains("two objects") && $0.location?.line == 19 }, "\(twice)")
    }
}
