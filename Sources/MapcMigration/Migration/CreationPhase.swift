import Foundation
internal import GRDB
import MapcModel

/// Phase 1: every entity mapping in order creates its destination objects, with Core Data's hooks
/// (`begin`, `createDestinationInstances` per source object, `endInstanceCreation`). A mapping
/// whose expressions SQLite evaluates exactly as mapc does runs as one `INSERT … SELECT`.
struct CreationPhase {
    func run(_ run: MigrationRun) throws {
        for (index, entityMapping) in run.mapping.entityMappings.enumerated() {
            try run.checkCancellation()
            run.beginMapping(index, "creating objects (phase 1)")
            try run.callPolicy(index) { try $0.begin($1, manager: $2) }
            _ = try run.startKeyRule(index)
            var createdBySQL = false
            if run.sourceAttached, let compiled = try CompiledMappings(run).creation(index) {
                let total = try run.sources.count(of: entityMapping)
                run.report(.create, entityMapping.name, 0, total)
                do {
                    try compiled.run(run)
                    createdBySQL = true
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    // SQLite refused a row (an identity another mapping's object has: a table a
                    // uniqueness constraint guards is never compiled). The rows before it may be
                    // in the file, which keeps no journal: the interpreter, creating the objects
                    // one by one, meets the first of them and fails, naming it; never a store.
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
                let total = try run.sources.count(of: entityMapping)
                try run.startRelationshipsAtCreation(index)
                run.report(.create, entityMapping.name, 0, total)
                try run.sources.forEachObject(of: index, entityMapping, readingAhead: run.sources.readsAhead(total: total)) { source in
                    done += 1
                    if done % 10_000 == 0 { run.report(.create, entityMapping.name, done, total) }
                    // Often: an object may take long (a FETCH per object), and a stop should not wait for 10,000.
                    if done % 64 == 0 { try run.checkCancellation() }
                    guard try run.passesFilter(index, source, mapping: entityMapping) else { return }
                    run.ledger.handed[index] += 1
                    try run.createDestinationInstances(index, for: source, mapping: entityMapping)
                }
                run.sources.forgetBatch()
                run.report(.create, entityMapping.name, done, total, finished: true)
            }
            run.ledger.creationFinished.insert(index)
            try run.callPolicy(index) { try $0.endInstanceCreation($1, manager: $2) }
        }
    }
}
