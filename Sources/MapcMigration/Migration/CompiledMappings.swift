import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// The compiled path: entity mappings whose every expression `SQLCompiler` handles run as one
/// `INSERT … SELECT` from the source store (attached to the destination's connection), and their
/// `$manager` relationship mappings as SQL too, instead of object by object. Results are the
/// interpreter's (a differential test runs both on the same data); only speed differs.
///
/// Keys follow the mapping's key rule (`source key + offset`) when it has one, and are otherwise
/// numbered from the table's first free key in source key order, the associations recorded by a
/// second `INSERT … SELECT` with the same filter and numbering: either way as the interpreter gives
/// them. A value is copied as stored only when both formats encode its type the same way
/// (`encodingName`).
struct CompiledMappings {
    let run: MigrationRun

    init(_ run: MigrationRun) {
        self.run = run
    }

    private var source: Store { run.sourceStore }
    private var destination: Store { run.destinationStore }
    private func sourceTable(_ name: String) -> String { "\(MigrationRun.sourceSchemaName).\(name.quotedDatabaseIdentifier)" }

    /// One compiled creation: the rows, the associations when its keys follow no rule, and how
    /// many objects it made.
    final class Creation {
        let insert: String
        let arguments: [DatabaseValue]
        /// Without a key rule: the statement recording the associations, and where the first key
        /// goes in both statements' arguments.
        let associate: (sql: String, arguments: [DatabaseValue], keyBase: Int)?
        /// Without a key rule: the same insert leaving the keys to SQLite, which gives each row one
        /// more than the table's largest key, in the order inserted: the numbering `row_number()`
        /// gives, without the window that buffers every row (docs/performance.md).
        let autoKeyed: (sql: String, arguments: [DatabaseValue])?
        let table: String
        let includesRelationships: Bool
        /// The mapping's position.
        let index: Int
        private(set) var count = 0

        init(index: Int, insert: String, arguments: [DatabaseValue], associate: (sql: String, arguments: [DatabaseValue], keyBase: Int)?,
             autoKeyed: (sql: String, arguments: [DatabaseValue])?, table: String, includesRelationships: Bool) {
            self.index = index
            self.insert = insert
            self.arguments = arguments
            self.associate = associate
            self.autoKeyed = autoKeyed
            self.table = table
            self.includesRelationships = includesRelationships
        }

        func run(_ run: MigrationRun) throws {
            let db = try run.db
            guard let associate else {
                try db.execute(sql: insert, arguments: StatementArguments(arguments))
                count = db.changesCount
                return
            }
            // Numbered from the table's first free key, in source key order; the same numbering
            // records the associations.
            guard let storage = run.destinationStore.layout.entities.values.first(where: { $0.table == table }) else { return }
            let writer = run.writer
            let base = try writer.reserveKeys(0, for: storage) - 1
            let highestKey = "SELECT max(\(storage.primaryKey.quotedDatabaseIdentifier)) FROM main.\(table.quotedDatabaseIdentifier)"
            if let autoKeyed, try Int64.fetchOne(db, sql: highestKey) ?? 0 == base {
                try db.execute(sql: autoKeyed.sql, arguments: StatementArguments(autoKeyed.arguments))
                count = db.changesCount
                // Keys above the largest, one per row: exactly base + 1 … base + count.
                guard try Int64.fetchOne(db, sql: highestKey) ?? 0 == base + Int64(count) else {
                    throw MigrationError.setup("SQLite numbered the objects of mapping \(index) other than from \(base + 1); nothing was written")
                }
            } else {
                var first = arguments
                first[0] = base.databaseValue
                try db.execute(sql: insert, arguments: StatementArguments(first))
                count = db.changesCount
            }
            if run.recordsAssociations(index, relationshipsDone: includesRelationships) {
                var second = associate.arguments
                second[associate.keyBase] = base.databaseValue
                try db.execute(sql: associate.sql, arguments: StatementArguments(second))
            } else if count > 0 {
                run.ledger.noteUnrecorded((base + 1)...(base + Int64(count)), in: table, by: index)
            }
            writer.rowsInserted(into: table)
        }
    }

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

    /// A mapping's key rule, when it follows one: its objects are exactly one per source object
    /// read, under keys SQL can compute (`source key + offset`).
    private func keyRule(_ index: Int) -> KeyRule? {
        run.keyRules[index]
    }

    /// Whether a mapping makes exactly one object per source object read (no custom policy), so
    /// SQL can create its objects, under its key rule or numbered in source key order.
    private func isDeclarative(_ index: Int) -> Bool {
        run.analysis.followsKeyRule[index]
    }

    /// Whether a mapping's custom policy leaves its relationships to the declarative default, so
    /// they may be set with SQL through the associations its objects recorded.
    private func keepsDefaultRelationships(_ index: Int) -> Bool {
        let entityMapping = run.mapping.entityMappings[index]
        return entityMapping.policy != nil && (entityMapping.type == .transform || entityMapping.type == .custom)
            && type(of: run.policies[index]).keepsDefaultRelationships
    }

    /// The compiled creation of a mapping's objects, or nil when it needs the interpreter.
    func creation(_ index: Int) throws -> Creation? {
        let entityMapping = run.mapping.entityMappings[index]
        guard isDeclarative(index), entityMapping.sourceExpression == nil, entityMapping.type == .transform || entityMapping.type == .copy,
              let sourceName = entityMapping.source, let destinationName = entityMapping.destination,
              let sourceEntity = source.schema.entity(named: sourceName), let destinationEntity = destination.schema.entity(named: destinationName),
              !destinationEntity.isAbstract, let sourceStorage = source.layout.entities[sourceName],
              let destinationStorage = destination.layout.entities[destinationName] else { return nil }
        // A table a uniqueness constraint guards (a UNIQUE index, in Core Data's layout) could
        // refuse a row in the middle of the statement, whose rows before it the migration's
        // file, which keeps no journal, would keep: the interpreter names the object instead.
        if destination.layout.constrainsRows(of: destinationStorage.table) { return nil }
        let compiler = SQLCompiler(schema: source.schema, storage: sourceStorage, entity: sourceEntity, alias: "s")
        let rule = keyRule(index)
        if let rule, sourceStorage.table != rule.sourceTable || destinationStorage.table != rule.table { return nil }
        let key = "s.\(sourceStorage.primaryKey.quotedDatabaseIdentifier)"
        // The key: by the rule, or numbered from a base (bound when the creation runs) in source key order.
        let number = "? + row_number() OVER (ORDER BY \(key))"
        var columns = [destinationStorage.primaryKey, destinationStorage.entityColumn]
        var selections = [rule == nil ? number : "\(key) + ?", "?"]
        var arguments: [DatabaseValue] = [rule?.offset.databaseValue ?? .null, destinationStorage.discriminator]
        // The identity, for formats that keep one: the source's (stored or made from its key) and the mapping's suffix.
        let identity: String?
        var identityArguments: [DatabaseValue] = []
        if destinationStorage.idColumn != nil {
            if let sourceID = sourceStorage.idColumn {
                identity = "s.\(sourceID.quotedDatabaseIdentifier) || ?"
            } else {
                identity = "? || \(key) || ?"
                identityArguments.append((source.strategy.objectID(entity: sourceName, key: 0, stored: nil).dropLast(1) as Substring).description.databaseValue)
            }
            identityArguments.append(run.identitySuffix(index).databaseValue)
        } else {
            identity = nil
        }
        if let idColumn = destinationStorage.idColumn, let identity {
            columns.append(idColumn)
            selections.append(identity)
            arguments += identityArguments
        }
        for inserted in destinationStorage.insertedColumns {
            columns.append(inserted.name)
            selections.append("?")
            arguments.append(inserted.value)
        }
        for attribute in destination.schema.allAttributes(of: destinationEntity) where !attribute.isTransient {
            guard let column = destinationStorage.attributeColumns[attribute.name] else { continue }
            var fragment: SQLFragment?
            if let propertyMapping = entityMapping.attributeMapping(named: attribute.name) {
                guard let compiled = compiler.value(propertyMapping.expression.expression) else { return nil }
                fragment = compiled
            } else if entityMapping.type == .copy, case .attribute(let sourceAttribute)? = source.schema.property(named: attribute.name, in: sourceEntity),
                      let sourceColumn = sourceStorage.attributeColumns[attribute.name] {
                fragment = SQLFragment(sql: "s.\(sourceColumn.quotedDatabaseIdentifier)", arguments: [], type: ExprType(sourceAttribute.type), attributeType: sourceAttribute.type)
                fragment?.allowsExternalStorage = sourceAttribute.allowsExternalStorage
            }
            guard let fragment else {
                // A default the store cannot keep exactly (a decimal past a Core Data column's
                // digits) is for the interpreter to refuse, naming the object; one holding NUL,
                // which SQL text bound through GRDB would end at, for it to write whole.
                let defaultValue = CoreDataExternalValue.storedForm(of: attribute.defaultValue ?? .null, for: attribute, in: destination.format)
                guard destination.strategy.storageProblem(defaultValue, as: attribute.type) == nil, !Self.holdsNUL(defaultValue) else { return nil }
                columns.append(column)
                selections.append("?")
                arguments.append(destination.strategy.encode(defaultValue, as: attribute.type))
                continue
            }
            guard let selection = storable(fragment, as: attribute) else { return nil }
            columns.append(column)
            selections.append(selection.sql)
            arguments += selection.arguments
        }
        var includesRelationships = false
        if run.analysis.setsRelationshipsAtCreation[index], let relationships = try relationshipValues(index),
           relationships.allSatisfy({ $0.target < index && $0.column != nil }) {
            for relationship in relationships {
                columns.append(relationship.column ?? "")
                selections.append(relationship.value)
                arguments += relationship.arguments
            }
            includesRelationships = true
        }
        var condition = "s.\(sourceStorage.entityColumn.quotedDatabaseIdentifier) = ?"
        var conditionArguments: [DatabaseValue] = [sourceStorage.discriminator]
        if let filter = entityMapping.filter {
            guard let compiled = compiler.storePredicate(filter.expression) else { return nil }
            condition += " AND \(compiled.sql)"
            conditionArguments += compiled.arguments
        }
        let from = "FROM \(sourceTable(sourceStorage.table)) AS s WHERE \(condition)"
        let insert = "INSERT INTO main.\(destinationStorage.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) SELECT \(selections.joined(separator: ", ")) \(from) ORDER BY \(key)"
        var associate: (sql: String, arguments: [DatabaseValue], keyBase: Int)?
        var autoKeyed: (sql: String, arguments: [DatabaseValue])?
        if rule == nil {
            let sql = AssociationIndex.recordingAll(destination: number, source: key, identity: identity, from: from)
            associate = (sql, [index.databaseValue, .null, sourceName.databaseValue, destinationName.databaseValue] + identityArguments + conditionArguments, 1)
            let autoSQL = "INSERT INTO main.\(destinationStorage.table.quotedDatabaseIdentifier) (\(columns.dropFirst().map(\.quotedDatabaseIdentifier).joined(separator: ", "))) SELECT \(selections.dropFirst().joined(separator: ", ")) \(from) ORDER BY \(key)"
            autoKeyed = (autoSQL, Array(arguments.dropFirst()) + conditionArguments)
        }
        return Creation(index: index, insert: insert, arguments: arguments + conditionArguments, associate: associate, autoKeyed: autoKeyed,
                        table: destinationStorage.table, includesRelationships: includesRelationships)
    }

    /// Whether a value is text holding a NUL character.
    private static func holdsNUL(_ value: Value) -> Bool {
        switch value {
        case .string(let text), .uri(let text): return ValueLimits.containsNUL(text)
        default: return false
        }
    }

    /// SQL that stores a compiled value in an attribute exactly as the interpreter's coercion would,
    /// or nil when the types need a conversion SQL does not do the same way.
    private func storable(_ fragment: SQLFragment, as attribute: Attribute) -> (sql: String, arguments: [DatabaseValue])? {
        if let sourceType = fragment.attributeType {
            // Copied as stored when no value changes and both formats encode it alike; int64 into
            // double is the one lossy copy allowed, because SQLite's REAL affinity rounds exactly as
            // the interpreter's Double(n).
            // Bytes are never made text by a column's affinity: a UUID Core Data keeps as 16 bytes
            // becomes a string only through the interpreter's formatting.
            let bytes = destination.strategy.storageClasses(of: sourceType).contains("blob") && !destination.strategy.storageClasses(of: attribute.type).contains("blob")
            // Nor is a value whose stored form changes with Core Data's external storage (the interpreter converts it).
            let externalForm = (CoreDataExternalValue.holdsBytes(sourceType) && CoreDataExternalValue.isMarked(source.format, allowsExternalStorage: fragment.allowsExternalStorage))
                != CoreDataExternalValue.isMarked(attribute, in: destination.format)
            guard ValueRules.isLossless(from: sourceType, to: attribute.type) || (sourceType == .int64 && attribute.type == .double), !bytes, !externalForm,
                  source.strategy.encodingName(of: sourceType) == destination.strategy.encodingName(of: sourceType),
                  source.strategy.encodingName(of: attribute.type) == destination.strategy.encodingName(of: attribute.type) else { return nil }
            return (fragment.sql, fragment.arguments)
        }
        switch fragment.type {
        case .null: return ("NULL", [])
        case .bool where attribute.type == .bool || attribute.type.isInteger:
            guard destination.strategy.encodingName(of: attribute.type) == StoreFormat.mapc.strategy.encodingName(of: attribute.type) else { return nil }
            return (fragment.sql, fragment.arguments)
        case .integer, .double:
            // A literal: coerced now, as the interpreter would, then bound.
            guard fragment.arguments.count == 1, fragment.sql == "?" else { return nil }
            let literal: EvalValue = fragment.type == .integer ? .scalar(.integer(Int64.fromDatabaseValue(fragment.arguments[0]) ?? 0)) : .scalar(.double(Double.fromDatabaseValue(fragment.arguments[0]) ?? 0))
            guard case .success(let value) = ValueCoercion.coerce(literal, to: attribute.type) else { return nil }
            return ("?", [destination.strategy.encode(value, as: attribute.type)])
        default: return nil
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
                relatedKey = "s.\(sourceStorage.primaryKey.quotedDatabaseIdentifier)"
            case .keyPath(let root, let components):
                guard components.count == 1, case .key(let key, _) = components[0], root.kind == .variable("source") || root.kind == .evaluatedObject,
                      case .relationship(let sourceRelationship)? = source.schema.property(named: key, in: sourceEntity), sourceRelationship.isToMany == relationship.isToMany,
                      mapping.entityMappings[target].source == sourceRelationship.destination else { return nil }
                let relatedTable: String
                let ownKey = "s.\(sourceStorage.primaryKey.quotedDatabaseIdentifier)"
                switch (sourceStorage.relationships[key], link) {
                case (.foreignKey(let sourceColumn, let table, _)?, .column):
                    relatedKey = "s.\(sourceColumn.quotedDatabaseIdentifier)"
                    relatedTable = table
                case (.joinTable(let table, let ownerColumn, let otherColumn, _, _, let destinationTable, _)?, .joinRow):
                    // The join rows seen from this side, as the store reads the relationship.
                    related.sql = "\(sourceTable(table)) AS j CROSS JOIN \(sourceTable(sourceStorage.table)) AS s ON j.\(ownerColumn.quotedDatabaseIdentifier) = \(ownKey)"
                    relatedKey = "j.\(otherColumn.quotedDatabaseIdentifier)"
                    relatedTable = destinationTable
                case (.inverseForeignKey(let table, let column, _, let discriminators)?, .joinRow), (.inverseForeignKey(let table, let column, _, let discriminators)?, .targetKey):
                    // The related rows naming this one, of the relationship's entities. (A key on the
                    // related rows gives each one owner, so a key written on them is never contested.)
                    guard let relatedStorage = source.layout.entities.values.first(where: { $0.table == table }) else { return nil }
                    related.sql = "\(sourceTable(table)) AS j CROSS JOIN \(sourceTable(sourceStorage.table)) AS s ON j.\(column.quotedDatabaseIdentifier) = \(ownKey)"
                    let placeholders = Array(repeating: "?", count: discriminators.count).joined(separator: ", ")
                    related.sql += " AND \(StoreLayout.entityCheck("j.\(relatedStorage.entityColumn.quotedDatabaseIdentifier)", allowed: placeholders))"
                    related.arguments = discriminators
                    relatedKey = "j.\(relatedStorage.primaryKey.quotedDatabaseIdentifier)"
                    relatedTable = table
                default:
                    return nil
                }
                guard let relatedStorage = source.layout.entities.values.first(where: { $0.table == relatedTable }) else { return nil }
                if let targetRule = keyRule(target) {
                    // Only an object of an entity the target mapping reads has an object of the target's.
                    guard relatedTable == targetRule.sourceTable else { return nil }
                    let readable = Array(repeating: "?", count: targetRule.sourceDiscriminators.count).joined(separator: ", ")
                    sourceCheck = (" AND (SELECT r.\(relatedStorage.entityColumn.quotedDatabaseIdentifier) FROM \(sourceTable(relatedTable)) AS r WHERE r.\(relatedStorage.primaryKey.quotedDatabaseIdentifier) = \(relatedKey)) IN (\(readable))",
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
            let targetKey = "d.\(targetStorage.primaryKey.quotedDatabaseIdentifier)"
            let value = "(SELECT \(targetKey) FROM main.\(targetRule.table.quotedDatabaseIdentifier) AS d WHERE \(targetKey) = \(relatedKey) + ? AND \(targetKey) BETWEEN ? AND ? AND \(StoreLayout.entityCheck("d.\(targetStorage.entityColumn.quotedDatabaseIdentifier)", allowed: placeholders))\(sourceCheck.sql))"
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
        let sourceKey = "s.\(sourceStorage.primaryKey.quotedDatabaseIdentifier)", ofEntity = "s.\(sourceStorage.entityColumn.quotedDatabaseIdentifier) = ?"
        let ownKey = "d.\(destinationStorage.primaryKey.quotedDatabaseIdentifier)"
        let destinationTable = "main.\(destinationStorage.table.quotedDatabaseIdentifier)"

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
                return Update(sql: "INSERT INTO main.\(table.quotedDatabaseIdentifier) (\(ownerColumn.quotedDatabaseIdentifier), \(otherColumn.quotedDatabaseIdentifier)) "
                                + "SELECT owner, target FROM (\(links.sql)) WHERE target IS NOT NULL ON CONFLICT DO NOTHING", arguments: links.arguments, writesJoinRows: true)
            case .targetKey(let table, let column, let primaryKey):
                let links = pairs(value)
                return Update(sql: "UPDATE main.\(table.quotedDatabaseIdentifier) AS t SET \(column.quotedDatabaseIdentifier) = x.owner FROM (\(links.sql)) AS x "
                                + "WHERE t.\(primaryKey.quotedDatabaseIdentifier) = x.target", arguments: links.arguments)
            case .column(let column):
                guard let rule else {
                    // Each of the mapping's objects is found through its association.
                    let sql = """
                    UPDATE \(destinationTable) AS d SET \(column.quotedDatabaseIdentifier) = \(value.value) \
                    FROM \(sourceTable(sourceStorage.table)) AS s \(AssociationIndex.joinOwn(sourceKey: sourceKey)) \
                    WHERE \(ofEntity) AND \(ownKey) = own.destination
                    """
                    return Update(sql: sql, arguments: value.arguments + [index.databaseValue, sourceName.databaseValue, sourceStorage.discriminator])
                }
                // Each of the mapping's objects is the one its key rule gives its source row.
                let sql = """
                UPDATE \(destinationTable) AS d SET \(column.quotedDatabaseIdentifier) = \(value.value) \
                FROM \(sourceTable(sourceStorage.table)) AS s \
                WHERE \(ofEntity) AND \(ownKey) = \(sourceKey) + ? AND \(ownKey) BETWEEN ? AND ?
                """
                return Update(sql: sql, arguments: value.arguments + [sourceStorage.discriminator, rule.offset.databaseValue, rule.range.lowerBound.databaseValue, rule.range.upperBound.databaseValue])
            }
        }
    }
}
