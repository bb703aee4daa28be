import Foundation
import MapcModel

/// Why a step cannot be inferred, naming the entity and property, with the fix.
public struct InferenceProblem: Sendable, CustomStringConvertible, Equatable {
    /// The destination (or source) entity concerned.
    public var entity: String
    /// The property concerned, if any.
    public var property: String?
    /// What prevents inference.
    public var reason: String
    /// What to do about it.
    public var fix: String

    public var description: String {
        "\(entity)\(property.map { ".\($0)" } ?? ""): \(reason); \(fix)"
    }
}

/// One change between two versions, as `mapc diff` shows it.
public struct SchemaChange: Sendable, CustomStringConvertible, Equatable {
    /// What kind of change.
    public enum Kind: String, Sendable {
        /// In the newer version only.
        case added
        /// In the older version only.
        case removed
        /// The same, under a new name (its renaming identifier names the old one).
        case renamed
        /// In both, with a different definition.
        case changed
    }
    /// The kind.
    public var kind: Kind
    /// The entity (its destination name; for removals, its source name).
    public var entity: String
    /// The property, or nil for entity-level changes.
    public var property: String?
    /// Details, e.g. "int16 -> int64" or "from 'name'".
    public var detail: String
    /// Whether a migration loses stored values by this change: removals do, except of an abstract
    /// entity (its objects are its sub-entities', which are compared property by property).
    public var losesValues: Bool

    package init(kind: Kind, entity: String, property: String?, detail: String, losesValues: Bool? = nil) {
        self.kind = kind
        self.entity = entity
        self.property = property
        self.detail = detail
        self.losesValues = losesValues ?? (kind == .removed)
    }

    public var description: String {
        let subject = property.map { "\(entity).\($0)" } ?? "entity \(entity)"
        return "\(kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(subject)\(detail.isEmpty ? "" : ": \(detail)")"
    }
}

/// The result of comparing two versions: the changes, and either an inferred mapping or the reasons there is none.
public struct InferenceResult: Sendable {
    /// Everything that changed.
    public var changes: [SchemaChange]
    /// Why the step cannot be inferred (empty when it can).
    public var problems: [InferenceProblem]
    /// The inferred mapping, when there are no problems.
    public var mapping: MappingModel?
    /// Everything inferable, with what is not as `todo:` items on the entity mappings concerned:
    /// the starting point `mapc infer` writes for a step it cannot complete (equal to `mapping`
    /// when there are no problems).
    public var skeleton: MappingModel
    /// Comments for the mapping file, by entity mapping name.
    public var notes: [String: [String]]
    /// Properties that look renamed without a renaming identifier: in one entity, one property
    /// removed and one added of the same type (or leading to the same entity), which inference
    /// reads as a removal and an addition. Each says how to declare the rename.
    public var probableRenames: [String] = []

    /// What the step drops: removed entities and properties, whose values an inferred migration loses.
    public var droppedValues: [String] {
        changes.filter(\.losesValues).map { change in change.property.map { "\(change.entity).\($0)" } ?? "entity \(change.entity)" }
    }
}

extension MappingInference {
    /// What changed an entity's version hash besides the changes found already: hash modifiers,
    /// uniqueness constraints, relationship counts or inverses. They need a migration (the store's
    /// hashes no longer match) but move no values.
    static func hashOnlyChanges(from source: Schema, to destination: Schema, counterparts: [String: Entity], listed: [SchemaChange]) -> [SchemaChange] {
        var found: [SchemaChange] = []
        for entity in destination.entities {
            guard let old = counterparts[entity.name] else { continue }
            let before = VersionHash.fingerprintInputs(of: old, in: source), after = VersionHash.fingerprintInputs(of: entity, in: destination)
            func isListed(_ property: String?) -> Bool { listed.contains { $0.entity == entity.name && $0.property == property } }
            // Changed in mapc's hash or in Core Data's (which also covers external storage and
            // preservation after deletion), or in a setting no hash covers (a delete rule): each said.
            func coreDataHash(_ property: Property?, _ owner: Entity, _ schema: Schema) -> Data? {
                switch property {
                case .attribute(let attribute)?: return CoreDataVersionHash.hash(of: attribute)
                case .relationship(let relationship)?: return CoreDataVersionHash.hash(of: relationship, in: schema, owner: owner)
                case nil: return nil
                }
            }
            for name in after.keys.sorted() where name != "@entity" && before[name] != nil {
                let oldProperty = source.property(named: name, in: old), newProperty = destination.property(named: name, in: entity)
                var deleteRuleChanged = false
                if case .relationship(let a)? = oldProperty, case .relationship(let b)? = newProperty { deleteRuleChanged = a.deleteRule != b.deleteRule }
                guard before[name] != after[name] || coreDataHash(oldProperty, old, source) != coreDataHash(newProperty, entity, destination) || deleteRuleChanged else { continue }
                // What the listed changes of the property do not say already.
                var details = settingsChanged(source.property(named: name, in: old), destination.property(named: name, in: entity))
                if isListed(name) {
                    details.removeAll { $0.hasPrefix("optional") || $0.hasPrefix("required") }
                    if details.isEmpty { continue }
                }
                found.append(SchemaChange(kind: .changed, entity: entity.name, property: name, detail: details.isEmpty ? "settings in its version hash changed" : details.joined(separator: ", ")))
            }
            guard before["@entity"] != after["@entity"], !isListed(nil) else { continue }
            var details: [String] = []
            if old.versionHashModifier != entity.versionHashModifier { details.append("versionHashModifier \(old.versionHashModifier ?? "none") -> \(entity.versionHashModifier ?? "none")") }
            if old.uniquenessConstraints != entity.uniquenessConstraints { details.append("uniqueness constraints \(old.uniquenessConstraints) -> \(entity.uniquenessConstraints)") }
            if old.isAbstract != entity.isAbstract { details.append(entity.isAbstract ? "now abstract" : "no longer abstract") }
            // Otherwise the parent's hash changed, which its own lines say.
            if !details.isEmpty { found.append(SchemaChange(kind: .changed, entity: entity.name, property: nil, detail: details.joined(separator: ", "))) }
        }
        return found
    }

    /// The validation rules that admit fewer values than before, as "maxLength 60 -> 20" (rules are
    /// not in the hashes, so no other change lists them).
    static func tightenedRules(from old: Validation, to new: Validation) -> [String] {
        func shown(_ value: Value?) -> String { value.map { "\($0)" } ?? "none" }
        func shown(_ count: Int?) -> String { count.map(String.init) ?? "none" }
        var tightened: [String] = []
        if let min = new.min, old.min.flatMap({ Value.compare($0, min) }).map({ $0 == .orderedAscending }) ?? true { tightened.append("min \(shown(old.min)) -> \(min)") }
        if let max = new.max, old.max.flatMap({ Value.compare($0, max) }).map({ $0 == .orderedDescending }) ?? true { tightened.append("max \(shown(old.max)) -> \(max)") }
        if let min = new.minLength, (old.minLength ?? 0) < min { tightened.append("minLength \(shown(old.minLength)) -> \(min)") }
        if let max = new.maxLength, old.maxLength.map({ $0 > max }) ?? true { tightened.append("maxLength \(shown(old.maxLength)) -> \(max)") }
        if let regex = new.regex, regex != old.regex { tightened.append("regex \(old.regex.map { "'\($0)'" } ?? "none") -> '\(regex)'") }
        return tightened
    }

    private static func settingsChanged(_ old: Property?, _ new: Property?) -> [String] {
        var details: [String] = []
        if let old, let new, old.isOptional != new.isOptional { details.append(new.isOptional ? "required -> optional" : "optional -> required") }
        switch (old, new) {
        case (.attribute(let before)?, .attribute(let after)?):
            if before.versionHashModifier != after.versionHashModifier { details.append("versionHashModifier \(before.versionHashModifier ?? "none") -> \(after.versionHashModifier ?? "none")") }
            if before.isTransient != after.isTransient { details.append(after.isTransient ? "now transient" : "no longer transient") }
            if before.allowsExternalStorage != after.allowsExternalStorage { details.append(after.allowsExternalStorage ? "now allows external storage" : "no longer allows external storage") }
            if before.preservesAfterDeletion != after.preservesAfterDeletion { details.append(after.preservesAfterDeletion ? "now preserved after deletion" : "no longer preserved after deletion") }
        case (.relationship(let before)?, .relationship(let after)?):
            if before.deleteRule != after.deleteRule { details.append("delete rule \(before.deleteRule.rawValue) -> \(after.deleteRule.rawValue) (in no version hash: no migration for it alone)") }
            if before.versionHashModifier != after.versionHashModifier { details.append("versionHashModifier \(before.versionHashModifier ?? "none") -> \(after.versionHashModifier ?? "none")") }
            if before.inverse != after.inverse { details.append("inverse \(before.inverse ?? "none") -> \(after.inverse ?? "none")") }
            if before.declaredMinCount != after.declaredMinCount || before.declaredMaxCount != after.declaredMaxCount {
                func counts(_ relationship: Relationship) -> String {
                    "\(relationship.declaredMinCount)...\(relationship.declaredMaxCount == 0 ? "any" : String(relationship.declaredMaxCount))"
                }
                details.append("counts \(counts(before)) -> \(counts(after))")
            }
            if before.isTransient != after.isTransient { details.append(after.isTransient ? "now transient" : "no longer transient") }
        default: break
        }
        return details
    }
}

/// Lightweight migration, as Core Data infers it: entities and properties matched by name or
/// `renamingIdentifier`, additions, removals, safe type widenings, optionality changes with
/// defaults, to-one to to-many, ordered to unordered and back, hierarchy changes. The result is an
/// explicit mapping model that runs like a hand-written one. See docs/inference.md.
public enum MappingInference {
    /// Type changes inferred because no value can be lost (the one list, in `ValueRules`).
    public static var wideningTypes: Set<String> { ValueRules.losslessTypeChanges }

    /// Compares `source` with `destination`. Renames are followed through the catalog's versions in
    /// between when given, so a rename made two versions ago still matches.
    public static func infer(from source: Schema, to destination: Schema, through intermediates: [Schema] = []) -> InferenceResult {
        var changes: [SchemaChange] = []
        var problems: [InferenceProblem] = []
        var notes: [String: [String]] = [:]

        // Entities: each destination entity's source counterpart.
        var sourceFor: [String: Entity] = [:]
        var claimed: [String: [String]] = [:]
        for entity in destination.entities {
            let lineage = lineageNames(entity.name, renaming: entity.renamingIdentifier, through: intermediates, kind: .entity(nil))
            if let match = lineage.lazy.compactMap({ source.entity(named: $0) }).first {
                sourceFor[entity.name] = match
                claimed[match.name, default: []].append(entity.name)
                if match.name != entity.name { changes.append(SchemaChange(kind: .renamed, entity: entity.name, property: nil, detail: "from \(match.name)")) }
            } else {
                changes.append(SchemaChange(kind: .added, entity: entity.name, property: nil, detail: entity.parent.map { "sub-entity of \($0)" } ?? ""))
            }
        }
        for (sourceName, targets) in claimed where targets.count > 1 {
            problems.append(InferenceProblem(entity: sourceName, property: nil, reason: "entity \(sourceName) would split into \(targets.sorted().joined(separator: " and ")) (both match it by name or renaming identifier)",
                                             fix: "write an explicit mapping saying which objects go where, or keep one renaming identifier"))
        }
        for entity in source.entities where claimed[entity.name] == nil {
            changes.append(SchemaChange(kind: .removed, entity: entity.name, property: nil, detail: entity.isAbstract ? "abstract: no objects of its own" : "",
                                        losesValues: !entity.isAbstract))
        }

        var entityMappings: [EntityMapping] = []
        func mappingName(_ sourceName: String, _ destinationName: String) -> String { "\(sourceName)To\(destinationName)" }
        for destinationEntity in destination.entities {
            guard let sourceEntity = sourceFor[destinationEntity.name] else { continue }
            let name = mappingName(sourceEntity.name, destinationEntity.name)
            var entityNotes: [String] = []
            var todo: [MappingTodo] = []
            func refuse(_ problem: InferenceProblem) {
                problems.append(problem)
                todo.append(MappingTodo("\(problem.property.map { "\($0): " } ?? "")\(problem.reason); \(problem.fix)"))
            }
            if let claimants = claimed[sourceEntity.name], claimants.count > 1 {
                todo.append(MappingTodo("\(sourceEntity.name) objects are claimed by \(claimants.sorted().joined(separator: " and ")); add a filter choosing which become \(destinationEntity.name) objects, or remove this mapping"))
            }
            if sourceEntity.isAbstract == false && destinationEntity.isAbstract {
                refuse(InferenceProblem(entity: destinationEntity.name, property: nil, reason: "\(sourceEntity.name) objects exist but \(destinationEntity.name) is abstract",
                                        fix: "map them to a concrete sub-entity in an explicit mapping"))
            }
            if sourceEntity.isAbstract { continue }
            if sourceEntity.parent != destinationEntity.parent {
                let from = sourceEntity.parent ?? "none", to = destinationEntity.parent ?? "none"
                changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: nil, detail: "parent \(from) -> \(to)"))
                entityNotes.append("parent changed: \(from) -> \(to)")
            }
            var mapping = EntityMapping(name: name, source: sourceEntity.name, destination: destinationEntity.name, type: .transform)
            let owners = lineageNames(destinationEntity.name, renaming: destinationEntity.renamingIdentifier, through: intermediates, kind: .entity(nil)) + [destinationEntity.name]
            let sourceAttributes = source.allAttributes(of: sourceEntity)
            let sourceRelationships = source.allRelationships(of: sourceEntity)
            var usedSource: Set<String> = []
            for attribute in destination.allAttributes(of: destinationEntity) where !attribute.isTransient {
                let lineage = lineageNames(attribute.name, renaming: attribute.renamingIdentifier, through: intermediates, kind: .property(owners))
                guard let old = lineage.lazy.compactMap({ candidate in sourceAttributes.first { $0.name == candidate && !$0.isTransient } }).first else {
                    if let relationship = lineage.lazy.compactMap({ candidate in sourceRelationships.first { $0.name == candidate } }).first {
                        refuse(InferenceProblem(entity: destinationEntity.name, property: attribute.name, reason: "'\(relationship.name)' was a relationship and is now an attribute", fix: "write an explicit mapping"))
                        continue
                    }
                    changes.append(SchemaChange(kind: .added, entity: destinationEntity.name, property: attribute.name, detail: "\(attribute.type.rawValue)\(attribute.isOptional ? ", optional" : "")\(attribute.defaultValue.map { ", default \($0)" } ?? "")"))
                    if !attribute.isOptional && attribute.defaultValue == nil {
                        refuse(InferenceProblem(entity: destinationEntity.name, property: attribute.name, reason: "new required attribute without a default",
                                                         fix: "give it a default, make it optional, or write an explicit mapping that computes it"))
                    } else {
                        entityNotes.append("\(attribute.name): new attribute, gets \(attribute.defaultValue.map { "its default \($0)" } ?? "nil")")
                    }
                    continue
                }
                usedSource.insert(old.name)
                if old.name != attribute.name {
                    changes.append(SchemaChange(kind: .renamed, entity: destinationEntity.name, property: attribute.name, detail: "from \(old.name)"))
                    entityNotes.append("\(attribute.name): renamed from \(old.name)")
                }
                var expression = "$source.\(old.name)"
                if old.type != attribute.type, !ValueRules.isLossless(from: old.type, to: attribute.type),
                   let caution = ValueRules.numericConversionCaution(from: old.type, to: attribute.type) {
                    // A conversion between numbers, as Core Data's lightweight migration makes one
                    // (WooCommerce shipped int64 -> double so): inferred, with what it can cost.
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: attribute.name, detail: "\(old.type.rawValue) -> \(attribute.type.rawValue), converted: \(caution)"))
                    entityNotes.append("\(attribute.name): converted from \(old.type.rawValue) to \(attribute.type.rawValue); \(caution)")
                } else if old.type != attribute.type {
                    guard ValueRules.isLossless(from: old.type, to: attribute.type) else {
                        changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: attribute.name, detail: "\(old.type.rawValue) -> \(attribute.type.rawValue), not a widening"))
                        refuse(InferenceProblem(entity: destinationEntity.name, property: attribute.name, reason: "type change \(old.type.rawValue) -> \(attribute.type.rawValue) can lose data",
                                                         fix: "write an explicit mapping with a converting expression, or go through an intermediate version"))
                        continue
                    }
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: attribute.name, detail: "\(old.type.rawValue) -> \(attribute.type.rawValue)"))
                    entityNotes.append("\(attribute.name): widened from \(old.type.rawValue) to \(attribute.type.rawValue)")
                }
                if old.isOptional && !attribute.isOptional {
                    guard let defaultValue = attribute.defaultValue, let literal = ExpressionLiteral.value(defaultValue) else {
                        refuse(InferenceProblem(entity: destinationEntity.name, property: attribute.name, reason: "optional -> required without a default (nil values would have nowhere to go)",
                                                         fix: "give it a default in \(destination.version), or write an explicit mapping"))
                        continue
                    }
                    expression = "TERNARY($source.\(old.name) != nil, $source.\(old.name), \(literal))"
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: attribute.name, detail: "optional -> required, nil becomes \(defaultValue)"))
                    entityNotes.append("\(attribute.name): now required; nil becomes \(defaultValue)")
                } else if !old.isOptional && attribute.isOptional {
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: attribute.name, detail: "required -> optional"))
                }
                let tightened = tightenedRules(from: old.validation, to: attribute.validation)
                if !tightened.isEmpty {
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: attribute.name,
                                                detail: "\(tightened.joined(separator: ", ")): stored values may break the rules, and validation then refuses the migration"))
                    entityNotes.append("\(attribute.name): rules tightened (\(tightened.joined(separator: ", "))); values that break them fail validation")
                }
                if let parsed = try? MappingExpression(expression) {
                    mapping.attributes.append(PropertyMapping(name: attribute.name, expression: parsed))
                }
            }
            var usedRelationships: Set<String> = []
            for relationship in destination.allRelationships(of: destinationEntity) where !relationship.isTransient {
                let lineage = lineageNames(relationship.name, renaming: relationship.renamingIdentifier, through: intermediates, kind: .property(owners))
                guard let old = lineage.lazy.compactMap({ candidate in sourceRelationships.first { $0.name == candidate && !$0.isTransient } }).first else {
                    if let attribute = lineage.lazy.compactMap({ candidate in sourceAttributes.first { $0.name == candidate && !$0.isTransient } }).first {
                        // Core Data does not infer a change of property kind: the values have no meaning to carry over.
                        usedSource.insert(attribute.name)
                        changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: relationship.name, detail: "attribute -> relationship"))
                        refuse(InferenceProblem(entity: destinationEntity.name, property: relationship.name, reason: "'\(attribute.name)' was an attribute and is now a relationship",
                                                fix: "write an explicit mapping that relates the objects (a policy can turn the old values into objects)"))
                        continue
                    }
                    changes.append(SchemaChange(kind: .added, entity: destinationEntity.name, property: relationship.name, detail: "\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination)"))
                    // A new to-many that may be empty starts empty, as Core Data's lightweight migration sets it.
                    if !RelationshipCountRule.allowsEmpty(relationship) {
                        refuse(InferenceProblem(entity: destinationEntity.name, property: relationship.name, reason: "new required relationship (existing objects have nothing to relate to)",
                                                         fix: "make it optional, or write an explicit mapping that relates the objects"))
                    }
                    continue
                }
                usedRelationships.insert(old.name)
                if old.name != relationship.name {
                    changes.append(SchemaChange(kind: .renamed, entity: destinationEntity.name, property: relationship.name, detail: "from \(old.name)"))
                    entityNotes.append("\(relationship.name): renamed from \(old.name)")
                }
                // The relationship must lead to the counterpart of what it led to (or a relative in its hierarchy).
                let counterpart = sourceFor[relationship.destination]
                guard let oldTarget = source.entity(named: old.destination), let counterpart,
                      source.hierarchy(under: counterpart).contains(where: { $0.name == oldTarget.name }) || source.hierarchy(under: oldTarget).contains(where: { $0.name == counterpart.name }) else {
                    refuse(InferenceProblem(entity: destinationEntity.name, property: relationship.name, reason: "leads to \(relationship.destination), which does not correspond to \(old.destination)",
                                                     fix: "write an explicit mapping"))
                    continue
                }
                if old.isToMany && !relationship.isToMany {
                    refuse(InferenceProblem(entity: destinationEntity.name, property: relationship.name, reason: "to-many -> to-one would drop all but one related object",
                                                     fix: "write an explicit mapping choosing the object, or keep it to-many"))
                    continue
                }
                if !old.isToMany && relationship.isToMany {
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: relationship.name, detail: "to-one -> to-many"))
                }
                if old.isOrdered != relationship.isOrdered && relationship.isToMany && old.isToMany {
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: relationship.name, detail: relationship.isOrdered ? "unordered -> ordered" : "ordered -> unordered"))
                }
                if RelationshipCountRule.allowsEmpty(old) && !RelationshipCountRule.allowsEmpty(relationship) {
                    changes.append(SchemaChange(kind: .changed, entity: destinationEntity.name, property: relationship.name, detail: "optional -> required (validation will check every object has one)"))
                }
                // Set each relationship from one side: to-one sides always; to-many sides when they keep
                // an order or have no to-one inverse to carry them.
                let inverse = destination.inverse(of: relationship)
                if relationship.isToMany, inverse != nil, inverse?.isToMany == false, !relationship.isOrdered { continue }
                let target = relationship.destination
                let hasSubentities = destination.entity(named: target).map { destination.hierarchy(under: $0).count > 1 } ?? false
                let expression: String
                if let targetSource = sourceFor[target], !hasSubentities, claimed[targetSource.name]?.count == 1, !targetSource.isAbstract {
                    expression = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mappingName(targetSource.name, target))\", $source.\(old.name))"
                } else {
                    expression = "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(old.name)\", $source.\(old.name))"
                }
                if let parsed = try? MappingExpression(expression) {
                    mapping.relationships.append(PropertyMapping(name: relationship.name, expression: parsed))
                }
            }
            for old in sourceAttributes where !usedSource.contains(old.name) && !old.isTransient {
                changes.append(SchemaChange(kind: .removed, entity: destinationEntity.name, property: old.name, detail: "attribute of \(sourceEntity.name)"))
                entityNotes.append("\(old.name): removed, its values are dropped")
            }
            for old in sourceRelationships where !usedRelationships.contains(old.name) && !old.isTransient {
                changes.append(SchemaChange(kind: .removed, entity: destinationEntity.name, property: old.name, detail: "relationship of \(sourceEntity.name)"))
                entityNotes.append("\(old.name): relationship removed")
            }
            mapping.todo = todo
            entityMappings.append(mapping)
            notes[name] = entityNotes
        }
        for entity in source.entities where claimed[entity.name] == nil && !entity.isAbstract {
            entityMappings.append(EntityMapping(name: "Remove\(entity.name)", source: entity.name, destination: nil, type: .remove))
            notes["Remove\(entity.name)"] = ["\(entity.name) is not in \(destination.version); its objects are dropped"]
        }
        let renames = probableRenames(changes, from: source, to: destination, counterparts: sourceFor)
        // A property's change is said once, at the entity declaring it (an abstract parent's
        // property, not under each of its sub-entities).
        /// The entity of a hierarchy that declares a property (a name is declared once in it).
        func declarer(of property: String, from entity: Entity, in schema: Schema) -> Entity? {
            schema.ancestry(of: entity).first { ancestor in ancestor.attributes.contains { $0.name == property } || ancestor.relationships.contains { $0.name == property } }
        }
        func declaring(_ entityName: String, _ property: String?, removed: Bool) -> String {
            guard let property, let entity = destination.entity(named: entityName) else { return entityName }
            if !removed { return declarer(of: property, from: entity, in: destination)?.name ?? entityName }
            // A removed property: at the destination counterpart of the source entity that declared it.
            guard let sourceEntity = sourceFor[entityName], let owner = declarer(of: property, from: sourceEntity, in: source),
                  let counterpart = claimed[owner.name]?.first, destination.ancestry(of: entity).contains(where: { $0.name == counterpart }) else { return entityName }
            return counterpart
        }
        var said: Set<[String]> = []
        changes = changes.compactMap { change in
            var change = change
            let owner = declaring(change.entity, change.property, removed: change.kind == .removed)
            if owner != change.entity, change.kind == .removed { change.detail = change.detail.replacingOccurrences(of: "of \(sourceFor[change.entity]?.name ?? change.entity)", with: "of \(sourceFor[owner]?.name ?? owner)") }
            change.entity = owner
            return said.insert([change.kind.rawValue, change.entity, change.property ?? "", change.detail]).inserted ? change : nil
        }
        var refused: Set<[String]> = []
        problems = problems.compactMap { problem in
            var problem = problem
            problem.entity = declaring(problem.entity, problem.property, removed: false)
            return refused.insert([problem.entity, problem.property ?? "", problem.reason]).inserted ? problem : nil
        }
        changes += hashOnlyChanges(from: source, to: destination, counterparts: sourceFor, listed: changes)
        let skeleton = MappingModel(source: source.version, destination: destination.version, entityMappings: entityMappings)
        var result = InferenceResult(changes: changes, problems: problems, mapping: problems.isEmpty ? skeleton : nil, skeleton: skeleton, notes: notes)
        result.probableRenames = renames
        return result
    }

    /// In each entity, an added property and a removed one of the same kind and type, when each
    /// is the only one of that type added and removed there: probably a rename whose renaming
    /// identifier was forgotten.
    static func probableRenames(_ changes: [SchemaChange], from source: Schema, to destination: Schema, counterparts: [String: Entity]) -> [String] {
        func signature(_ property: Property?) -> String? {
            switch property {
            case .attribute(let attribute)?: return attribute.type.rawValue
            case .relationship(let relationship)?: return "\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination)"
            case nil: return nil
            }
        }
        var hints: [String] = []
        for entityName in Set(changes.map(\.entity)).sorted() {
            guard let newEntity = destination.entity(named: entityName), let oldEntity = counterparts[entityName] else { continue }
            let added = changes.filter { $0.kind == .added && $0.entity == entityName }.compactMap(\.property)
                .map { ($0, signature(destination.property(named: $0, in: newEntity))) }
            let removed = changes.filter { $0.kind == .removed && $0.entity == entityName }.compactMap(\.property)
                .map { ($0, signature(source.property(named: $0, in: oldEntity))) }
            for (name, kind) in added {
                guard let kind, added.filter({ $0.1 == kind }).count == 1 else { continue }
                let candidates = removed.filter { $0.1 == kind }
                guard candidates.count == 1, let old = candidates.first?.0 else { continue }
                hints.append("\(entityName).\(name) is added and \(entityName).\(old) removed, both \(kind): if \(old) was renamed, "
                             + "give '\(name)' renamingIdentifier: \(old) in \(destination.version), and its values are carried over")
            }
        }
        return hints
    }

    private enum LineageKind {
        case entity(String?)
        /// A property of the entity with these names (newest first).
        case property([String])
    }

    /// The names an entity or property had, newest first: its own, its renaming identifier, and the
    /// renames recorded in the versions between (walked from newest to oldest).
    private static func lineageNames(_ name: String, renaming: String?, through intermediates: [Schema], kind: LineageKind) -> [String] {
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
