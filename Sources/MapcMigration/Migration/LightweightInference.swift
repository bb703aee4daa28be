import Foundation
import MapcFoundation
import MapcModel

/// One inference of a step, `MappingInference.infer`'s work in the order Core Data's lightweight
/// migration decides it: each destination entity's source counterpart (by name, renaming
/// identifier, or a rename recorded in the versions between), then per entity its attributes and
/// relationships, then the removals, each change said once at the entity that declares it. It
/// collects the changes, the problems and the notes, and builds the mapping (with `todo:` items
/// where something cannot be inferred).
package struct LightweightInference {
    let source: Schema
    let destination: Schema
    /// The versions between the two, oldest first, whose renames are followed.
    let intermediates: [Schema]

    var changes: [SchemaChange] = []
    var problems: [InferenceProblem] = []
    private(set) var notes: [String: [String]] = [:]
    private(set) var entityMappings: [EntityMapping] = []
    /// Each destination entity's source counterpart.
    private(set) var sourceFor: [String: Entity] = [:]
    /// The destination entities claiming each source entity (more than one is a split).
    private(set) var claimed: [String: [String]] = [:]
    /// Where each destination value comes from.
    var origins = InferredOrigins()
    /// Each matched destination entity's properties and their source counterparts, worked out
    /// once: its own mapping and its inverses' sides read them.
    var propertiesByEntity: [String: EntityProperties] = [:]
    /// Values a mapping keeps only in part (links a narrowed relationship can no longer hold),
    /// by entity mapping name: `todo:` items of the written file, as the removals are.
    var partialLosses: [String: [String]] = [:]
    /// What the step may not mean (renaming identifiers that carry a value twice or name nothing,
    /// a required link to objects the step drops): by the destination property (`Entity.name`)
    /// each is about, what to say.
    var cautions: [(property: String, text: String)] = []

    /// Source entities known to have no objects (new since the store's version, in a plan): a
    /// problem of their objects' values cannot arise, and is kept apart (`InferenceResult.moot`).
    var emptySourceEntities: Set<String> = []
    /// Source entities a store held no objects of when asked (in a plan for one store): it may
    /// gain some before the run, so only their problems a run's validation refuses
    /// (`InferenceProblem.isRefusedByValidation`) are kept apart.
    var unheldSourceEntities: Set<String> = []
    /// Source attributes (an `EntityAttribute`) a store held no nil of when asked: a problem only a
    /// nil meets is set aside (`InferenceProblem.unlessNoNil`); a nil saved before the run fails
    /// its validation.
    var attributesWithoutNil: Set<EntityAttribute> = []
    /// The problems of entities in `emptySourceEntities` (and those set aside of `unheldSourceEntities`).
    var moot: [InferenceProblem] = []

    init(from source: Schema, to destination: Schema, through intermediates: [Schema]) {
        self.source = source
        self.destination = destination
        self.intermediates = intermediates
    }

    /// The whole inference.
    mutating func run() -> InferenceResult {
        matchEntities()
        for entity in destination.entities {
            guard let before = sourceFor[entity.name] else { continue }
            propertiesByEntity[entity.name] = properties(of: entity, from: before)
        }
        for destinationEntity in destination.entities {
            guard let sourceEntity = sourceFor[destinationEntity.name] else { continue }
            mapEntity(sourceEntity, to: destinationEntity)
        }
        for entity in source.entities where claimed[entity.name] == nil && !entity.isAbstract {
            entityMappings.append(EntityMapping(name: "Remove\(entity.name)", source: entity.name, destination: nil, type: .remove))
            notes["Remove\(entity.name)"] = ["\(entity.name) is not in \(destination.version); its objects are dropped"]
        }
        cautionRequiredLinksToDroppedObjects()
        cautionMergedHierarchies()
        cautionConstantUniqueValues()
        let renames = MappingInference.probableRenames(changes, from: source, to: destination, counterparts: sourceFor, through: intermediates)
        sayEachChangeOnceWhereDeclared()
        changes += MappingInference.hashOnlyChanges(from: source, to: destination, counterparts: sourceFor, listed: changes, origins: origins)
        let mapping = MappingModel(source: source.version, destination: destination.version, entityMappings: entityMappings)
        // What the step drops is the user's to accept in a file they keep: a `todo:` item each,
        // as `run` asks for `--accept-data-loss` before an inferred step drops values.
        var skeleton = mapping
        for index in skeleton.entityMappings.indices {
            let entityMapping = skeleton.entityMappings[index]
            if entityMapping.type == .remove, let name = entityMapping.source {
                skeleton.entityMappings[index].todo.append(MappingTodo("\(name) objects are dropped with their values (\(destination.version) has no \(name)): map them to an entity of \(destination.version), or delete this item to drop them on purpose"))
            }
            for loss in partialLosses[entityMapping.name] ?? [] {
                skeleton.entityMappings[index].todo.append(MappingTodo(loss + ": map them where they belong, or delete this item to drop them on purpose"))
            }
            for dropped in entityMapping.drops {
                skeleton.entityMappings[index].todo.append(MappingTodo("\(dropped): its values are dropped (\(destination.version) has no \(dropped) here): map them where they belong, or delete this item to drop them on purpose ('drops:' lists it)"))
            }
        }
        var result = InferenceResult(changes: changes, problems: problems, mapping: problems.isEmpty ? mapping : nil, skeleton: skeleton, notes: notes)
        result.moot = moot
        // A property a rename hint already names with its misspelt identifier is said once (an
        // identifier naming an element whose values another takes is the caution's to say).
        result.probableRenames = renames
        result.cautions = cautions.filter { caution in !renames.contains { $0.hasPrefix("\(caution.property) is added") && $0.contains("(its renamingIdentifier '") } }.map(\.text)
        result.origins = origins
        return result
    }

    static func mappingName(_ sourceName: String, _ destinationName: String) -> String { "\(sourceName)To\(destinationName)" }

    // MARK: Entities

    /// Each destination entity's source counterpart; added, removed and split entities.
    mutating func matchEntities() {
        let source = self.source
        let counterparts = Self.counterparts(of: destination.entities.map { ($0.name, $0.renamingIdentifier) },
                                             among: source.entities.map { ($0.name, $0.canonicalIdentifier) }) { name, renaming in
            Self.lineageNames(name, renaming: renaming, through: intermediates, kind: .entity(nil))
        }
        for entity in destination.entities {
            if let counterpart = counterparts[entity.name], let match = source.entity(named: counterpart.name) {
                if counterpart.unlikeCoreData {
                    cautionUnlikeCoreData(entity.name, renaming: entity.renamingIdentifier, matched: match.name, of: nil, identifier: match.canonicalIdentifier)
                }
                sourceFor[entity.name] = match
                claimed[match.name, default: []].append(entity.name)
                if match.name != entity.name { changes.append(SchemaChange(kind: .renamed, entity: entity.name, property: nil, detail: "from \(match.name)")) }
            } else {
                if let identifier = entity.renamingIdentifier, identifier != entity.name, source.entity(named: identifier) != nil,
                   let taker = counterparts.first(where: { $0.value.name == identifier && $0.key != entity.name })?.key {
                    cautions.append((entity.name, "\(entity.name) has renamingIdentifier '\(identifier)', but \(identifier)'s objects of \(source.version) go to \(taker), whose identifier is the same as "
                                               + "\(identifier)'s own (Core Data matches identifiers, as mapc does first): \(entity.name) starts empty. To carry them to \(entity.name), "
                                               + "give it \(identifier)'s identifier and \(taker) another"))
                }
                changes.append(SchemaChange(kind: .added, entity: entity.name, property: nil, detail: entity.parent.map { "sub-entity of \($0)" } ?? ""))
                if entity.parent != nil || destination.hierarchy(under: entity).count > 1 { origins.reshapes = true }
            }
        }
        for (sourceName, targets) in claimed where targets.count > 1 {
            problems.append(InferenceProblem(entity: sourceName, property: nil, reason: "entity \(sourceName) would split into \(targets.sorted().joined(separator: " and ")) (both match it by name or renaming identifier)",
                                             fix: "write an explicit mapping saying which objects go where, or keep one renaming identifier"))
        }
        for entity in source.entities where claimed[entity.name] == nil {
            if entity.parent != nil || source.hierarchy(under: entity).count > 1 { origins.reshapes = true }
            var change = SchemaChange(kind: .removed, entity: entity.name, property: nil, detail: entity.isAbstract ? "abstract: no objects of its own" : "",
                                      losesValues: !entity.isAbstract)
            change.keptIn = [EntityProperty(entity: entity.name, property: nil)]
            changes.append(change)
        }
    }

    /// What one entity mapping is being built from, and what it has collected so far.
    struct EntityWork {
        var sourceEntity: Entity
        var destinationEntity: Entity
        var mapping: EntityMapping
        var notes: [String] = []
        var todo: [MappingTodo] = []
        /// The names the destination entity had, for the lineage of its properties.
        var owners: [String]
        /// The source property each destination property takes its values from.
        var counterparts: [String: Counterpart] = [:]
        let sourceAttributes: [Attribute]
        let sourceRelationships: [Relationship]
        /// Each source property's position by name: a property is looked up for each of the
        /// entity's (a scan each was quadratic, minutes for a hierarchy of wide entities).
        let attributeIndex: [String: Int]
        let relationshipIndex: [String: Int]

        init(sourceEntity: Entity, destinationEntity: Entity, mapping: EntityMapping, owners: [String], sourceAttributes: [Attribute], sourceRelationships: [Relationship]) {
            self.sourceEntity = sourceEntity
            self.destinationEntity = destinationEntity
            self.mapping = mapping
            self.owners = owners
            self.sourceAttributes = sourceAttributes
            self.sourceRelationships = sourceRelationships
            attributeIndex = Self.index(sourceAttributes.map(\.name))
            relationshipIndex = Self.index(sourceRelationships.map(\.name))
        }

        static func index(_ names: [String]) -> [String: Int] {
            Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// The source attribute of a name, if the source entity has one.
        func sourceAttribute(named name: String) -> Attribute? { attributeIndex[name].map { sourceAttributes[$0] } }
        /// The source relationship of a name, if the source entity has one.
        func sourceRelationship(named name: String) -> Relationship? { relationshipIndex[name].map { sourceRelationships[$0] } }

        /// The source attributes and relationships something in the destination carries on.
        var usedAttributes: Set<String> = []
        var usedRelationships: Set<String> = []
        /// Source properties a second destination property carries on too (by name or renaming
        /// identifier), each with its carriers; empty in nearly every step, so kept apart.
        var carriedTwice: [String: [String]] = [:]
        /// The destination property carrying each source property, where that is needed to say
        /// which carried it first.
        var firstCarrier: [String: String] = [:]
        /// Where each destination property's values come from.
        var origins: [String: PropertyOrigin] = [:]

        /// Whether the destination entity declares the property itself (not inherited): what is
        /// said of a property is said once, at its own entity, not under each sub-entity.
        func declares(_ property: String) -> Bool {
            destinationEntity.attributes.contains { $0.name == property } || destinationEntity.relationships.contains { $0.name == property }
        }
    }

    /// A problem that stops inference, kept as a `todo:` item of the entity mapping too; true
    /// when it is set aside instead, for what the store is known to hold.
    @discardableResult
    mutating func refuse(_ problem: InferenceProblem, in work: inout EntityWork) -> Bool {
        if emptySourceEntities.contains(work.sourceEntity.name) || (problem.isRefusedByValidation && unheldSourceEntities.contains(work.sourceEntity.name))
            || (!problem.unlessNoNil.isEmpty && problem.unlessNoNil.isSubset(of: attributesWithoutNil)) {
            moot.append(problem)
            return true
        }
        problems.append(problem)
        work.todo.append(MappingTodo("\(problem.property.map { "\($0): " } ?? "")\(problem.reason); \(problem.fix)"))
        return false
    }

    /// The entity mapping of a destination entity from its source counterpart.
    mutating func mapEntity(_ sourceEntity: Entity, to destinationEntity: Entity) {
        let name = Self.mappingName(sourceEntity.name, destinationEntity.name)
        let properties = propertiesByEntity[destinationEntity.name] ?? self.properties(of: destinationEntity, from: sourceEntity)
        var work = EntityWork(sourceEntity: sourceEntity, destinationEntity: destinationEntity,
                              mapping: EntityMapping(name: name, source: sourceEntity.name, destination: destinationEntity.name, type: .transform),
                              owners: owners(of: destinationEntity),
                              sourceAttributes: properties.sourceAttributes, sourceRelationships: properties.sourceRelationships)
        work.counterparts = properties.counterparts
        if let claimants = claimed[sourceEntity.name], claimants.count > 1 {
            work.todo.append(MappingTodo("\(sourceEntity.name) objects are claimed by \(claimants.sorted().joined(separator: " and ")); add a filter choosing which become \(destinationEntity.name) objects, or remove this mapping"))
        }
        if sourceEntity.isAbstract == false && destinationEntity.isAbstract {
            // Objects of exactly this entity would have none: a store holding none of them is not
            // stopped (the planner asks it), and one gaining some before the run has them refused
            // there (an abstract entity's objects are never written), as Core Data's validation does.
            let was = sourceEntity.name == destinationEntity.name ? "was concrete" : "its source \(sourceEntity.name) was concrete"
            refuse(InferenceProblem.refusedByValidation(entity: destinationEntity.name, property: nil,
                                    reason: "\(destinationEntity.name) is abstract in \(destination.version) but \(was) in \(source.version): objects of exactly \(sourceEntity.name) (not of a sub-entity) would have no entity",
                                    fix: "write the step's mapping, creating them as a concrete sub-entity (when the stores hold none, a mapping of its sub-entities alone)"), in: &work)
        }
        if sourceEntity.parent != destinationEntity.parent || sourceEntity.isAbstract != destinationEntity.isAbstract { origins.reshapes = true }
        // An abstract source has no objects of its own: no mapping (its sub-entities have theirs).
        if sourceEntity.isAbstract { return }
        if sourceEntity.parent != destinationEntity.parent {
            let from = sourceEntity.parent ?? "none", to = destinationEntity.parent ?? "none"
            changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: nil, detail: "parent \(from) -> \(to)"))
            work.notes.append("parent changed: \(from) -> \(to)")
        }
        for attribute in properties.attributes where !attribute.isTransient {
            mapAttribute(attribute, in: &work)
        }
        for relationship in properties.relationships where !relationship.isTransient {
            mapRelationship(relationship, in: &work)
        }
        for old in work.sourceAttributes where !work.usedAttributes.contains(old.name) && !old.isTransient {
            var change = SchemaChange(kind: .removed, entity: destinationEntity.name, property: old.name, detail: "attribute of \(sourceEntity.name)")
            change.keptIn = [EntityProperty(entity: sourceEntity.name, property: old.name)]
            change.sourceOwner = sourceOwner(of: old.name, from: sourceEntity)
            changes.append(change)
            work.notes.append("\(old.name): removed, its values are dropped")
            work.mapping.drops.append(old.name)
        }
        for old in work.sourceRelationships where !work.usedRelationships.contains(old.name) && !old.isTransient {
            if let carrier = inverseCarryingLinks(of: old, from: sourceEntity, to: destinationEntity) {
                // Its links are the inverse's, which the step carries: none is lost.
                changes.append(SchemaChange(kind: .removed, entity: destinationEntity.name, property: old.name,
                                            detail: "relationship of \(sourceEntity.name); its links are kept by \(carrier)", losesValues: false))
                work.notes.append("\(old.name): relationship removed; its links are kept by \(carrier)")
                continue
            }
            var change = SchemaChange(kind: .removed, entity: destinationEntity.name, property: old.name, detail: "relationship of \(sourceEntity.name)")
            change.keptIn = [EntityProperty(entity: sourceEntity.name, property: old.name)]
            change.sourceOwner = sourceOwner(of: old.name, from: sourceEntity)
            changes.append(change)
            work.notes.append("\(old.name): relationship removed")
            work.mapping.drops.append(old.name)
        }
        for (old, carriers) in work.carriedTwice.sorted(by: { $0.key < $1.key }) {
            cautions.append(("\(destinationEntity.name).\(carriers[1])", "\(carriers.map { "\(destinationEntity.name).\($0)" }.joined(separator: " and ")) all take the values of \(old) of \(sourceEntity.name) in \(source.version) "
                                       + "(by name or renaming identifier), each a copy: if one of them is new, give it a renamingIdentifier of its own, which no property of \(source.version) has "
                                       + "(it takes \(old)'s values by its name or its identifier now)"))
        }
        work.mapping.todo = work.todo
        entityMappings.append(work.mapping)
        origins.entities[destinationEntity.name] = sourceEntity.name
        origins.properties[destinationEntity.name] = work.origins
        notes[name] = work.notes
    }

    /// A required to-one whose objects may lead to objects the step drops (a sub-entity removed
    /// from the destination's hierarchy): the objects linked to one fail validation, which is
    /// said before a run finds it (it names the object, not the cause).
    mutating func cautionRequiredLinksToDroppedObjects() {
        let dropped = Set(source.entities.filter { claimed[$0.name] == nil && !$0.isAbstract }.map(\.name))
        guard !dropped.isEmpty else { return }
        for entity in destination.entities {
            guard let before = sourceFor[entity.name] else { continue }
            for relationship in destination.allRelationships(of: entity) where !relationship.isToMany && !relationship.isOptional && !relationship.isTransient {
                guard case .carried(let from, _, _, _)? = origins.properties[entity.name]?[relationship.name],
                      case .relationship(let old)? = source.property(named: from, in: before),
                      let target = source.entity(named: old.destination) else { continue }
                let reached = source.hierarchy(under: target).map(\.name).filter(dropped.contains).sorted()
                guard !reached.isEmpty else { continue }
                cautions.append(("\(entity.name).\(relationship.name)", "\(entity.name).\(relationship.name) is required, and may lead to \(reached.joined(separator: " or ")) objects, which the step drops: "
                                           + "\(English.withArticle(entity.name)) linked to one fails validation; map them to an entity of \(destination.version), or make '\(relationship.name)' optional"))
            }
        }
    }

    /// Entities of separate hierarchies brought under one root: Core Data's lightweight migration
    /// does not infer it ("you cannot merge entity hierarchies"), and a Core Data store keeps a
    /// hierarchy in one table, so the objects that move into the other's get new keys there, and
    /// their object IDs (the URIs an app may keep) change. Inferred here, and said.
    /// A uniqueness constraint all of whose attributes are new, each given its default: every
    /// object of the entity gets the same constrained values, so a store holding two of them
    /// fails validation at the end of the step (Wire's zmessaging 4 -> 5: a new attribute with
    /// the default 0 in a constraint). Said before the run, which cannot succeed on such a store.
    mutating func cautionConstantUniqueValues() {
        for entity in destination.entities where !entity.isAbstract {
            guard let properties = origins.properties[entity.name] else { continue }
            for constraint in destination.ancestry(of: entity).flatMap(\.uniquenessConstraints) where !constraint.isEmpty {
                let defaults = constraint.map { name -> Value? in
                    if case .new(let value?)? = properties[name] { return value }
                    return nil
                }
                guard defaults.allSatisfy({ $0 != nil }) else { continue }
                let given = zip(constraint, defaults).map { "\($0) = \($1.map { "\($0)" } ?? "")" }.joined(separator: ", ")
                cautions.append(("\(entity.name).\(constraint[0])", "every \(entity.name) object gets \(given) (the default), which \(entity.name)'s uniqueness constraint (\(constraint.joined(separator: ", "))) "
                                 + "lets one object hold: a store with more than one \(entity.name) fails validation at the end of the step, unchanged; "
                                 + "write a mapping file that gives each object its own value"))
            }
        }
    }

    mutating func cautionMergedHierarchies() {
        var sourceRoots: [String: Set<String>] = [:]
        for entity in destination.entities {
            guard let before = sourceFor[entity.name] else { continue }
            sourceRoots[destination.root(of: entity).name, default: []].insert(source.root(of: before).name)
        }
        for (root, roots) in sourceRoots.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
            let list = roots.sorted()
            cautions.append((root, "\(root) brings together entities of separate hierarchies of \(source.version) (\(list.joined(separator: ", ")) and their sub-entities): "
                                   + "Core Data's own lightweight migration does not infer it (two hierarchies cannot merge; on devices, a mapping model is needed), "
                                   + "and in a Core Data store, where a hierarchy is one table, the objects that move get new keys, so their object IDs (URIs an app may keep) change"))
        }
    }
}
