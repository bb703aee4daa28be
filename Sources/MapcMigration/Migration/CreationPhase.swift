import Foundation
internal import GRDB
import MapcModel

/// Phase 1: every entity mapping in order creates its destination objects, with Core Data's hooks
/// (`begin`, `createDestinationInstances` per source object, `endInstanceCreation`). A mapping
/// whose expressions SQLite evaluates exactly as mapc does runs as one `INSERT … SELECT`.
struct CreationPhase {
    func run(_ run: MigrationRun) throws {
        for (index, entityMapping) in run.mapping.entityMappings.enumerated() {
            run.beginMapping(index, "creating objects (phase 1)")
            try run.checkCancellation()
            try run.callPolicy(index) { try $0.begin($1, manager: $2) }
            _ = try run.startKeyRule(index)
            var createdBySQL = false
            if run.sourceAttached, let compiled = try CompiledMappings(run).creation(index) {
                let total = try sourceCount(run, entityMapping)
                run.report(.create, entityMapping.name, 0, total)
                do {
                    try compiled.run(run)
                    createdBySQL = true
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    // SQLite refused a row (a uniqueness constraint the layout keeps as an index):
                    // the statement is undone, and the interpreter creates the objects one by one,
                    // so the error names the object and the constraint it breaks.
                    run.writer.rowsInserted(into: compiled.table)
                }
                if createdBySQL {
                    run.ledger.created[index] += compiled.count
                    run.ledger.compiledWork.append(entityMapping.name)
                    if compiled.includesRelationships {
                        run.ledger.relationshipsDone.insert(index)
                        run.ledger.compiledWork.append("\(entityMapping.name).relationships")
                    }
                    run.report(.create, entityMapping.name, total ?? run.ledger.created[index], total, finished: true)
                }
            }
            if !createdBySQL, entityMapping.type != .remove, entityMapping.destination != nil || entityMapping.type == .custom {
                var done = 0
                let total = try sourceCount(run, entityMapping)
                try run.startRelationshipsAtCreation(index)
                run.report(.create, entityMapping.name, 0, total)
                // Reading ahead pays for its thread and connection only over more than one batch.
                let readingAhead = run.step.readsAhead && (total ?? .max) > run.step.batchSize
                try forEachSourceObject(run, of: entityMapping, readingAhead: readingAhead) { source in
                    done += 1
                    if done % 10_000 == 0 {
                        run.report(.create, entityMapping.name, done, total)
                        try run.checkCancellation()
                    }
                    guard try run.passesFilter(index, source, mapping: entityMapping) else { return }
                    try run.createDestinationInstances(index, for: source, mapping: entityMapping)
                }
                // The last batch is not kept past its mapping.
                run.sourceGraph.remember(batch: [])
                run.report(.create, entityMapping.name, done, total, finished: true)
            }
            run.ledger.creationFinished.insert(index)
            try run.callPolicy(index) { try $0.endInstanceCreation($1, manager: $2) }
        }
    }

    private func sourceCount(_ run: MigrationRun, _ entityMapping: EntityMapping) throws -> Int? {
        guard entityMapping.sourceExpression == nil, let source = entityMapping.source else { return nil }
        return try run.sourceCount(ofExactEntity: source)
    }

    /// Source objects of a mapping: its source expression's, or every object of its source entity.
    private func forEachSourceObject(_ run: MigrationRun, of entityMapping: EntityMapping, readingAhead: Bool,
                                     _ body: (SourceObject) throws -> Void) throws {
        let sourceStore = run.sourceStore
        let batchSize = run.step.batchSize
        // Xcode's form, FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"), …),
        // streams: the entity and its sub-entities in batches, P as a filter, so memory stays flat.
        if let sourceExpression = entityMapping.sourceExpression, let (entity, predicate) = MigrationAnalysis.standardFetch(sourceExpression.expression) {
            guard let root = sourceStore.schema.entity(named: entity) else {
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
            for member in sourceStore.schema.hierarchy(under: root) where !member.isAbstract {
                try sourceStore.forEachBatch(ofExactEntity: member.name, batchSize: batchSize, properties: run.analysis.creationProperties[run.mappingIndex(entityMapping)],
                                             readingAhead: readingAhead) { batch in
                    run.sourceGraph.remember(batch: batch)
                    for data in batch {
                        let object = run.sourceObject(data)
                        let keep = try run.evaluators.evaluate(filter, at: run.mappingIndex(entityMapping), for: object, property: "sourceExpression") { try $0.evaluatePredicate($1) }
                        if keep { try body(object) }
                    }
                    run.sourceGraph.remember(batch: [])
                }
            }
            return
        }
        if let sourceExpression = entityMapping.sourceExpression {
            let result = try run.evaluators.evaluateWithoutSource(sourceExpression, at: run.mappingIndex(entityMapping), property: "sourceExpression")
            for item in result.elements ?? [result] {
                guard case .object(let ref) = item, var data = try run.sourceGraph.load(ref) else { continue }
                // The graph may hold the object as another mapping read it (some properties only);
                // this mapping's expressions, copies and policy get it whole.
                if let whole = try run.sourceGraph.wholeObject(ifPartial: data) { data = whole }
                try body(run.sourceObject(data))
            }
            return
        }
        guard let entity = entityMapping.source else { return }
        try sourceStore.forEachBatch(ofExactEntity: entity, batchSize: batchSize, properties: run.analysis.creationProperties[run.mappingIndex(entityMapping)],
                                     readingAhead: readingAhead) { batch in
            run.sourceGraph.remember(batch: batch)
            for data in batch { try body(run.sourceObject(data)) }
            // Not kept past its work: a batch read ahead goes back to its reader, which frees it.
            run.sourceGraph.remember(batch: [])
        }
    }
}
