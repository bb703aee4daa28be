import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// The notes and refusals a run says before it migrates: derived attributes mapc does not compute,
/// and the data-loss question, asked of the store where it can be.
extension StoreMigration {
    /// What a run into a version with derived attributes (Core Data's, kept by `import`) says: mapc
    /// computes none of them.
    static func derivedNotes(of schema: Schema) -> [String] {
        let derived = schema.entities.flatMap { entity in entity.attributes.compactMap { attribute in attribute.derivation.map { "\(entity.name).\(attribute.name) (\($0))" } } }
        guard !derived.isEmpty else { return [] }
        return ["\(derived.joined(separator: ", ")) \(derived.count == 1 ? "is" : "are") derived in the Core Data model: mapc keeps the values the migration gives and computes none "
                + "(an object given none has nil until the app's Core Data saves it)"]
    }

    /// Refuses steps that drop values unless the loss is accepted (`MigrationError.dataLoss`, naming
    /// the first such step): an inferred step's removals, whose values Core Data's lightweight
    /// migration drops without a word. With `store` (at the first step's source version), only
    /// what it may hold counts (`droppedValues(of:keptBy:)`): a value no object holds is not lost.
    /// Returns the notes to say: what was dropped as accepted, and what the store held none of.
    /// Every way to migrate asks this (a run, under its lock, before anything is read; a fixture's).
    @discardableResult
    static func refuseDataLoss(in steps: [MigrationStep], accepted: Bool, asking store: Store?) throws -> [String] {
        let split = try store.map { try droppedValues(of: steps, keptBy: $0) } ?? steps.map { ($0.dropped.map(\.name), []) }
        var notes: [String] = []
        for (step, (held, unheld)) in zip(steps, split) where step.isInferred {
            if !accepted && !held.isEmpty {
                throw MigrationError.dataLoss(step: "\(step.source.version) -> \(step.destination.version)", dropped: held)
            }
            // What was dropped on the user's word is said, each store's (a batch lists them by store).
            if !held.isEmpty {
                notes.append("the inferred step \(step.source.version) -> \(step.destination.version) drops the values of \(held.joined(separator: ", ")), as --accept-data-loss allows")
            }
            if !unheld.isEmpty {
                notes.append("the inferred step \(step.source.version) -> \(step.destination.version) drops \(unheld.joined(separator: ", ")), but the store held none of the values these would drop: nothing was lost")
            }
        }
        return notes
    }

    /// What each step drops, split into what `store` (at the first step's source version) may
    /// hold a value of and what it holds none of: the first step's asked of it directly, a later
    /// step's attributes and objects through where their values came from
    /// (`InferredChain.State.mayHold`), through inferred steps and mapping steps that plainly carry
    /// them (`InferredOrigins(carriedBy:)`; after one that makes objects otherwise, everything
    /// counts), and its relationships where both ends may hold objects and either side links
    /// (`InferredChain.State.mayHoldLinks`). A value no question can be asked about counts.
    static func droppedValues(of steps: [MigrationStep], keptBy store: Store) throws -> [(held: [String], unheld: [String])] {
        var traced: InferredChain.State? = steps.first.map { InferredChain.State(first: $0.source) }
        var split: [(held: [String], unheld: [String])] = []
        for (index, step) in steps.enumerated() {
            var held: [String] = [], unheld: [String] = []
            // Entities no object of the store can be of here (added after its version): nothing of
            // theirs is lost, and nothing is said of them (a note "the store held none" was noise).
            let neverHeld = index == 0 ? [] : traced?.entitiesWithoutObjects(in: step.source) ?? []
            for value in step.dropped {
                if let places = value.keptIn, !places.isEmpty, places.allSatisfy({ neverHeld.contains($0.entity) }) { continue }
                let kept: Bool
                if let places = value.keptIn, index == 0 {
                    kept = try places.contains { try store.holdsValues(of: $0.property, in: $0.entity, linkedTo: $0.linkedTo) }
                } else if let places = value.keptIn, let traced {
                    // A relationship's links need an object at each end, and may come from either
                    // side (a new to-one filled from a carried to-many): asked through both traces.
                    let holds = { (property: String?, entity: String) in try store.holdsValues(of: property, in: entity) }
                    kept = places.contains { place in
                        guard let (ends, relationship) = relationshipEnds(place, in: step.source) else { return traced.mayHold(place, asking: holds) }
                        return ends.allSatisfy { end in end.contains { traced.mayHold(EntityProperty(entity: $0, property: nil), asking: holds) } }
                            && traced.mayHoldLinks(of: relationship, of: place.entity, in: step.source, asking: holds)
                    }
                } else {
                    kept = true
                }
                if kept { held.append(value.name) } else { unheld.append(value.name) }
            }
            split.append((held, unheld))
            // Through a mapping file's step too, where its values are plainly carried.
            traced = (step.inferredOrigins ?? InferredOrigins(carriedBy: step)).flatMap { traced?.after($0) }
        }
        return split
    }

    /// For a place of a step's dropped values that is a relationship of its entity in `schema`,
    /// the concrete entities whose objects may be at each of its ends (the place's own, and the
    /// relationship's destination's hierarchy) and the relationship. Nil for an attribute or an
    /// entity's objects.
    private static func relationshipEnds(_ place: EntityProperty, in schema: Schema) -> (ends: [[String]], relationship: Relationship)? {
        guard let property = place.property, let entity = schema.entity(named: place.entity),
              let relationship = schema.allRelationships(of: entity).first(where: { $0.name == property }) else { return nil }
        let reached = schema.entity(named: relationship.destination).map { schema.hierarchy(under: $0).filter { !$0.isAbstract }.map(\.name) } ?? []
        return ([[place.entity], reached], relationship)
    }
}
