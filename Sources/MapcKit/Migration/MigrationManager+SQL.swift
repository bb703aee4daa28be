import GRDB

/// The compiled path: entity mappings whose every expression `SQLCompiler` handles run as one
/// `INSERT … SELECT` from the attached source store, and their `$manager` relationship mappings
/// as one `UPDATE … FROM`, instead of object by object. Results are the same as the interpreter's
/// (a test compares both on the same data); only speed differs.
extension MigrationManager {
    static let sourceSchemaName = "mapc_source"

    private func sourceTable(_ name: String) -> String { "\(Self.sourceSchemaName).\(name.quotedDatabaseIdentifier)" }

    /// The `INSERT … SELECT` creating a mapping's destination objects, or nil when the mapping
    /// needs the interpreter. `includesRelationships` says the relationship mappings are set by it
    /// too (when every one compiles and the mappings they name have already run).
    func compiledCreation(_ index: Int) -> (sql: String, arguments: StatementArguments, includesRelationships: Bool)? {
        let entityMapping = mapping.entityMappings[index]
        guard followsIdentityRule(index), entityMapping.sourceExpression == nil, entityMapping.type == .transform || entityMapping.type == .copy,
              let sourceName = entityMapping.source, let destinationName = entityMapping.destination,
              let sourceEntity = sourceStore.schema.entity(named: sourceName), let destinationEntity = destinationSchema.entity(named: destinationName),
              !destinationEntity.isAbstract, let sourceStorage = sourceStore.layout.entities[sourceName],
              let destinationStorage = destinationStore?.layout.entities[destinationName] else { return nil }
        let compiler = SQLCompiler(schema: sourceStore.schema, storage: sourceStorage, entity: sourceEntity, alias: "s")
        var columns = [destinationStorage.entityColumn, destinationStorage.idColumn]
        var selections = ["?", "s.\(sourceStorage.idColumn.quotedDatabaseIdentifier) || ?"]
        var arguments: [DatabaseValue] = [destinationName.databaseValue, identitySuffix(index).databaseValue]
        for attribute in destinationSchema.allAttributes(of: destinationEntity) where !attribute.isTransient {
            guard let column = destinationStorage.attributeColumns[attribute.name] else { continue }
            var fragment: SQLFragment?
            if let propertyMapping = entityMapping.attributeMapping(named: attribute.name) {
                guard let compiled = compiler.value(propertyMapping.expression.expression) else { return nil }
                fragment = compiled
            } else if entityMapping.type == .copy, case .attribute(let sourceAttribute)? = sourceStore.schema.property(named: attribute.name, in: sourceEntity),
                      let sourceColumn = sourceStorage.attributeColumns[attribute.name] {
                fragment = SQLFragment(sql: "s.\(sourceColumn.quotedDatabaseIdentifier)", arguments: [], type: ExprType(sourceAttribute.type), attributeType: sourceAttribute.type)
            }
            guard let fragment else {
                columns.append(column)
                selections.append("?")
                arguments.append(store(attribute.defaultValue ?? .null, attribute))
                continue
            }
            guard let selection = storable(fragment, as: attribute) else { return nil }
            columns.append(column)
            selections.append(selection.sql)
            arguments += selection.arguments
        }
        var includesRelationships = false
        if !entityMapping.relationships.isEmpty, let relationships = compiledRelationshipValues(index), relationships.allSatisfy({ $0.target < index }) {
            for relationship in relationships {
                columns.append(relationship.column)
                selections.append(relationship.value)
                arguments += relationship.arguments
            }
            includesRelationships = true
        }
        var condition = "s.\(sourceStorage.entityColumn.quotedDatabaseIdentifier) = ?"
        var conditionArguments: [DatabaseValue] = [sourceName.databaseValue]
        if let filter = entityMapping.filter {
            guard let compiled = compiler.predicate(filter.expression) else { return nil }
            condition += " AND \(compiled.sql)"
            conditionArguments += compiled.arguments
        }
        let sql = "INSERT INTO main.\(destinationStorage.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) SELECT \(selections.joined(separator: ", ")) FROM \(sourceTable(sourceStorage.table)) AS s WHERE \(condition) ORDER BY s.\(sourceStorage.primaryKey.quotedDatabaseIdentifier)"
        return (sql, StatementArguments(arguments + conditionArguments), includesRelationships)
    }

    private func store(_ value: Value, _ attribute: Attribute) -> DatabaseValue {
        (destinationStore?.strategy ?? MapcLayout()).encode(value, as: attribute.type)
    }

    /// SQL that stores a compiled value in an attribute exactly as the interpreter's coercion would,
    /// or nil when the types need a conversion SQL does not do the same way.
    private func storable(_ fragment: SQLFragment, as attribute: Attribute) -> (sql: String, arguments: [DatabaseValue])? {
        if let sourceType = fragment.attributeType {
            // Copied as stored when no value changes; int64 into double is the one lossy copy
            // allowed, because SQLite's REAL affinity rounds exactly as the interpreter's Double(n).
            guard ValueRules.isLossless(from: sourceType, to: attribute.type) || (sourceType == .int64 && attribute.type == .double) else { return nil }
            return (fragment.sql, fragment.arguments)
        }
        switch fragment.type {
        case .null: return ("NULL", [])
        case .bool where attribute.type == .bool || attribute.type.isInteger: return (fragment.sql, fragment.arguments)
        case .integer, .double:
            // A literal: coerced now, as the interpreter would, then bound.
            guard fragment.arguments.count == 1, fragment.sql == "?" else { return nil }
            let literal: EvalValue = fragment.type == .integer ? .scalar(.integer(Int64.fromDatabaseValue(fragment.arguments[0]) ?? 0)) : .scalar(.double(Double.fromDatabaseValue(fragment.arguments[0]) ?? 0))
            guard case .success(let value) = ValueCoercion.coerce(literal, to: attribute.type) else { return nil }
            return ("?", [store(value, attribute)])
        default: return nil
        }
    }

    /// One compiled relationship mapping: the destination column and the scalar subquery giving
    /// the related object's primary key for source row `s`.
    struct CompiledRelationship {
        var column: String
        var value: String
        var arguments: [DatabaseValue]
        /// The entity mapping that creates the related objects.
        var target: Int
    }

    /// Each relationship mapping of a mapping as SQL, or nil when any of them needs the interpreter.
    func compiledRelationshipValues(_ index: Int) -> [CompiledRelationship]? {
        let entityMapping = mapping.entityMappings[index]
        guard followsIdentityRule(index), entityMapping.type == .transform, entityMapping.sourceExpression == nil,
              let sourceName = entityMapping.source, let destinationName = entityMapping.destination,
              let destinationEntity = destinationSchema.entity(named: destinationName), let sourceEntity = sourceStore.schema.entity(named: sourceName),
              let sourceStorage = sourceStore.layout.entities[sourceName], let destinationStorage = destinationStore?.layout.entities[destinationName] else { return nil }
        var result: [CompiledRelationship] = []
        for propertyMapping in entityMapping.relationships {
            guard case .relationship(let relationship)? = destinationSchema.property(named: propertyMapping.name, in: destinationEntity), !relationship.isToMany,
                  case .foreignKey(let column, _, nil)? = destinationStorage.relationships[relationship.name] else { return nil }
            if let inverse = destinationSchema.inverse(of: relationship), !inverse.isToMany { return nil }
            guard case .method(let receiver, let selector, _, let arguments) = propertyMapping.expression.expression.kind,
                  case .variable("manager") = receiver.kind, selector == MethodSelector.destinationInstancesForEntityMapping.rawValue,
                  arguments.count == 2, case .literal(.string(let targetName)) = arguments[0].kind,
                  let target = mapping.entityMappings.firstIndex(where: { $0.name == targetName }), followsIdentityRule(target),
                  let targetDestination = mapping.entityMappings[target].destination, let targetStorage = destinationStore?.layout.entities[targetDestination],
                  let relationshipDestination = destinationSchema.entity(named: relationship.destination),
                  destinationSchema.hierarchy(under: relationshipDestination).contains(where: { $0.name == targetDestination }) else { return nil }
            // The source id the target mapping read: the row's own, or a to-one related object's.
            let relatedID: String
            switch arguments[1].kind {
            case .variable("source"), .evaluatedObject:
                guard mapping.entityMappings[target].source == sourceName else { return nil }
                relatedID = "s.\(sourceStorage.idColumn.quotedDatabaseIdentifier)"
            case .keyPath(let root, let components):
                guard components.count == 1, case .key(let key, _) = components[0], root.kind == .variable("source") || root.kind == .evaluatedObject,
                      case .relationship(let sourceRelationship)? = sourceStore.schema.property(named: key, in: sourceEntity), !sourceRelationship.isToMany,
                      mapping.entityMappings[target].source == sourceRelationship.destination,
                      case .foreignKey(let sourceColumn, let relatedTable, _)? = sourceStorage.relationships[key] else { return nil }
                relatedID = "(SELECT r.\(sourceStorage.idColumn.quotedDatabaseIdentifier) FROM \(sourceTable(relatedTable)) AS r WHERE r.\(sourceStorage.primaryKey.quotedDatabaseIdentifier) = s.\(sourceColumn.quotedDatabaseIdentifier))"
            default:
                return nil
            }
            let discriminators = targetStorage.discriminators.map { "'\($0.replacingOccurrences(of: "'", with: "''"))'" }.joined(separator: ", ")
            let value = "(SELECT m.\(targetStorage.primaryKey.quotedDatabaseIdentifier) FROM main.\(targetStorage.table.quotedDatabaseIdentifier) AS m WHERE m.\(targetStorage.idColumn.quotedDatabaseIdentifier) = \(relatedID) || ? AND m.\(targetStorage.entityColumn.quotedDatabaseIdentifier) IN (\(discriminators)))"
            result.append(CompiledRelationship(column: column, value: value, arguments: [identitySuffix(target).databaseValue], target: target))
        }
        return result
    }

    /// The `UPDATE … FROM` statements setting a mapping's relationships, or nil when any of them
    /// needs the interpreter.
    func compiledRelationships(_ index: Int) -> [(sql: String, arguments: StatementArguments)]? {
        let entityMapping = mapping.entityMappings[index]
        guard !entityMapping.relationships.isEmpty, let values = compiledRelationshipValues(index), let sourceName = entityMapping.source,
              let sourceStorage = sourceStore.layout.entities[sourceName], let destinationName = entityMapping.destination,
              let destinationStorage = destinationStore?.layout.entities[destinationName] else { return nil }
        return values.map { value in
            let sql = """
            UPDATE main.\(destinationStorage.table.quotedDatabaseIdentifier) AS d SET \(value.column.quotedDatabaseIdentifier) = \(value.value) \
            FROM \(sourceTable(sourceStorage.table)) AS s \
            WHERE s.\(sourceStorage.entityColumn.quotedDatabaseIdentifier) = ? AND d.\(destinationStorage.idColumn.quotedDatabaseIdentifier) = s.\(sourceStorage.idColumn.quotedDatabaseIdentifier) || ?
            """
            return (sql, StatementArguments(value.arguments + [sourceName.databaseValue, identitySuffix(index).databaseValue]))
        }
    }
}
