import Foundation
internal import GRDB

/// Which objects are looked up, the key rules that spare association rows, and keys and identities.
extension MigrationManager {
    // MARK: Counting source objects

    /// Whether an entity of the source has its table to itself. Every row of the source is of an
    /// entity the schema has (`Store.checkEveryRowIsRecognised`, before any step), so such a table's
    /// rows are all that entity's, and SQLite counts them from an index without reading them.
    func isAloneInItsTable(_ storage: EntityStorage) -> Bool {
        sourceStore.layout.entities.values.filter { $0.table == storage.table }.count == 1
    }

    /// The number of source objects of exactly one entity: the progress total of a mapping that
    /// reads them. Without the shortcut, a scan of the whole table per mapping.
    func sourceCount(ofExactEntity entity: String) throws -> Int {
        guard let storage = sourceStore.layout.entities[entity], isAloneInItsTable(storage) else {
            return try sourceStore.count(of: entity, exactly: true)
        }
        return try sourceStore.reading { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(storage.table.quotedDatabaseIdentifier)") ?? 0 }
    }

    /// Whether a mapping's objects must record their associations: someone may look them up, or
    /// its relationships are set in phase 2 (which finds each object's source that way).
    func recordsAssociations(_ index: Int, relationshipsDone: Bool) -> Bool {
        analysis.recordsAssociations(index, relationships: mapping.entityMappings[index].relationships, relationshipsDone: relationshipsDone)
    }

    // MARK: Key rules

    /// How a declarative mapping's destination keys follow from its source keys: `destination =
    /// source + offset`, every key of `range` in `table` set aside for the mapping. Mappings that
    /// read different entities of one source table into one destination table share an offset of
    /// 0 and one range: they keep the source's keys (as Core Data's lightweight migration keeps
    /// `Z_PK`), and a destination key still has one source object, whose entity tells the mapping.
    struct KeyRule {
        /// The source table the mapping reads.
        var sourceTable: String
        /// The entities of the source table it reads, and their discriminators.
        var sourceEntities: [String]
        var sourceDiscriminators: [DatabaseValue]
        /// The destination table its objects go to.
        var table: String
        var offset: Int64
        /// The destination keys set aside for it.
        var range: ClosedRange<Int64>
        /// The destination entity of its objects.
        var entity: String
        /// Whether every object of its source entities has an object of the mapping (no filter,
        /// no fetch): then `source key + offset` is an object's key without looking.
        var isComplete: Bool

        func destinationKey(ofSource key: Int64) -> Int64? {
            let (sum, overflow) = key.addingReportingOverflow(offset)
            return overflow || !range.contains(sum) ? nil : sum
        }
    }

    /// Fixes a declarative mapping's key rule as it starts. When the step keeps keys (an inferred
    /// step, as Core Data's lightweight migration keeps `Z_PK`) the source's keys are kept where
    /// they are free, and otherwise moved to a range of their own. Otherwise (a mapping model's
    /// step) keys are numbered from the table's first free key in creation order, as Core Data's
    /// migration manager numbers new objects, and a rule exists only where that numbering is
    /// arithmetic: the mapping reads every row of a source table whose keys have no gaps. Nil for
    /// other mappings, for a source with no objects, and where keys would not fit in 64 bits: their
    /// objects record associations.
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
        // A mapping model's step numbers a filtered or fetched mapping's objects through associations.
        if !step.keepsKeys, entityMapping.filter != nil || entityMapping.sourceExpression != nil { return nil }
        let bounds = try sourceStore.reading { db in
            // Each in a query of its own: SQLite reads a lone min() or max() of the key from one end
            // of the table, but scans every row for both together.
            let key = sourceStorage.primaryKey.quotedDatabaseIdentifier, table = sourceStorage.table.quotedDatabaseIdentifier
            return try Row.fetchOne(db, sql: "SELECT (SELECT min(\(key)) FROM \(table)), (SELECT max(\(key)) FROM \(table))")
        }
        guard let bounds, let low: Int64 = try bounds.storedIfPresent(0, "a row key"), let high: Int64 = try bounds.storedIfPresent(1, "a row key") else { return nil }
        let discriminators = entities.compactMap { sourceStore.layout.entities[$0]?.discriminator }
        let isComplete = entityMapping.filter == nil && entityMapping.sourceExpression == nil
        let first = try writer.reserveKeys(0, for: destinationStorage)
        let table = destinationStorage.table
        let rule: KeyRule
        if !step.keepsKeys {
            // Numbered from the table's first free key in creation order, as Core Data's migration
            // manager numbers new objects: a rule only when the mapping reads every row of a source
            // table whose keys have no gaps (otherwise the objects record associations).
            // Every row is the mapping's entity when the table holds no other; otherwise count them.
            // A table's own count is SQLite's quick `count(*)` (from its smallest index); with a
            // second column the query scans every row.
            let counts: (total: Int64, read: Int64)?
            if isAloneInItsTable(sourceStorage) {
                let total = Int64(try sourceCount(ofExactEntity: read))
                counts = (total, total)
            } else {
                let row = try sourceStore.reading { db in
                    try Row.fetchOne(db, sql: "SELECT count(*), count(CASE WHEN \(sourceStorage.entityColumn.quotedDatabaseIdentifier) = ? THEN 1 END) FROM \(sourceStorage.table.quotedDatabaseIdentifier)",
                                     arguments: [sourceStorage.discriminator])
                }
                counts = try row.flatMap { row in
                    guard let total: Int64 = try row.storedIfPresent(0, "a count"), let read: Int64 = try row.storedIfPresent(1, "a count") else { return nil }
                    return (total, read)
                }
            }
            guard let counts, counts.total == counts.read, high.subtractingReportingOverflow(low) == (counts.total - 1, false) else { return nil }
            let (offset, o1) = first.subtractingReportingOverflow(low)
            let (last, o2) = high.addingReportingOverflow(offset)
            guard !o1, !o2 else { return nil }
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: offset, range: first...last, entity: destinationName, isComplete: isComplete)
        } else if let shared = keptKeys[table], shared.sourceTable == sourceStorage.table, shared.entities.isDisjoint(with: entities) {
            // Another entity of the same source table: its keys are free in the shared range.
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: 0, range: shared.range, entity: destinationName, isComplete: isComplete)
            keptKeys[table]?.entities.formUnion(entities)
        } else if keptKeys[table] == nil, first <= low {
            // The source's keys are all free here: keep them.
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: 0, range: low...high, entity: destinationName, isComplete: isComplete)
            keptKeys[table] = (sourceStorage.table, Set(entities), low...high)
        } else {
            let (offset, o1) = first.subtractingReportingOverflow(low)
            guard !o1 else { return nil }
            let (last, o2) = high.addingReportingOverflow(offset)
            guard !o2 else { return nil }
            // A range of its own, above every key set aside or handed out in the table so far.
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: offset, range: first...last, entity: destinationName, isComplete: isComplete)
        }
        try writer.reserve(through: rule.range.upperBound, in: table)
        if step.keepsKeys, rule.offset == 0 {
            // Keys kept as they are keep their store's high-water mark too (Core Data's Z_MAX, above
            // the largest key when objects were deleted): a deleted object's key is never handed
            // out again under the store's UUID, where an old object URI would name a new object.
            let mark = try sourceStore.reading { try sourceStore.strategy.highestKey(inTable: sourceStorage.table, layout: sourceStore.layout, $0) }
            try writer.reserve(through: mark, in: table)
            try destinationStore.strategy.raiseKeyCounter(inTable: table, layout: destinationStore.layout, to: mark, writer.db)
        }
        keyRules[index] = rule
        return rule
    }

    /// The key rules whose ranges hold a destination key (several when they share one).
    func keyRules(holding destination: StoredKey) -> [(index: Int, rule: KeyRule)] {
        guard let table = destinationStore.layout.entities[destination.entity]?.table else { return [] }
        return keyRules.filter { $0.value.table == table && $0.value.range.contains(destination.key) }.map { ($0.key, $0.value) }
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
            if rule.isComplete, creationFinished.contains(mappingIndex), let sourceID {
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
                "SELECT \(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM main.\(table.quotedDatabaseIdentifier) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?"))
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
        return unrecordedBlocks.first { $0.table == table && $0.range.contains(destination.key) }?.mapping
    }

    /// The mapping and source object an association records for a destination object.
    func association(of destination: StoredKey) throws -> (mapping: Int, source: StoredKey)? {
        let rules = keyRules(holding: destination)
        if let (_, any) = rules.first {
            // The source object the key comes from; its entity says which of the rules made it.
            let key = destination.key - any.offset
            guard let data = try sourceStore.object(entity: any.sourceEntities.first ?? "", key: key),
                  let (index, _) = rules.first(where: { $0.rule.sourceEntities.contains(data.entity) }) else { return nil }
            return (index, StoredKey(entity: data.entity, key: key))
        }
        return try associations.origin(of: destination)
    }

    /// The destination key of a reference to a destination object.
    func destinationKey(of ref: ObjectRef) throws -> Int64? {
        if let key = ref.key { return key }
        return try destinationStore.locate(id: ref.id, try db)?.key
    }
}
