import Foundation
import GRDB

/// Phase 3: checks every object of a store against its schema, in SQL where it can, so it
/// streams over stores of any size: required values, stored types, integer ranges, min/max,
/// lengths, regular expressions, required and counted relationships, dangling references,
/// one-to-one inverse agreement and uniqueness constraints.
struct StoreValidator {
    let store: Store
    let db: Database
    /// Violations reported in full; the rest are counted.
    static let kept = 20

    private var schema: Schema { store.schema }

    func validate(mappingOf: (String, String) throws -> String?) throws -> ([ValidationViolation], Int) {
        var violations: [ValidationViolation] = []
        var total = 0
        func record(_ entity: String, _ id: String, _ property: String?, _ value: String, _ rule: String) throws {
            total += 1
            if violations.count < Self.kept {
                violations.append(ValidationViolation(mapping: try mappingOf(entity, id), entity: entity, object: id, property: property, value: value, rule: rule))
            }
        }
        /// Runs a query returning (id, value) rows of violations; counts all, keeps the first.
        func check(_ sql: String, _ arguments: StatementArguments, entity: String, property: String?, rule: String) throws {
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                let value: DatabaseValue = row.count > 1 ? row[1] : .null
                try record(entity, row[0], property, Self.describe(value), rule)
            }
        }

        for entity in schema.entities where !entity.isAbstract {
            let storage = try store.layout.storage(of: entity.name)
            let table = storage.table.quotedDatabaseIdentifier
            let id = storage.idColumn.quotedDatabaseIdentifier
            let kind = storage.entityColumn.quotedDatabaseIdentifier
            let own: StatementArguments = [entity.name]
            for attribute in schema.allAttributes(of: entity) where !attribute.isTransient {
                guard let columnName = storage.attributeColumns[attribute.name] else { continue }
                let column = columnName.quotedDatabaseIdentifier
                if !attribute.isOptional {
                    try check("SELECT \(id) FROM \(table) WHERE \(kind) = ? AND \(column) IS NULL", own, entity: entity.name, property: attribute.name, rule: "required value missing")
                }
                let storageClasses: String
                switch MapcLayout.sqlType(of: attribute.type) {
                case "INTEGER": storageClasses = "'integer'"
                case "REAL": storageClasses = "'real', 'integer'"
                case "TEXT": storageClasses = "'text'"
                default: storageClasses = "'blob'"
                }
                try check("SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND \(column) IS NOT NULL AND typeof(\(column)) NOT IN (\(storageClasses))",
                          own, entity: entity.name, property: attribute.name, rule: "value is not of type \(attribute.type.rawValue)")
                if let range = attribute.type.integerRange, attribute.type != .int64 {
                    try check("SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND (\(column) < ? OR \(column) > ?)",
                              [entity.name, range.lowerBound, range.upperBound], entity: entity.name, property: attribute.name, rule: "out of range for \(attribute.type.rawValue)")
                }
                let rules = attribute.validation
                let numeric = attribute.type == .decimal ? "CAST(\(column) AS REAL)" : column
                if let min = rules.min {
                    try check("SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND \(numeric) < ?", [entity.name, store.strategy.encode(min, as: attribute.type == .decimal ? .double : attribute.type).storageValue(for: min)],
                              entity: entity.name, property: attribute.name, rule: "below min \(min)")
                }
                if let max = rules.max {
                    try check("SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND \(numeric) > ?", [entity.name, store.strategy.encode(max, as: attribute.type == .decimal ? .double : attribute.type).storageValue(for: max)],
                              entity: entity.name, property: attribute.name, rule: "above max \(max)")
                }
                if let min = rules.minLength {
                    try check("SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND length(\(column)) < ?", [entity.name, min], entity: entity.name, property: attribute.name, rule: "shorter than minLength \(min)")
                }
                if let max = rules.maxLength {
                    try check("SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND length(\(column)) > ?", [entity.name, max], entity: entity.name, property: attribute.name, rule: "longer than maxLength \(max)")
                }
                if let pattern = rules.regex {
                    let rows = try Row.fetchCursor(db, sql: "SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND \(column) IS NOT NULL", arguments: own)
                    while let row = try rows.next() {
                        let text: String = row[1]
                        if !AttributeValidator.matchesWhole(text, pattern) {
                            try record(entity.name, row[0], attribute.name, "\"\(text.prefix(60))\"", "does not match regex '\(pattern)'")
                        }
                    }
                }
            }
            for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                guard let kept = storage.relationships[relationship.name], let destination = schema.entity(named: relationship.destination) else { continue }
                let allowed = schema.hierarchy(under: destination).map { "'\($0.name.replacingOccurrences(of: "'", with: "''"))'" }.joined(separator: ", ")
                switch kept {
                case .foreignKey(let columnName, let destinationTable, _):
                    let column = columnName.quotedDatabaseIdentifier
                    if !relationship.isOptional {
                        try check("SELECT \(id) FROM \(table) WHERE \(kind) = ? AND \(column) IS NULL", own, entity: entity.name, property: relationship.name, rule: "required relationship empty")
                    }
                    try check("SELECT t.\(id), t.\(column) FROM \(table) t WHERE t.\(kind) = ? AND t.\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(destinationTable.quotedDatabaseIdentifier) d WHERE d.\(storage.primaryKey.quotedDatabaseIdentifier) = t.\(column) AND d.\(kind) IN (\(allowed)))",
                              own, entity: entity.name, property: relationship.name, rule: "refers to a missing or wrong-entity object (row key shown)")
                    if let inverse = schema.inverse(of: relationship), !inverse.isToMany,
                       let inverseOwner = schema.ancestry(of: destination).first(where: { $0.relationships.contains { $0.name == inverse.name } }),
                       case .foreignKey(let inverseColumn, _, _)? = store.layout.entities[inverseOwner.name]?.relationships[inverse.name] {
                        try check("SELECT t.\(id), d.\(id) FROM \(table) t JOIN \(destinationTable.quotedDatabaseIdentifier) d ON d.\(storage.primaryKey.quotedDatabaseIdentifier) = t.\(column) WHERE t.\(kind) = ? AND d.\(inverseColumn.quotedDatabaseIdentifier) IS NOT t.\(storage.primaryKey.quotedDatabaseIdentifier)",
                                  own, entity: entity.name, property: relationship.name, rule: "one-to-one inverse '\(inverse.name)' does not point back")
                    }
                case .inverseForeignKey(let destinationTable, let columnName, _, _):
                    try checkCount(relationship, entity: entity.name, table: table, id: id, kind: kind, storage: storage,
                                   countSQL: "(SELECT COUNT(*) FROM \(destinationTable.quotedDatabaseIdentifier) d WHERE d.\(columnName.quotedDatabaseIdentifier) = t.\(storage.primaryKey.quotedDatabaseIdentifier) AND d.\(kind) IN (\(allowed)))") {
                        try check($0, $1, entity: $2, property: $3, rule: $4)
                    }
                case .joinTable(let joinTable, let ownerColumn, _, _, _):
                    try checkCount(relationship, entity: entity.name, table: table, id: id, kind: kind, storage: storage,
                                   countSQL: "(SELECT COUNT(*) FROM \(joinTable.quotedDatabaseIdentifier) j WHERE j.\(ownerColumn.quotedDatabaseIdentifier) = t.\(storage.primaryKey.quotedDatabaseIdentifier))") {
                        try check($0, $1, entity: $2, property: $3, rule: $4)
                    }
                }
            }
        }
        for entity in schema.entities {
            let storage = try store.layout.storage(of: entity.name)
            let members = schema.hierarchy(under: entity).map { "'\($0.name.replacingOccurrences(of: "'", with: "''"))'" }.joined(separator: ", ")
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.compactMap { name -> String? in
                    if let column = storage.attributeColumns[name] { return column.quotedDatabaseIdentifier }
                    if case .foreignKey(let column, _, _)? = storage.relationships[name] { return column.quotedDatabaseIdentifier }
                    return nil
                }
                guard !columns.isEmpty else { continue }
                let rows = try Row.fetchCursor(db, sql: "SELECT MIN(\(storage.idColumn.quotedDatabaseIdentifier)), COUNT(*) FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(storage.entityColumn.quotedDatabaseIdentifier) IN (\(members)) GROUP BY \(columns.joined(separator: ", ")) HAVING COUNT(*) > 1")
                while let row = try rows.next() {
                    let count: Int = row[1]
                    try record(entity.name, row[0], constraint.joined(separator: ","), "\(count) objects", "uniqueness constraint (\(constraint.joined(separator: ", "))) broken")
                }
            }
        }
        return (violations, total)
    }

    private func checkCount(_ relationship: Relationship, entity: String, table: String, id: String, kind: String, storage: EntityStorage, countSQL: String,
                            _ check: (String, StatementArguments, String, String?, String) throws -> Void) throws {
        var conditions: [(String, String)] = []
        if !relationship.isOptional { conditions.append(("n = 0", "required relationship empty")) }
        let optionalGuard = relationship.isOptional ? "n > 0 AND " : ""
        if let min = relationship.minCount, min > 0 { conditions.append(("\(optionalGuard)n < \(min)", "fewer than minCount \(min)")) }
        if let max = relationship.maxCount, max > 0 { conditions.append(("n > \(max)", "more than maxCount \(max)")) }
        for (condition, rule) in conditions {
            try check("SELECT id, n FROM (SELECT t.\(id) AS id, \(countSQL) AS n FROM \(table) t WHERE t.\(kind) = ?) WHERE \(condition)", [entity], entity, relationship.name, rule)
        }
    }

    static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "nil"
        case .int64(let n): return String(n)
        case .double(let d): return "\(d)"
        case .string(let text): return "\"\(text.prefix(60))\""
        case .blob(let data): return "<\(data.count) bytes>"
        }
    }
}

private extension DatabaseValue {
    /// The bound used in SQL comparisons: numbers as numbers, dates as their stored seconds.
    func storageValue(for value: Value) -> DatabaseValue {
        if case .decimal(let decimal) = value { return NSDecimalNumber(decimal: decimal).doubleValue.databaseValue }
        return self
    }
}
