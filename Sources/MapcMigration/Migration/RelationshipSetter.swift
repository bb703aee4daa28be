import Foundation
internal import GRDB
import MapcFoundation
import MapcModel
import MapcStore

/// Sets destination relationships, for the default `createRelationships`, for policies and for
/// relationships written with their objects' rows: what a relationship takes (its destination
/// entity and sub-entities, at most one object for a to-one, destination objects only), where it
/// is stored (a foreign key, an ordered position, a join table) and the writer's calls that store
/// it. An object given to the wrong relationship is refused with a message saying which mapping
/// gives the right objects.
final class RelationshipSetter {
    let mapping: MappingModel
    let destinationStore: Store
    /// The run's writer, on the destination connection.
    let writer: RowWriter
    /// What `set` needs of each destination relationship, by entity and name.
    private var settings: [PropertyName: Setting] = [:]
    /// The next free place in each ordered list a to-one side appends to, by list and owner key:
    /// asked of the store once per owner (a `MAX` that reads every member), then counted here, so
    /// appending n members is linear, not quadratic. Every write of those places goes through this
    /// setter (no compiled statement writes them), which forgets an owner's count when its list is
    /// set from the to-many side.
    private var nextPlaces: [OrderedList: [Int64: Int]] = [:]
    /// How the source store names the object a destination object was made from, when it names
    /// it otherwise (a destination keeping no ids numbers its objects anew), for messages.
    var sourceName: (StoredKey) -> String? = { _ in nil }

    init(mapping: MappingModel, destinationStore: Store, writer: RowWriter) {
        self.mapping = mapping
        self.destinationStore = destinationStore
        self.writer = writer
    }

    /// The destination key of a reference to a destination object.
    func destinationKey(of ref: ObjectRef) throws -> Int64? {
        if let key = ref.key { return key }
        try writer.flush()
        return try destinationStore.locate(id: ref.id, writer.db)?.key
    }

    /// Sets a destination relationship to destination objects, in order. A to-many gains them,
    /// keeping the links the other side set (the default relationships, set from both sides);
    /// `replacing` takes away the others, as a policy's `setRelationship` does, Core Data's
    /// `setValue(_:forKey:)` on a to-many replacing its set.
    func set(_ name: String, of destination: DestinationObject, to targets: [ObjectRef], mapping entityMapping: EntityMapping, replacing: Bool = false) throws {
        guard !destination.isSourceObject else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(destination.ref) is an object of the source store; relationships are set on the destination objects created from it, "
                                        + "which manager.destinationInstances(forEntityMappingNamed:sourceInstances:) gives")
        }
        guard let setting = try setting(name, of: destination.entity) else {
            let names = destinationStore.schema.entity(named: destination.entity).map { destinationStore.schema.allRelationships(of: $0).map(\.name) } ?? []
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(destination.entity) has no relationship '\(name)' in \(destinationStore.schema.version)"
                                        + (Suggestions.didYouMean(name, in: names).map { "; \($0)" } ?? (names.isEmpty ? "" : " (its relationships: \(names.joined(separator: ", ")))")))
        }
        guard let owner = try destination.primaryKey ?? destinationKey(of: destination.ref) else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(destination.ref) is not in the destination store: insert it (manager.insert) before setting its relationships")
        }
        let relationship = setting.relationship, storage = setting.storage
        try checkCount(of: targets, setting, of: destination.ref, mapping: entityMapping)
        if targets.isEmpty && !relationship.isToMany {
            try writer.unlink(name, of: storage, owner: owner)
            return
        }
        // Objects another mapping placed in this ordered list through the inverse to-one.
        var placedByInverse = false
        if let list = setting.orderedList {
            placedByInverse = nextPlaces[list]?[owner] != nil
            nextPlaces[list]?[owner] = nil
        }
        let keys = try targets.map { try targetKey($0, setting, of: destination.ref, mapping: entityMapping) }
        if replacing && relationship.isToMany { try unlinkOthers(than: keys, in: setting, owner: owner) }
        for (position, (target, key)) in zip(targets, keys).enumerated() {
            do {
                try writer.link(name, of: storage, owner: owner, target: key, position: position,
                                inversePosition: relationship.isToMany ? nil : try appendPosition(setting, owner: owner, target: key),
                                keepsFirstOwner: setting.keepsFirstOwner)
            } catch let conflict as OwnerConflict {
                let holder = writer.describeObject(key: conflict.holder, of: conflict.ownerEntity)
                var message = conflict.explanation(target: "\(target)", holder: holder)
                // The three objects as the user's store names them, where the destination's names are its own.
                if let ownerSource = sourceName(StoredKey(entity: destination.entity, key: owner)), let targetSource = sourceName(StoredKey(entity: target.entity, key: key)),
                   let holderSource = sourceName(StoredKey(entity: conflict.ownerEntity, key: conflict.holder)),
                   [ownerSource, targetSource, holderSource] != ["\(destination.ref)", "\(target)", holder] {
                    message += " (in the source store: \(ownerSource) links \(targetSource), which \(holderSource) links already)"
                }
                throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name, message: message)
            }
        }
        if placedByInverse { try placeAfter(keys, in: setting, owner: owner) }
    }

    /// Takes from an owner's to-many every object that is not one of `keys`: the inverse key on
    /// its row cleared, or its join-table row deleted.
    private func unlinkOthers(than keys: [Int64], in setting: Setting, owner: Int64) throws {
        try writer.flush()
        let keep = Set(keys)
        switch setting.storage.relationships[setting.relationship.name] {
        case .inverseForeignKey(let table, let column, let order, _)?:
            guard let members = destinationStore.layout.entities[setting.relationship.destination], !members.discriminatorsSQL.isEmpty else { return }
            let key = members.primaryKey.quotedSQLIdentifier
            let ofMembers = StoreLayout.entityCheck(members.entityColumn.quotedSQLIdentifier, allowed: members.discriminatorsSQL)
            let linked = try Int64.fetchAll(writer.db, sql: "SELECT \(key) FROM \(table.quotedSQLIdentifier) WHERE \(column.quotedSQLIdentifier) = ? AND \(ofMembers)", arguments: [owner])
            let clearOrder = order.map { ", \($0.quotedSQLIdentifier) = NULL" } ?? ""
            for other in linked where !keep.contains(other) {
                try writer.db.execute(sql: "UPDATE \(table.quotedSQLIdentifier) SET \(column.quotedSQLIdentifier) = NULL\(clearOrder) WHERE \(key) = ?", arguments: [other])
            }
        case .joinTable(let table, let ownerColumn, let otherColumn, _, _, _, _)?:
            let linked = try Int64.fetchAll(writer.db, sql: "SELECT \(otherColumn.quotedSQLIdentifier) FROM \(table.quotedSQLIdentifier) WHERE \(ownerColumn.quotedSQLIdentifier) = ?", arguments: [owner])
            // A relationship that is its own inverse (friends) keeps the other's row of the pair too.
            let isOwnInverse = setting.relationship.inverse == setting.relationship.name
            for other in linked where !keep.contains(other) {
                try writer.db.execute(sql: "DELETE FROM \(table.quotedSQLIdentifier) WHERE \(ownerColumn.quotedSQLIdentifier) = ? AND \(otherColumn.quotedSQLIdentifier) = ?", arguments: [owner, other])
                if isOwnInverse {
                    try writer.db.execute(sql: "DELETE FROM \(table.quotedSQLIdentifier) WHERE \(ownerColumn.quotedSQLIdentifier) = ? AND \(otherColumn.quotedSQLIdentifier) = ?", arguments: [other, owner])
                }
            }
        default:
            return
        }
    }

    /// Moves the objects of an owner's ordered list that are not `keys` (placed there by another
    /// mapping setting their to-one inverse) after `keys`, in their order: the list set from its
    /// own side comes first, whichever mapping ran first (Core Data's last write would replace
    /// the list, losing the others' links in one order of the mappings and not the other).
    private func placeAfter(_ keys: [Int64], in setting: Setting, owner: Int64) throws {
        guard case .inverseForeignKey(let table, let column, let order?, _)? = setting.storage.relationships[setting.relationship.name],
              let members = destinationStore.layout.entities[setting.relationship.destination], !members.discriminatorsSQL.isEmpty else { return }
        try writer.flush()
        let key = members.primaryKey.quotedSQLIdentifier, listed = Set(keys)
        let ofMembers = StoreLayout.entityCheck(members.entityColumn.quotedSQLIdentifier, allowed: members.discriminatorsSQL)
        let others = try Int64.fetchAll(writer.db, sql: "SELECT \(key) FROM \(table.quotedSQLIdentifier) WHERE \(column.quotedSQLIdentifier) = ? AND \(ofMembers) ORDER BY \(order.quotedSQLIdentifier), \(key)",
                                        arguments: [owner]).filter { !listed.contains($0) }
        for (index, other) in others.enumerated() {
            try writer.link(setting.relationship.name, of: setting.storage, owner: owner, target: other, position: keys.count + index, inversePosition: nil, keepsFirstOwner: false)
        }
    }

    /// Refuses more than one object for a to-one relationship.
    func checkCount(of targets: [ObjectRef], _ setting: Setting, of destination: ObjectRef, mapping entityMapping: EntityMapping) throws {
        guard !setting.relationship.isToMany && targets.count > 1 else { return }
        throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: setting.relationship.name,
                                   message: "to-one relationship was given \(targets.count) objects (\(targets.prefix(3).map(\.description).joined(separator: ", ")))")
    }

    /// The destination key of an object a relationship is set to, once it is known to be a
    /// destination object of an entity the relationship takes; otherwise an error saying which
    /// mapping gives the right objects.
    func targetKey(_ target: ObjectRef, _ setting: Setting, of destination: ObjectRef, mapping entityMapping: EntityMapping) throws -> Int64 {
        let relationship = setting.relationship, allowed = setting.allowed, name = relationship.name
        guard !target.isSourceObject else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(target) is an object of the source store; a relationship takes the destination objects created from it: "
                                        + "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mapping.entityMappings.first { $0.source == target.entity && allowed.contains($0.destination ?? "") }?.name ?? "<mapping>")\", <source objects>)")
        }
        guard allowed.contains(target.entity) else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(target) is not \(English.withArticle(relationship.destination)); check which entity mapping \(entityMapping.policy == nil ? "the expression names" : "the expression names, or whose objects the policy passes")")
        }
        guard let key = try destinationKey(of: target) else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(target) does not exist in the destination store")
        }
        return key
    }

    /// What `setRelationship` needs of a destination relationship: worked out once per entity and
    /// name, not per object. Nil when the entity has no such relationship.
    func setting(_ name: String, of entityName: String) throws -> Setting? {
        let key = PropertyName(entity: entityName, property: name)
        if let known = settings[key] { return known }
        guard let entity = destinationStore.schema.entity(named: entityName),
              case .relationship(let relationship)? = destinationStore.schema.property(named: name, in: entity) else { return nil }
        let allowed = destinationStore.schema.entity(named: relationship.destination).map { Set(destinationStore.schema.hierarchy(under: $0).map(\.name)) } ?? []
        let storage = try destinationStore.layout.storage(of: entityName)
        var append: Append?
        if let inverse = destinationStore.schema.inverse(of: relationship), inverse.isToMany, inverse.isOrdered,
           let destination = destinationStore.layout.entities[relationship.destination],
           case .inverseForeignKey(let table, let column, _?, _)? = destination.relationships[inverse.name] {
            append = Append(list: OrderedList(table: table, column: column), inverse: inverse.name, destination: relationship.destination,
                            currentOwner: "SELECT \(column.quotedSQLIdentifier) FROM \(table.quotedSQLIdentifier) WHERE \(storage.primaryKey.quotedSQLIdentifier) = ?")
        }
        var orderedList: OrderedList?
        if relationship.isOrdered, case .inverseForeignKey(let table, let column, _?, _) = storage.relationships[name] {
            orderedList = OrderedList(table: table, column: column)
        }
        // A to-many whose to-one inverse no mapping sets (new in this step, say): its links are
        // this side's alone, and a second owner for one object would lose the first's link.
        var keepsFirstOwner = false
        if relationship.isToMany, let inverse = destinationStore.schema.mutualInverse(of: relationship), !inverse.isToMany, !mapping.entityMappings.contains(where: { $0.policy != nil }) {
            keepsFirstOwner = !mapping.setsRelationship(inverse.name, ofObjectsOf: relationship.destination, in: destinationStore.schema)
        }
        let setting = Setting(relationship: relationship, allowed: allowed, storage: storage, append: append, orderedList: orderedList, keepsFirstOwner: keepsFirstOwner)
        settings[key] = setting
        return setting
    }

    /// A destination relationship as `setRelationship` writes it.
    struct Setting {
        var relationship: Relationship
        /// The entities its objects may be of: its destination and the sub-entities.
        var allowed: Set<String>
        var storage: EntityStorage
        /// For a to-one whose inverse is an ordered to-many: how an object is placed at the end of that list.
        var append: Append?
        /// For an ordered to-many kept by its objects' rows: the list whose places it writes.
        var orderedList: OrderedList?
        /// Whether a second owner for one of its objects is refused (`RowWriter.link`).
        var keepsFirstOwner = false
    }

    /// An ordered to-many's places, kept beside the foreign key of its objects' rows.
    struct OrderedList: Hashable {
        var table: String
        var column: String
    }

    /// How a to-one side places its object at the end of the inverse's ordered list: the list, the
    /// inverse and the entity whose objects own it (whose next place the store finds), and the
    /// query for the owner the object's row names now.
    struct Append {
        var list: OrderedList
        var inverse: String
        var destination: String
        var currentOwner: String
    }

    /// Where an object goes in the ordered to-many inverse of a to-one relationship: at the end,
    /// unless the list already holds it (its place is kept, and no place is used up).
    func appendPosition(_ setting: Setting, owner: Int64, target: Int64) throws -> Int? {
        guard let append = setting.append else { return nil }
        try writer.flush()
        if try Int64.fetchOne(try writer.statement(append.currentOwner), arguments: [owner]) == target { return 0 }
        let next = try nextPlaces[append.list]?[target] ?? destinationStore.nextPosition(in: append.inverse, of: append.destination, key: target, writer.db) ?? 0
        nextPlaces[append.list, default: [:]][target] = next < Int.max ? next + 1 : next
        return next
    }
}
