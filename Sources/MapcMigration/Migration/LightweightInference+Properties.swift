import Foundation
import MapcFoundation
import MapcModel

/// How a lightweight inference maps an entity's attributes and relationships: by name, renaming
/// identifier or lineage, with the conversions, drops and cautions each one brings.
extension LightweightInference {
    // MARK: Properties

    /// Records which destination property carries a source property on; a second one is kept
    /// with the first, to be said (`cautions`).
    func noteCarrier(of old: String, inserted: Bool, by name: String, in work: inout EntityWork) {
        if inserted {
            work.firstCarrier[old] = name
        } else {
            work.carriedTwice[old, default: work.firstCarrier[old].map { [$0] } ?? []].append(name)
        }
    }

    /// A new property whose renaming identifier names no property of the entity in the source
    /// version (a typo, or another entity's property): it starts empty, which is said. Between
    /// versions with others between them, the identifier may name one of theirs: nothing said.
    mutating func cautionUnmatched(_ identifier: String?, of name: String, in work: EntityWork) {
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
    mutating func mapAttribute(_ attribute: Attribute, in work: inout EntityWork) {
        let entityName = work.destinationEntity.name
        let counterpart = work.counterparts[attribute.name]
        guard let counterpart, let old = work.sourceAttribute(named: counterpart.name) else {
            if let counterpart, let relationship = work.sourceRelationship(named: counterpart.name) {
                refuse(InferenceProblem(entity: entityName, property: attribute.name, reason: "'\(relationship.name)' was a relationship and is now an attribute", fix: "write an explicit mapping"), in: &work)
                return
            }
            changes.append(SchemaChange(kind: .added, entity: entityName, property: attribute.name, detail: "\(attribute.type.rawValue)\(attribute.isOptional ? ", optional" : "")\(attribute.defaultValue.map { ", default \($0.description(as: attribute.type))" } ?? "")"))
            cautionUnmatched(attribute.renamingIdentifier, of: attribute.name, in: work)
            if !attribute.isOptional && attribute.defaultValue == nil {
                refuse(InferenceProblem.refusedByValidation(entity: entityName, property: attribute.name, reason: "new required attribute without a default",
                                        fix: "give it a default, make it optional, or write an explicit mapping that computes it"), in: &work)
            } else {
                work.notes.append("\(attribute.name): new attribute, gets \(attribute.defaultValue.map { "its default \($0.description(as: attribute.type))" } ?? "nil")")
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
        var expression = ExpressionLiteral.sourceKey(old.name)
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
        if old.isOptional && !attribute.isOptional, let literal = Self.nilFill(from: old, to: attribute), let defaultValue = attribute.defaultValue {
            expression = "TERNARY(\(ExpressionLiteral.sourceKey(old.name)) != nil, \(ExpressionLiteral.sourceKey(old.name)), \(literal))"
            nilBecomes = defaultValue
            var change = SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "optional -> required, nil becomes \(defaultValue.description(as: attribute.type))")
            change.defaultForNil = defaultValue.description(as: attribute.type)
            changes.append(change)
            work.notes.append("\(attribute.name): now required; nil becomes \(defaultValue.description(as: attribute.type))")
        } else if old.isOptional && !attribute.isOptional {
            // No default, or one no expression can write (binary data has no literal): nil has
            // nowhere to go.
            let reason = attribute.defaultValue == nil ? "optional -> required without a default (nil values would have nowhere to go)"
                : "optional -> required, with a default no mapping expression can write (the expression language has no \(attribute.type.rawValue) literal), so nil values would have nowhere to go"
            let fix = attribute.defaultValue == nil ? "give it a default in \(destination.version), or write an explicit mapping"
                : "write an explicit mapping whose policy sets the bytes for nil values, or keep the attribute optional"
            var problem = InferenceProblem.refusedByValidation(entity: entityName, property: attribute.name, reason: reason, fix: fix)
            problem.unlessNoNil = [EntityAttribute(entity: work.sourceEntity.name, attribute: old.name)]
            // For a store holding no nil there, the values are carried as they are, as Core
            // Data's lightweight migration carries them (and fails a nil on validation).
            guard refuse(problem, in: &work) else { return }
            changes.append(SchemaChange(kind: .changed, entity: entityName, property: attribute.name, detail: "optional -> required"))
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
        if let parsed = parsed(expression, for: attribute.name, in: &work) {
            work.mapping.attributes.append(PropertyMapping(name: attribute.name, expression: parsed))
        }
    }

    /// An inferred expression, parsed. One that does not parse (a fault of mapc's own writing, as
    /// a key once written bare where a reserved word needs `#`) refuses the step: left out, the
    /// property was left nil while the step was said to carry it.
    private mutating func parsed(_ expression: String, for property: String, in work: inout EntityWork) -> MappingExpression? {
        do {
            return try MappingExpression(expression)
        } catch {
            _ = refuse(InferenceProblem(entity: work.destinationEntity.name, property: property,
                                        reason: "the inferred expression '\(expression)' does not parse (\(error)), a fault of mapc's",
                                        fix: "write an explicit mapping for it, and report the fault"), in: &work)
            return nil
        }
    }

    /// A destination relationship: new, renamed, to-one made to-many, reordered, made required; or
    /// a change inference refuses. Each relationship is set from one side only.
    mutating func mapRelationship(_ relationship: Relationship, in work: inout EntityWork) {
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
        let targets = source.entity(named: old.destination).flatMap { oldTarget in destination.entity(named: relationship.destination).map { (oldTarget, $0) } }
        let reach = targets.map { linkReach(from: $0.0, to: $0.1) }
        if reach?.kept.isEmpty ?? true {
            // Refused; its other changes (order, count) are still said, as every change is.
            refuse(InferenceProblem(entity: entityName, property: relationship.name, reason: "leads to \(relationship.destination), which does not correspond to \(old.destination)",
                                    fix: "write an explicit mapping"), in: &work)
        } else if let reach, let oldTarget = targets?.0, !reach.dropped.isEmpty {
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
        guard let (oldTarget, newTarget) = targets, reach?.kept.isEmpty == false else { return }
        if sourceFor[newTarget.name]?.name != oldTarget.name || (old.inverse == nil) != (relationship.inverse == nil) { origins.reshapes = true }
        work.origins[relationship.name] = .carried(from: old.name, typeChange: nil, nilBecomes: nil,
                                                   dropsOrder: old.isToMany && old.isOrdered && !(relationship.isToMany && relationship.isOrdered))
        // Set each relationship from one side: to-one sides always; to-many sides when they keep
        // an order or have no to-one inverse to carry them. An inverse new in this version
        // carries nothing (it has no values of its own yet): the links come from this side.
        let inverse = destination.inverse(of: relationship)
        if relationship.isToMany, let inverse, !inverse.isToMany, !relationship.isOrdered, carriesValues(inverse, of: relationship.destination) {
            // The pair is set from the to-one side: this side's links are its links only where
            // the two were each other's inverse in the source too. Two one-sided relationships
            // paired hold links of their own, and this side's are dropped: said and asked.
            let pairedBefore = propertiesByEntity[relationship.destination]?.counterparts[inverse.name].map { old.inverse == $0.name } ?? false
            if !pairedBefore {
                let loss = "\(relationship.name): links of \(old.name) that \(relationship.destination).\(inverse.name) does not hold are dropped (the two were not each other's inverse in \(source.version); the pair is set from \(inverse.name))"
                var change = SchemaChange(kind: .changed, entity: entityName, property: relationship.name,
                                          detail: "made the inverse of \(relationship.destination).\(inverse.name): links of \(old.name) that \(inverse.name) does not hold are dropped", losesValues: true)
                change.keptIn = [EntityProperty(entity: work.sourceEntity.name, property: old.name)]
                change.sourceOwner = sourceOwner(of: old.name, from: work.sourceEntity)
                changes.append(change)
                work.notes.append(loss)
                partialLosses[work.mapping.name, default: []].append(loss)
            }
            return
        }
        let target = relationship.destination
        let hasSubentities = destination.entity(named: target).map { destination.hierarchy(under: $0).count > 1 } ?? false
        let expression: String
        if let targetSource = sourceFor[target], !hasSubentities, claimed[targetSource.name]?.count == 1, !targetSource.isAbstract {
            expression = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(Self.mappingName(targetSource.name, target))\", \(ExpressionLiteral.sourceKey(old.name)))"
        } else {
            expression = "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \(ExpressionLiteral.string(old.name)), \(ExpressionLiteral.sourceKey(old.name)))"
        }
        if let parsed = parsed(expression, for: relationship.name, in: &work) {
            work.mapping.relationships.append(PropertyMapping(name: relationship.name, expression: parsed))
        }
    }

    /// The literal an inferred step writes for an attribute's stored nils: its default, when it
    /// is made required with one a mapping expression can write (`ExpressionLiteral.value`; not
    /// binary data). `diff` says from this whether the new default reaches stored values.
    package static func nilFill(from old: Attribute, to new: Attribute) -> String? {
        guard old.isOptional, !new.isOptional else { return nil }
        return new.defaultValue.flatMap(ExpressionLiteral.value)
    }

    /// Which objects a relationship's links lead to after the step: the concrete source entities
    /// under `oldTarget` whose objects become objects of `newTarget`'s hierarchy (their links are
    /// kept), and those whose objects become objects of another entity (their links are dropped).
    /// Objects the step drops, and abstract entities, have no links to keep.
    func linkReach(from oldTarget: Entity, to newTarget: Entity) -> (kept: [String], dropped: [String]) {
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
    func inverseCarryingLinks(of old: Relationship, from sourceEntity: Entity, to destinationEntity: Entity) -> String? {
        guard !(old.isToMany && old.isOrdered), let inverseName = old.inverse, let target = source.entity(named: old.destination) else { return nil }
        let ownRelationships = Set(destination.allRelationships(of: destinationEntity).map(\.name))
        var carrier: String?
        for member in source.hierarchy(under: target) where !member.isAbstract {
            // Each concrete source entity the inverse's objects are of must become one that carries it.
            guard let becomes = destination.entities.first(where: { sourceFor[$0.name]?.name == member.name }),
                  let carried = destination.allRelationships(of: becomes).first(where: { relationship in
                      !relationship.isTransient && propertiesByEntity[becomes.name]?.counterparts[relationship.name]?.name == inverseName
                  }),
                  keepsLinks(carried, of: old, besides: destinationEntity, ownRelationships: ownRelationships),
                  let owner = destination.ancestry(of: becomes).first(where: { $0.relationships.contains { $0.name == carried.name } }) else { return nil }
            carrier = carrier ?? "\(owner.name).\(carried.name)"
        }
        return carrier
    }

    /// Whether `carried` (the inverse of `removed`, carried by the step) keeps the removed side's
    /// links as they are: paired with a new side of `destinationEntity`, which is set from it, or
    /// left without an inverse while still leading to `destinationEntity`'s objects (a link is
    /// stored once: the kept side holds each), unless the pair was a many-to-many (a to-many
    /// without an inverse holds one owner per object in Core Data's layout, a hidden key: an
    /// object of two owners loses one). A side re-paired with a relationship that carries values
    /// of its own is set from those, not from `carried`.
    func keepsLinks(_ carried: Relationship, of removed: Relationship, besides destinationEntity: Entity, ownRelationships: Set<String>) -> Bool {
        guard let inverse = carried.inverse else {
            return !(removed.isToMany && carried.isToMany) && destination.ancestry(of: destinationEntity).contains { $0.name == carried.destination }
        }
        return ownRelationships.contains(inverse) && propertiesByEntity[destinationEntity.name]?.counterparts[inverse] == nil
    }

    /// Whether a destination relationship of `entityName` takes its values from a source
    /// relationship (by name, renaming identifier or a rename between the versions).
    func carriesValues(_ relationship: Relationship, of entityName: String) -> Bool {
        guard let properties = propertiesByEntity[entityName], let counterpart = properties.counterparts[relationship.name] else { return false }
        return properties.sourceRelationships.contains { $0.name == counterpart.name && !$0.isTransient }
    }
}
