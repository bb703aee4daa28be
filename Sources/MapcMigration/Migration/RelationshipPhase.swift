import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// Phase 2: every entity mapping in order sets the relationships of the objects it created
/// (`createRelationships` per destination object, then `endRelationshipCreation`), walking its
/// associations in batches. Compiled mappings whose relationship expressions SQLite can evaluate
/// set them with one `UPDATE … FROM` per relationship.
struct RelationshipPhase {
    func run(_ run: MigrationRun) throws {
        for (index, entityMapping) in run.mapping.entityMappings.enumerated() {
            try run.checkCancellation()
            run.beginMapping(index, "relating objects (phase 2)")
            // The default policy has nothing to do for a mapping without relationship mappings.
            let customPolicy = !run.usesDefaultCreation[index]
            guard !run.ledger.relationshipsDone.contains(index), customPolicy || entityMapping.type == .copy || !entityMapping.relationships.isEmpty else {
                try run.callPolicy(index) { try $0.endRelationshipCreation($1, manager: $2) }
                continue
            }
            // The objects phase 2 visits: one per source object of a key rule, else one per association.
            let created = try run.keyRules[index] == nil ? run.associations.count(of: index) : run.ledger.created[index]
            var done = 0
            let relate = { (made: DestinationObject, data: ObjectData) throws in
                var destination = made
                // A custom policy's hook sees the object's values, as Core Data's `dInstance` holds
                // them (the default relates from the source alone, and reads none).
                if customPolicy, let key = made.primaryKey, let values = try run.destinationStore.attributeValues(ofKey: key, entity: made.entity, in: run.db) {
                    destination.attributes = values
                }
                run.currentRelation = (StoredKey(entity: destination.entity, key: destination.primaryKey ?? 0), run.sources.object(data))
                try run.callPolicy(index) { try $0.createRelationships(for: destination, mapping: $1, manager: $2) }
                done += 1
                if done % 10_000 == 0 { run.report(.relate, entityMapping.name, done, created) }
                if done % 64 == 0 { try run.checkCancellation() }
            }
            run.report(.relate, entityMapping.name, 0, created)
            var related: Int64?
            var firstRanDefault = false
            if run.sourceAttached, let compiled = try CompiledMappings(run).relationships(index) {
                var keepsDefault = true
                if customPolicy {
                    // The policy's word that it keeps the default `createRelationships`, checked on
                    // its first object: an override that does not run the default (no `super`),
                    // or runs it and writes more (a relationship, a value, an object), relates
                    // every object itself, through the hook.
                    let writesBefore = run.policyWrites
                    let ranDefault = try run.runsDefaultRelationships(index) {
                        related = try relateAssociations(run, index, batchSize: 1, limit: 1, relate)
                    }
                    keepsDefault = related == nil || (ranDefault && run.policyWrites == writesBefore)
                    firstRanDefault = ranDefault
                }
                if keepsDefault {
                    try run.withJoinTableCache(if: compiled.contains(where: \.writesJoinRows)) { for statement in compiled { try statement.execute(run) } }
                    run.ledger.compiledWork.append("\(entityMapping.name).relationships")
                    run.currentRelation = nil
                    run.report(.relate, entityMapping.name, created, created, finished: true)
                    try run.callPolicy(index) { try $0.endRelationshipCreation($1, manager: $2) }
                    continue
                }
            }
            // Whether a policy's hook ever runs the default, which evaluates the mapping's relationship expressions.
            let ranDefault = try run.runsDefaultRelationships(index) {
                if let rule = run.keyRules[index] {
                    try relateByKeyRule(run, index, rule, relate)
                } else {
                    _ = try relateAssociations(run, index, after: related, relate)
                }
            }
            // Declared relationships, or a copy's same-named ones: the default sets them.
            if customPolicy, !entityMapping.relationships.isEmpty || entityMapping.type == .copy, done > 0, !ranDefault, !firstRanDefault {
                run.ledger.relationshipExpressionsUnused.insert(index)
            }
            run.currentRelation = nil
            run.report(.relate, entityMapping.name, done, created, finished: true)
            try run.callPolicy(index) { try $0.endRelationshipCreation($1, manager: $2) }
        }
    }

    /// Relates a mapping's objects one by one through their associations, in batches, after the
    /// row `after` when given, at most `limit` of them: the row of the last one related.
    private func relateAssociations(_ run: MigrationRun, _ index: Int, after: Int64? = nil, batchSize: Int? = nil, limit: Int = .max,
                                    _ relate: (DestinationObject, ObjectData) throws -> Void) throws -> Int64? {
        var last: Int64?, count = 0
        var part = SourceParts(run, index)
        try run.associations.forEachBatch(of: index, size: batchSize ?? run.step.batchSize, after: after) { associations in
            var start = 0
            while start < associations.count, count < limit {
                let slice = Array(associations[start..<min(associations.count, start + part.size)])
                let sources = try run.sources.objects(of: slice, mapping: index)
                part.read(sources.values)
                for association in slice where count < limit {
                    last = association.row
                    count += 1
                    guard let data = sources[association.source] else { continue }
                    let entity = association.destination.entity, key = association.destination.key
                    var destination = DestinationObject(entity: entity, id: run.destinationStore.strategy.objectID(entity: entity, key: key, stored: association.id))
                    destination.primaryKey = key
                    try relate(destination, data)
                }
                start += slice.count
            }
            return count < limit
        }
        run.sources.forgetBatch()
        return last
    }
}

extension RelationshipPhase {
    /// Relates a declarative mapping's objects: the destination rows in its key range, in batches,
    /// each with the source object its key rule names.
    func relateByKeyRule(_ run: MigrationRun, _ index: Int, _ rule: KeyRule, _ relate: (DestinationObject, ObjectData) throws -> Void) throws {
        let destinationStore = run.destinationStore
        guard let storage = destinationStore.layout.entities.values.first(where: { $0.table == rule.table }) else { return }
        let key = storage.primaryKey.quotedSQLIdentifier
        let columns = [storage.primaryKey, storage.entityColumn] + (storage.idColumn.map { [$0] } ?? [])
        // The first batch from the range's first key, each next one after the last key read (no
        // key before the first is asked for: the range may begin at the least 64-bit integer).
        let select = "SELECT \(columns.map(\.quotedSQLIdentifier).joined(separator: ", ")) FROM main.\(rule.table.quotedSQLIdentifier) WHERE \(key) "
        let first = select + ">= ? AND \(key) <= ? ORDER BY \(key) LIMIT ?", next = select + "> ? AND \(key) <= ? ORDER BY \(key) LIMIT ?"
        var last: Int64?
        var part = SourceParts(run, index)
        while true {
            let rows = try Row.fetchAll(try run.writer.statement(last == nil ? first : next), arguments: [last ?? rule.range.lowerBound, rule.range.upperBound, run.step.batchSize])
            guard let final = rows.last else { break }
            last = try final.stored(0, "a row key")
            var destinations: [(DestinationObject, sourceKey: Int64)] = []
            for row in rows {
                let key: Int64 = try row.stored(0, "a row key")
                guard let entity = destinationStore.layout.entity(withDiscriminator: row[1] as DatabaseValue, inTable: rule.table) else { continue }
                let stored: String? = storage.idColumn == nil ? nil : try row.storedIfPresent(2, "an object id")
                var destination = DestinationObject(entity: entity, id: destinationStore.strategy.objectID(entity: entity, key: key, stored: stored))
                destination.primaryKey = key
                destinations.append((destination, key - rule.offset))
            }
            var start = 0
            while start < destinations.count {
                let slice = destinations[start..<min(destinations.count, start + part.size)]
                let sources = try run.sources.objects(keys: slice.map(\.sourceKey), ofEntities: rule.sourceEntities, mapping: index)
                part.read(sources.values)
                for (destination, sourceKey) in slice {
                    guard let data = sources[sourceKey] else { continue }
                    try relate(destination, data)
                }
                start += slice.count
            }
        }
        run.sources.forgetBatch()
    }
}

/// How many of a batch's source objects phase 2 reads at once: all of them where the mapping
/// reads some of their properties, and otherwise (a copy, a policy: whole objects) as many as
/// keep their texts and data near `Store.batchByteBudget`, starting small, doubling while the
/// objects are small, shrinking when they are large (2,000 objects of a megabyte each were 2 GB).
struct SourceParts {
    private(set) var size: Int
    private let limit: Int

    init(_ run: MigrationRun, _ index: Int) {
        self.init(limit: run.step.batchSize, readsWholeObjects: run.analysis.relationshipProperties[index] == nil)
    }

    init(limit: Int, readsWholeObjects: Bool) {
        self.limit = limit
        size = readsWholeObjects ? min(64, limit) : limit
    }

    /// Sizes the next part by the objects of the last.
    mutating func read(_ objects: some Collection<ObjectData>) {
        guard !objects.isEmpty else { return }
        let bytes = objects.reduce(0) { $0 + $1.byteCount }
        let budget = Store.batchByteBudget
        if bytes > budget {
            size = max(1, Int(Double(objects.count) * Double(budget) / Double(bytes)))
        } else if bytes < budget / 4 {
            size = min(limit, max(size, objects.count) * 2)
        }
    }
}
