import Foundation
internal import GRDB
import MapcModel
import MapcFoundation
import MapcStore

/// The `$manager` lookups, and relationships set for policies.
extension MigrationRun {
    // MARK: $manager lookups

    /// The destination objects an entity mapping made from the source objects (Core Data's `destinationInstances(forEntityMappingName:sourceInstances:)`).
    func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        let index = try index(ofMappingNamed: name)
        var result: [ObjectRef] = []
        for source in sourceInstances {
            guard let key = try sourceKey(of: source) else { continue }
            result += try destinations(of: index, source: StoredKey(entity: source.entity, key: key), sourceID: source.isSourceObject ? source.id : nil)
        }
        return result
    }

    /// The destination objects made from the source objects by whichever mapping made them, for a
    /// source relationship's targets: for each, the first mapping (in order) that may read it (its
    /// source entity's, or a fetch of its hierarchy: `MigrationAnalysis.entitiesRead`) and made an
    /// object the destination relationship takes (one source entity split over several mappings
    /// makes objects of several entities). The destination relationship is the one being set, or else
    /// the one of that name on the object being related; without either, any object.
    func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        let target = relationshipBeingSet ?? currentRelation.flatMap { current in
            destinationSchema.entity(named: current.destination.entity).flatMap { entity in destinationSchema.allRelationships(of: entity).first { $0.name == name } }
        }
        let taken = target.map { entities(under: $0.destination) }
        var result: [ObjectRef] = []
        for source in sourceInstances {
            guard let key = try sourceKey(of: source) else { continue }
            // Without one it can hold, the first made at all: setting it fails, saying which entity it is.
            var madeOtherwise: ObjectRef?
            for index in mapping.entityMappings.indices where analysis.entitiesRead[index].contains(source.entity) {
                let found = try destinations(of: index, source: StoredKey(entity: source.entity, key: key), sourceID: source.isSourceObject ? source.id : nil)
                if let first = found.first(where: { taken?.contains($0.entity) ?? true }) {
                    madeOtherwise = nil
                    result.append(first)
                    break
                }
                madeOtherwise = madeOtherwise ?? found.first
            }
            if let madeOtherwise { result.append(madeOtherwise) }
        }
        return result
    }

    /// A destination entity and its sub-entities, by name (asked per lookup: worked out once).
    func entities(under name: String) -> Set<String> {
        if let known = entitiesUnder[name] { return known }
        let found = destinationSchema.entity(named: name).map { Set(destinationSchema.hierarchy(under: $0).map(\.name)) } ?? [name]
        entitiesUnder[name] = found
        return found
    }

    /// The source objects an entity mapping made the destination objects from.
    func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef] {
        let index = try index(ofMappingNamed: name)
        var result: [ObjectRef] = []
        for destination in destinationInstances {
            guard let key = try destinationKey(of: destination) else { continue }
            let stored = StoredKey(entity: destination.entity, key: key)
            // Every source associated with it (a policy may merge several into one), as Core
            // Data's gives; an object a key rule made has the one its key comes from.
            var sources = try associations.origins(of: stored, mapping: index)
            if sources.isEmpty, let (mappingIndex, source) = try association(of: stored), mappingIndex == index { sources = [source] }
            for source in sources {
                guard let data = try sourceStore.readObject(entity: source.entity, key: source.key) else { continue }
                result.append(sourceGraph.ref(data))
            }
        }
        return result
    }

    /// The source object a destination object was created from: the object being related in
    /// phase 2 when it is that one, otherwise through the association its mapping recorded.
    func sourceObject(for destination: DestinationObject) throws -> SourceObject? {
        guard let key = try destination.primaryKey ?? destinationKey(of: destination.ref) else { return nil }
        let stored = StoredKey(entity: destination.entity, key: key)
        if let current = currentRelation, current.destination == stored { return current.source }
        return try sourceData(of: stored).map(sourceObject)
    }

    /// The data of the source object a destination object was made from, through the association
    /// its mapping recorded (or its key rule).
    func sourceData(of destination: StoredKey) throws -> ObjectData? {
        guard let (_, source) = try association(of: destination) else { return nil }
        return try sourceStore.readObject(entity: source.entity, key: source.key)
    }

    /// How the source store names the object a destination object was made from, when the
    /// destination keeps no ids (it numbers its objects anew, and names them by those numbers).
    func sourceName(of destination: StoredKey) throws -> String? {
        guard !destinationStore.keepsIdentities, let data = try sourceData(of: destination) else { return nil }
        return "\(sourceGraph.ref(data))"
    }

    // MARK: Relationships (for policies)

    /// Evaluates the mapping's relationship expressions for one destination object and writes
    /// them. A `copy` mapping carries each same-named source relationship over through the
    /// mappings of the related objects.
    func applyRelationshipMappings(_ entityMapping: EntityMapping, to destination: DestinationObject) throws {
        guard let source = try sourceObject(for: destination), let steps = relationshipSteps(entityMapping, destination.entity) else { return }
        for (relationship, propertyMapping) in steps {
            let targets: [ObjectRef]
            relationshipBeingSet = relationship
            defer { relationshipBeingSet = nil }
            if let propertyMapping {
                targets = try relatedObjects(propertyMapping, relationship, for: source, destination: destination.ref, mapping: entityMapping)
            } else if entityMapping.type == .copy, let sourceIDs = source.data.relationships[relationship.name] {
                let keys = source.data.relatedKeys[relationship.name] ?? []
                let refs = zip(sourceIDs, keys).map { ObjectRef(entity: $1.entity, id: $0, key: $1.key) }
                targets = try destinationInstances(forSourceRelationshipNamed: relationship.name, sourceInstances: refs)
            } else {
                continue
            }
            try setRelationship(relationship.name, of: destination, to: targets, mapping: entityMapping)
        }
    }

    /// The objects a relationship mapping's expression gives a destination object: a list, one
    /// object, or none for nil; anything else is an error naming the object.
    func relatedObjects(_ propertyMapping: PropertyMapping, _ relationship: Relationship, for source: SourceObject, destination: ObjectRef,
                        mapping entityMapping: EntityMapping) throws -> [ObjectRef] {
        // The usual form, `destinationInstances("Name", $source)`: the lookup the evaluator would make.
        if let name = MigrationAnalysis.lookupOfTheSource(propertyMapping.expression.expression),
           let found = try? destinationInstances(forEntityMappingNamed: name, sourceInstances: [source.ref]) {
            return found
        }
        let result = try evaluators.evaluate(propertyMapping.expression, at: mappingIndex(entityMapping), for: source, destination: destination, property: relationship.name) {
            try $0.evaluate($1)
        }
        return try (result.elements ?? (result.isNull ? [] : [result])).map { item in
            guard case .object(let ref) = item else {
                throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: relationship.name,
                                           message: "a relationship takes objects, but the expression gave \(item.kindName)")
            }
            return ref
        }
    }

    /// A mapping's relationships of a destination entity, each with its relationship mapping:
    /// worked out once per mapping and entity, not per object. Nil for an unknown entity.
    func relationshipSteps(_ entityMapping: EntityMapping, _ entityName: String) -> [(Relationship, PropertyMapping?)]? {
        let index = mappingIndex(entityMapping)
        if let known = relationshipStepsByMapping[index]?[entityName] { return known }
        guard let entity = destinationSchema.entity(named: entityName) else { return nil }
        let steps = destinationSchema.allRelationships(of: entity).filter { !$0.isTransient }.map { ($0, entityMapping.relationshipMapping(named: $0.name)) }
        relationshipStepsByMapping[index, default: [:]][entityName] = steps
        return steps
    }

    /// Sets an attribute of a destination object already written (`MigrationManager.setValue`),
    /// converted as a mapping's value is, in the form the store keeps it.
    func setValue(_ value: Value, forKey key: String, of destination: DestinationObject, mapping entityMapping: EntityMapping) throws {
        func refuse(_ message: String) -> MigrationError {
            MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: key, message: message)
        }
        guard let entity = destinationSchema.entity(named: destination.entity), !destination.isSourceObject else {
            throw refuse("\(destination.ref) is not an object of \(destinationSchema.version): values are set on the destination objects a mapping created")
        }
        let attributes = destinationSchema.allAttributes(of: entity).filter { !$0.isTransient }
        guard let attribute = attributes.first(where: { $0.name == key }) else {
            throw refuse(DestinationObject.noStoredAttribute(key, of: destination.entity, in: destinationSchema.version, among: attributes.map(\.name)))
        }
        guard let owner = try destination.primaryKey ?? setter.destinationKey(of: destination.ref) else {
            throw refuse("\(destination.ref) is not in the destination store: insert it (manager.insert) first, or set the value on the object before inserting it")
        }
        let coerced: Value
        switch ValueCoercion.coerce(.scalar(value), to: attribute.type) {
        case .success(let converted): coerced = converted
        case .failure(let problem): throw refuse("\(value) cannot be stored: \(problem.message)")
        }
        do {
            // Bytes an attribute keeps marked (Core Data's external storage) in the form the store keeps them.
            try writer.update(entity: destination.entity, id: destination.id, key: owner, attribute: key, type: attribute.type,
                              value: CoreDataExternalValue.storedForm(of: coerced, for: attribute, in: destinationStore.format))
        } catch let unstorable as RowWriter.UnstorableValue {
            throw refuse(unstorable.problem)
        }
    }

    /// Sets a destination relationship to destination objects, in order (`RelationshipSetter`).
    func setRelationship(_ name: String, of destination: DestinationObject, to targets: [ObjectRef], mapping entityMapping: EntityMapping, replacing: Bool = false) throws {
        try setter.set(name, of: destination, to: targets, mapping: entityMapping, replacing: replacing)
    }
}
