import Foundation
import Testing
import GRDB
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration

/// Reads a photo's image through both of a policy's ways, and gives it a thumbnail of new bytes.
final class ThumbnailPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var read: [Value] = []
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        Self.read.append(source["image"])
        if case .scalar(let value) = try source.value(forKeyPath: "image") { Self.read.append(value) }
        var destination = try manager.makeDestination(for: source, mapping: mapping)
        if case .binary(let image) = source["image"] { destination["thumbnail"] = .binary(Data("thumb:".utf8) + image.prefix(2)) }
        _ = try manager.insert(destination, associatedWith: source, mapping: mapping)
    }
}

/// Reads a photo's image from its source and from its destination object, and inserts it unchanged.
final class ImageReadingPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var read: [Value] = []
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        let destination = try manager.makeDestination(for: source, mapping: mapping)
        Self.read += [source["image"], destination["image"]]
        _ = try manager.insert(destination, associatedWith: source, mapping: mapping)
    }
}

/// Copies the source's stored values as they are into new objects, both ways a policy may.
final class RawCopyPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var replacesAttributes = false
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var attributes = source.data.attributes
        attributes["thumbnail"] = source.data.attributes["image"]
        var destination: DestinationObject
        if Self.replacesAttributes {
            destination = try manager.makeDestination(for: source, mapping: mapping)
            destination.attributes = attributes
        } else {
            destination = DestinationObject(entity: "Photo", id: source.ref.id, attributes: attributes)
        }
        _ = try manager.insert(destination, associatedWith: source, mapping: mapping)
    }
}

/// Copies the image through the destination object's subscript.
final class DestinationReadingPolicy: EntityMigrationPolicy {
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var destination = try manager.makeDestination(for: source, mapping: mapping)
        destination["thumbnail"] = destination["image"]
        _ = try manager.insert(destination, associatedWith: source, mapping: mapping)
    }
}

/// Makes a second photo by hand, its bytes set through the subscript, one left to its default;
/// and on the first, plain bytes put in `attributes` directly and read back.
final class HandMadePolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var readBack: Value = .null
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var first = try manager.makeDestination(for: source, mapping: mapping)
        first.attributes["thumbnail"] = .binary(Data([5, 6]))
        Self.readBack = first["thumbnail"]
        _ = try manager.insert(first, associatedWith: source, mapping: mapping)
        var made = DestinationObject(entity: "Photo", id: "made", attributes: ["title": .string("made")])
        made["image"] = .binary(Data([1, 0x41, 0x42]))
        made["thumbnail"] = .binary(Data([2]) + Data("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11".utf8) + Data([0]))
        _ = try manager.insert(made, mapping: mapping)
    }
}

/// A binary attribute that allows external storage keeps, in a Core Data store, a marker byte
/// before its bytes (or a file's name): its stored form. Expressions and policies work on the
/// bytes the app sees, never the marker, and what they give such an attribute is stored marked.
@Suite("Values of attributes that allow external storage, in expressions and policies", .serialized)
struct ExternalValueTests {
    let v1 = """
        model: Photos
        version: v1
        entities:
          Photo:
            attributes:
              title: { type: string }
              image: { type: binary, optional: true, externalStorage: true }

        """
    let v2 = """
        model: Photos
        version: v2
        entities:
          Photo:
            attributes:
              title: { type: string }
              image: { type: binary, optional: true, externalStorage: true }
              thumbnail: { type: binary, optional: true, externalStorage: true }
              plain: { type: binary, optional: true }

        """

    /// A Core Data store at v1 with one photo whose image is kept inline (`01` then "hello").
    private func source() throws -> Store {
        let store = try Store.inMemory(schema: try loadSchema(v1), format: .coreData)
        try store.insert([ObjectData(id: "a", entity: "Photo", attributes: ["title": .string("sea"), "image": .binary(Data([1]) + Data("hello".utf8))])])
        return store
    }

    private func images(_ store: Store) throws -> [String: Value] {
        try #require(store.objects(of: "Photo").first).attributes
    }

    @Test func anExpressionReadsTheBytesAndWhatItGivesIsStoredMarked() throws {
        let mapping = try loadMapping("""
            source: v1
            destination: v2
            entityMappings:
              - name: PhotoToPhoto
                source: Photo
                destination: Photo
                attributes:
                  title: $source.title
                  image: $source.image
                  thumbnail: "TERNARY($source.title == 'none', nil, $source.image)"
                  plain: "TERNARY($source.title == 'none', nil, $source.image)"

            """)
        for allowsSQL in [true, false] {
            let destination = try Store.inMemory(schema: try loadSchema(v2), format: .coreData)
            var step = StepMigration(source: try source(), destination: destination, mapping: mapping, policies: PolicyRegistry())
            step.allowsSQL = allowsSQL
            try step.run()
            let values = try images(destination)
            // The plain copy keeps the stored form; the expressions saw "hello", stored as the attributes keep it.
            #expect(values["image"] == .binary(Data([1]) + Data("hello".utf8)), "allowsSQL \(allowsSQL)")
            #expect(values["thumbnail"] == .binary(Data([1]) + Data("hello".utf8)), "allowsSQL \(allowsSQL)")
            #expect(values["plain"] == .binary(Data("hello".utf8)), "allowsSQL \(allowsSQL)")
        }
    }

    @Test func aPolicyReadsTheBytesAndWhatItSetsIsStoredMarked() throws {
        ThumbnailPolicy.read = []
        let registry = PolicyRegistry()
        registry.register(ThumbnailPolicy.self, as: "Thumbnail")
        let mapping = try loadMapping("""
            source: v1
            destination: v2
            entityMappings:
              - name: PhotoToPhoto
                source: Photo
                destination: Photo
                policy: Thumbnail
                attributes: { title: $source.title, image: $source.image }

            """)
        let destination = try Store.inMemory(schema: try loadSchema(v2), format: .coreData)
        try StepMigration(source: try source(), destination: destination, mapping: mapping, policies: registry).run()
        #expect(ThumbnailPolicy.read == [.binary(Data("hello".utf8)), .binary(Data("hello".utf8))])
        let values = try images(destination)
        #expect(values["image"] == .binary(Data([1]) + Data("hello".utf8)))
        #expect(values["thumbnail"] == .binary(Data([1]) + Data("thumb:he".utf8)))
    }

    /// A policy copying the source's values as stored (`source.data`) into a new object, or over
    /// a destination object's `attributes`, copies them as they are: a value in Core Data's form
    /// set there is kept (it was marked a second time, the file's reference made bytes).
    @Test(arguments: [false, true])
    func valuesCopiedAsStoredKeepTheirForm(replacesAttributes: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        RawCopyPolicy.replacesAttributes = replacesAttributes
        let registry = PolicyRegistry()
        registry.register(RawCopyPolicy.self, as: "RawCopy")
        let mapping = try loadMapping("source: v1\ndestination: v2\nentityMappings:\n  - { name: PhotoToPhoto, source: Photo, destination: Photo, policy: RawCopy, attributes: { title: $source.title, image: $source.image } }\n")
        let reference = Data([2]) + Data("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11".utf8) + Data([0])
        for stored in [Data([1]) + Data("hello".utf8), reference] {
            let source = try Store.inMemory(schema: try loadSchema(v1), format: .coreData)
            try source.insert([ObjectData(id: "a", entity: "Photo", attributes: ["title": .string("sea"), "image": .binary(stored)])])
            let destination = try Store.inMemory(schema: try loadSchema(v2), format: .coreData)
            var step = StepMigration(source: source, destination: destination, mapping: mapping, policies: registry)
            step.externalFiles = CoreDataExternalData(store: folder.appendingPathComponent("Photos.sqlite").path)
            try step.run()
            let values = try images(destination)
            #expect(values["image"] == .binary(stored) && values["thumbnail"] == .binary(stored), "\(values)")
        }
    }

    /// Bytes set through a new object's subscript are bytes whatever their first byte (they were
    /// kept as if in Core Data's form: `01 41 42` read as "AB"); a default left unset is stored
    /// marked; plain bytes put in `attributes` directly read back as they are and are stored marked.
    @Test func bytesSetByHandAndDefaultsAreStoredMarked() throws {
        let registry = PolicyRegistry()
        registry.register(HandMadePolicy.self, as: "HandMade")
        let withDefault = v2.replacingOccurrences(of: "plain: { type: binary, optional: true }", with: "plain: { type: binary, optional: true, externalStorage: true, default: \"AUFC\" }")
        let mapping = try loadMapping("source: v1\ndestination: v2\nentityMappings:\n  - { name: PhotoToPhoto, source: Photo, destination: Photo, policy: HandMade, attributes: { title: $source.title, image: $source.image } }\n")
        let destination = try Store.inMemory(schema: try loadSchema(withDefault), format: .coreData)
        try StepMigration(source: try source(), destination: destination, mapping: mapping, policies: registry).run()
        #expect(HandMadePolicy.readBack == .binary(Data([5, 6])))
        let objects = try destination.objects(of: "Photo").sorted { $0.id < $1.id }
        let made = try #require(objects.first { $0.attributes["title"] == .string("made") })
        let first = try #require(objects.first { $0.attributes["title"] == .string("sea") })
        #expect(made.attributes["image"] == .binary(Data([1, 1, 0x41, 0x42])))
        #expect(made.attributes["thumbnail"] == .binary(Data([1, 2]) + Data("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11".utf8) + Data([0])))
        #expect(made.attributes["plain"] == .binary(Data([1, 1, 0x41, 0x42])), "the default, marked")
        #expect(first.attributes["thumbnail"] == .binary(Data([1, 5, 6])))
        #expect(first.attributes["plain"] == .binary(Data([1, 1, 0x41, 0x42])))
    }

    /// A value kept in a file read through the destination object's subscript, the file missing:
    /// the run fails naming it (the subscript gave nil, and the run went on).
    @Test func aMissingFileReadThroughTheDestinationObjectFailsTheRun() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let registry = PolicyRegistry()
        registry.register(DestinationReadingPolicy.self, as: "Reading")
        let mapping = try loadMapping("source: v1\ndestination: v2\nentityMappings:\n  - { name: PhotoToPhoto, source: Photo, destination: Photo, policy: Reading, attributes: { title: $source.title, image: $source.image } }\n")
        let source = try Store.inMemory(schema: try loadSchema(v1), format: .coreData)
        try source.insert([ObjectData(id: "a", entity: "Photo", attributes: ["title": .string("sea"), "image": .binary(Data([2]) + Data("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11".utf8) + Data([0]))])])
        var step = StepMigration(source: source, destination: try Store.inMemory(schema: try loadSchema(v2), format: .coreData), mapping: mapping, policies: registry)
        step.externalFiles = CoreDataExternalData(store: folder.appendingPathComponent("Photos.sqlite").path)
        let error = #expect(throws: MigrationError.self) { try step.run() }
        #expect(error?.description.contains("mapping 'PhotoToPhoto': custom policy failed: it read 'image' of Photo 'Photo/p1', which cannot be read: the value is kept in Core Data's external file") == true, "\(String(describing: error))")
    }

    /// A value kept in a file: the policy reads the file's bytes from either object, and the
    /// reference is copied as stored when left unchanged. Without the file, the run fails naming
    /// the value the policy read (the subscript cannot throw).
    @Test func aPolicyReadsAFilesBytesAndAMissingFileFailsTheRun() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = CoreDataExternalData(store: folder.appendingPathComponent("Photos.sqlite").path)
        try FileManager.default.createDirectory(atPath: files.dataFolder, withIntermediateDirectories: true)
        let name = "5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11"
        try Data("from a file".utf8).write(to: URL(fileURLWithPath: files.dataFolder).appendingPathComponent(name))
        let reference = Data([2]) + Data(name.utf8) + Data([0])
        let registry = PolicyRegistry()
        registry.register(ImageReadingPolicy.self, as: "Reading")
        let mapping = try loadMapping("source: v1\ndestination: v2\nentityMappings:\n  - { name: PhotoToPhoto, source: Photo, destination: Photo, policy: Reading, attributes: { title: $source.title, image: $source.image } }\n")
        func migrate() throws -> Store {
            let source = try Store.inMemory(schema: try loadSchema(v1), format: .coreData)
            try source.insert([ObjectData(id: "a", entity: "Photo", attributes: ["title": .string("sea"), "image": .binary(reference)])])
            let destination = try Store.inMemory(schema: try loadSchema(v2), format: .coreData)
            var step = StepMigration(source: source, destination: destination, mapping: mapping, policies: registry)
            step.externalFiles = files
            try step.run()
            return destination
        }
        ImageReadingPolicy.read = []
        let migrated = try migrate()
        #expect(ImageReadingPolicy.read == [.binary(Data("from a file".utf8)), .binary(Data("from a file".utf8))])
        #expect(try images(migrated)["image"] == .binary(reference))
        try FileManager.default.removeItem(atPath: files.dataFolder)
        let error = #expect(throws: MigrationError.self) { try migrate() }
        #expect(error?.description.hasPrefix("mapping 'PhotoToPhoto': custom policy failed: it read 'image' of Photo 'Photo/p1', which cannot be read: the value is kept in Core Data's external file \(name)") == true,
                "\(String(describing: error))")
    }
}

/// A migrated store is read back as a reader would before it replaces anything: one whose file
/// names a column otherwise than its reader looks for is refused, naming the fault as mapc's.
@Suite("A migrated store read back")
struct ReadBackTests {
    @Test func aStoreThatDoesNotReadBackIsRefused() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try uncloudNotes("v2")
        let path = folder.appendingPathComponent("migrated.sqlite").path
        let store = try Store.create(at: path, schema: schema, format: .coreData)
        try store.insert(v2Notes(2))
        try store.close()
        try StoreMigration.readBack(path, schema: schema)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "ALTER TABLE ZNOTE RENAME COLUMN ZTITLE TO ZHEADING") }
        let error = #expect(throws: MigrationError.self) { try StoreMigration.readBack(path, schema: schema) }
        #expect(error?.description.contains("the migrated store could not be read back as written") == true, "\(String(describing: error))")
    }
}
