import Foundation
import MapcFoundation
import MapcModel

/// How a lightweight inference says each change once, at the entity declaring it, and finds the
/// counterparts and lineage of elements through the versions between.
extension LightweightInference {
    // MARK: Saying each change once

    /// A property's change is said once, at the entity declaring it (an abstract parent's property,
    /// not under each of its sub-entities); so is each problem.
    mutating func sayEachChangeOnceWhereDeclared() {
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
    func sourceOwner(of property: String, from entity: Entity) -> String {
        guard let declarer = declarer(of: property, from: entity, in: source), !declarer.isAbstract else { return entity.name }
        return declarer.name
    }

    /// The entity of a hierarchy that declares a property (a name is declared once in it).
    func declarer(of property: String, from entity: Entity, in schema: Schema) -> Entity? {
        schema.ancestry(of: entity).first { ancestor in ancestor.attributes.contains { $0.name == property } || ancestor.relationships.contains { $0.name == property } }
    }

    /// The destination entity a change of `property` of `entityName` is said at: the one declaring
    /// it; for a removed property, the destination counterpart of the source entity that declared it.
    func declaring(_ entityName: String, _ property: String?, removed: Bool) -> String {
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
    func owners(of entity: Entity) -> [String] {
        Self.lineageNames(entity.name, renaming: entity.renamingIdentifier, through: intermediates, kind: .entity(nil)) + [entity.name]
    }

    /// A destination entity's properties (inherited ones included), its source entity's, and the
    /// counterparts of its stored properties among the source's.
    struct EntityProperties {
        var attributes: [Attribute]
        var relationships: [Relationship]
        var sourceAttributes: [Attribute]
        var sourceRelationships: [Relationship]
        var counterparts: [String: Counterpart]
    }

    func properties(of destinationEntity: Entity, from sourceEntity: Entity) -> EntityProperties {
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
    func cautionOwner(of property: String, in work: EntityWork) -> String? {
        if work.declares(property) { return work.destinationEntity.name }
        return destination.ancestry(of: work.destinationEntity).first { entity in
            entity.attributes.contains { $0.name == property } || entity.relationships.contains { $0.name == property }
        }?.name
    }

    mutating func cautionUnlikeCoreData(_ element: String, renaming: String?, matched old: String, of sourceEntity: String?, identifier: String) {
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
