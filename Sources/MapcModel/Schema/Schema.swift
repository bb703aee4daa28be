import Foundation
import MapcFoundation

/// One version of a data model: the equivalent of one `.xcdatamodel` inside a `.xcdatamodeld`.
public struct Schema: Sendable {
    /// The model's name, shared by all its versions (e.g. `UnCloudNotes`).
    public var model: String
    /// Core Data's model version identifier (Xcode's "Model Version Identifier"), recorded in a Core
    /// Data store's metadata; informational, not part of any hash.
    public var versionIdentifier: String?
    /// This version's name (e.g. `v3`); versions are found by this name, not by file name.
    public var version: String
    /// The model and version as people read them: `UnCloudNotes v3`, or the version alone when it
    /// already starts with the model's name, as Xcode names versions (`Moody 2`, not `Moody Moody 2`).
    public var displayName: String {
        version == model || version.hasPrefix(model + " ") ? version : "\(model) \(version)"
    }
    /// Entities in file order.
    public var entities: [Entity] { didSet { indexes = Indexes(entities) } }
    /// Where the schema came from; nil for schemas built in code.
    public var source: SourceFile?
    /// Where the version is declared: the `version:` line of its file, at its value (the file's
    /// first line when there is none at the top level); nil for schemas built in code.
    package var versionLocation: FileLocation? {
        guard let source else { return nil }
        let lines = SourceFile.lines(of: source.text)
        guard let index = lines.firstIndex(where: { $0.hasPrefix("version:") }) else { return FileLocation(path: source.path, line: 1, column: 1) }
        let value = lines[index].unicodeScalars.dropFirst("version:".count).prefix { $0 == " " || $0 == "\t" }.count
        return FileLocation(path: source.path, line: index + 1, column: "version:".count + value + 1)
    }

    /// Lookups worked out once per change of `entities`, so that questions about inheritance cost
    /// time proportional to the answer, not to the schema (deep hierarchies stay linear).
    private var indexes: Indexes

    private struct Indexes: Sendable {
        /// Position of each entity by name (the first, when a name is repeated).
        var position: [String: Int] = [:]
        /// Per entity position: the positions of the entity and its ancestors, up to the root.
        var ancestry: [[Int]] = []
        /// Per entity position: the position of the entity, then its descendants' in file order.
        var hierarchy: [[Int]] = []

        init(_ entities: [Entity]) {
            for (index, entity) in entities.enumerated() where position[entity.name] == nil { position[entity.name] = index }
            ancestry = entities.indices.map { index in
                var chain = [index]
                var seen: Set<Int> = [index]
                var current = index
                // Cut one past the deepest hierarchy a schema may have (`SchemaValidator` refuses
                // it so): a chain or cycle of 10,000 entities made 10,000 chains of 10,000
                // (quadratic, 2 GB), where 101 each say all there is to say.
                while chain.count <= Schema.maxInheritanceDepth, let parent = entities[current].parent.flatMap({ position[$0] }), seen.insert(parent).inserted {
                    chain.append(parent)
                    current = parent
                }
                return chain
            }
            // Each entity first, then its descendants in file order (a sub-entity may come before
            // its parent in the file: Xcode writes entities by name).
            hierarchy = entities.indices.map { [$0] }
            for index in entities.indices {
                for ancestor in ancestry[index].dropFirst() { hierarchy[ancestor].append(index) }
            }
        }
    }

    /// The deepest inheritance a schema may have (levels under the root).
    package static let maxInheritanceDepth = 100

    /// Creates a schema; entity names must be unique.
    public init(model: String, version: String, entities: [Entity], source: SourceFile? = nil) {
        self.model = model
        self.version = version
        self.entities = entities
        self.source = source
        self.indexes = Indexes(entities)
    }

    /// The entity with that name.
    public func entity(named name: String) -> Entity? {
        indexes.position[name].map { entities[$0] }
    }

    /// The position of the entity's own declaration (or of the first entity with its name).
    private func position(of entity: Entity) -> Int? { indexes.position[entity.name] }

    /// The chain from the entity to its root, starting with the entity itself.
    public func ancestry(of entity: Entity) -> [Entity] {
        guard let position = position(of: entity) else { return [entity] }
        return [entity] + indexes.ancestry[position].dropFirst().map { entities[$0] }
    }

    /// The root of the entity's inheritance hierarchy.
    public func root(of entity: Entity) -> Entity {
        guard let position = position(of: entity), let last = indexes.ancestry[position].last else { return entity }
        return entities[last]
    }

    /// The entity's direct sub-entities, in file order.
    public func subentities(of entity: Entity) -> [Entity] {
        guard let position = position(of: entity) else { return [] }
        return indexes.hierarchy[position].dropFirst().map { entities[$0] }.filter { $0.parent == entity.name }
    }

    /// The entity and all its descendants, in file order.
    public func hierarchy(under entity: Entity) -> [Entity] {
        guard let position = position(of: entity) else { return [entity] }
        return indexes.hierarchy[position].map { entities[$0] }
    }

    /// Every attribute of the entity, inherited ones first (root first), then its own.
    public func allAttributes(of entity: Entity) -> [Attribute] {
        ancestry(of: entity).reversed().flatMap(\.attributes)
    }

    /// The names of an entity's stored and transient properties, inherited ones first: attributes,
    /// then relationships (what a did-you-mean chooses from).
    package func propertyNames(of entity: Entity) -> [String] {
        allAttributes(of: entity).map(\.name) + allRelationships(of: entity).map(\.name)
    }

    /// The same, by the entity's name; nil for an unknown entity.
    package func propertyNames(ofEntity name: String) -> [String]? {
        entity(named: name).map(propertyNames(of:))
    }

    /// Every relationship of the entity, inherited ones first.
    public func allRelationships(of entity: Entity) -> [Relationship] {
        ancestry(of: entity).reversed().flatMap(\.relationships)
    }

    /// The attribute or relationship with that name, searched up the hierarchy.
    public func property(named name: String, in entity: Entity) -> Property? {
        for ancestor in ancestry(of: entity) {
            if let attribute = ancestor.attributes.first(where: { $0.name == name }) { return .attribute(attribute) }
            if let relationship = ancestor.relationships.first(where: { $0.name == name }) { return .relationship(relationship) }
        }
        return nil
    }

    /// The inverse of a relationship, if it names one that exists: what Core Data lays the
    /// relationship out by (a to-many is read through its inverse's foreign key).
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let inverseName = relationship.inverse, let destination = entity(named: relationship.destination),
              case .relationship(let inverse)? = property(named: inverseName, in: destination) else { return nil }
        return inverse
    }

    /// The inverse of a relationship when each names the other: the sides that are kept in step
    /// (a link set on one is set on the other, both must agree). A model may declare an inverse
    /// that names another relationship back (Xcode warns; Core Data accepts it): each side of
    /// such a pair is then kept as it is declared, and neither changes the other.
    public func mutualInverse(of relationship: Relationship) -> Relationship? {
        guard let inverse = inverse(of: relationship), inverse.inverse == relationship.name else { return nil }
        return inverse
    }
}

/// An attribute or a relationship.
public enum Property: Sendable {
    /// An attribute.
    case attribute(Attribute)
    /// A relationship.
    case relationship(Relationship)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let attribute): return attribute.name
        case .relationship(let relationship): return relationship.name
        }
    }

    /// Whether objects may have no value for it.
    public var isOptional: Bool {
        switch self {
        case .attribute(let attribute): return attribute.isOptional
        case .relationship(let relationship): return relationship.isOptional
        }
    }
}

/// An entity: the equivalent of `NSEntityDescription`.
public struct Entity: Sendable {
    /// The name, unique in the schema.
    public var name: String
    /// The parent entity's name, for inheritance.
    public var parent: String?
    /// An abstract entity has no instances of its own, only of its sub-entities.
    public var isAbstract: Bool = false
    /// The entity's identifier across versions, for inferred renames: the name it first had (Core
    /// Data's renaming identifier). An entity and a later one sharing it are one.
    public var renamingIdentifier: String?
    /// The identifier Core Data matches across versions: the renaming identifier, else the name
    /// (what `renamingIdentifier` returns in Core Data when none was set). Kept when renamed again.
    package var canonicalIdentifier: String { renamingIdentifier ?? name }
    /// Changes the version hash without changing the structure, to force a migration.
    public var versionHashModifier: String?
    /// Each constraint lists property names whose values together must be unique among the objects
    /// of the entity and its sub-entities. As in SQLite's UNIQUE, which Core Data's stores keep
    /// constraints as, objects with a nil among those values (no value, or no related object) never
    /// clash: `Entity.constraintApplies(to:)` is that rule.
    public var uniquenessConstraints: [[String]] = []
    /// What the Core Data model's entity has that this one does not hold, and that Core Data's
    /// version hash covers (a composite attribute), as `mapc import` writes it: mapc can neither
    /// recognise a Core Data store of this version nor write one (`Entity.coreDataHashProblem`).
    package var notImported: [String] = []

    /// Why Core Data's version hash of this entity cannot be reproduced, or nil.
    package var coreDataHashProblem: String? {
        notImported.isEmpty ? nil : "\(name) has \(notImported.joined(separator: ", ")) in the Core Data model, which mapc does not import, and Core Data's version hash covers"
    }

    /// Whether a uniqueness constraint applies to an object with these constrained values: only
    /// when none is nil (an empty to-one relationship counts as nil).
    package static func constraintApplies(to values: [Value]) -> Bool {
        !values.contains(where: \.isNull)
    }

    /// What a uniqueness constraint compares, for one value: equal keys exactly when the store's
    /// UNIQUE index finds the values equal (SQLite compares text and blobs byte by byte, and
    /// numbers by value, so -0.0 equals 0.0). Checking a data file before it is written uses it,
    /// so that `load` refuses what the store would refuse and nothing else: two different
    /// binary values, or two texts that differ in their bytes only, never clash.
    package static func constraintKey(of value: Value) -> AnyHashable {
        switch value {
        case .string(let text), .uri(let text): return AnyHashable(Array(text.utf8))
        case .nonUTF8Text(let bytes): return AnyHashable(Array(bytes))
        case .binary(let bytes): return AnyHashable(bytes)
        case .double(let number): return AnyHashable(number == 0 ? 0.0 : number)
        default: return AnyHashable(value)
        }
    }
    /// Indexes to create in the store.
    public var indexes: [Index] = []
    /// Free-form data for tools and policies.
    public var userInfo: [String: String] = [:]
    /// The class an app represents the entity's objects with (Core Data's `representedClassName`);
    /// informational, not part of any hash.
    public var className: String?
    /// Attributes declared on this entity (not inherited ones), in file order.
    public var attributes: [Attribute] = []
    /// Relationships declared on this entity, in file order.
    public var relationships: [Relationship] = []
    /// Where the entity's name is written.
    public var location: FileLocation?

    /// Creates an entity.
    public init(name: String, parent: String? = nil, isAbstract: Bool = false, attributes: [Attribute] = [], relationships: [Relationship] = []) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
    }
}

/// A store index over one or more properties.
public struct Index: Sendable, Hashable {
    /// The index's name, unique in the entity.
    public var name: String
    /// The indexed properties, in order.
    public var properties: [String]
    /// Creates an index.
    public init(name: String, properties: [String]) {
        self.name = name
        self.properties = properties
    }
}

/// An attribute: the equivalent of `NSAttributeDescription`.
public struct Attribute: Sendable {
    /// The name, unique in the entity and its ancestors.
    public var name: String
    /// The value type.
    public var type: AttributeType
    /// Whether the value may be missing (nil). Defaults to false, as in Core Data's editor.
    public var isOptional: Bool = false
    /// The value a new object gets when none is given.
    public var defaultValue: Value?
    /// Transient attributes are not stored and do not survive a migration.
    public var isTransient: Bool = false
    /// The attribute's identifier across versions: the name it first had (Core Data's renaming identifier).
    public var renamingIdentifier: String?
    /// The identifier Core Data matches across versions: the renaming identifier, else the name
    /// (what `renamingIdentifier` returns in Core Data when none was set). Kept when renamed again.
    package var canonicalIdentifier: String { renamingIdentifier ?? name }
    /// Changes the version hash without changing the structure.
    public var versionHashModifier: String?
    /// For transformable attributes, the name of the value transformer (informational on Linux).
    public var valueTransformer: String?
    /// For transformable attributes, the class of the values the transformer makes (Core Data's
    /// `customClassName`); informational, not part of any hash.
    public var className: String?
    /// Core Data's "Allows External Storage" (binary data may live outside the SQLite file); part
    /// of Core Data's version hash, so kept for models imported from Xcode.
    public var allowsExternalStorage = false
    /// Core Data's "Preserve After Deletion" (kept in persistent history); part of Core Data's version hash.
    public var preservesAfterDeletion = false
    /// Core Data's derivation of a derived attribute (`moods.@count`), kept from the model by
    /// `mapc import`: mapc stores the attribute's values as any other's and computes none.
    package var derivation: String?
    /// Validation rules checked when objects are written or migrated.
    public var validation = Validation()
    /// Free-form data for tools and policies.
    public var userInfo: [String: String] = [:]
    /// Where the attribute's name is written.
    public var location: FileLocation?

    /// Creates an attribute.
    public init(name: String, type: AttributeType, isOptional: Bool = false, defaultValue: Value? = nil) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
    }
}

/// Validation rules for an attribute's values, as Core Data's model editor offers them.
public struct Validation: Sendable, Hashable {
    /// Smallest allowed value (numbers and dates).
    public var min: Value?
    /// Largest allowed value (numbers and dates).
    public var max: Value?
    /// Smallest allowed length in characters (strings).
    public var minLength: Int?
    /// Largest allowed length in characters (strings).
    public var maxLength: Int?
    /// A regular expression the whole string must match (strings).
    public var regex: String?

    /// Creates empty rules.
    public init() {}

    /// Whether no rule is set.
    public var isEmpty: Bool { min == nil && max == nil && minLength == nil && maxLength == nil && regex == nil }
}

/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, CaseIterable {
    /// Deleting the object removes it from the related objects' inverse.
    case nullify
    /// Deleting the object deletes the related objects.
    case cascade
    /// The object cannot be deleted while it has related objects.
    case deny
    /// Nothing is done to the related objects.
    case noAction
}

/// A relationship: the equivalent of `NSRelationshipDescription`.
public struct Relationship: Sendable {
    /// The name, unique in the entity and its ancestors.
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// Whether the relationship holds many objects.
    public var isToMany: Bool = false
    /// For to-many relationships: whether the order of objects is kept.
    public var isOrdered: Bool = false
    /// The name of the inverse relationship on the destination entity.
    public var inverse: String?
    /// Whether the relationship has no inverse on purpose (`inverse: null` in a schema file; a
    /// Core Data model's relationship without one): not warned about.
    public var declaresNoInverse = false
    /// What a delete does to the related objects.
    public var deleteRule: DeleteRule = .nullify
    /// Whether the relationship may be empty. Defaults to false, as in Core Data's editor.
    public var isOptional: Bool = false
    /// Smallest number of objects, as the model declares it. Core Data's version hash includes
    /// it whatever the relationship's kind (Xcode writes `minCount="1"` on optional to-ones), so it
    /// is kept; it is a validation rule only for a to-many that holds some objects.
    public var minCount: Int?
    /// Largest number of objects, as the model declares it (0 or nil: no limit for a to-many;
    /// a to-one holds one).
    public var maxCount: Int?

    /// The smallest count, as Core Data's hash and comparisons take it (0 when none is declared).
    public var declaredMinCount: Int { minCount ?? 0 }
    /// The largest count, as Core Data's hash and comparisons take it: a to-one's is 1, a
    /// to-many's 0 (no limit) when none is declared.
    public var declaredMaxCount: Int { maxCount ?? (isToMany ? 0 : 1) }
    /// The relationship's identifier across versions: the name it first had (Core Data's renaming identifier).
    public var renamingIdentifier: String?
    /// The identifier Core Data matches across versions: the renaming identifier, else the name
    /// (what `renamingIdentifier` returns in Core Data when none was set). Kept when renamed again.
    package var canonicalIdentifier: String { renamingIdentifier ?? name }
    /// Changes the version hash without changing the structure.
    public var versionHashModifier: String?
    /// Transient relationships are not stored.
    public var isTransient: Bool = false
    /// Free-form data for tools and policies.
    public var userInfo: [String: String] = [:]
    /// Where the relationship's name is written.
    public var location: FileLocation?

    /// Creates a relationship.
    public init(name: String, destination: String, isToMany: Bool = false, isOrdered: Bool = false, inverse: String? = nil, isOptional: Bool = false) {
        self.name = name
        self.destination = destination
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.inverse = inverse
        self.isOptional = isOptional
    }
}
