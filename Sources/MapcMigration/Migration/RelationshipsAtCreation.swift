import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// Relationships written with their objects' rows in phase 1.
///
/// Core Data sets every relationship in phase 2, once all objects exist. Many relationship
/// mappings do not need to wait: a to-one such as `note` =
/// `destinationInstances("NoteToNote", $source)` names objects an earlier mapping has already
/// made when this mapping's own objects are created. Such a mapping's relationships are worked
/// out as each object is created and written into its row's foreign keys: the store ends up the
/// same, without an `UPDATE` per object in phase 2, without the associations phase 2 walks to find
/// each object's source, and without reading each source object a second time. The compiled path
/// does the same in its `INSERT … SELECT`; both ask `MigrationAnalysis.setsRelationshipsAtCreation`.
extension MigrationAnalysis {
    /// Whether a mapping's relationship mappings may all be set as its objects are created, as
    /// far as the store and the other mappings go:
    /// - the mapping is declarative (no policy) and transforms (a `copy` also carries the
    ///   relationships it does not map over, in phase 2);
    /// - each relationship it maps is a to-one its rows alone keep (`Store.linkColumn`: no
    ///   position in an ordered inverse, no one-to-one inverse's column);
    /// - nothing else may set those relationships or their inverses in phase 2, where the order of
    ///   the writes decides what stays: no other mapping has a custom policy, maps the inverse,
    ///   or copies objects of an entity that has it;
    /// - no uniqueness constraint of the table names them.
    ///
    /// The expressions must also give the same value in phase 1: `evaluatesAtCreation` for the
    /// interpreter; the compiled path compiles only lookups of earlier mappings.
    static func setsRelationshipsAtCreation(_ index: Int, in mapping: MappingModel, destination destinationStore: Store, context: AtCreationContext) -> Bool {
        let entityMapping = mapping.entityMappings[index]
        let destinationSchema = destinationStore.schema
        guard followsKeyRule(entityMapping), entityMapping.type == .transform, !entityMapping.relationships.isEmpty,
              let destinationName = entityMapping.destination, let entity = destinationSchema.entity(named: destinationName),
              let storage = destinationStore.layout.entities[destinationName] else { return false }
        guard context.policies - (entityMapping.policy == nil ? 0 : 1) == 0 else { return false }
        // The uniqueness constraints its rows are checked against (Core Data keeps those of every
        // entity of a table on the table).
        let constrained = context.constrainedByTable[storage.table] ?? []
        for propertyMapping in entityMapping.relationships {
            guard case .relationship(let relationship)? = destinationSchema.property(named: propertyMapping.name, in: entity), !relationship.isToMany,
                  destinationStore.linkColumn(relationship.name, of: storage) != nil else { return false }
            // A constraint over the relationship would be checked with the INSERT, not with
            // phase 2's UPDATE; the constraint's error is worded for attributes only.
            guard !constrained.contains(relationship.name) else { return false }
            guard let inverse = destinationSchema.mutualInverse(of: relationship) else { continue }
            guard inverse.isToMany else { return false }
            if context.settersOf[inverse.name]?.contains(where: { $0 != index }) == true { return false }
        }
        return true
    }

    /// What `setsRelationshipsAtCreation` asks of the other mappings and the store, worked out
    /// once for all mappings: asked of every mapping in turn, it made the analysis quadratic in
    /// mappings (4,000 entities of a ring of relationships: a fifth of a run).
    struct AtCreationContext {
        /// How many mappings have a custom policy.
        var policies = 0
        /// The properties uniqueness constraints name, by destination table.
        var constrainedByTable: [String: Set<String>] = [:]
        /// By relationship name, the mappings that may set a relationship of that name in phase 2:
        /// they map it, or copy objects of an entity that has it.
        var settersOf: [String: [Int]] = [:]

        init(mapping: MappingModel, destination destinationStore: Store) {
            let schema = destinationStore.schema
            policies = mapping.entityMappings.filter { $0.policy != nil }.count
            for storage in destinationStore.layout.entities.values {
                guard let entity = schema.entity(named: storage.entity) else { continue }
                constrainedByTable[storage.table, default: []].formUnion(entity.uniquenessConstraints.joined())
            }
            for (index, other) in mapping.entityMappings.enumerated() {
                guard let name = other.destination, let entity = schema.entity(named: name) else { continue }
                for relationship in schema.allRelationships(of: entity) where other.type == .copy || other.relationshipMapping(named: relationship.name) != nil {
                    settersOf[relationship.name, default: []].append(index)
                }
            }
        }
    }

    /// Whether a relationship expression gives in phase 1, once the mappings before mapping
    /// `index` have created their objects, the value it gives in phase 2. It may read the source
    /// object (`$source`, `SELF`) and the source store, and the destination only through `$manager`
    /// lookups of those earlier mappings, whose objects no longer change. `$destination` (whose
    /// other relationships phase 2 may have set by then), lookups by source relationship and any
    /// other variable are refused.
    static func evaluatesAtCreation(_ expression: Expr, mappingIndex index: Int, in mapping: MappingModel) -> Bool {
        let reserved: Set<String> = ["destination", "manager", "entityMapping", "propertyMapping", "entityPolicy"]
        var pending = [expression]
        var bound: Set<String> = []
        while let expression = pending.popLast() {
            switch expression.kind {
            case .variable(let name):
                guard name == "source" || name.uppercased() == "SELF" || bound.contains(name) else { return false }
            case .subquery(let collection, let variable, let predicate):
                guard !reserved.contains(variable) else { return false }
                bound.insert(variable)
                pending += [collection, predicate]
            case .method(let receiver, let selector, _, let arguments) where receiver.kind == .variable("manager"):
                switch selector {
                case MethodSelector.destinationInstancesForEntityMapping.rawValue:
                    guard case .literal(.string(let name))? = arguments.first?.kind,
                          let target = mapping.entityMappings.firstIndex(where: { $0.name == name }), target < index else { return false }
                    pending += arguments.dropFirst()
                case MethodSelector.fetchRequestForSourceEntity.rawValue:
                    guard let predicate = fetchPredicate(arguments) else { return false }
                    pending += arguments + [predicate]
                default:
                    return false
                }
            case .keyPath(let root, let components) where root.kind == .variable("manager"):
                // `$manager.sourceContext`, the context of Xcode's standard fetch.
                guard components.count == 1, case .key("sourceContext", _) = components[0] else { return false }
            default:
                pending += expression.children
            }
        }
        return true
    }

}

extension MigrationRun {
    /// Prepares the relationships of a mapping the interpreter is about to create objects for,
    /// when they may be written with its rows: phase 2 then has nothing left to do for it.
    func startRelationshipsAtCreation(_ index: Int) throws {
        let entityMapping = mapping.entityMappings[index]
        guard analysis.relationshipsAtCreation[index], let entity = entityMapping.destination, let steps = relationshipSteps(entityMapping, entity) else { return }
        var links: [(mapping: PropertyMapping, setting: RelationshipSetter.Setting)] = []
        for case (let relationship, let propertyMapping?) in steps {
            guard let setting = try setter.setting(relationship.name, of: entity) else { return }
            links.append((propertyMapping, setting))
        }
        let plan = try writer.insertPlan(entity, linking: links.map(\.setting.relationship.name))
        creationLinks[index] = CreationLinks(entity: entity, links: links, plan: plan)
        ledger.relationshipsDone.insert(index)
    }

    /// The row plan and related keys of an object whose mapping writes its relationships with its
    /// row; nil for other mappings. The values and the errors are `setRelationship`'s.
    func linksAtCreation(_ index: Int, for source: SourceObject, destination: ObjectRef, mapping entityMapping: EntityMapping) throws -> (plan: RowWriter.InsertPlan, targets: [Int64?])? {
        guard let creation = creationLinks[index] else { return nil }
        guard destination.entity == creation.entity else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' made \(English.withArticle(destination.entity)) object where its relationships are written for \(creation.entity) objects")
        }
        var targets: [Int64?] = []
        targets.reserveCapacity(creation.links.count)
        for link in creation.links {
            let objects = try relatedObjects(link.mapping, link.setting.relationship, for: source, destination: destination, mapping: entityMapping)
            try setter.checkCount(of: objects, link.setting, of: destination, mapping: entityMapping)
            targets.append(try objects.first.map { try setter.targetKey($0, link.setting, of: destination, mapping: entityMapping) })
        }
        return (creation.plan, targets)
    }

    /// A mapping's relationships as its rows are written: each relationship mapping with what
    /// `setRelationship` knows of the relationship, and the insert that takes their foreign keys.
    struct CreationLinks {
        var entity: String
        var links: [(mapping: PropertyMapping, setting: RelationshipSetter.Setting)]
        var plan: RowWriter.InsertPlan
    }
}
