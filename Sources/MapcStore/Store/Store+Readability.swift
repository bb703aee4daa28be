internal import GRDB
import MapcModel

extension Store {
    /// Whether any object of exactly `entity` holds a value reading refuses (`StoreValidator.readingRules`:
    /// another storage class, a value the format cannot decode, an integer outside its type) in
    /// one of `attributes`. The compiled path asks it of what it reads before it runs: SQL would
    /// copy such a value into another type, where it may be valid, decide a filter on it, or pass
    /// over one on an object a filter leaves out, where the interpreter refuses it, naming the object.
    package func holdsValuesReadingRefuses(ofExactEntity entity: String, in attributes: [String]) throws -> Bool {
        guard let storage = layout.entities[entity], let entityModel = schema.entity(named: entity), !attributes.isEmpty else { return false }
        let declared = Dictionary(schema.allAttributes(of: entityModel).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var conditions: [String] = [], arguments: [DatabaseValue] = [storage.discriminator]
        for name in Set(attributes).sorted() {
            guard let attribute = declared[name], let column = storage.attributeColumns[name] else { continue }
            let rules = StoreValidator.readingRules(of: "s.\(column.quotedSQLIdentifier)", type: attribute.type, strategy: strategy)
            for rule in [rules.type] + rules.others {
                conditions.append(rule.condition)
                arguments += rule.arguments
            }
        }
        guard !conditions.isEmpty else { return false }
        let sql = "SELECT 1 FROM \(storage.table.quotedSQLIdentifier) AS s WHERE s.\(storage.entityColumn.quotedSQLIdentifier) = ? AND (\(conditions.joined(separator: " OR "))) LIMIT 1"
        return try reading { db in
            db.add(function: strategy.decodesFunction())
            return try Int64.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)) != nil
        }
    }
}
