import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// The compiled path's relationships: a mapping's `$manager` relationship mappings as SQL, a to-one
/// as a scalar subquery (inside the creating insert, or one `UPDATE … FROM`), a to-many kept in a
/// join table as one `INSERT … SELECT` of its links, one kept as a key on its objects' rows as one
/// `UPDATE … FROM` of those rows; nil wherever the interpreter must relate the objects one by one.
extension CompiledMappings {
    /// One compiled relationship update.
    struct Update {
        var sql: String
        var arguments: [DatabaseValue]
        /// Whether it inserts a join table's rows (`MigrationRun.withJoinTableCache`).
        var writesJoinRows = false

        func execute(_ run: MigrationRun) throws {
            try run.db.execute(sql: sql, arguments: StatementArguments(arguments))
        }
    }

    /// One compiled relationship mapping: where it writes and the scalar subquery giving the
    /// related object's key for source row `s` (and, for a to-many, its related row `j`).
    struct RelationshipValue {
        var link: Link
        /// For a to-many: its related rows `j` joined to their source row `s`, one per link (the
        /// rows the store's read of `$source.<key>` gives), and its arguments. The related rows
        /// lead (`CROSS JOIN` keeps SQLite to that order): a join table read in its key order
        /// writes the other side's links in the order of their index, where led by `s` each
        /// link's lookup lands anywhere in it (a million links 4.9 s, against 1.6 s).
        var related: (sql: String, arguments: [DatabaseValue]) = ("", [])
        var value: String
        var arguments: [DatabaseValue]
        /// The entity mapping that creates the related objects.
        var target: Int

        /// The owner's column, for a to-one.
        var column: String? {
            if case .column(let column) = link { return column }
            return nil
        }
    }

    /// Where a compiled relationship mapping writes its links.
    enum Link {
        /// A to-one: the foreign key column of the owner's row.
        case column(String)
        /// A to-many kept in a join table: one row per link, (owner, other).
        case joinRow(table: String, ownerColumn: String, otherColumn: String)
        /// A to-many whose to-one inverse keeps it: the key column on each related object's row.
        case targetKey(table: String, column: String, primaryKey: String)
    }

    /// How a destination to-many is written by SQL, or nil when only the interpreter writes it
    /// as `RelationshipSetter` does: an ordered list (its places), a key on its objects' rows that
    /// a second owner must not take (a hidden key, a to-one inverse no mapping sets).
    private func toManyLink(_ relationship: Relationship, of storage: EntityStorage) throws -> Link? {
        switch storage.relationships[relationship.name] {
        case .joinTable(let table, let ownerColumn, let otherColumn, nil, nil, _, _)?:
            return .joinRow(table: table, ownerColumn: ownerColumn, otherColumn: otherColumn)
        case .inverseForeignKey(let table, let column, nil, _)?:
            guard destination.schema.mutualInverse(of: relationship) != nil, let setting = try run.setter.setting(relationship.name, of: storage.entity),
                  !setting.keepsFirstOwner, let targetStorage = destination.layout.entities[relationship.destination] else { return nil }
            return .targetKey(table: table, column: column, primaryKey: targetStorage.primaryKey)
        default:
            return nil
        }
    }

    /// Each relationship mapping of a mapping as SQL, or nil when any of them needs the interpreter.
    func relationshipValues(_ index: Int) throws -> [RelationshipValue]? {
        let mapping = run.mapping
        let entityMapping = mapping.entityMappings[index]
        guard (isDeclarative(index) && entityMapping.type == .transform) || keepsDefaultRelationships(index), entityMapping.sourceExpression == nil,
              let sourceName = entityMapping.source, let destinationName = entityMapping.destination,
              let destinationEntity = destination.schema.entity(named: destinationName), let sourceEntity = source.schema.entity(named: sourceName),
              let sourceStorage = source.layout.entities[sourceName], let destinationStorage = destination.layout.entities[destinationName] else { return nil }
        var result: [RelationshipValue] = []
        for propertyMapping in entityMapping.relationships {
            guard case .relationship(let relationship)? = destination.schema.property(named: propertyMapping.name, in: destinationEntity) else { return nil }
            let link: Link
            if relationship.isToMany {
                guard let toMany = try toManyLink(relationship, of: destinationStorage) else { return nil }
                // A key on the related rows that this mapping also writes through the to-one side
                // (an employee's manager and reports): the interpreter's last write is per object,
                // a statement's per relationship, so they would differ where the data disagrees.
                if case .targetKey = toMany, let inverse = destination.schema.mutualInverse(of: relationship),
                   entityMapping.relationships.contains(where: { $0.name == inverse.name }) { return nil }
                link = toMany
            } else {
                guard case .foreignKey(let column, _, nil)? = destinationStorage.relationships[relationship.name] else { return nil }
                if let inverse = destination.schema.mutualInverse(of: relationship), !inverse.isToMany { return nil }
                link = .column(column)
            }
            guard case .method(let receiver, let selector, _, let arguments) = propertyMapping.expression.expression.kind,
                  case .variable("manager") = receiver.kind, selector == MethodSelector.destinationInstancesForEntityMapping.rawValue,
                  arguments.count == 2, case .literal(.string(let targetName)) = arguments[0].kind,
                  let target = mapping.entityMappings.firstIndex(where: { $0.name == targetName }), isDeclarative(target),
                  let relationshipDestination = destination.schema.entity(named: relationship.destination) else { return nil }
            // The source key the target mapping read: the row's own, or a to-one related object's.
            let relatedKey: String
            var related: (sql: String, arguments: [DatabaseValue]) = ("", [])
            var sourceCheck: (sql: String, arguments: [DatabaseValue]) = ("", [])
            switch arguments[1].kind {
            case .variable("source"), .evaluatedObject:
                guard !relationship.isToMany, mapping.entityMappings[target].source == sourceName else { return nil }
                relatedKey = "s.\(sourceStorage.primaryKey.quotedSQLIdentifier)"
            case .keyPath(let root, let components):
                guard components.count == 1, case .key(let key, _) = components[0], root.kind == .variable("source") || root.kind == .evaluatedObject,
                      case .relationship(let sourceRelationship)? = source.schema.property(named: key, in: sourceEntity), sourceRelationship.isToMany == relationship.isToMany,
                      mapping.entityMappings[target].source == sourceRelationship.destination else { return nil }
                let relatedTable: String
                let ownKey = "s.\(sourceStorage.primaryKey.quotedSQLIdentifier)"
                switch (sourceStorage.relationships[key], link) {
                case (.foreignKey(let sourceColumn, let table, _)?, .column):
                    relatedKey = "s.\(sourceColumn.quotedSQLIdentifier)"
                    relatedTable = table
                case (.joinTable(let table, let ownerColumn, let otherColumn, _, _, let destinationTable, _)?, .joinRow):
                    // The join rows seen from this side, as the store reads the relationship.
                    related.sql = "\(sourceTable(table)) AS j CROSS JOIN \(sourceTable(sourceStorage.table)) AS s ON j.\(ownerColumn.quotedSQLIdentifier) = \(ownKey)"
                    relatedKey = "j.\(otherColumn.quotedSQLIdentifier)"
                    relatedTable = destinationTable
                case (.inverseForeignKey(let table, let column, _, let discriminators)?, .joinRow), (.inverseForeignKey(let table, let column, _, let discriminators)?, .targetKey):
                    // The related rows naming this one, of the relationship's entities. (A key on the
                    // related rows gives each one owner, so a key written on them is never contested.)
                    guard let relatedStorage = source.layout.entities.values.first(where: { $0.table == table }) else { return nil }
                    related.sql = "\(sourceTable(table)) AS j CROSS JOIN \(sourceTable(sourceStorage.table)) AS s ON j.\(column.quotedSQLIdentifier) = \(ownKey)"
                    let placeholders = Array(repeating: "?", count: discriminators.count).joined(separator: ", ")
                    related.sql += " AND \(StoreLayout.entityCheck("j.\(relatedStorage.entityColumn.quotedSQLIdentifier)", allowed: placeholders))"
                    related.arguments = discriminators
                    relatedKey = "j.\(relatedStorage.primaryKey.quotedSQLIdentifier)"
                    relatedTable = table
                default:
                    return nil
                }
                guard let relatedStorage = source.layout.entities.values.first(where: { $0.table == relatedTable }) else { return nil }
                if let targetRule = keyRule(target) {
                    // Only an object of an entity the target mapping reads has an object of the target's.
                    guard relatedTable == targetRule.sourceTable else { return nil }
                    let readable = Array(repeating: "?", count: targetRule.sourceDiscriminators.count).joined(separator: ", ")
                    sourceCheck = (" AND (SELECT r.\(relatedStorage.entityColumn.quotedSQLIdentifier) FROM \(sourceTable(relatedTable)) AS r WHERE r.\(relatedStorage.primaryKey.quotedSQLIdentifier) = \(relatedKey)) IN (\(readable))",
                                   targetRule.sourceDiscriminators)
                }
            default:
                return nil
            }
            guard let targetRule = keyRule(target) else {
                // The target recorded associations: look the object up there.
                let allowed = destination.schema.hierarchy(under: relationshipDestination).map(\.name)
                guard let targetSource = mapping.entityMappings[target].source else { return nil }
                // The lookup is by the target's source entity: objects a fetch made from rows of its
                // sub-entities are associated under their own, which the interpreter finds.
                if mapping.entityMappings[target].sourceExpression != nil,
                   source.schema.entity(named: targetSource).map({ source.schema.hierarchy(under: $0).count > 1 }) ?? true { return nil }
                let value = AssociationIndex.lookup(sourceKey: relatedKey, entityCount: allowed.count)
                result.append(RelationshipValue(link: link, related: related, value: value, arguments: [target.databaseValue, targetSource.databaseValue] + allowed.map(\.databaseValue), target: target))
                continue
            }
            let takesTarget = destination.schema.hierarchy(under: relationshipDestination).contains { $0.name == targetRule.entity }
            if targetRule.isComplete && sourceCheck.sql.isEmpty {
                // The row's own object of the target mapping, which made one for every row: its key
                // is arithmetic, with nothing to look up.
                result.append(RelationshipValue(link: link, related: related, value: takesTarget ? "(\(relatedKey) + ?)" : "NULL",
                                                arguments: takesTarget ? [targetRule.offset.databaseValue] : [], target: target))
                continue
            }
            // The target's object for that source key, by its key rule, when the target created one
            // (its filter may have skipped the source object) of an entity the relationship takes.
            guard let targetStorage = destination.layout.entities.values.first(where: { $0.table == targetRule.table }) else { return nil }
            let allowed = destination.schema.hierarchy(under: relationshipDestination).compactMap { destination.layout.entities[$0.name]?.discriminator }
            let placeholders = Array(repeating: "?", count: allowed.count).joined(separator: ", ")
            let targetKey = "d.\(targetStorage.primaryKey.quotedSQLIdentifier)"
            let value = "(SELECT \(targetKey) FROM main.\(targetRule.table.quotedSQLIdentifier) AS d WHERE \(targetKey) = \(relatedKey) + ? AND \(targetKey) BETWEEN ? AND ? AND \(StoreLayout.entityCheck("d.\(targetStorage.entityColumn.quotedSQLIdentifier)", allowed: placeholders))\(sourceCheck.sql))"
            result.append(RelationshipValue(link: link, related: related, value: value,
                                            arguments: [targetRule.offset.databaseValue, targetRule.range.lowerBound.databaseValue, targetRule.range.upperBound.databaseValue] + allowed + sourceCheck.arguments,
                                            target: target))
        }
        return result
    }

    /// The statements setting a mapping's relationships after its objects exist (an `UPDATE …
    /// FROM` per to-one and per to-many kept on its objects' rows, an `INSERT … SELECT` per to-many
    /// kept in a join table), or nil when any of them needs the interpreter.
    func relationships(_ index: Int) throws -> [Update]? {
        let entityMapping = run.mapping.entityMappings[index]
        guard !entityMapping.relationships.isEmpty, let values = try relationshipValues(index), let sourceName = entityMapping.source,
              let sourceStorage = source.layout.entities[sourceName], let destinationName = entityMapping.destination,
              let destinationStorage = destination.layout.entities[destinationName] else { return nil }
        let rule = keyRule(index)
        // Associations that are not one per object of the mapping's entities are related one by one.
        if rule == nil && run.ledger.irregularAssociations.contains(index) { return nil }
        let sourceKey = "s.\(sourceStorage.primaryKey.quotedSQLIdentifier)", ofEntity = "s.\(sourceStorage.entityColumn.quotedSQLIdentifier) = ?"
        let ownKey = "d.\(destinationStorage.primaryKey.quotedSQLIdentifier)"
        let destinationTable = "main.\(destinationStorage.table.quotedSQLIdentifier)"

        /// A to-many's (owner, related object) pairs, one per link of each source row: owners
        /// found as for a to-one, links to an object the target mapping did not make left out.
        func pairs(_ value: RelationshipValue) -> (sql: String, arguments: [DatabaseValue]) {
            var sql = "SELECT \(rule == nil ? "own.destination" : ownKey) AS owner, \(value.value) AS target FROM \(value.related.sql) "
            var arguments = value.arguments + value.related.arguments
            if let rule {
                sql += "JOIN \(destinationTable) AS d ON \(ownKey) = \(sourceKey) + ? AND \(ownKey) BETWEEN ? AND ? "
                arguments += [rule.offset.databaseValue, rule.range.lowerBound.databaseValue, rule.range.upperBound.databaseValue]
            } else {
                sql += "\(AssociationIndex.joinOwn(sourceKey: sourceKey)) "
                arguments += [index.databaseValue, sourceName.databaseValue]
            }
            return (sql + "WHERE \(ofEntity)", arguments + [sourceStorage.discriminator])
        }

        return values.map { value in
            switch value.link {
            case .joinRow(let table, let ownerColumn, let otherColumn):
                // A link already there (written from the other side) stays as it is, as `RowWriter.link` leaves it.
                let links = pairs(value)
                return Update(sql: "INSERT INTO main.\(table.quotedSQLIdentifier) (\(ownerColumn.quotedSQLIdentifier), \(otherColumn.quotedSQLIdentifier)) "
                                + "SELECT owner, target FROM (\(links.sql)) WHERE target IS NOT NULL ON CONFLICT DO NOTHING", arguments: links.arguments, writesJoinRows: true)
            case .targetKey(let table, let column, let primaryKey):
                let links = pairs(value)
                return Update(sql: "UPDATE main.\(table.quotedSQLIdentifier) AS t SET \(column.quotedSQLIdentifier) = x.owner FROM (\(links.sql)) AS x "
                                + "WHERE t.\(primaryKey.quotedSQLIdentifier) = x.target", arguments: links.arguments)
            case .column(let column):
                guard let rule else {
                    // Each of the mapping's objects is found through its association.
                    let sql = """
                    UPDATE \(destinationTable) AS d SET \(column.quotedSQLIdentifier) = \(value.value) \
                    FROM \(sourceTable(sourceStorage.table)) AS s \(AssociationIndex.joinOwn(sourceKey: sourceKey)) \
                    WHERE \(ofEntity) AND \(ownKey) = own.destination
                    """
                    return Update(sql: sql, arguments: value.arguments + [index.databaseValue, sourceName.databaseValue, sourceStorage.discriminator])
                }
                // Each of the mapping's objects is the one its key rule gives its source row.
                let sql = """
                UPDATE \(destinationTable) AS d SET \(column.quotedSQLIdentifier) = \(value.value) \
                FROM \(sourceTable(sourceStorage.table)) AS s \
                WHERE \(ofEntity) AND \(ownKey) = \(sourceKey) + ? AND \(ownKey) BETWEEN ? AND ?
                """
                return Update(sql: sql, arguments: value.arguments + [sourceStorage.discriminator, rule.offset.databaseValue, rule.range.lowerBound.databaseValue, rule.range.upperBound.databaseValue])
            }
        }
    }
}
