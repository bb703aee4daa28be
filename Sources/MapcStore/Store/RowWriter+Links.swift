import Foundation
package import GRDB
internal import GRDBSQLite
import MapcFoundation
import MapcModel

/// Relationships where the layout keeps them: foreign keys (both sides of a one-to-one), ordered
/// positions, join tables.
extension RowWriter {
    /// Links `owner` to `target` through a relationship of `owner`'s entity, where the layout keeps
    /// it. `position` is the target's place in an ordered relationship, `inversePosition` the
    /// owner's place in the inverse's list when that is ordered. One-to-one pairs set both sides.
    ///
    /// A to-many kept as a key on its objects' rows holds one owner per object: the key of a
    /// to-many without an inverse (Core Data's hidden key) is never written over another owner's,
    /// nor, when `keepsFirstOwner`, the to-one inverse's column (the caller knows nothing else
    /// sets it): `OwnerConflict` instead of a link lost.
    package func link(_ relationship: String, of storage: EntityStorage, owner: Int64, target: Int64, position: Int = 0, inversePosition: Int? = nil,
                      keepsFirstOwner: Bool = false) throws {
        try flush()
        switch try foreignKeyLink(relationship, of: storage) {
        case .foreignKey(let update, let ordered, let inverse)?:
            // A row the other side already placed in its ordered list keeps its place (SQLite
            // evaluates the CASE against the row's old values).
            try update.execute(ordered ? [target.databaseValue, target.databaseValue, (inversePosition ?? 0).databaseValue, owner.databaseValue]
                                       : [target.databaseValue, owner.databaseValue])
            try inverse?.execute([owner.databaseValue, target.databaseValue])
            return
        case .inverseForeignKey(let update, let ordered, let guarded)?:
            let values = ordered ? [owner.databaseValue, position.databaseValue, target.databaseValue] : [owner.databaseValue, target.databaseValue]
            guard guarded.isHidden || keepsFirstOwner else {
                try update.execute(values)
                return
            }
            try guarded.update.execute(values + [owner.databaseValue])
            // The key holds one owner: a second would take the first's link away unseen.
            if guarded.update.changedRows == 0, let holder = try Int64.fetchOne(guarded.holder, arguments: [target]), holder != owner {
                throw OwnerConflict(ownerEntity: storage.entity, relationship: relationship, targetEntity: guarded.entity, target: target, holder: holder, owner: owner,
                                    withoutInverse: guarded.isHidden)
            }
            return
        case nil:
            break
        }
        guard case .joinTable(let table, let ownerColumn, let otherColumn, let ownerOrder, let otherOrder, _, _)? = storage.relationships[relationship] else {
            throw MapcError.notFound("relationship '\(storage.entity).\(relationship)' is not stored (transient?)")
        }
        // Each side writes the positions it knows; a row the other side wrote keeps its own.
        var columns = [ownerColumn, otherColumn]
        var arguments: [DatabaseValue] = [owner.databaseValue, target.databaseValue]
        var written: [String] = []
        if let ownerOrder { columns.append(ownerOrder); arguments.append(position.databaseValue); written.append(ownerOrder) }
        if let otherOrder, let inversePosition { columns.append(otherOrder); arguments.append(inversePosition.databaseValue); written.append(otherOrder) }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let update = written.map { "\($0.quotedSQLIdentifier) = excluded.\($0.quotedSQLIdentifier)" }
        let conflict = update.isEmpty ? "ON CONFLICT DO NOTHING" : "ON CONFLICT DO UPDATE SET \(update.joined(separator: ", "))"
        try writeStatement("INSERT INTO \(table.quotedSQLIdentifier) (\(columns.map(\.quotedSQLIdentifier).joined(separator: ", "))) VALUES (\(placeholders)) \(conflict)")
            .execute(arguments)
    }

    /// How a link through a foreign key is written: the statements, prepared once per entity and
    /// relationship rather than spelled out per link. Nil for a join table or a relationship the
    /// layout does not store.
    func foreignKeyLink(_ relationship: String, of storage: EntityStorage) throws -> ForeignKeyLink? {
        let key = PropertyName(entity: storage.entity, property: relationship)
        if let known = foreignKeyLinks[key] { return known }
        let link: ForeignKeyLink
        let owner = storage.primaryKey.quotedSQLIdentifier
        switch storage.relationships[relationship] {
        case .foreignKey(let column, let destinationTable, let orderColumn)?:
            var assignments = "\(column.quotedSQLIdentifier) = ?"
            if let orderColumn {
                let order = orderColumn.quotedSQLIdentifier
                assignments += ", \(order) = CASE WHEN \(column.quotedSQLIdentifier) IS ? THEN \(order) ELSE ? END"
            }
            let inverse = try store.oneToOneInverse(relationship, of: storage).map { inverseColumn, _ in
                try writeStatement("UPDATE \(destinationTable.quotedSQLIdentifier) SET \(inverseColumn.quotedSQLIdentifier) = ? WHERE \(owner) = ?")
            }
            link = .foreignKey(update: try writeStatement("UPDATE \(storage.table.quotedSQLIdentifier) SET \(assignments) WHERE \(owner) = ?"),
                               ordered: orderColumn != nil, inverse: inverse)
        case .inverseForeignKey(let table, let column, let orderColumn, _)?:
            let order = orderColumn.map { ", \($0.quotedSQLIdentifier) = ?" } ?? ""
            let key = column.quotedSQLIdentifier
            guard let entity = store.schema.entity(named: storage.entity), case .relationship(let description)? = store.schema.property(named: relationship, in: entity),
                  let targetStorage = store.layout.entities[description.destination] else { return nil }
            let targetKey = targetStorage.primaryKey.quotedSQLIdentifier
            let set = "UPDATE \(table.quotedSQLIdentifier) SET \(key) = ?\(order) WHERE \(targetKey) = ?"
            // A to-many without an inverse (Core Data's hidden key): nothing else sets the column,
            // so a second owner can only be a link lost. A to-many whose to-one inverse is the
            // column is set from both sides, as the mappings decide, unless the caller says not.
            link = .inverseForeignKey(update: try writeStatement(set), ordered: orderColumn != nil,
                                      guarded: OwnerGuard(entity: description.destination, isHidden: store.schema.mutualInverse(of: description) == nil,
                                                          update: try writeStatement(set + " AND (\(key) IS NULL OR \(key) = ?)"),
                                                          holder: try db.makeStatement(sql: "SELECT \(key) FROM \(table.quotedSQLIdentifier) WHERE \(targetKey) = ?")))
        default:
            return nil
        }
        foreignKeyLinks[key] = link
        return link
    }

    /// A link kept in a foreign key: on the owner's row (with the inverse's column of a
    /// one-to-one pair), or on the target's row for a to-many whose inverse keeps it.
    enum ForeignKeyLink {
        case foreignKey(update: WriteStatement, ordered: Bool, inverse: WriteStatement?)
        case inverseForeignKey(update: WriteStatement, ordered: Bool, guarded: OwnerGuard)
    }

    /// Clears a to-one relationship.
    package func unlink(_ relationship: String, of storage: EntityStorage, owner: Int64) throws {
        try flush()
        guard case .foreignKey(let column, _, let orderColumn)? = storage.relationships[relationship] else { return }
        let order = orderColumn.map { ", \($0.quotedSQLIdentifier) = NULL" } ?? ""
        try writeStatement("UPDATE \(storage.table.quotedSQLIdentifier) SET \(column.quotedSQLIdentifier) = NULL\(order) WHERE \(storage.primaryKey.quotedSQLIdentifier) = ?")
            .execute([owner.databaseValue])
    }
}

/// How a to-many kept as a key on its objects' rows keeps a second owner from taking an object:
/// an update that writes only an empty or same-owner key, and the read of the owner it holds.
struct OwnerGuard {
    /// The entity the objects are of.
    var entity: String
    /// Whether the key is a hidden one (no inverse): always guarded.
    var isHidden: Bool
    var update: WriteStatement
    var holder: Statement
}

/// A second owner for an object a to-many without an inverse leads to, which the store keeps as
/// one key on that object's row (Core Data's hidden key): writing it would take the first owner's
/// link away. `load` reports it by the objects' ids, a run by the mapping and object.
package struct OwnerConflict: Error, CustomStringConvertible {
    package var ownerEntity: String
    package var relationship: String
    package var targetEntity: String
    /// The keys of the object linked, of the owner holding it, and of the owner refused.
    package var target: Int64, holder: Int64, owner: Int64
    /// Whether the relationship has no inverse (else its to-one inverse is new in this step).
    package var withoutInverse = true

    /// Why, and what to do, given names for the objects (their ids where known).
    package func explanation(target targetName: String, holder holderName: String) -> String {
        guard withoutInverse else {
            return "\(targetName) is linked from \(holderName) already, and its new to-one inverse holds one \(ownerEntity): the other's link would be lost. "
                + "Make the inverse to-many (a many-to-many), or write a mapping that chooses the \(ownerEntity) each \(targetEntity) keeps"
        }
        return "\(targetName) is linked from \(holderName) already, and a to-many without an inverse is kept as one key on each \(targetEntity) (as Core Data keeps it), "
            + "which holds one \(ownerEntity): the other's link would be lost. Give '\(relationship)' a to-many inverse (a many-to-many is kept in a join table), "
            + "or link each \(targetEntity) from one \(ownerEntity)"
    }

    package var description: String {
        "\(ownerEntity).\(relationship): " + explanation(target: "the \(targetEntity) with key \(target)", holder: "the \(ownerEntity) with key \(holder)")
    }
}

extension RowWriter {
    /// How a message names the object of `entity`'s table whose key is `key`: its own entity and
    /// its identity (`Post 'a'`, or `Post 'Post/p1'` in a format that keeps none), as a dump
    /// names it; "the Post with key 1" when the row cannot be read.
    package func describeObject(key: Int64, of entity: String) -> String {
        let unnamed = "the \(entity) with key \(key)"
        guard let storage = try? store.layout.storage(of: entity) else { return unnamed }
        let columns = [storage.entityColumn] + (storage.idColumn.map { [$0] } ?? [])
        let sql = "SELECT \(columns.map(\.quotedSQLIdentifier).joined(separator: ", ")) FROM \(storage.table.quotedSQLIdentifier) WHERE \(storage.primaryKey.quotedSQLIdentifier) = ?"
        guard let statement = try? statement(sql), let row = try? Row.fetchOne(statement, arguments: [key]) else { return unnamed }
        let discriminator: DatabaseValue = row[0]
        let own = store.layout.entity(withDiscriminator: discriminator, inTable: storage.table) ?? entity
        let stored: String? = storage.idColumn == nil ? nil : ((try? row.storedIfPresent(1, "an object id")) ?? nil)
        return "\(own) '\(store.strategy.objectID(entity: own, key: key, stored: stored))'"
    }
}
