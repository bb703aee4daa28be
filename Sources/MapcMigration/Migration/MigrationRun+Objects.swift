import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// Destination objects: built from a mapping's expressions (and for policies), written, associated.
extension MigrationRun {
    // MARK: Building destination objects (for policies)

    /// A destination object for a source object: the mapping's destination entity (or `entity`),
    /// with every attribute expression evaluated and defaults for the rest. Its identity is the
    /// source's for the first mapping reading that source entity, `sourceID.MappingName` otherwise
    /// (kept by formats that store identities; others identify it by its key once inserted).
    func makeDestination(for source: SourceObject, mapping entityMapping: EntityMapping, entity: String? = nil) throws -> DestinationObject {
        let index = mappingIndex(entityMapping)
        guard let entityName = entity ?? entityMapping.destination else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' has no destination entity in \(destinationSchema.version)")
        }
        let plan = try builder.attributePlan(index, entityName)
        // An object of another entity than the mapping's (a policy splitting its source) has an id
        // of its own: the source's is the mapping's own object's, and ids are unique in a store.
        let other = entity.map { $0 != entityMapping.destination } ?? false
        let id = source.data.id + identitySuffix(index) + (other ? ".\(entityName)" : "")
        let row = try builder.values(plan, for: source, destination: ObjectRef(entity: entityName, id: id), mapping: index)
        return builder.object(plan, entity: entityName, id: id, row)
    }

    /// What the default policy's `createDestinationInstances` does (`makeDestination`, then
    /// `insert`), with the values kept in the row's order from the expressions to the statement:
    /// no dictionary of them per object. An object whose values need coercing goes the long way.
    func createDestination(_ index: Int, for source: SourceObject, mapping entityMapping: EntityMapping) throws {
        guard let entityName = entityMapping.destination else {
            _ = try makeDestination(for: source, mapping: entityMapping)   // throws its error
            return
        }
        let plan = try builder.attributePlan(index, entityName)
        let id = source.data.id + identitySuffix(index)
        let row = try builder.values(plan, for: source, destination: ObjectRef(entity: entityName, id: id), mapping: index)
        guard row.storable, plan.matchesInsertOrder else {
            try insert(builder.object(plan, entity: entityName, id: id, row), associatedWith: source, mapping: entityMapping)
            return
        }
        _ = try insertRow(index, from: source, entity: entityName, id: id, values: row.values, mapping: entityMapping)
    }

    /// Writes a destination object and records that `mapping` created it from `source`.
    @discardableResult
    func insert(_ destination: DestinationObject, associatedWith source: SourceObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        if entityMapping.policy != nil { ledger.entitiesPoliciesWrote.insert(destination.entity) }
        let row = try rowValues(of: destination, mapping: entityMapping)
        let key = try insertRow(mappingIndex(entityMapping), from: source, entity: destination.entity, id: destination.id, values: row.values, mapping: entityMapping)
        return try stored(row.object, under: key)
    }

    /// A destination object made storable (its values coerced, when anything but `makeDestination`
    /// set them) and its values in the order its row takes them.
    func rowValues(of destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> (object: DestinationObject, values: [Value]) {
        var storable = destination
        if !destination.isStorable { storable.attributes = try builder.storableAttributes(of: destination, mapping: entityMapping) }
        var attributes = storable.attributes
        builder.markingExternalValues(of: destination, in: &attributes)
        return (storable, try writer.insertPlan(destination.entity).attributeNames.map { attributes[$0] ?? .null })
    }

    /// An object as inserted under `key`: with its key and the identity it is stored under.
    func stored(_ object: DestinationObject, under key: Int64) throws -> DestinationObject {
        var inserted = object
        inserted.primaryKey = key
        inserted.id = try storedID(entity: object.entity, key: key, id: object.id)
        return inserted
    }

    /// Writes the row of an object a mapping creates from a source object, values in the order
    /// of the entity's stored attributes: under the key the mapping's rule gives (the rule is then
    /// the association), with the relationships written with the rows, and otherwise recording
    /// its association when anything may ask for it. Returns the object's key.
    func insertRow(_ index: Int, from source: SourceObject, entity: String, id: String, values: [Value], mapping entityMapping: EntityMapping) throws -> Int64 {
        try checkIdentity(id, of: entity, mapping: entityMapping)
        var ruleKey: Int64?
        if let rule = keyRules[index], let sourceKey = source.data.key, rule.sourceEntities.contains(source.data.entity),
           destinationStore.layout.entities[entity]?.table == rule.table, let key = rule.destinationKey(ofSource: sourceKey) {
            ruleKey = key
        }
        var key = ruleKey
        var links: (plan: RowWriter.InsertPlan, targets: [Int64?])?
        if creationLinks[index] != nil {
            // Named as it is stored, as phase 2 names it in its errors: its key comes first.
            let chosen = try ruleKey ?? writer.reserveKeys(1, for: destinationStore.layout.storage(of: entity))
            key = chosen
            links = try linksAtCreation(index, for: source, destination: ObjectRef(entity: entity, id: try storedID(entity: entity, key: chosen, id: id), key: chosen),
                                        mapping: entityMapping)
        }
        let inserted = try writeRow(entity: entity, id: id, values: values, key: key, links: links, mapping: entityMapping)
        if ruleKey == nil {
            if recordsAssociations(index, relationshipsDone: ledger.relationshipsDone.contains(index)) {
                var object = DestinationObject(entity: entity, id: try storedID(entity: entity, key: inserted, id: id))
                object.primaryKey = inserted
                try associate(source: source.ref, destination: &object, mapping: entityMapping)
            } else if let table = destinationStore.layout.entities[entity]?.table {
                // Nobody looks the object up and phase 2 has nothing to set: its key is enough to
                // say which mapping made it.
                ledger.noteUnrecorded(inserted...inserted, in: table, by: index)
            }
        }
        ledger.created[index] += 1
        return inserted
    }

    /// An inserted object's identity: the one it was given, where the format keeps identities,
    /// otherwise the one its key makes.
    func storedID(entity: String, key: Int64, id: String) throws -> String {
        destinationStore.strategy.objectID(entity: entity, key: key, stored: try writer.keepsIdentity(of: entity) ? id : nil)
    }

    /// Writes a new destination object that no source object is migrated into, as a Core Data
    /// policy inserts a new object into the destination context (a `Continent` made once for
    /// many countries). It counts as created by the mapping; `setRelationship` links it.
    @discardableResult
    func insert(_ destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        if entityMapping.policy != nil { ledger.entitiesPoliciesWrote.insert(destination.entity) }
        let inserted = try write(destination, mapping: entityMapping)
        ledger.created[mappingIndex(entityMapping)] += 1
        return inserted
    }

    /// Writes a destination object under a key handed out now.
    func write(_ destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        let row = try rowValues(of: destination, mapping: entityMapping)
        try checkIdentity(destination.id, of: destination.entity, mapping: entityMapping)
        return try stored(row.object, under: try writeRow(entity: destination.entity, id: destination.id, values: row.values, mapping: entityMapping))
    }

    /// Refuses an identity the destination format would store cut short.
    func checkIdentity(_ id: String, of entity: String, mapping entityMapping: EntityMapping) throws {
        guard try writer.keepsIdentity(of: entity), ValueLimits.containsNUL(id) else { return }
        throw MigrationError.value(mapping: entityMapping.name, entity: entity, object: id, property: "id",
                                   message: "an id cannot contain the NUL character (U+0000): SQLite would cut it short there")
    }

    /// Inserts the row of a destination object (values in the order of its entity's stored
    /// attributes, each storable, its identity checked) under `key` or a key handed out now, with
    /// the relationships written with the row; a refused constraint named.
    func writeRow(entity: String, id: String, values: [Value], key chosen: Int64? = nil, links: (plan: RowWriter.InsertPlan, targets: [Int64?])? = nil,
                          mapping entityMapping: EntityMapping) throws -> Int64 {
        let plan = try links?.plan ?? writer.insertPlan(entity)
        do {
            // A row a constraint refuses is named by the writer, maybe later (it holds rows back).
            return try writer.insert(plan, entity: entity, id: id, values: values, key: chosen, linkedTo: links?.targets ?? [], origin: entityMapping.name)
        } catch let error as RowWriter.UnstorableValue {
            throw MigrationError.value(mapping: entityMapping.name, entity: entity, object: id, property: error.property, message: error.problem)
        }
    }

    /// Records that `mapping` created `destination` from `source` (`NSMigrationManager.associate`).
    func associate(source: ObjectRef, destination: DestinationObject, mapping entityMapping: EntityMapping) throws {
        // The object may have a source already: several sources relate it several times.
        ledger.irregularAssociations.insert(mappingIndex(entityMapping))
        var copy = destination
        try associate(source: source, destination: &copy, mapping: entityMapping)
    }

    func associate(source: ObjectRef, destination: inout DestinationObject, mapping entityMapping: EntityMapping) throws {
        guard let key = destination.primaryKey else {
            // Core Data's `insertNewObject` inserts as it makes; `makeDestination` does not.
            throw MigrationError.policy(mapping: entityMapping.name,
                                        message: "associate(source:destination:mapping:) was given \(destination.ref), not inserted yet: insert it with manager.insert(_:associatedWith:mapping:), which associates it too")
        }
        guard let sourceKey = try sourceKey(of: source) else {
            throw MigrationError.policy(mapping: entityMapping.name,
                                        message: "associate(source:destination:mapping:) was given the source \(source), which is not an object of the source store")
        }
        let stored = try destinationStore.layout.storage(of: destination.entity).idColumn == nil ? nil : destination.id
        if destination.entity != entityMapping.destination || source.entity != entityMapping.source {
            ledger.irregularAssociations.insert(mappingIndex(entityMapping))
        }
        try associations.record(mapping: mappingIndex(entityMapping), source: StoredKey(entity: source.entity, key: sourceKey),
                                destination: StoredKey(entity: destination.entity, key: key), id: stored)
    }
}
