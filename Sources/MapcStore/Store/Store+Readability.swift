package import GRDB
import MapcModel

extension Store {
    /// Whether any object of exactly `entity` holds a value reading refuses (`StoreValidator.readingRules`:
    /// another storage class, a value the format cannot decode, an integer outside its type) in
    /// the attributes `everywhere` (what a filter reads, on every object) or, on the objects
    /// `filter` keeps (`s` is the row's alias in its SQL), in `whereKept`. The compiled path asks
    /// it of what it reads before it runs: SQL would copy such a value into another type, where
    /// it may be valid, or decide a filter on it, where the interpreter refuses it, naming the object.
    package func holdsValuesReadingRefuses(ofExactEntity entity: String, everywhere: [String], whereKept: [String], filter: SQLFragment?) throws -> Bool {
        guard let storage = layout.entities[entity], let entityModel = schema.entity(named: entity), !(everywhere.isEmpty && whereKept.isEmpty) else { return false }
        let attributes = Dictionary(schema.allAttributes(of: entityModel).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func refused(_ names: [String]) -> (sql: String, arguments: [DatabaseValue])? {
            var conditions: [String] = [], arguments: [DatabaseValue] = []
            for name in Set(names).sorted() {
                guard let attribute = attributes[name], let column = storage.attributeColumns[name] else { continue }
                let rules = StoreValidator.readingRules(of: "s.\(column.quotedSQLIdentifier)", type: attribute.type, strategy: strategy)
                for rule in [rules.type] + rules.others {
                    conditions.append(rule.condition)
                    arguments += rule.arguments
                }
            }
            return conditions.isEmpty ? nil : ("(" + conditions.joined(separator: " OR ") + ")", arguments)
        }
        var tests: [String] = [], arguments: [DatabaseValue] = []
        if let anywhere = refused(everywhere) {
            tests.append(anywhere.sql)
            arguments += anywhere.arguments
        }
        if let kept = refused(whereKept) {
            tests.append(filter.map { "(\($0.sql) AND \(kept.sql))" } ?? kept.sql)
            arguments += (filter?.arguments ?? []) + kept.arguments
        }
        guard !tests.isEmpty else { return false }
        let sql = "SELECT 1 FROM \(storage.table.quotedSQLIdentifier) AS s WHERE s.\(storage.entityColumn.quotedSQLIdentifier) = ? AND (\(tests.joined(separator: " OR "))) LIMIT 1"
        return try reading { db in
            db.add(function: strategy.decodesFunction())
            return try Int64.fetchOne(db, sql: sql, arguments: StatementArguments([storage.discriminator] + arguments)) != nil
        }
    }
}
