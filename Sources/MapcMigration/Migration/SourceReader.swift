import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// How a migration run reads its source store: a mapping's source objects in batches (every
/// object of its source entity, Xcode's standard fetch, or what its source expression gives),
/// the source objects behind a batch of destination objects, and the counts progress and the key
/// rules need. An object read is remembered by the source graph while its batch is worked on, so
/// that expressions following a relationship find it without reading it again; a batch is
/// forgotten when its work is done, so memory stays flat.
struct SourceReader {
    /// The store migrated from (read only).
    let store: Store
    /// The source objects the run's expressions and policies see.
    let graph: StoreObjectGraph
    /// Which properties each mapping reads.
    let analysis: MigrationAnalysis
    /// Evaluates a fetch's predicate and a source expression.
    let evaluators: MappingEvaluators
    /// Source objects read per batch.
    let batchSize: Int
    /// Whether the next batch may be read ahead on another connection while one is worked on.
    let readsAhead: Bool

    /// A source object as policies and expressions see it, remembered while its batch is in use.
    func object(_ data: ObjectData) -> SourceObject {
        graph.remember(data)
        return SourceObject(data: data, graph: graph)
    }

    /// Forgets the batch worked on (the last one is not kept past its work).
    func forgetBatch() {
        graph.remember(batch: [])
    }

    /// Whether reading `total` objects pays for a reader thread and its connection: over more than one batch.
    func readsAhead(total: Int?) -> Bool {
        readsAhead && (total ?? .max) > batchSize
    }

    /// How many source objects a mapping reads, for progress: nil when a source expression chooses them.
    func count(of entityMapping: EntityMapping) throws -> Int? {
        guard entityMapping.sourceExpression == nil, let source = entityMapping.source else { return nil }
        return try count(ofExactEntity: source)
    }

    /// Whether an entity of the source has its table to itself. Every row of the source is of an
    /// entity the schema has (`Store.checkEveryRowIsRecognised`, before any step), so such a table's
    /// rows are all that entity's, and SQLite counts them from an index without reading them.
    private func isAloneInItsTable(_ storage: EntityStorage) -> Bool {
        store.layout.entities.values.filter { $0.table == storage.table }.count == 1
    }

    /// The number of source objects of exactly one entity: the progress total of a mapping that
    /// reads them. Without the shortcut, a scan of the whole table per mapping.
    func count(ofExactEntity entity: String) throws -> Int {
        guard let storage = store.layout.entities[entity], isAloneInItsTable(storage) else {
            return try store.countObjects(of: entity, exactly: true)
        }
        return try store.reading { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(storage.table.quotedSQLIdentifier)") ?? 0 }
    }

    /// The rows of a source table, and those of the entity `read`. A table's own count is SQLite's
    /// quick `count(*)` (from its smallest index); with a second column the query scans every row,
    /// so a table holding one entity is counted once.
    func rowCounts(_ storage: EntityStorage, reading read: String) throws -> (total: Int64, read: Int64)? {
        if isAloneInItsTable(storage) {
            let total = Int64(try count(ofExactEntity: read))
            return (total, total)
        }
        let row = try store.reading { db in
            try Row.fetchOne(db, sql: "SELECT count(*), count(CASE WHEN \(storage.entityColumn.quotedSQLIdentifier) = ? THEN 1 END) FROM \(storage.table.quotedSQLIdentifier)",
                             arguments: [storage.discriminator])
        }
        return try row.flatMap { row in
            guard let total: Int64 = try row.storedIfPresent(0, "a count"), let read: Int64 = try row.storedIfPresent(1, "a count") else { return nil }
            return (total, read)
        }
    }

    /// Source objects of a mapping: its source expression's, or every object of its source entity.
    func forEachObject(of index: Int, _ entityMapping: EntityMapping, readingAhead: Bool,
                                     _ body: (SourceObject) throws -> Void) throws {
        // Xcode's form, FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"), …),
        // streams: the entity and its sub-entities in batches, P as a filter, so memory stays flat.
        if let sourceExpression = entityMapping.sourceExpression, let (entity, predicate) = MigrationAnalysis.standardFetch(sourceExpression.expression) {
            guard let root = store.schema.entity(named: entity) else {
                throw MigrationError.setup("mapping '\(entityMapping.name)' fetches unknown source entity '\(entity)'")
            }
            let parsed: Expr
            switch ExpressionParser.parse(predicate) {
            case .success(let expression): parsed = expression
            case .failure(let error):
                throw MigrationError.expression(mapping: entityMapping.name, property: "sourceExpression", object: ObjectRef(entity: entity, id: ""),
                                                diagnostic: sourceExpression.source.diagnostic(.error, "the fetch request's predicate does not parse: \(error.description)", at: sourceExpression.expression.range))
            }
            let filter = MappingExpression(source: sourceExpression.source, expression: parsed)
            for member in store.schema.hierarchy(under: root) where !member.isAbstract {
                try store.forEachBatch(ofExactEntity: member.name, batchSize: batchSize, properties: analysis.creationProperties[index],
                                             readingAhead: readingAhead) { batch in
                    graph.remember(batch: batch)
                    for data in batch {
                        let object = object(data)
                        let keep = try evaluators.evaluate(filter, at: index, for: object, property: "sourceExpression") { try $0.evaluateStorePredicate($1) }
                        if keep { try body(object) }
                    }
                    graph.remember(batch: [])
                }
            }
            return
        }
        if let sourceExpression = entityMapping.sourceExpression {
            let result = try evaluators.evaluateWithoutSource(sourceExpression, at: index, property: "sourceExpression")
            for item in result.elements ?? [result] {
                guard case .object(let ref) = item, var data = try graph.load(ref) else { continue }
                // The graph may hold the object as another mapping read it (some properties only);
                // this mapping's expressions, copies and policy get it whole.
                if let whole = try graph.wholeObject(ifPartial: data) { data = whole }
                try body(object(data))
            }
            return
        }
        guard let entity = entityMapping.source else { return }
        try store.forEachBatch(ofExactEntity: entity, batchSize: batchSize, properties: analysis.creationProperties[index],
                                     readingAhead: readingAhead) { batch in
            graph.remember(batch: batch)
            for data in batch { try body(object(data)) }
            // Not kept past its work: a batch read ahead goes back to its reader, which frees it.
            graph.remember(batch: [])
        }
    }

    /// The source objects of a batch of associations, a few queries per entity (mapping `index`'s relationship properties).
    func objects(of associations: [AssociationIndex.Association], mapping index: Int) throws -> [StoredKey: ObjectData] {
        var sources: [StoredKey: ObjectData] = [:]
        var keysByEntity: [String: [Int64]] = [:]
        for association in associations { keysByEntity[association.source.entity, default: []].append(association.source.key) }
        for (entity, keys) in keysByEntity {
            for (key, data) in try store.objects(keys: keys, ofExactEntity: entity, properties: analysis.relationshipProperties[index]) {
                sources[StoredKey(entity: entity, key: key)] = data
            }
        }
        graph.remember(batch: Array(sources.values))
        return sources
    }

    /// The source objects under `keys`, of any of `entities` (mapping `index`'s relationship properties).
    func objects(keys: [Int64], ofEntities entities: [String], mapping index: Int) throws -> [Int64: ObjectData] {
        var sources: [Int64: ObjectData] = [:]
        for entity in entities {
            sources.merge(try store.objects(keys: keys, ofExactEntity: entity, properties: analysis.relationshipProperties[index])) { first, _ in first }
        }
        graph.remember(batch: Array(sources.values))
        return sources
    }
}
