import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// Phase 3: the policies' own validation (`performCustomValidation`), the whole destination
/// store against its schema, then `end`. A broken rule names the mapping that created the object.
struct ValidationPhase {
    /// Checks the destination store against its schema (`entities`: how many it scans, for
    /// progress): the objects of each entity it counted, and the connection's change count then.
    private func check(_ run: MigrationRun, entities: Int) throws -> (objects: [String: Int], changes: Int) {
        let destination = run.destinationStore
        let validator = StoreValidator(store: destination, db: try run.db)
        let findings = try validator.validate(mappingOf: { entity, id in
            guard let located = try destination.locate(id: id, try run.db),
                  let index = try run.mapping(of: StoredKey(entity: located.entity, key: located.key)),
                  index < run.mapping.entityMappings.count else { return nil }
            return run.mapping.entityMappings[index].name
        }, madeIdentities: madeIdentities(run), checked: { done in
            run.report(.validate, nil, done, entities, finished: false)
        })
        if findings.total > 0 { throw MigrationError.validation(violations: try namingSources(of: findings.violations, run), total: findings.total) }
        return (findings.objectCounts, try run.db.totalChangesCount)
    }

    /// The destination tables holding ids the run made rather than copied: those of later mappings
    /// of an object (`id.MappingName`) and of the objects a policy's hooks inserted; after an
    /// earlier pass of the step, every table (what the passes before made is not recorded here).
    /// Only a format keeping ids has any.
    private func madeIdentities(_ run: MigrationRun) -> Set<String> {
        let layout = run.destinationStore.layout
        let keeping = layout.entities.filter { $0.value.idColumn != nil }
        if run.step.followsAnotherPass { return Set(keeping.values.map(\.table)) }
        let mappings = run.mapping.entityMappings
        let suffixed = mappings.indices.filter { !run.identitySuffix($0).isEmpty }.compactMap { mappings[$0].destination }
        return Set((suffixed + run.ledger.entitiesPoliciesWrote).compactMap { keeping[$0]?.table })
    }

    /// The violations, each naming the source object its object was made from where that one
    /// is known by another identity (the migrated store's ids are not the user's store's).
    private func namingSources(of violations: [ValidationViolation], _ run: MigrationRun) throws -> [ValidationViolation] {
        try violations.map { violation in
            var named = violation
            guard let located = try run.destinationStore.locate(id: violation.object, try run.db),
                  let data = try run.sourceData(of: StoredKey(entity: located.entity, key: located.key)) else {
                // Made without a record of its source (a compiled creation): its id may name another object in the store.
                if !run.destinationStore.keepsIdentities, violation.mapping != nil { named.sourceObject = "" }
                return named
            }
            let ref = run.sourceGraph.ref(data)
            if ref.id != violation.object || ref.entity != violation.entity { named.sourceObject = "\(ref)" }
            return named
        }
    }

    /// Whether the hooks wrote since the connection's change count was `changes` (Core Data lets
    /// `performCustomValidation` and `end` insert); if so, the format's bookkeeping (Core Data's
    /// Z_MAX) is brought up to date, so what they wrote is counted and held to the same rules.
    /// `run.db` writes the rows the hooks inserted and the writer still holds.
    private func finishWritesOfHooks(_ run: MigrationRun, since changes: Int) throws -> Bool {
        let db = try run.db
        guard db.totalChangesCount != changes else { return false }
        try run.destinationStore.strategy.finishWriting(db, layout: run.destinationStore.layout)
        return true
    }

    /// Runs the phase: the objects of each destination entity validation counted (the summary's counts).
    func run(_ run: MigrationRun) throws -> [String: Int] {
        let destination = run.destinationStore
        let db = try run.db
        let entities = StoreValidator(store: destination, db: db).checkedEntities.count
        // Reported before the wait for the source checks, which belongs to this phase.
        run.report(.validate, nil, 0, entities)
        try run.step.beforeValidation?()
        // The policies' own validation comes first, as Core Data calls it "before the default
        // save validation": a policy may complete its objects there (a required relationship).
        let before = try run.db.totalChangesCount
        for index in run.mapping.entityMappings.indices {
            run.beginMapping(index, "validating (phase 3)")
            try run.callPolicy(index) { try $0.performCustomValidation($1, manager: $2) }
        }
        _ = try finishWritesOfHooks(run, since: before)
        var counted = try check(run, entities: entities)
        for index in run.mapping.entityMappings.indices {
            run.beginMapping(index, "ending the migration (phase 3)")
            try run.callPolicy(index) { try $0.end($1, manager: $2) }
        }
        if try finishWritesOfHooks(run, since: counted.changes) { counted = try check(run, entities: entities) }
        run.report(.validate, nil, entities, entities, finished: true)
        return counted.objects
    }
}
