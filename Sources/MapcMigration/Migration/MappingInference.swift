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
    /// Whether an object meeting the problem would be left without a value the destination
    /// requires, which a run's validation (phase 3) refuses: set aside for a store that held no
    /// such objects when asked, since one saved before the run cannot then pass unseen.
    package var isRefusedByValidation = false
    /// For a problem only a nil value meets (an attribute made required with no default):
    /// the step's source attributes (one per concrete entity of a hierarchy
    /// said once), whose objects in a store all having a value set the problem aside for that
    /// store, the value carried as it is.
    package var unlessNoNil: Set<EntityAttribute> = []

    public var description: String {
        "\(entity)\(property.map { ".\($0)" } ?? ""): \(reason); \(fix)"
    }

    /// A problem that leaves an object meeting it without a value the destination requires.
    static func refusedByValidation(entity: String, property: String?, reason: String, fix: String) -> InferenceProblem {
        var problem = InferenceProblem(entity: entity, property: property, reason: reason, fix: fix)
        problem.isRefusedByValidation = true
        return problem
    }
}

/// An attribute of an entity, by their names: what a store is asked about.
package struct EntityAttribute: Hashable, Sendable {
    package var entity: String
    package var attribute: String
}

/// A property of exactly an entity's objects (its sub-entities' aside), by their names, or the
/// objects themselves (`property` nil): where a store keeps values a step drops, and what it is
/// asked about before they are dropped (`Store.holdsValues(of:in:)`).
package struct EntityProperty: Hashable, Sendable {
    package var entity: String
    package var property: String?
    /// For a relationship whose links only to some objects are dropped (a destination narrowed to
    /// a sub-entity), the entities of those objects, exactly: a link to another is kept.
    package var linkedTo: Set<String>? = nil
}

/// A value an inferred step drops, and where a store keeps it.
package struct DroppedValue: Sendable, Equatable {
    /// As said: "Item.title", "entity Note".
    package var name: String
    /// The source objects that keep it, or nil when a store cannot be asked: a store holding none
    /// of it loses nothing.
    package var keptIn: Set<EntityProperty>?
}

/// A value kept beside what a type compares, equal to any other: `==` synthesized for the type
/// then compares every other stored property, those added later too.
struct NotCompared<Value: Sendable>: Equatable, Sendable {
    var value: Value
    static func == (lhs: NotCompared, rhs: NotCompared) -> Bool { true }
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
    /// For an attribute made required, the default its nil values become, as written.
    package var defaultForNil: String?
    /// For a conversion between number types that is not lossless: the types and what it can
    /// cost ("double -> float: values are rounded to single precision …").
    package var conversion: String?
    /// For a change that loses values, the source objects that keep them (`DroppedValue.keptIn`).
    package var keptIn: Set<EntityProperty>? {
        get { whereabouts.value.keptIn }
        set { whereabouts.value.keptIn = newValue }
    }
    /// For a property removed, the source entity that declared it, which a dropped value is named
    /// by (`Person.nick`, where the change is said of the entity it became, `Human`).
    package var sourceOwner: String? {
        get { whereabouts.value.sourceOwner }
        set { whereabouts.value.sourceOwner = newValue }
    }
    /// Where a store keeps what the change drops: bookkeeping, not the change, so two changes said
    /// alike are equal whatever it holds (every other field is compared, new ones included).
    private var whereabouts = NotCompared(value: (keptIn: Set<EntityProperty>?.none, sourceOwner: String?.none))

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
    /// the starting point `mapc infer` writes (`mapping` with an item for each problem, and for
    /// each value the step drops: kept in a file, the loss is accepted by deleting the item).
    public var skeleton: MappingModel
    /// Comments for the mapping file, by entity mapping name.
    public var notes: [String: [String]]
    /// Properties that look renamed without a renaming identifier: in one entity, one property
    /// removed and one added of the same type (or leading to the same entity), which inference
    /// reads as a removal and an addition. Each says how to declare the rename.
    public var probableRenames: [String] = []
    /// What the step's renaming identifiers and required links may not mean (one value carried
    /// into two properties, an identifier naming nothing, a required link to objects the step
    /// drops): each said with what to do.
    package var cautions: [String] = []
    /// The renames and the cautions: what `diff`, `infer`, `check` and a failed run say besides.
    package var hints: [String] { probableRenames + cautions }
    /// Where each value of the destination comes from (complete when there are no problems).
    package var origins = InferredOrigins()
    /// Problems that would stop the inference but concern entities known to have no objects
    /// (`MappingInference.infer(from:to:through:emptyEntities:)`): none can arise.
    package var moot: [InferenceProblem] = []

    /// Attributes made required whose nil values the step replaces with the default, as Core
    /// Data's lightweight migration does: "Photo.caption (nil becomes "")".
    public var nilsFilled: [String] {
        changes.compactMap { change in change.defaultForNil.map { "\(change.entity).\(change.property ?? "") (nil becomes \($0))" } }
    }

    /// Attributes whose values the step converts to another number type, with what it can cost:
    /// "Book.rating (double -> float: values are rounded to single precision …)".
    public var valuesConverted: [String] {
        changes.compactMap { change in change.conversion.map { "\(change.entity).\(change.property ?? "") (\($0))" } }
    }

    /// What the step drops: removed entities and properties, whose values an inferred migration loses.
    public var droppedValues: [String] { dropped.map(\.name) }

    /// What the step drops, each with where a store keeps it.
    package var dropped: [DroppedValue] {
        changes.filter(\.losesValues).map { change in
            // Named by the source entity that declared a removed property (an entity renamed in
            // the step had it under its old name), else by the entity the change is said of.
            DroppedValue(name: change.property.map { "\(change.sourceOwner ?? change.entity).\($0)" } ?? "entity \(change.entity)", keptIn: change.keptIn)
        }
    }
}

extension MappingInference {
    /// What changed an entity's version hash besides the changes found already: hash modifiers,
    /// uniqueness constraints, relationship counts or inverses. They need a migration (the store's
    /// hashes no longer match) but move no values.
    static func hashOnlyChanges(from source: Schema, to destination: Schema, counterparts: [String: Entity], listed: [SchemaChange],
                                origins: InferredOrigins = InferredOrigins()) -> [SchemaChange] {
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
            for name in after.keys.sorted() where name != "@entity" {
                // A property renamed is compared with the one it carries (its destination may have changed too).
                var was = name
                // (An abstract entity has no origins of its own: its sub-entities' say where it came from.)
                let origin = origins.properties[entity.name]?[name] ?? destination.hierarchy(under: entity).lazy.compactMap { origins.properties[$0.name]?[name] }.first
                if before[name] == nil, case .carried(let from, _, _, _)? = origin { was = from }
                guard before[was] != nil else { continue }
                let oldProperty = source.property(named: was, in: old), newProperty = destination.property(named: name, in: entity)
                // Settings no hash of mapc's covers, said all the same: a delete rule, a derivation.
                var unhashedChanged = false
                if case .relationship(let a)? = oldProperty, case .relationship(let b)? = newProperty { unhashedChanged = a.deleteRule != b.deleteRule }
                if case .attribute(let a)? = oldProperty, case .attribute(let b)? = newProperty { unhashedChanged = a.derivation != b.derivation }
                guard before[was] != after[name] || coreDataHash(oldProperty, old, source) != coreDataHash(newProperty, entity, destination) || unhashedChanged else { continue }
                // What the listed changes of the property do not say already.
                var details = settingsChanged(oldProperty, newProperty)
                // A rename alone changes the hashes: said already, by the rename.
                if was != name && details.isEmpty { continue }
                if isListed(name) {
                    let said = listed.filter { $0.entity == entity.name && $0.property == name }.map(\.detail)
                    details.removeAll { detail in detail.hasPrefix("optional") || detail.hasPrefix("required") || said.contains { $0.hasPrefix(detail) } }
                    if details.isEmpty { continue }
                }
                found.append(SchemaChange(kind: .changed, entity: entity.name, property: name, detail: details.isEmpty ? "settings in its version hash changed" : details.joined(separator: ", ")))
            }
            // What the Core Data model holds and mapc does not (a composite attribute): no hash of
            // mapc's sees it, Core Data's does.
            if old.notImported != entity.notImported {
                let shown = { (items: [String]) in items.isEmpty ? "none" : items.joined(separator: ", ") }
                found.append(SchemaChange(kind: .changed, entity: entity.name, property: nil,
                                          detail: "not imported from the Core Data model: \(shown(old.notImported)) -> \(shown(entity.notImported)) (Core Data's version hash covers it; mapc neither recognises nor writes a Core Data store of a version with it)"))
            }
            guard before["@entity"] != after["@entity"], !isListed(nil) else { continue }
            var details: [String] = []
            if old.versionHashModifier != entity.versionHashModifier { details.append("versionHashModifier \(old.versionHashModifier ?? "none") -> \(entity.versionHashModifier ?? "none")") }
            if old.uniquenessConstraints != entity.uniquenessConstraints {
                // A constraint the old version did not have admits fewer objects, as a tightened
                // rule does: stored objects sharing its values make validation refuse the run.
                let added = entity.uniquenessConstraints.filter { !old.uniquenessConstraints.contains($0) }
                details.append("uniqueness constraints \(old.uniquenessConstraints) -> \(entity.uniquenessConstraints)"
                               + (added.isEmpty ? "" : ": stored objects sharing the values of \(added.map { $0.joined(separator: ", ") }.joined(separator: "; ")) make validation refuse the migration"))
            }
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
            if before.derivation != after.derivation {
                details.append("derivation \(before.derivation.map { "'\($0)'" } ?? "none") -> \(after.derivation.map { "'\($0)'" } ?? "none") (in no hash mapc computes; mapc does not compute derived values, Core Data does when the app saves)")
            }
        case (.relationship(let before)?, .relationship(let after)?):
            if before.destination != after.destination { details.append("destination \(before.destination) -> \(after.destination)") }
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
    package static var wideningTypes: Set<String> { ValueRules.losslessTypeChanges }

    /// Compares `source` with `destination`. Renames are followed through the catalog's versions in
    /// between when given, so a rename made two versions ago still matches.
    public static func infer(from source: Schema, to destination: Schema, through intermediates: [Schema] = []) -> InferenceResult {
        var inference = LightweightInference(from: source, to: destination, through: intermediates)
        return inference.run()
    }

    /// `infer(from:to:through:)` for a store known to hold no objects of `emptyEntities` (source
    /// entities): what their objects' values would make impossible does not stop it (`moot`).
    /// `unheldEntities`, which the store held no objects of when asked (it may gain some before
    /// the run), sets aside only the problems a run's validation refuses.
    /// `attributesWithoutNil` are attributes of the source the store holds no
    /// nil of (when asked): a problem only a nil meets (`InferenceProblem.unlessNoNil`) is set aside.
    package static func infer(from source: Schema, to destination: Schema, emptyEntities: Set<String>, unheldEntities: Set<String> = [], attributesWithoutNil: Set<EntityAttribute> = []) -> InferenceResult {
        var inference = LightweightInference(from: source, to: destination, through: [])
        inference.emptySourceEntities = emptyEntities
        inference.unheldSourceEntities = unheldEntities
        inference.attributesWithoutNil = attributesWithoutNil
        return inference.run()
    }

    /// In each entity, an added property and a removed one of the same kind and type, when each
    /// is the only one of that type added and removed there: probably a rename whose renaming
    /// identifier was forgotten. Not for a step across `intermediates` where a version between
    /// has both (the one added there before the other was removed: two properties, not a rename).
    static func probableRenames(_ changes: [SchemaChange], from source: Schema, to destination: Schema, counterparts: [String: Entity], through intermediates: [Schema] = []) -> [String] {
        /// Whether a version between holds both properties in the entity (by either of its names).
        func coexist(_ name: String, _ old: String, in entityNames: Set<String>) -> Bool {
            intermediates.contains { schema in
                entityNames.contains { entityName in
                    schema.entity(named: entityName).map { schema.property(named: name, in: $0) != nil && schema.property(named: old, in: $0) != nil } ?? false
                }
            }
        }
        func signature(_ property: Property?) -> String? {
            switch property {
            case .attribute(let attribute)?: return attribute.type.rawValue
            case .relationship(let relationship)?: return "\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination)"
            case nil: return nil
            }
        }
        var hints: [String] = []
        // Grouped once: a history step may change thousands of entities.
        let changesOfEntity = Dictionary(grouping: changes, by: \.entity)
        for entityName in changesOfEntity.keys.sorted() {
            guard let newEntity = destination.entity(named: entityName), let oldEntity = counterparts[entityName] else { continue }
            let changes = changesOfEntity[entityName] ?? []
            let added = changes.filter { $0.kind == .added }.compactMap(\.property)
                .map { ($0, signature(destination.property(named: $0, in: newEntity))) }
            let removed = changes.filter { $0.kind == .removed }.compactMap(\.property)
                .map { ($0, signature(source.property(named: $0, in: oldEntity))) }
            let addedOfKind = Dictionary(grouping: added.compactMap(\.1), by: { $0 }).mapValues(\.count)
            let removedOfKind = Dictionary(grouping: removed.compactMap { pair in pair.1.map { (pair.0, $0) } }, by: \.1)
            for (name, kind) in added {
                guard let kind, addedOfKind[kind] == 1 else { continue }
                let candidates = removedOfKind[kind] ?? []
                guard candidates.count == 1, let old = candidates.first?.0, !coexist(name, old, in: [entityName, oldEntity.name]) else { continue }
                // A renaming identifier already written, naming no property of the old entity: a typo, most often.
                let written: String?
                switch destination.property(named: name, in: newEntity) {
                case .attribute(let attribute)?: written = attribute.renamingIdentifier
                case .relationship(let relationship)?: written = relationship.renamingIdentifier
                case nil: written = nil
                }
                // Core Data matches identifiers: the old property's own, kept through its renames.
                let identifier: String
                switch source.property(named: old, in: oldEntity) {
                case .attribute(let attribute)?: identifier = attribute.canonicalIdentifier
                case .relationship(let relationship)?: identifier = relationship.canonicalIdentifier
                case nil: identifier = old
                }
                let named = Set(source.allAttributes(of: oldEntity).flatMap { [$0.name, $0.canonicalIdentifier] } + source.allRelationships(of: oldEntity).flatMap { [$0.name, $0.canonicalIdentifier] })
                let mistaken = mistakenIdentifier(written, for: old, whose: identifier, among: named, namesNo: "property of \(oldEntity.name) in \(source.version)")
                hints.append("\(entityName).\(name) is added and \(entityName).\(old) removed, both \(kind): if \(old) was renamed, "
                             + "give '\(name)' renamingIdentifier: \(identifier) in \(destination.version)\(mistaken), and its values are carried over")
            }
        }
        return hints + probableEntityRenames(from: source, to: destination, counterparts: counterparts)
            .filter { pair in !intermediates.contains { $0.entity(named: pair.new) != nil && $0.entity(named: pair.old) != nil } }.map(\.hint)
    }

    /// Entities that look renamed without a renaming identifier: one entity removed and one added
    /// with the same properties (names, attribute types, relationship kinds), or all of them and
    /// more, which inference reads as a removal (its objects dropped) and an addition.
    private static func probableEntityRenames(from source: Schema, to destination: Schema, counterparts: [String: Entity]) -> [(new: String, old: String, hint: String)] {
        func signature(_ entity: Entity, in schema: Schema) -> [String] {
            (schema.allAttributes(of: entity).filter { !$0.isTransient }.map { "\($0.name): \($0.type.rawValue)" }
                + schema.allRelationships(of: entity).filter { !$0.isTransient }.map { "\($0.name): \($0.isToMany ? "to-many" : "to-one")" }).sorted()
        }
        let claimed = Set(counterparts.values.map(\.name))
        let removed = source.entities.filter { !$0.isAbstract && !claimed.contains($0.name) }.map { ($0, signature($0, in: source)) }.filter { !$0.1.isEmpty }
        let added = destination.entities.filter { !$0.isAbstract && counterparts[$0.name] == nil }.map { ($0, signature($0, in: destination)) }.filter { !$0.1.isEmpty }
        var hints: [(new: String, old: String, hint: String)] = []
        for (new, properties) in added {
            // The same properties, or all of the removed one's and more (a renamed entity often
            // gains a relationship in the same version): one removed entity only, and no other
            // added entity that has all of its properties.
            let alike = removed.filter { Set($0.1).isSubset(of: properties) }
            guard alike.count == 1, let (old, oldProperties) = alike.first, added.filter({ Set(oldProperties).isSubset(of: $0.1) }).count == 1 else { continue }
            let besides = properties.filter { !oldProperties.contains($0) }.map { $0.prefix { $0 != ":" } }
            let how = besides.isEmpty ? "with the same properties" : "with \(old.name)'s properties (and \(besides.joined(separator: ", ")) besides)"
            let mistaken = mistakenIdentifier(new.renamingIdentifier, for: old.name, whose: old.canonicalIdentifier, among: Set(source.entities.flatMap { [$0.name, $0.canonicalIdentifier] }),
                                              namesNo: "entity of \(source.version)")
            hints.append((new.name, old.name, "\(new.name) is added and \(old.name) removed, \(how): if \(old.name) was renamed, "
                         + "give '\(new.name)' renamingIdentifier: \(old.canonicalIdentifier) in \(destination.version)\(mistaken), and its objects are carried over"))
        }
        return hints
    }

    /// What a rename hint says of a renaming identifier already written that matched nothing (a
    /// typo, most often): " (its renamingIdentifier 'X' names no entity of v1)", or "" for none.
    /// One that names an element of the old version (`names`: their names and identifiers), whose
    /// values another takes, is for the caution that says so, not this.
    private static func mistakenIdentifier(_ written: String?, for old: String, whose identifier: String, among names: Set<String>, namesNo what: String) -> String {
        guard let written, !names.contains(where: { $0.isExactly(written) }) else { return "" }
        // Reading alike, written with other scalars ("é" as one, or e and an accent): no eye sees it.
        let unseen = written == identifier && !written.isExactly(identifier) ? ", written \(written.scalarCodes) where \(old)'s is \(identifier.scalarCodes)" : ""
        return " (its renamingIdentifier '\(written)' names no \(what)\(unseen))"
    }
}
