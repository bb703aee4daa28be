import Foundation
internal import GRDB

/// Phase 1: every entity mapping in order creates its destination objects, with Core Data's hooks
/// (`begin`, `createDestinationInstances` per source object, `endInstanceCreation`). A mapping
/// whose expressions SQLite evaluates exactly as mapc does runs as one `INSERT … SELECT`.
struct CreationPhase {
    func run(_ manager: MigrationManager) throws {
        for (index, entityMapping) in manager.mapping.entityMappings.enumerated() {
            manager.currentMapping = index
            try manager.checkCancellation()
            try manager.hook(entityMapping) { try manager.policies[index].begin(entityMapping, manager: manager) }
            _ = try manager.startKeyRule(index)
            var createdBySQL = false
            if manager.sourceAttached, let compiled = try CompiledMappings(manager).creation(index) {
                let total = try sourceCount(manager, entityMapping)
                manager.report(.create, entityMapping.name, 0, total)
                do {
                    try compiled.run(manager)
                    createdBySQL = true
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    // SQLite refused a row (a uniqueness constraint the layout keeps as an index):
                    // the statement is undone, and the interpreter creates the objects one by one,
                    // so the error names the object and the constraint it breaks.
                    manager.writer.rowsInserted(into: compiled.table)
                }
                if createdBySQL {
                    manager.ledger.created[index] += compiled.count
                    manager.ledger.compiledWork.append(entityMapping.name)
                    if compiled.includesRelationships {
                        manager.ledger.relationshipsDone.insert(index)
                        manager.ledger.compiledWork.append("\(entityMapping.name).relationships")
                    }
                    manager.report(.create, entityMapping.name, total ?? manager.ledger.created[index], total, finished: true)
                }
            }
            if !createdBySQL, entityMapping.type != .remove, entityMapping.destination != nil || entityMapping.type == .custom {
                var done = 0
                let total = try sourceCount(manager, entityMapping)
                try manager.startRelationshipsAtCreation(index)
                manager.report(.create, entityMapping.name, 0, total)
                // Reading ahead pays for its thread and connection only over more than one batch.
                let readingAhead = manager.step.readsAhead && (total ?? .max) > manager.step.batchSize
                try forEachSourceObject(manager, of: entityMapping, readingAhead: readingAhead) { source in
                    done += 1
                    if done % 10_000 == 0 {
                        manager.report(.create, entityMapping.name, done, total)
                        try manager.checkCancellation()
                    }
                    guard try manager.passesFilter(index, source, mapping: entityMapping) else { return }
                    try manager.createDestinationInstances(index, for: source, mapping: entityMapping)
                }
                // The last batch is not kept past its mapping.
                manager.sourceGraph.remember(batch: [])
                manager.report(.create, entityMapping.name, done, total, finished: true)
            }
            manager.ledger.creationFinished.insert(index)
            try manager.hook(entityMapping) { try manager.policies[index].endInstanceCreation(entityMapping, manager: manager) }
        }
    }

    private func sourceCount(_ manager: MigrationManager, _ entityMapping: EntityMapping) throws -> Int? {
        guard entityMapping.sourceExpression == nil, let source = entityMapping.source else { return nil }
        return try manager.sourceCount(ofExactEntity: source)
    }

    /// Source objects of a mapping: its source expression's, or every object of its source entity.
    private func forEachSourceObject(_ manager: MigrationManager, of entityMapping: EntityMapping, readingAhead: Bool,
                                     _ body: (SourceObject) throws -> Void) throws {
        let sourceStore = manager.sourceStore
        let batchSize = manager.step.batchSize
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
                try sourceStore.forEachBatch(ofExactEntity: member.name, batchSize: batchSize, properties: manager.analysis.creationProperties[manager.mappingIndex(entityMapping)],
                                             readingAhead: readingAhead) { batch in
                    manager.sourceGraph.remember(batch: batch)
                    for data in batch {
                        let object = manager.sourceObject(data)
                        let keep = try manager.evaluate(filter, for: object, mapping: entityMapping, property: "sourceExpression") { try $0.evaluatePredicate($1) }
                        if keep { try body(object) }
                    }
                    manager.sourceGraph.remember(batch: [])
                }
            }
            return
        }
        if let sourceExpression = entityMapping.sourceExpression {
            let evaluator = manager.evaluators[manager.mappingIndex(entityMapping)]
            manager.unbind(manager.mappingIndex(entityMapping))
            evaluator.context.evaluatedObject = .null
            let result: EvalValue
            do { result = try evaluator.evaluate(sourceExpression.expression) } catch let error as ExpressionError {
                throw MigrationError.expression(mapping: entityMapping.name, property: "sourceExpression", object: ObjectRef(entity: "", id: ""), diagnostic: error.diagnostic(in: sourceExpression.source))
            }
            for item in result.elements ?? [result] {
                guard case .object(let ref) = item, var data = try manager.sourceGraph.load(ref) else { continue }
                // The graph may hold the object as another mapping read it (some properties only);
                // this mapping's expressions, copies and policy get it whole.
                if let whole = try manager.sourceGraph.wholeObject(ifPartial: data) { data = whole }
                try body(manager.sourceObject(data))
            }
            return
        }
        guard let entity = entityMapping.source else { return }
        try sourceStore.forEachBatch(ofExactEntity: entity, batchSize: batchSize, properties: manager.analysis.creationProperties[manager.mappingIndex(entityMapping)],
                                     readingAhead: readingAhead) { batch in
            manager.sourceGraph.remember(batch: batch)
            for data in batch { try body(manager.sourceObject(data)) }
            // Not kept past its work: a batch read ahead goes back to its reader, which frees it.
            manager.sourceGraph.remember(batch: [])
        }
    }
}
