import Foundation
import MapcFoundation
import MapcModel

/// Reads the models Xcode embeds in a mapping model (`sourcemodeldata`, `destinationmodeldata`:
/// keyed archives of Xcode's own `XDPMModel`) into schemas, as far as the version hashes need:
/// entities with their parents, abstractness, constraints and modifiers; attributes with type,
/// optionality, transience and modifiers; relationships with destination, inverse, counts and
/// order. The importer matches these against the imported versions by Core Data's hashes, since
/// the model paths stored beside them are often stale.
enum EmbeddedModel {
    /// NSAttributeType codes.
    static let attributeTypes: [Int: AttributeType] = [
        100: .int16, 200: .int32, 300: .int64, 400: .decimal, 500: .double, 600: .float, 700: .string, 800: .bool,
        900: .date, 1000: .binary, 1100: .uuid, 1200: .uri, 1800: .transformable,
    ]

    /// The schema of an embedded model (named `version`, for messages).
    static func schema(from data: Data, what: String) throws -> Schema {
        let archive = try KeyedArchive(data: data, what: what)
        guard let model = archive.rootObject, archive.className(of: model) == "XDPMModel",
              let package = archive.objectField(model, "_xd_rootPackage"),
              let classes = archive.objectField(package, "XDBucketForClassesstorage") else {
            throw MapcError.input("\(what) is not an Xcode data model (no XDPMModel with entities)")
        }
        var entities: [Entity] = []
        for (name, value) in archive.entries(of: classes) {
            guard let object = KeyedArchive.dictionary(value), archive.className(of: object) == "XDPMEntity" else { continue }
            entities.append(try entity(name, object, archive))
        }
        var schema = Schema(model: "", version: "", entities: entities.sorted { $0.name < $1.name })
        schema.versionIdentifier = archive.stringField(model, "_modelVersionIdentifier")
        return schema
    }

    /// The Xcode "stereotype" settings of a model element, by key: `XD_PAttK_attributeType` → 300.
    private static func settings(_ element: [String: Any], _ archive: KeyedArchive) -> [String: Any] {
        var result: [String: Any] = [:]
        guard let stereotypes = archive.objectField(element, "XDBucketForStereotypesstorage") else { return result }
        for (_, value) in archive.entries(of: stereotypes) {
            guard let stereotype = KeyedArchive.dictionary(value), let owned = archive.objectField(stereotype, "XDBucketForOwnedAttributesstorage") else { continue }
            for (key, item) in archive.entries(of: owned) {
                guard let property = KeyedArchive.dictionary(item) else { continue }
                if let setting = archive.field(property, "_default") { result[key] = setting }
            }
        }
        return result
    }

    /// A model archive's flag: a boolean, or a number (an older archiver's), nonzero for true.
    private static func flag(_ value: Any?) -> Bool {
        guard let value else { return false }
        if let flag = PropertyList.boolean(value) { return flag }
        switch PropertyList.number(value) {
        case .integer(let n)?: return n != 0
        case .double(let d)?: return d != 0
        case nil: return false
        }
    }

    private static func name(of element: [String: Any], _ archive: KeyedArchive) -> String? {
        archive.stringField(element, "_name")
    }

    private static func entity(_ name: String, _ object: [String: Any], _ archive: KeyedArchive) throws -> Entity {
        let entitySettings = settings(object, archive)
        var entity = Entity(name: name, isAbstract: flag(object["_isAbstract"]) || flag(entitySettings["XD_PSK_isAbstract"]))
        entity.versionHashModifier = (entitySettings["XD_PSK_versionHashModifier"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        entity.renamingIdentifier = entitySettings["XD_PSK_elementID"] as? String
        if let constraints = entitySettings["XDPMUniquenessConstraints"].flatMap(KeyedArchive.dictionary) {
            entity.uniquenessConstraints = archive.elements(of: constraints).compactMap { item in
                KeyedArchive.dictionary(item).map { archive.elements(of: $0).compactMap { $0 as? String } }
            }.filter { !$0.isEmpty }
        }
        if let generalizations = archive.objectField(object, "XDBucketForGeneralizationsstorage") {
            for item in archive.elements(of: generalizations) {
                guard let generalization = KeyedArchive.dictionary(item), let general = archive.objectField(generalization, "_general") else { continue }
                entity.parent = Self.name(of: general, archive)
            }
        }
        guard let owned = archive.objectField(object, "XDBucketForOwnedAttributesstorage") else { return entity }
        for (propertyName, value) in archive.entries(of: owned) {
            guard let property = KeyedArchive.dictionary(value) else { continue }
            let propertySettings = settings(property, archive)
            let optional = flag(propertySettings["XD_PPSK_isOptional"]), transient = flag(propertySettings["XD_PPSK_isTransient"])
            let modifier = (propertySettings["XD_PPSK_versionHashModifier"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            switch archive.className(of: property) {
            case "XDPMAttribute"?:
                let code = propertySettings["XD_PAttK_attributeType"] as? Int ?? 0
                guard let type = attributeTypes[code] else {
                    throw MapcError.input("\(archive.what): attribute \(name).\(propertyName) has the attribute type \(code), which mapc does not import")
                }
                var attribute = Attribute(name: propertyName, type: type, isOptional: optional)
                attribute.isTransient = transient
                attribute.versionHashModifier = modifier
                attribute.allowsExternalStorage = flag(propertySettings["XD_PAttK_allowsExternalBinaryDataStorage"])
                attribute.preservesAfterDeletion = flag(propertySettings["XD_PAttK_preserveValueOnDeletionInPersistentHistory"])
                entity.attributes.append(attribute)
            case "XDPMRelationship"?:
                guard let destination = (propertySettings["XD_PRK_destination"]).flatMap(KeyedArchive.dictionary).flatMap({ self.name(of: $0, archive) }) else {
                    throw MapcError.input("\(archive.what): relationship \(name).\(propertyName) has no destination entity")
                }
                let toMany = flag(propertySettings["XD_PRK_isToMany"])
                var relationship = Relationship(name: propertyName, destination: destination, isToMany: toMany,
                                                isOrdered: flag(propertySettings["XD_PRK_ordered"]), isOptional: optional)
                relationship.inverse = (propertySettings["XD_PRK_inverseRelationship"]).flatMap(KeyedArchive.dictionary).flatMap { self.name(of: $0, archive) }
                relationship.declaresNoInverse = relationship.inverse == nil
                relationship.isTransient = transient
                relationship.versionHashModifier = modifier
                // The counts Core Data hashes, whatever the kind (as the data model importer keeps them).
                let minimum = propertySettings["XD_PRK_minCount"] as? Int ?? 0, maximum = propertySettings["XD_PRK_maxCount"] as? Int ?? 0
                relationship.minCount = minimum > 0 && (toMany || minimum == 1) ? minimum : nil
                relationship.maxCount = maximum > 0 && toMany ? maximum : nil
                entity.relationships.append(relationship)
            default:
                continue
            }
        }
        entity.attributes.sort { $0.name < $1.name }
        entity.relationships.sort { $0.name < $1.name }
        return entity
    }
}
