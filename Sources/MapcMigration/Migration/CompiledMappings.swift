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

    var source: Store { run.sourceStore }
    var destination: Store { run.destinationStore }
    func sourceTable(_ name: String) -> String { "\(MigrationRun.sourceSchemaName).\(name.quotedSQLIdentifier)" }

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
            let highestKey = "SELECT max(\(storage.primaryKey.quotedSQLIdentifier)) FROM main.\(table.quotedSQLIdentifier)"
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

    /// A mapping's key rule, when it follows one: its objects are exactly one per source object
    /// read, under keys SQL can compute (`source key + offset`).
    func keyRule(_ index: Int) -> KeyRule? {
        run.keyRules[index]
    }

    /// Whether a mapping makes exactly one object per source object read (no custom policy), so
    /// SQL can create its objects, under its key rule or numbered in source key order.
    func isDeclarative(_ index: Int) -> Bool {
        run.analysis.followsKeyRule[index]
    }

    /// Whether a mapping's custom policy leaves its relationships to the declarative default, so
    /// they may be set with SQL through the associations its objects recorded.
    func keepsDefaultRelationships(_ index: Int) -> Bool {
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
        // A source column declared otherwise than the format declares it may hold a value of
        // another kind than the model's, which SQL would copy into the new column's kind in
        // silence: the interpreter reads each value, and refuses such a one, naming it.
        if try run.sourceTableHasColumnsOfAnotherAffinity(sourceStorage.table) { return nil }
        // An index ordered by an app's collation is searched with mapc's stand-in for it, which
        // orders otherwise: SQL that SQLite answers through it could miss rows. Read row by row.
        if try run.sourceTablesOrderedByAppCollations().contains(sourceStorage.table.lowercased()) { return nil }
        let compiler = SQLCompiler(schema: source.schema, storage: sourceStorage, entity: sourceEntity, alias: "s")
        let rule = keyRule(index)
        if let rule, sourceStorage.table != rule.sourceTable || destinationStorage.table != rule.table { return nil }
        let key = "s.\(sourceStorage.primaryKey.quotedSQLIdentifier)"
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
                identity = "s.\(sourceID.quotedSQLIdentifier) || ?"
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
        var allReads: [String] = [], convertedReads: [String] = []
        for attribute in destination.schema.allAttributes(of: destinationEntity) where !attribute.isTransient {
            guard let column = destinationStorage.attributeColumns[attribute.name] else { continue }
            var fragment: SQLFragment?
            if let propertyMapping = entityMapping.attributeMapping(named: attribute.name) {
                guard let compiled = compiler.value(propertyMapping.expression.expression) else { return nil }
                fragment = compiled
            } else if entityMapping.type == .copy, case .attribute(let sourceAttribute)? = source.schema.property(named: attribute.name, in: sourceEntity),
                      let sourceColumn = sourceStorage.attributeColumns[attribute.name] {
                fragment = SQLFragment(sql: "s.\(sourceColumn.quotedSQLIdentifier)", arguments: [], type: ExprType(sourceAttribute.type), attributeType: sourceAttribute.type, reads: [attribute.name])
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
            // A value copied as the type it is read as is checked by the destination's validation,
            // with reading's rules; any other read (converted, or in a predicate) is checked below.
            allReads += fragment.reads
            if !(fragment.attributeType == attribute.type && fragment.reads.count == 1) { convertedReads += fragment.reads }
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
        var condition = "s.\(sourceStorage.entityColumn.quotedSQLIdentifier) = ?"
        var conditionArguments: [DatabaseValue] = [sourceStorage.discriminator]
        var checkedReads = convertedReads
        if let filter = entityMapping.filter {
            guard let compiled = compiler.storePredicate(filter.expression) else { return nil }
            condition += " AND \(compiled.sql)"
            conditionArguments += compiled.arguments
            // The interpreter reads what the mapping reads of every object, those the filter
            // leaves out too, where no validation sees a copy.
            checkedReads = compiled.reads + allReads
        }
        // SQL would copy a value its type cannot hold into another type (where it may be valid),
        // decide the filter on it, or pass over one on an object the filter leaves out: where the
        // store holds one, the interpreter reads the mapping's objects, and refuses it naming the
        // object, as every other path does.
        if try source.holdsValuesReadingRefuses(ofExactEntity: sourceName, in: checkedReads) { return nil }
        let from = "FROM \(sourceTable(sourceStorage.table)) AS s WHERE \(condition)"
        let insert = "INSERT INTO main.\(destinationStorage.table.quotedSQLIdentifier) (\(columns.map(\.quotedSQLIdentifier).joined(separator: ", "))) SELECT \(selections.joined(separator: ", ")) \(from) ORDER BY \(key)"
        var associate: (sql: String, arguments: [DatabaseValue], keyBase: Int)?
        var autoKeyed: (sql: String, arguments: [DatabaseValue])?
        if rule == nil {
            let sql = AssociationIndex.recordingAll(destination: number, source: key, identity: identity, from: from)
            associate = (sql, [index.databaseValue, .null, sourceName.databaseValue, destinationName.databaseValue] + identityArguments + conditionArguments, 1)
            let autoSQL = "INSERT INTO main.\(destinationStorage.table.quotedSQLIdentifier) (\(columns.dropFirst().map(\.quotedSQLIdentifier).joined(separator: ", "))) SELECT \(selections.dropFirst().joined(separator: ", ")) \(from) ORDER BY \(key)"
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
}
