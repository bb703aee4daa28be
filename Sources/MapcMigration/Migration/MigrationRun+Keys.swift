import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// Starting the key rules that spare association rows (`KeyRules`), and
/// the keys and identities of objects on both sides.
extension MigrationRun {
    /// Whether a mapping's objects must record their associations: someone may look them up, or
    /// its relationships are set in phase 2 (which finds each object's source that way).
    func recordsAssociations(_ index: Int, relationshipsDone: Bool) -> Bool {
        analysis.recordsAssociations(index, relationships: mapping.entityMappings[index].relationships, relationshipsDone: relationshipsDone)
    }

    // MARK: Key rules

    /// Fixes a declarative mapping's key rule as it starts (`KeyRules.decide`), from what the
    /// source holds: its keys' bounds and, when keys are numbered, its counts. Nil for other
    /// mappings, for a source with no objects, and where no rule holds: their objects record
    /// associations. A mapping model's step numbers a filtered or fetched mapping's objects
    /// through associations.
    func startKeyRule(_ index: Int) throws -> KeyRule? {
        guard analysis.followsKeyRule[index] else { return nil }
        let entityMapping = mapping.entityMappings[index]
        let read: String
        var entities: [String]
        if let fetch = entityMapping.sourceExpression.flatMap({ MigrationAnalysis.standardFetch($0.expression) }) {
            guard let root = sourceStore.schema.entity(named: fetch.entity) else { return nil }
            read = fetch.entity
            entities = sourceStore.schema.hierarchy(under: root).filter { !$0.isAbstract }.map(\.name)
        } else {
            read = entityMapping.source ?? ""
            entities = [read]
        }
        guard let destinationName = entityMapping.destination, let sourceStorage = sourceStore.layout.entities[read],
              let destinationStorage = destinationStore.layout.entities[destinationName] else { return nil }
        entities = entities.filter { sourceStore.layout.entities[$0]?.table == sourceStorage.table }
        if !step.keepsKeys, entityMapping.filter != nil || entityMapping.sourceExpression != nil { return nil }
        let bounds = try sourceStore.reading { db in
            // Each in a query of its own: SQLite reads a lone min() or max() of the key from one end
            // of the table, but scans every row for both together.
            let key = sourceStorage.primaryKey.quotedSQLIdentifier, table = sourceStorage.table.quotedSQLIdentifier
            return try Row.fetchOne(db, sql: "SELECT (SELECT min(\(key)) FROM \(table)), (SELECT max(\(key)) FROM \(table))")
        }
        guard let bounds, let low: Int64 = try bounds.storedIfPresent(0, "a row key"), let high: Int64 = try bounds.storedIfPresent(1, "a row key"), low <= high else { return nil }
        let source = KeyRules.Source(table: sourceStorage.table, entities: entities, discriminators: entities.compactMap { sourceStore.layout.entities[$0]?.discriminator },
                                     keys: low...high, counts: { try self.sources.rowCounts(sourceStorage, reading: read) })
        let table = destinationStorage.table
        guard let rule = try keyRules.decide(source, into: table, entity: destinationName, firstFree: { try self.writer.reserveKeys(0, for: destinationStorage) },
                                             keepsKeys: step.keepsKeys, isComplete: entityMapping.filter == nil && entityMapping.sourceExpression == nil) else { return nil }
        writer.reserve(through: rule.range.upperBound, in: table)
        if step.keepsKeys, rule.offset == 0 {
            // Keys kept as they are keep their store's high-water mark too (Core Data's Z_MAX, above
            // the largest key when objects were deleted): a deleted object's key is never handed
            // out again under the store's UUID, where an old object URI would name a new object.
            let mark = try sourceStore.reading { try sourceStore.strategy.highestKey(inTable: sourceStorage.table, layout: sourceStore.layout, $0) }
            writer.reserve(through: mark, in: table)
            try destinationStore.strategy.raiseKeyCounter(inTable: table, layout: destinationStore.layout, to: mark, writer.db)
        }
        keyRules.start(rule, for: index)
        return rule
    }

    /// The key rules whose ranges hold a destination key (several when they share one).
    func keyRules(holding destination: StoredKey) -> [(index: Int, rule: KeyRule)] {
        guard let table = destinationStore.layout.entities[destination.entity]?.table else { return [] }
        return keyRules.holding(destination.key, inTable: table)
    }

    // MARK: Keys and identities

    /// The source store key of a reference.
    func sourceKey(of ref: ObjectRef) throws -> Int64? {
        if let key = ref.key { return key }
        return try sourceStore.locate(id: ref.id)?.key
    }

    /// A destination object's reference from an association row's fields.
    func destinationRef(entity: String, key: Int64, stored: String?) -> ObjectRef {
        ObjectRef(entity: entity, id: destinationStore.strategy.objectID(entity: entity, key: key, stored: stored), key: key)
    }

    /// The destination objects a mapping created from a source object. `sourceID` is the
    /// object's identity when it comes from a reference the source graph handed out.
    func destinations(of mappingIndex: Int, source: StoredKey, sourceID: String? = nil) throws -> [ObjectRef] {
        if let rule = keyRules[mappingIndex] {
            guard rule.sourceEntities.contains(source.entity), let key = rule.destinationKey(ofSource: source.key) else { return [] }
            // Once a complete rule's mapping has created its objects, every source object has
            // one, of the mapping's entity, with the identity `makeDestination` (and the compiled
            // SQL) gives it: nothing to look up.
            if rule.isComplete, ledger.creationFinished.contains(mappingIndex), let sourceID {
                let stored = destinationStore.layout.entities[rule.entity]?.idColumn == nil ? nil : sourceID + identitySuffix(mappingIndex)
                return [destinationRef(entity: rule.entity, key: key, stored: stored)]
            }
            guard let found = try destinationObject(inTable: rule.table, key: key) else { return [] }
            return [found]
        }
        return try associations.destinations(of: mappingIndex, source: source).map { destinationRef(entity: $0.object.entity, key: $0.object.key, stored: $0.id) }
    }

    /// The destination object stored under a key in a table, if any.
    func destinationObject(inTable table: String, key: Int64) throws -> ObjectRef? {
        let lookup: RowLookup
        if let known = rowLookups[table] {
            lookup = known
        } else {
            guard let storage = destinationStore.layout.entities.values.first(where: { $0.table == table }) else { return nil }
            let columns = [storage.entityColumn] + (storage.idColumn.map { [$0] } ?? [])
            lookup = RowLookup(storage: storage, statement: try writer.statement(
                "SELECT \(columns.map(\.quotedSQLIdentifier).joined(separator: ", ")) FROM main.\(table.quotedSQLIdentifier) WHERE \(storage.primaryKey.quotedSQLIdentifier) = ?"))
            rowLookups[table] = lookup
        }
        // The statement is kept: the rows held back are written before it runs.
        try writer.flush()
        let row = StatementColumns(lookup.statement)
        let rows = try Row.fetchCursor(lookup.statement, arguments: [key])
        guard try rows.next() != nil else { return nil }
        let discriminator = row.value(0)
        let stored = lookup.storage.idColumn == nil ? nil : try row.textIfPresent(1, "an object id")
        // Stepped to its end, so the statement holds nothing open between lookups.
        while try rows.next() != nil {}
        guard let entity = destinationStore.layout.entity(withDiscriminator: discriminator, inTable: table) else { return nil }
        return destinationRef(entity: entity, key: key, stored: stored)
    }

    /// How a row of a destination table is found by key: worked out once per table, not per lookup.
    struct RowLookup {
        var storage: EntityStorage
        var statement: Statement
    }

    /// The mapping that created a destination object, for messages: by key rule, association or
    /// the key range of a creation that recorded none.
    func mapping(of destination: StoredKey) throws -> Int? {
        if let (index, _) = try association(of: destination) { return index }
        guard let table = destinationStore.layout.entities[destination.entity]?.table else { return nil }
        return ledger.unrecordedMapping(ofKey: destination.key, inTable: table)
    }

    /// The mapping and source object an association records for a destination object.
    func association(of destination: StoredKey) throws -> (mapping: Int, source: StoredKey)? {
        let rules = keyRules(holding: destination)
        if let (_, any) = rules.first {
            // The source object the key comes from; its entity says which of the rules made it.
            let key = destination.key - any.offset
            guard let data = try sourceStore.readObject(entity: any.sourceEntities.first ?? "", key: key),
                  let (index, _) = rules.first(where: { $0.rule.sourceEntities.contains(data.entity) }) else { return nil }
            return (index, StoredKey(entity: data.entity, key: key))
        }
        return try associations.origin(of: destination)
    }

    /// The destination key of a reference to a destination object.
    func destinationKey(of ref: ObjectRef) throws -> Int64? {
        try setter.destinationKey(of: ref)
    }
}
