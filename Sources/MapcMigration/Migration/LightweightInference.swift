import Foundation
import MapcFoundation
import MapcModel

/// One inference of a step, `MappingInference.infer`'s work in the order Core Data's lightweight
/// migration decides it: each destination entity's source counterpart (by name, renaming
/// identifier, or a rename recorded in the versions between), then per entity its attributes and
/// relationships, then the removals, each change said once at the entity that declares it. It
/// collects the changes, the problems and the notes, and builds the mapping (with `todo:` items
/// where something cannot be inferred).
struct LightweightInference {
    let source: Schema
    let destination: Schema
    /// The versions between the two, oldest first, whose renames are followed.
    let intermediates: [Schema]

    private(set) var changes: [SchemaChange] = []
    private(set) var problems: [InferenceProblem] = []
    private(set) var notes: [String: [String]] = [:]
    private(set) var entityMappings: [EntityMapping] = []
    /// Each destination entity's source counterpart.
    private(set) var sourceFor: [String: Entity] = [:]
    /// The destination entities claiming each source entity (more than one is a split).
    private(set) var claimed: [String: [String]] = [:]
    /// Where each destination value comes from.
    private(set) var origins = InferredOrigins()
    /// Each matched destination entity's properties and their source counterparts, worked out
    /// once: its own mapping and its inverses' sides read them.
    private var propertiesByEntity: [String: EntityProperties] = [:]
    /// Values a mapping keeps only in part (links a narrowed relationship can no longer hold),
    /// by entity mapping name: `todo:` items of the written file, as the removals are.
    private var partialLosses: [String: [String]] = [:]
    /// What the step may not mean (renaming identifiers that carry a value twice or name nothing,
    /// a required link to objects the step drops): by the destination property (`Entity.name`)
    /// each is about, what to say.
    private var cautions: [(property: String, text: String)] = []

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
    private var moot: [InferenceProblem] = []

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
        let renames = MappingInference.probableRenames(changes, from: source, to: destination, counterparts: sourceFor)
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
        // A property a rename hint already names (its identifier misspelt) is said once.
        result.probableRenames = renames
        result.cautions = cautions.filter { caution in !renames.contains { $0.hasPrefix("\(caution.property) is added") } }.map(\.text)
        result.origins = origins
        return result
    }

    static func mappingName(_ sourceName: String, _ destinationName: String) -> String { "\(sourceName)To\(destinationName)" }

    // MARK: Entities

    /// Each destination entity's source counterpart; added, removed and split entities.
    private mutating func matchEntities() {
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
    private struct EntityWork {
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
        private let attributeIndex: [String: Int]
        private let relationshipIndex: [String: Int]

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

        private static func index(_ names: [String]) -> [String: Int] {
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
    private mutating func refuse(_ problem: InferenceProblem, in work: inout EntityWork) -> Bool {
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
    private mutating func mapEntity(_ sourceEntity: Entity, to destinationEntity: Entity) {
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
    private mutating func cautionRequiredLinksToDroppedObjects() {
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
    private mutating func cautionMergedHierarchies() {
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

    // MARK: Properties

    /// Records which destination property carries a source property on; a second one is kept
    /// with the first, to be said (`cautions`).
    private func noteCarrier(of old: String, inserted: Bool, by name: String, in work: inout EntityWork) {
        if inserted {
            work.firstCarrier[old] = name
        } else {
            work.carriedTwice[old, default: work.firstCarrier[old].map { [$0] } ?? []].append(name)
        }
    }

    /// A new property whose renaming identifier names no property of the entity in the source
    /// version (a typo, or another entity's property): it starts empty, which is said. Between
    /// versions with others between them, the identifier may name one of theirs: nothing said.
    private mutating func cautionUnmatched(_ identifier: String?, of name: String, in work: EntityWork) {
        guard let identifier, identifier != name, intermediates.isEmpty, work.declares(name) else { return }
        let entity = work.destinationEntity.name
        if let (taker, _) = work.counterparts.first(where: { $0.value.name == identifier && !$0.value.unlikeCoreData }) {
            // It names a property whose values another takes, by the identifier they share.
            cautions.append(("\(entity).\(name)", "\(entity).\(name) has renamingIdentifier '\(identifier)', but \(work.sourceEntity.name).\(identifier) of \(source.version) goes to \(entity).\(taker), "
                                       + "whose identifier is the same as its own (Core Data matches identifiers, as mapc does first): \(name) starts as a new property, carrying no values. "
                                       + "To carry them to \(name), give it \(identifier)'s identifier and \(taker) another"))
            return
        }
        // An identifier of its own given to a new property whose name is another property's
        // identifier (which that one carries): set apart on purpose, as the copy's caution advises.
        let namedByIt = Set(work.sourceAttributes.filter { $0.canonicalIdentifier == name }.map(\.name) + work.sourceRelationships.filter { $0.canonicalIdentifier == name }.map(\.name))
        if work.counterparts.contains(where: { $0.key != name && namedByIt.contains($0.value.name) }) { return }
        cautions.append(("\(work.destinationEntity.name).\(name)", "\(work.destinationEntity.name).\(name) has renamingIdentifier '\(identifier)', which names no property of \(work.sourceEntity.name) in \(source.version): "
                                   + "it starts as a new property (nil, its default or empty), carrying no values; give it the renaming identifier of the property it was (\(work.sourceEntity.name)'s own: its renamingIdentifier, else its name), or remove the identifier"))
    }

    /// A destination attribute: new, renamed, widened or converted, made required or optional,
    /// its rules tightened; or a change inference refuses.
    private mutating func mapAttribute(_ attribute: Attribute, in work: inout EntityWork) {
        let entityName = work.destinationEntity.name
        let counterpart = work.counterparts[attribute.name]
        guard let counterpart, let old = work.sourceAttribute(named: counterpart.name) else {
            if let counterpart, let relationship = work.sourceRelationship(named: counterpart.name) {
                refuse(InferenceProblem(entity: entityName, property: attribute.name, reason: "'\(relationship.name)' was a relationship and is now an attribute", fix: "write an explicit mapping"), in: &work)
                return
            }
            changes.append(SchemaChange(kind: .added, entity: entityName, property: attribute.name, detail: "\(attribute.type.rawValue)\(attribute.isOptional ? ", optional" : "")\(attribute.defaultValue.map { ", default \($0)" } ?? "")"))
            cautionUnmatched(attribute.renamingIdentifier, of: attribute.name, in: work)
            if !attribute.isOptional && attribute.defaultValue == nil {
                refuse(InferenceProblem.refusedByValidation(entity: entityName, property: attribute.name, reason: "new required attribute without a default",
                                        fix: "give it a default, make it optional, or write an explicit mapping that computes it"), in: &work)
            } else {
                work.notes.append("\(attribute.name): new attribute, gets \(attribute.defaultValue.map { "its default \($0)" } ?? "nil")")
            }
            work.origins[attribute.name] = .new(default: attribute.defaultValue)
            return
        }
        if counterpart.unlikeCoreData, let owner = cautionOwner(of: attribute.name, in: work) {
            cautionUnlikeCoreData("\(owner).\(attribute.name)", renaming: attribute.renamingIdentifier, matched: old.name, of: work.sourceEntity.name, identifier: old.canonicalIdentifier)
        }
        noteCarrier(of: old.name, inserted: work.usedAttributes.insert(old.name).inserted, by: attribute.name, in: &work)
        if old.name != attribute.name, work.counterparts[old.name]?.name == old.name {
            // The property it takes its values from is still there, carried under its name: a copy, not a rename.
            changes.append(SchemaChange(kind: .added, entity: entityName, property: attribute.name, detail: "a copy of \(old.name)'s values (it takes them by its name or renaming identifier)"))
            work.notes.append("\(attribute.name): a copy of \(old.name)")
        } else if old.name != attribute.name {
            changes.append(SchemaChange(kind: .renamed, entity: entityName, property: attribute.name, detail: "from \(old.name)"))
            work.notes.append("\(attribute.name): renamed from \(old.name)")
        }
        var expression = "$source.\(old.name)"
        var nilBecomes: Value?
        let typeChange = old.type == attribute.type ? nil : TypeChange(from: old.type, to: attribute.type)
        if old.type != attribute.type, !ValueRules.isLossless(from: old.type, to: attribute.type),
           let caution = ValueRules.numericConversionCaution(from: old.type, to: attribute.type) {
            // A conversion between numbers, as Core Data's lightweight migration makes one
            // (WooCommerce shipped int64 -> double so): inferred, with what it can cost.
            var change = SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "\(old.type.rawValue) -> \(attribute.type.rawValue), converted: \(caution)")
            change.conversion = "\(old.type.rawValue) -> \(attribute.type.rawValue): \(caution)"
            changes.append(change)
            work.notes.append("\(attribute.name): converted from \(old.type.rawValue) to \(attribute.type.rawValue); \(caution)")
        } else if old.type != attribute.type {
            guard ValueRules.isLossless(from: old.type, to: attribute.type) else {
                changes.append(SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "\(old.type.rawValue) -> \(attribute.type.rawValue), not a widening"))
                refuse(InferenceProblem(entity: entityName, property: attribute.name, reason: "type change \(old.type.rawValue) -> \(attribute.type.rawValue) can lose data",
                                        fix: "write an explicit mapping with a converting expression, or go through an intermediate version"), in: &work)
                return
            }
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "\(old.type.rawValue) -> \(attribute.type.rawValue)"))
            work.notes.append("\(attribute.name): widened from \(old.type.rawValue) to \(attribute.type.rawValue)")
        }
        if old.isOptional && !attribute.isOptional, attribute.defaultValue == nil {
            var problem = InferenceProblem.refusedByValidation(entity: entityName, property: attribute.name, reason: "optional -> required without a default (nil values would have nowhere to go)",
                                                               fix: "give it a default in \(destination.version), or write an explicit mapping")
            problem.unlessNoNil = [EntityAttribute(entity: work.sourceEntity.name, attribute: old.name)]
            // For a store holding no nil there, the values are carried as they are, as Core
            // Data's lightweight migration carries them (and fails a nil on validation).
            guard refuse(problem, in: &work) else { return }
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "optional -> required"))
        } else if old.isOptional && !attribute.isOptional, let defaultValue = attribute.defaultValue {
            guard let literal = ExpressionLiteral.value(defaultValue) else {
                // The fill is an expression, and the expression language writes no such value.
                refuse(InferenceProblem(entity: entityName, property: attribute.name, reason: "optional -> required, with a \(attribute.type.rawValue) default the expression that fills nil values cannot write",
                                        fix: "write an explicit mapping that gives nil values another value (a policy can set bytes), or keep the attribute optional"), in: &work)
                return
            }
            expression = "TERNARY($source.\(old.name) != nil, $source.\(old.name), \(literal))"
            nilBecomes = defaultValue
            var change = SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "optional -> required, nil becomes \(defaultValue)")
            change.defaultForNil = "\(defaultValue)"
            changes.append(change)
            work.notes.append("\(attribute.name): now required; nil becomes \(defaultValue)")
        } else if !old.isOptional && attribute.isOptional {
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "required -> optional"))
        }
        let tightened = MappingInference.tightenedRules(from: old.validation, to: attribute.validation)
        if !tightened.isEmpty {
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: attribute.name,
                                        detail: "\(tightened.joined(separator: ", ")): stored values may break the rules, and validation then refuses the migration"))
            work.notes.append("\(attribute.name): rules tightened (\(tightened.joined(separator: ", "))); values that break them fail validation")
        }
        work.origins[attribute.name] = .carried(from: old.name, typeChange: typeChange, nilBecomes: nilBecomes, dropsOrder: false)
        if let parsed = try? MappingExpression(expression) {
            work.mapping.attributes.append(PropertyMapping(name: attribute.name, expression: parsed))
        }
    }

    /// A destination relationship: new, renamed, to-one made to-many, reordered, made required; or
    /// a change inference refuses. Each relationship is set from one side only.
    private mutating func mapRelationship(_ relationship: Relationship, in work: inout EntityWork) {
        let entityName = work.destinationEntity.name
        let counterpart = work.counterparts[relationship.name]
        guard let counterpart, let old = work.sourceRelationship(named: counterpart.name) else {
            if let counterpart, let attribute = work.sourceAttribute(named: counterpart.name) {
                // Core Data does not infer a change of property kind: the values have no meaning to carry over.
                work.usedAttributes.insert(attribute.name)
                changes.append(SchemaChange(kind: .changed, entity: entityName, property: relationship.name, detail: "attribute -> relationship"))
                refuse(InferenceProblem(entity: entityName, property: relationship.name, reason: "'\(attribute.name)' was an attribute and is now a relationship",
                                        fix: "write an explicit mapping that relates the objects: a mapping creating the new objects from the old values (a 'source:' of this entity, attributes read from $source, a filter for objects that have one) and this relationship set to them"), in: &work)
                return
            }
            changes.append(SchemaChange(kind: .added, entity: entityName, property: relationship.name, detail: "\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination)"))
            cautionUnmatched(relationship.renamingIdentifier, of: relationship.name, in: work)
            // A new to-many that may be empty starts empty, as Core Data's lightweight migration sets it.
            if !RelationshipCountRule.allowsEmpty(relationship) {
                refuse(InferenceProblem.refusedByValidation(entity: entityName, property: relationship.name, reason: "new required relationship (existing objects have nothing to relate to)",
                                        fix: "make it optional, or write an explicit mapping that relates the objects"), in: &work)
            }
            work.origins[relationship.name] = .new(default: nil)
            return
        }
        if counterpart.unlikeCoreData, let owner = cautionOwner(of: relationship.name, in: work) {
            cautionUnlikeCoreData("\(owner).\(relationship.name)", renaming: relationship.renamingIdentifier, matched: old.name, of: work.sourceEntity.name, identifier: old.canonicalIdentifier)
        }
        noteCarrier(of: old.name, inserted: work.usedRelationships.insert(old.name).inserted, by: relationship.name, in: &work)
        if old.name != relationship.name {
            changes.append(SchemaChange(kind: .renamed, entity: entityName, property: relationship.name, detail: "from \(old.name)"))
            work.notes.append("\(relationship.name): renamed from \(old.name)")
        }
        // The relationship must lead to what the objects it led to become: every link is kept
        // when each of them becomes an object of the new destination's hierarchy (the same
        // entity, a parent new or old, as Core Data moves a relationship up), some are dropped
        // when only some do (narrowed to a sub-entity); a destination no object it led to becomes
        // is no counterpart (an entity renamed without an identifier, more often than not).
        guard let oldTarget = source.entity(named: old.destination), let newTarget = destination.entity(named: relationship.destination),
              case let reach = linkReach(from: oldTarget, to: newTarget), !reach.kept.isEmpty else {
            refuse(InferenceProblem(entity: entityName, property: relationship.name, reason: "leads to \(relationship.destination), which does not correspond to \(old.destination)",
                                    fix: "write an explicit mapping"), in: &work)
            return
        }
        if !reach.dropped.isEmpty {
            // A link to an object that becomes no object of the new destination has nowhere to
            // go. A value dropped, said and asked about as a removal is.
            let loss = "\(relationship.name): links to \(oldTarget.name) objects that are not \(relationship.destination) objects are dropped (the destination is now \(relationship.destination))"
            var change = SchemaChange(kind: .changed, entity: entityName, property: relationship.name,
                                      detail: "destination \(oldTarget.name) -> \(relationship.destination): links to other \(oldTarget.name) objects are dropped", losesValues: true)
            // Asked of a store: a link of these objects to one of those (a store whose links all
            // lead to objects the new destination keeps loses nothing).
            change.keptIn = [EntityProperty(entity: work.sourceEntity.name, property: old.name, linkedTo: Set(reach.dropped))]
            changes.append(change)
            work.notes.append(loss)
            partialLosses[work.mapping.name, default: []].append(loss)
        }
        if old.isToMany && !relationship.isToMany {
            refuse(InferenceProblem(entity: entityName, property: relationship.name, reason: "to-many -> to-one would drop all but one related object",
                                    fix: "write an explicit mapping choosing the object, or keep it to-many"), in: &work)
            return
        }
        if !old.isToMany && relationship.isToMany {
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: relationship.name, detail: "to-one -> to-many"))
        }
        if old.isOrdered != relationship.isOrdered && relationship.isToMany && old.isToMany {
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: relationship.name, detail: relationship.isOrdered ? "unordered -> ordered (the objects take the store's order)" : "ordered -> unordered (the order of each object's \(relationship.name) is not kept)"))
        }
        if RelationshipCountRule.allowsEmpty(old) && !RelationshipCountRule.allowsEmpty(relationship) {
            // Made required, or (a to-many already required) given a minCount: said as it happened.
            let how = old.isOptional != relationship.isOptional ? "optional -> required" : "may be empty -> minCount \(relationship.declaredMinCount)"
            let least = max(1, relationship.declaredMinCount)
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: relationship.name,
                                        detail: "\(how) (validation will check every object has \(least == 1 ? "one" : "at least \(least)"))"))
        }
        if sourceFor[newTarget.name]?.name != oldTarget.name || (old.inverse == nil) != (relationship.inverse == nil) { origins.reshapes = true }
        work.origins[relationship.name] = .carried(from: old.name, typeChange: nil, nilBecomes: nil,
                                                   dropsOrder: old.isToMany && old.isOrdered && !(relationship.isToMany && relationship.isOrdered))
        // Set each relationship from one side: to-one sides always; to-many sides when they keep
        // an order or have no to-one inverse to carry them. An inverse new in this version
        // carries nothing (it has no values of its own yet): the links come from this side.
        let inverse = destination.inverse(of: relationship)
        if relationship.isToMany, let inverse, !inverse.isToMany, !relationship.isOrdered, carriesValues(inverse, of: relationship.destination) { return }
        let target = relationship.destination
        let hasSubentities = destination.entity(named: target).map { destination.hierarchy(under: $0).count > 1 } ?? false
        let expression: String
        if let targetSource = sourceFor[target], !hasSubentities, claimed[targetSource.name]?.count == 1, !targetSource.isAbstract {
            expression = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(Self.mappingName(targetSource.name, target))\", $source.\(old.name))"
        } else {
            expression = "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(old.name)\", $source.\(old.name))"
        }
        if let parsed = try? MappingExpression(expression) {
            work.mapping.relationships.append(PropertyMapping(name: relationship.name, expression: parsed))
        }
    }

    /// Which objects a relationship's links lead to after the step: the concrete source entities
    /// under `oldTarget` whose objects become objects of `newTarget`'s hierarchy (their links are
    /// kept), and those whose objects become objects of another entity (their links are dropped).
    /// Objects the step drops, and abstract entities, have no links to keep.
    private func linkReach(from oldTarget: Entity, to newTarget: Entity) -> (kept: [String], dropped: [String]) {
        let reachable = Set(destination.hierarchy(under: newTarget).map(\.name))
        var kept: [String] = [], dropped: [String] = []
        for entity in source.hierarchy(under: oldTarget) where !entity.isAbstract {
            guard let becomes = claimed[entity.name], !becomes.isEmpty else { continue }
            if becomes.allSatisfy(reachable.contains) { kept.append(entity.name) } else { dropped.append(entity.name) }
        }
        return (kept, dropped)
    }

    /// For a removed relationship, the destination relationship that keeps its links, when one
    /// does: its inverse's counterpart, carried from the inverse by every destination entity the
    /// inverse's objects become, whose own inverse is a new relationship `destinationEntity` has.
    /// A link is one fact stored once, seen from both sides, so the removed side loses nothing,
    /// as Core Data, setting the inverse, sets the new side. An ordered to-many's order is its
    /// own: removing it loses that, and it is not kept.
    private func inverseCarryingLinks(of old: Relationship, from sourceEntity: Entity, to destinationEntity: Entity) -> String? {
        guard !(old.isToMany && old.isOrdered), let inverseName = old.inverse, let target = source.entity(named: old.destination) else { return nil }
        let ownRelationships = Set(destination.allRelationships(of: destinationEntity).map(\.name))
        var carrier: String?
        for member in source.hierarchy(under: target) where !member.isAbstract {
            // Each concrete source entity the inverse's objects are of must become one that carries it.
            guard let becomes = destination.entities.first(where: { sourceFor[$0.name]?.name == member.name }),
                  let carried = destination.allRelationships(of: becomes).first(where: { relationship in
                      !relationship.isTransient && propertiesByEntity[becomes.name]?.counterparts[relationship.name]?.name == inverseName
                  }),
                  let inverse = carried.inverse, ownRelationships.contains(inverse),
                  // The new side must be new: one that carries values of its own (an inverse
                  // re-paired with another relationship) is set from those, not from `carried`.
                  propertiesByEntity[destinationEntity.name]?.counterparts[inverse] == nil,
                  let owner = destination.ancestry(of: becomes).first(where: { $0.relationships.contains { $0.name == carried.name } }) else { return nil }
            carrier = carrier ?? "\(owner.name).\(carried.name)"
        }
        return carrier
    }

    /// Whether a destination relationship of `entityName` takes its values from a source
    /// relationship (by name, renaming identifier or a rename between the versions).
    private func carriesValues(_ relationship: Relationship, of entityName: String) -> Bool {
        guard let properties = propertiesByEntity[entityName], let counterpart = properties.counterparts[relationship.name] else { return false }
        return properties.sourceRelationships.contains { $0.name == counterpart.name && !$0.isTransient }
    }

    // MARK: Saying each change once

    /// A property's change is said once, at the entity declaring it (an abstract parent's property,
    /// not under each of its sub-entities); so is each problem.
    private mutating func sayEachChangeOnceWhereDeclared() {
        // Each change said, by what says it; the objects keeping what one drops are gathered
        // on the one kept.
        var said: [[String]: Int] = [:]
        var keptChanges: [SchemaChange] = []
        func keep(_ change: SchemaChange, as key: [String]) {
            guard let first = said[key] else {
                said[key] = keptChanges.count
                keptChanges.append(change)
                return
            }
            // Where either cannot be asked (nil), neither can the one said.
            keptChanges[first].keptIn = keptChanges[first].keptIn.flatMap { kept in change.keptIn.map { kept.union($0) } }
        }
        for change in changes {
            var change = change
            let owner = declaring(change.entity, change.property, removed: change.kind == .removed)
            // A property the declaring entity had already is new only to the entity now under it.
            if owner != change.entity, change.kind == .added, let property = change.property, let ownerBefore = sourceFor[owner],
               source.property(named: property, in: ownerBefore) != nil {
                change.detail = "inherited from \(owner), which it is now under; \(change.detail)"
                keep(change, as: [change.kind.rawValue, change.entity, property, change.detail])
                continue
            }
            // A property the entity inherited from a parent it has left is lost to it alone.
            if owner == change.entity, change.kind == .removed, let property = change.property, let before = sourceFor[change.entity],
               let declarer = declarer(of: property, from: before, in: source), declarer.name != before.name,
               !destination.ancestry(of: destination.entity(named: change.entity) ?? before).contains(where: { sourceFor[$0.name]?.name == declarer.name }) {
                change.detail += " (inherited from \(declarer.name), which it is no longer under)"
            }
            if owner != change.entity, change.kind == .removed { change.detail = change.detail.replacingOccurrences(of: "of \(sourceFor[change.entity]?.name ?? change.entity)", with: "of \(sourceFor[owner]?.name ?? owner)") }
            change.entity = owner
            keep(change, as: [change.kind.rawValue, change.entity, change.property ?? "", change.detail])
        }
        changes = keptChanges
        // Said once at the declaring entity; what each sub-entity's would set it aside (its
        // attribute holding no nil) is gathered on the one kept.
        var refused: [[String]: Int] = [:]
        var kept: [InferenceProblem] = []
        for var problem in problems {
            problem.entity = declaring(problem.entity, problem.property, removed: false)
            let key = [problem.entity, problem.property ?? "", problem.reason]
            if let first = refused[key] {
                kept[first].unlessNoNil.formUnion(problem.unlessNoNil)
            } else {
                refused[key] = kept.count
                kept.append(problem)
            }
        }
        problems = kept
    }

    /// The source entity a removed property's values are named by: the concrete entity declaring
    /// it (its sub-entities' objects had it too), else the objects' own entity (an abstract parent
    /// has no objects of its own).
    private func sourceOwner(of property: String, from entity: Entity) -> String {
        guard let declarer = declarer(of: property, from: entity, in: source), !declarer.isAbstract else { return entity.name }
        return declarer.name
    }

    /// The entity of a hierarchy that declares a property (a name is declared once in it).
    private func declarer(of property: String, from entity: Entity, in schema: Schema) -> Entity? {
        schema.ancestry(of: entity).first { ancestor in ancestor.attributes.contains { $0.name == property } || ancestor.relationships.contains { $0.name == property } }
    }

    /// The destination entity a change of `property` of `entityName` is said at: the one declaring
    /// it; for a removed property, the destination counterpart of the source entity that declared it.
    private func declaring(_ entityName: String, _ property: String?, removed: Bool) -> String {
        guard let property, let entity = destination.entity(named: entityName) else { return entityName }
        if !removed { return declarer(of: property, from: entity, in: destination)?.name ?? entityName }
        guard let sourceEntity = sourceFor[entityName], let owner = declarer(of: property, from: sourceEntity, in: source),
              let counterpart = claimed[owner.name]?.first, destination.ancestry(of: entity).contains(where: { $0.name == counterpart }) else { return entityName }
        return counterpart
    }

    // MARK: Counterparts

    /// The element of the source version an element of the destination takes its values from.
    struct Counterpart {
        /// Its name in the source version.
        var name: String
        /// Found by mapc's rule where Core Data's finds nothing: said (`cautionUnlikeCoreData`).
        var unlikeCoreData = false
    }

    /// Each destination element's counterpart among the source's (entities, or one entity's
    /// properties), by name. Core Data's rule first: the one source element sharing its identifier
    /// (its renaming identifier, else its name), so an identifier is kept when renamed again. Failing
    /// that, mapc's: the old name its renaming identifier gives, and the renames recorded in the
    /// versions between (`lineage`), among the source elements no destination element has by Core
    /// Data's rule; a match Core Data would not make, unless two source elements share the identifier.
    static func counterparts(of elements: [(name: String, renaming: String?)], among sources: [(name: String, identifier: String)],
                             lineage: (String, String?) -> [String]) -> [String: Counterpart] {
        var found: [String: Counterpart] = [:]
        var ambiguous: Set<String> = []
        // Identifiers match exactly, as Core Data's `isEqual:` matches them ("é" in one scalar is
        // not e and an accent).
        let byIdentifier = Dictionary(grouping: sources, by: { ExactText($0.identifier) })
        for element in elements {
            guard let sharing = byIdentifier[ExactText(element.renaming ?? element.name)] else { continue }
            if sharing.count == 1 { found[element.name] = Counterpart(name: sharing[0].name) } else { ambiguous.insert(element.name) }
        }
        let taken = Set(found.values.map(\.name)), names = Set(sources.map(\.name))
        for element in elements where found[element.name] == nil {
            guard let old = lineage(element.name, element.renaming).first(where: { names.contains($0) && !taken.contains($0) }) else { continue }
            found[element.name] = Counterpart(name: old, unlikeCoreData: !ambiguous.contains(element.name))
        }
        return found
    }

    /// The names a destination entity had, newest first, for the lineage of its properties.
    private func owners(of entity: Entity) -> [String] {
        Self.lineageNames(entity.name, renaming: entity.renamingIdentifier, through: intermediates, kind: .entity(nil)) + [entity.name]
    }

    /// A destination entity's properties (inherited ones included), its source entity's, and the
    /// counterparts of its stored properties among the source's.
    private struct EntityProperties {
        var attributes: [Attribute]
        var relationships: [Relationship]
        var sourceAttributes: [Attribute]
        var sourceRelationships: [Relationship]
        var counterparts: [String: Counterpart]
    }

    private func properties(of destinationEntity: Entity, from sourceEntity: Entity) -> EntityProperties {
        var found = EntityProperties(attributes: destination.allAttributes(of: destinationEntity), relationships: destination.allRelationships(of: destinationEntity),
                                     sourceAttributes: source.allAttributes(of: sourceEntity), sourceRelationships: source.allRelationships(of: sourceEntity), counterparts: [:])
        let sources = found.sourceAttributes.filter { !$0.isTransient }.map { (name: $0.name, identifier: $0.canonicalIdentifier) }
            + found.sourceRelationships.filter { !$0.isTransient }.map { (name: $0.name, identifier: $0.canonicalIdentifier) }
        let elements = found.attributes.filter { !$0.isTransient }.map { (name: $0.name, renaming: $0.renamingIdentifier) }
            + found.relationships.filter { !$0.isTransient }.map { (name: $0.name, renaming: $0.renamingIdentifier) }
        let owners = owners(of: destinationEntity)
        found.counterparts = Self.counterparts(of: elements, among: sources) { name, renaming in
            Self.lineageNames(name, renaming: renaming, through: intermediates, kind: .property(owners))
        }
        return found
    }

    /// A match mapc makes and Core Data would not (no source element shares the identifier): the
    /// values are carried, and what Core Data would do, and how to agree with it, said.
    /// The entity under which a property's caution is said: the one declaring it (the destination
    /// entity, or the parent it is inherited from), once (`cautionUnlikeCoreData` says each once).
    /// A property moved up into a parent was said nowhere when only the sub-entity's objects had it.
    private func cautionOwner(of property: String, in work: EntityWork) -> String? {
        if work.declares(property) { return work.destinationEntity.name }
        return destination.ancestry(of: work.destinationEntity).first { entity in
            entity.attributes.contains { $0.name == property } || entity.relationships.contains { $0.name == property }
        }?.name
    }

    private mutating func cautionUnlikeCoreData(_ element: String, renaming: String?, matched old: String, of sourceEntity: String?, identifier: String) {
        // Said once, for a parent's property its sub-entities each carry.
        guard !cautions.contains(where: { $0.property == element }) else { return }
        let has = renaming.map { "has renamingIdentifier '\($0)'" } ?? "has no renamingIdentifier"
        let oldName = sourceEntity.map { "\($0).\(old)" } ?? old
        let name = element.split(separator: ".").last.map(String.init) ?? element
        cautions.append((element, "\(element) \(has), and mapc takes it for \(oldName) of \(source.version), whose renaming identifier is '\(identifier)': "
                                  + "Core Data's own migration would not (it matches renaming identifiers, which stay the same through renames), and would leave \(element) empty. "
                                  + "The values are carried here; for stores Core Data migrates too, give '\(name)' renamingIdentifier: \(identifier)"))
    }

    // MARK: Lineage

    enum LineageKind {
        case entity(String?)
        /// A property of the entity with these names (newest first).
        case property([String])
    }

    /// The names an entity or property had, newest first: its own, its renaming identifier, and the
    /// renames recorded in the versions between (walked from newest to oldest).
    static func lineageNames(_ name: String, renaming: String?, through intermediates: [Schema], kind: LineageKind) -> [String] {
        var names: [String] = [renaming ?? name]
        var current = renaming ?? name
        for schema in intermediates.reversed() {
            switch kind {
            case .entity:
                guard let entity = schema.entity(named: current) else { continue }
                if let older = entity.renamingIdentifier, older != current { names.append(older); current = older }
            case .property(let owners):
                guard let entity = owners.lazy.compactMap({ schema.entity(named: $0) }).first else { continue }
                switch schema.property(named: current, in: entity) {
                case .attribute(let attribute)?:
                    if let older = attribute.renamingIdentifier, older != current { names.append(older); current = older }
                case .relationship(let relationship)?:
                    if let older = relationship.renamingIdentifier, older != current { names.append(older); current = older }
                case nil: break
                }
            }
        }
        if renaming != nil && !names.contains(name) { names.append(name) }
        return names
    }
}
