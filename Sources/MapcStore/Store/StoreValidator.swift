import Foundation
import MapcFoundation
package import GRDB
import MapcModel

/// Phase 3: checks every object of a store against its schema, in SQL where it can, so it
/// streams over stores of any size: required values, stored types, integer ranges, min/max,
/// lengths, regular expressions, required and counted relationships, dangling references,
/// one-to-one inverse agreement and uniqueness constraints.
package struct StoreValidator {
    let store: Store
    let db: Database

    /// A validator of `store` on its connection `db` (inside the caller's transaction).
    package init(store: Store, db: Database) {
        self.store = store
        self.db = db
    }
    /// Violations reported in full: the first few of each broken rule, for the first rules found
    /// (so a report shows every kind of breach, not twenty of the first); the rest are counted.
    static let examplesPerRule = 3
    static let rulesShown = 20

    private var schema: Schema { store.schema }

    /// What a validation found: the violations kept, how many there are in all, and the number of
    /// objects of each concrete entity (counted by the same scans).
    package struct Findings {
        package var violations: [ValidationViolation] = []
        package var total = 0
        package var objectCounts: [String: Int] = [:]
    }

    /// The rule a to-one key naming no object of its destination breaks (a reader finds nothing
    /// there: `dump` writes it as nil, a run leaves it out).
    package static let danglingReferenceRule = "refers to a missing or wrong-entity object"

    /// The entities whose objects `validate` checks one by one: the concrete ones.
    package var checkedEntities: [Entity] { schema.entities.filter { !$0.isAbstract } }

    /// Checks every rule; `checked` is told how many of `checkedEntities` are done after each.
    /// `madeIdentities`: the tables holding ids the caller made rather than copied (a migration's
    /// `id.MappingName`, a policy's own), held to the rule a table's unique index cannot hold:
    /// an id is not empty, and no object of another table has it (ids are unique in a store).
    package func validate(mappingOf: (String, String) throws -> String?, madeIdentities: Set<String> = [], checked: (Int) -> Void = { _ in }) throws -> Findings {
        db.add(function: store.strategy.decodesFunction())
        db.add(function: store.strategy.compareFunction())
        var findings = Findings()
        var entitiesChecked = 0
        // Per rule shown (entity, property, rule): how many objects break it, and its examples kept.
        var brokenBy: [[String?]: (count: Int, examples: Int)] = [:]
        func record(_ entity: String, _ id: String, _ property: String?, _ value: String, _ rule: String) throws {
            findings.total += 1
            let key = ValidationViolation.ruleKey(entity, property, rule)
            let seen = brokenBy[key] ?? (0, 0)
            // A rule not shown yet, once as many as are shown are: only counted in the total.
            guard seen.count > 0 || brokenBy.count < Self.rulesShown else { return }
            let kept = seen.examples < Self.examplesPerRule
            brokenBy[key] = (seen.count + 1, seen.examples + (kept ? 1 : 0))
            if kept {
                findings.violations.append(ValidationViolation(mapping: try mappingOf(entity, id), entity: entity, object: id, property: property, value: value, rule: rule))
            }
        }
        for entity in checkedEntities {
            let storage = try store.layout.storage(of: entity.name)
            let table = storage.table.quotedSQLIdentifier
            // The identity shown: the stored one, or the key (made into an identity by the format).
            let id = storage.idColumn?.quotedSQLIdentifier ?? storage.primaryKey.quotedSQLIdentifier
            func identity(_ value: DatabaseValue) -> String {
                if storage.idColumn == nil, let key = Int64.fromDatabaseValue(value) { return store.strategy.objectID(entity: entity.name, key: key, stored: nil) }
                return Self.text(value)
            }
            let kind = storage.entityColumn.quotedSQLIdentifier
            // Every row-level rule of the entity, checked in one scan: each condition gives 0 or 1.
            var rules: [(condition: String, arguments: [DatabaseValue], value: String, property: String, rule: String)] = []
            // What selects the rows to report: the rules, except that a column's required and type
            // rules are one `typeof` test (`typeof(NULL)` is 'null'), evaluated once per row.
            var screens: [(condition: String, arguments: [DatabaseValue])] = []
            var textChecks: [(column: String, attribute: Attribute)] = []
            for attribute in schema.allAttributes(of: entity) where !attribute.isTransient {
                guard let columnName = storage.attributeColumns[attribute.name] else { continue }
                let column = "t.\(columnName.quotedSQLIdentifier)"
                if !attribute.isOptional {
                    rules.append(("\(column) IS NULL", [], column, attribute.name, "required value missing"))
                }
                let reading = Self.readingRules(of: column, type: attribute.type, strategy: store.strategy)
                rules.append((reading.type.condition, reading.type.arguments, column, attribute.name, reading.type.rule))
                screens.append((Self.storageClass(of: column, notIn: (attribute.isOptional ? ["null"] : []) + store.strategy.storageClasses(of: attribute.type)), []))
                let screenedRules = rules.count
                rules += reading.others.map { ($0.condition, $0.arguments, column, attribute.name, $0.rule) }
                let validation = attribute.validation
                // SQLite orders integers, doubles and dates exactly; decimals (text, or a double
                // standing for more digits) are ordered in Swift, in the same order as `load`.
                let exact = attribute.type == .decimal ? store.strategy.exactComparison(of: column, as: attribute.type) : nil
                if let min = validation.min {
                    rules.append((exact.map { "COALESCE(\($0) < 0, 0)" } ?? "COALESCE(\(column) < ?, 0)", [bound(min, attribute)], column, attribute.name, "below min \(min)"))
                }
                if let max = validation.max {
                    rules.append((exact.map { "COALESCE(\($0) > 0, 0)" } ?? "COALESCE(\(column) > ?, 0)", [bound(max, attribute)], column, attribute.name, "above max \(max)"))
                }
                // Lengths (UTF-16 units, `ValueRules.length`) and patterns are checked in Swift, on text values only.
                if validation.regex != nil || validation.minLength != nil || validation.maxLength != nil {
                    textChecks.append((columnName.quotedSQLIdentifier, attribute))
                }
                screens += rules[screenedRules...].map { ($0.condition, $0.arguments) }
            }
            for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                guard let kept = storage.relationships[relationship.name], let destination = schema.entity(named: relationship.destination) else { continue }
                let unscreenedRules = rules.count
                let allowed = store.layout.discriminatorsSQL(of: destination.name)
                let key = "t.\(storage.primaryKey.quotedSQLIdentifier)"
                switch kept {
                case .foreignKey(let columnName, let destinationTable, _):
                    let column = "t.\(columnName.quotedSQLIdentifier)"
                    // A to-one holds one object or none; the report shows the key (or nil).
                    rules += countRules(relationship, count: "\(column) IS NOT NULL", shown: column)
                    rules.append(("(\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(storage.primaryKey.quotedSQLIdentifier) = \(column) AND \(StoreLayout.entityCheck("d.\(kind)", allowed: allowed))))",
                                  [], column, relationship.name, Self.danglingReferenceRule + " (row key shown)"))
                    if let inverse = schema.mutualInverse(of: relationship), !inverse.isToMany,
                       let inverseOwner = schema.ancestry(of: destination).first(where: { $0.relationships.contains { $0.name == inverse.name } }),
                       case .foreignKey(let inverseColumn, _, _)? = store.layout.entities[inverseOwner.name]?.relationships[inverse.name] {
                        // Shown: the object referred to, by its identity (which another object of this entity holds).
                        let target = try store.layout.storage(of: destination.name)
                        let shownTarget = target.idColumn.map { "(SELECT d.\($0.quotedSQLIdentifier) FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(target.primaryKey.quotedSQLIdentifier) = \(column))" }
                            ?? "(\(Store.sqlLiteral(store.strategy.objectID(entity: destination.name, key: 0, stored: nil).dropLast().description.databaseValue)) || \(column))"
                        rules.append(("(\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(storage.primaryKey.quotedSQLIdentifier) = \(column) AND d.\(inverseColumn.quotedSQLIdentifier) IS \(key)))",
                                      [], shownTarget, relationship.name,
                                      "one-to-one inverse '\(inverse.name)' does not point back: the \(destination.name) it refers to does not have this \(entity.name) as its '\(inverse.name)' "
                                      + "(a one-to-one links objects in pairs; where two \(entity.name)s share one \(destination.name), link each \(destination.name) from one \(entity.name), or make '\(inverse.name)' to-many)"))
                    }
                case .inverseForeignKey(let destinationTable, let columnName, _, _):
                    let count = "(SELECT COUNT(*) FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(columnName.quotedSQLIdentifier) = \(key) AND \(StoreLayout.entityCheck("d.\(kind)", allowed: allowed)))"
                    rules += countRules(relationship, count: count)
                case .joinTable(let joinTable, let ownerColumn, _, _, _, _, _):
                    let count = "(SELECT COUNT(*) FROM \(joinTable.quotedSQLIdentifier) j WHERE j.\(ownerColumn.quotedSQLIdentifier) = \(key))"
                    rules += countRules(relationship, count: count)
                }
                screens += rules[unscreenedRules...].map { ($0.condition, $0.arguments) }
            }
            // One scan counts the entity's objects and those that break a rule; a second lists the
            // breaking ones, only when there are some.
            let any = SQLTerms.joined(screens.map { "(\($0.condition))" }, by: "OR")
            let tally = try Row.fetchOne(db, sql: "SELECT count(*), total(\(any)) FROM \(table) t WHERE t.\(kind) = ?",
                                         arguments: StatementArguments(screens.flatMap(\.arguments) + [storage.discriminator]))
            findings.objectCounts[entity.name] = tally.flatMap { Int.fromDatabaseValue($0[0] as DatabaseValue) } ?? 0
            let breaking = tally.flatMap { Double.fromDatabaseValue($0[1] as DatabaseValue) } ?? 0
            if !rules.isEmpty, breaking > 0 {
                // A flag and a value per rule: at most 900 rules a query, within SQLite's 2,000
                // result columns (an entity of 1,500 attributes has as many rules).
                for start in stride(from: 0, to: rules.count, by: 900) {
                    let chunk = rules[start..<min(rules.count, start + 900)]
                    let flags = chunk.map { "(\($0.condition))" }.joined(separator: ", ")
                    let values = chunk.map(\.value).joined(separator: ", ")
                    let breaksOne = chunk.count == rules.count ? any : SQLTerms.joined(chunk.map { "(\($0.condition))" }, by: "OR")
                    let arguments = chunk.flatMap(\.arguments) + [storage.discriminator] + (chunk.count == rules.count ? screens.flatMap(\.arguments) : chunk.flatMap(\.arguments))
                    let sql = "SELECT t.\(id), \(flags), \(values) FROM \(table) t WHERE t.\(kind) = ? AND (\(breaksOne))"
                    let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
                    while let row = try rows.next() {
                        let objectID = identity(row[0] as DatabaseValue)
                        for (offset, rule) in chunk.enumerated() where Int64.fromDatabaseValue(row[1 + offset] as DatabaseValue) == 1 {
                            try record(entity.name, objectID, rule.property, Self.describe(row[1 + chunk.count + offset]), rule.rule)
                        }
                    }
                }
            }
            for (column, attribute) in textChecks {
                // Non-text values are the type rule's to report; only text is matched.
                let statement = try db.makeStatement(sql: "SELECT \(id), \(column) FROM \(table) WHERE \(kind) = ? AND typeof(\(column)) = 'text'")
                let columns = StatementColumns(statement)
                let rows = try Row.fetchCursor(statement, arguments: [storage.discriminator])
                while try rows.next() != nil {
                    let objectID = identity(columns.value(0))
                    // Read whole, as values are (a NUL byte does not end it).
                    let text = try columns.attributeValue(1, as: .string, store.strategy)
                    for broken in AttributeValidator.textViolations(text, attribute.validation) {
                        try record(entity.name, objectID, attribute.name, Self.describe(text), broken)
                    }
                }
            }
            entitiesChecked += 1
            checked(entitiesChecked)
        }
        for entity in schema.entities {
            let storage = try store.layout.storage(of: entity.name)
            let members = storage.discriminatorsSQL
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.compactMap { name -> String? in
                    if let column = storage.attributeColumns[name] { return column.quotedSQLIdentifier }
                    if case .foreignKey(let column, _, _)? = storage.relationships[name] { return column.quotedSQLIdentifier }
                    return nil
                }
                guard !columns.isEmpty else { continue }
                // Each group of objects sharing values: the last objects written first (entity and
                // id, newest key first: an object a `load` adds is named before the stored one it
                // repeats, and placed in the data file) and the values. Objects with a nil among them are not held to it (`Entity.constraintApplies(to:)`).
                let applies = columns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
                // The inner query's columns under names of their own (`c0`, …, and `mapc_*`): an
                // attribute named `k` once shadowed the key's alias, and the groups were by key.
                let aliases = columns.indices.map { "c\($0)" }
                // Each value with its kind and bytes: text that is not UTF-8 is shown as its bytes.
                let shown = aliases.map { "\($0), typeof(\($0)), CAST(\($0) AS BLOB)" }.joined(separator: ", ")
                let keyed = "\(storage.primaryKey.quotedSQLIdentifier) AS mapc_k, \(storage.entityColumn.quotedSQLIdentifier) AS mapc_e, \(storage.idColumn?.quotedSQLIdentifier ?? "NULL") AS mapc_i, "
                    + zip(columns, aliases).map { "\($0) AS \($1)" }.joined(separator: ", ")
                let sql = """
                    SELECT json_group_array(json_array(mapc_e, mapc_i, mapc_k)), COUNT(*), \(shown) \
                    FROM (SELECT \(keyed) FROM \(storage.table.quotedSQLIdentifier) WHERE \(storage.entityColumn.quotedSQLIdentifier) IN (\(members)) AND \(applies) ORDER BY 1 DESC) \
                    GROUP BY \(aliases.joined(separator: ", ")) HAVING COUNT(*) > 1
                    """
                let rows = try Row.fetchCursor(db, sql: sql)
                while let row = try rows.next() {
                    let count = Int64.fromDatabaseValue(row[1] as DatabaseValue) ?? 0
                    let holders = objects(inJSON: row[0] as DatabaseValue, table: storage.table)
                    let values = zip(constraint, (0..<columns.count).map { Self.describe(stored: row, at: 2 + 3 * $0) }).map { "\($0) \($1)" }.joined(separator: ", ")
                    let others = holders.dropFirst().prefix(3).map { "\($0.entity) '\($0.id)'" }.joined(separator: ", ") + (count > 4 ? " and \(count - 4) more" : "")
                    // The rule is the same for every group of clashing objects; who shares the values is part of the value.
                    try record(holders.first?.entity ?? entity.name, holders.first?.id ?? "?", constraint.joined(separator: ","),
                               "\(values), which \(others) \(count == 2 ? "has" : "have") too",
                               "uniqueness constraint (\(constraint.joined(separator: ", "))) of \(entity.name) broken")
                }
            }
        }
        // Whole-object rules (no property: an attribute may be named `id`).
        for clash in try identityProblems(in: madeIdentities) {
            try record(clash.entity, clash.id, nil, clash.value, clash.rule)
        }
        for index in findings.violations.indices {
            let violation = findings.violations[index]
            findings.violations[index].sameRuleCount = brokenBy[violation.ruleKey]?.count ?? 1
        }
        return findings
    }

    /// Empty ids (a few of each table), and ids of `tables` another table's objects have too.
    /// Each probe is an index lookup per object of the table checked.
    private func identityProblems(in tables: Set<String>) throws -> [(entity: String, id: String, value: String, rule: String)] {
        let storages = store.layout.entities.values.filter { $0.idColumn != nil }
        let byTable = Dictionary(storages.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        func entity(_ table: String, _ discriminator: DatabaseValue) -> String {
            storages.first { $0.table == table && $0.discriminator == discriminator }?.entity ?? byTable[table]?.entity ?? table
        }
        var problems: [(entity: String, id: String, value: String, rule: String)] = []
        // An empty id in any table, copied or made: `load` refuses one, and so a dump of the
        // store (the rule `ObjectGraphResolver.emptyIDMessage` says), so a run's validation does.
        for (table, storage) in byTable.sorted(by: { $0.key < $1.key }) {
            guard let idColumn = storage.idColumn?.quotedSQLIdentifier else { continue }
            let kind = storage.entityColumn.quotedSQLIdentifier
            let why = tables.contains(table) ? "a policy's hooks gave it; give each object an id of its own" : "give every object a unique, non-empty id"
            for row in try Row.fetchAll(db, sql: "SELECT \(kind) FROM \(table.quotedSQLIdentifier) WHERE \(idColumn) = '' LIMIT 3") {
                problems.append((entity(table, row[0] as DatabaseValue), "", "\"\"", "its id is empty, where an id is a non-empty string (\(why))"))
            }
        }
        for table in tables.sorted() {
            guard let storage = byTable[table], let idColumn = storage.idColumn?.quotedSQLIdentifier else { continue }
            let kind = storage.entityColumn.quotedSQLIdentifier
            // Each pair of tables once: two made ones are joined from the first.
            for (otherTable, other) in byTable.sorted(by: { $0.key < $1.key }) where otherTable != table && !(tables.contains(otherTable) && otherTable < table) {
                guard let otherID = other.idColumn?.quotedSQLIdentifier else { continue }
                let sql = "SELECT a.\(idColumn), a.\(kind), b.\(other.entityColumn.quotedSQLIdentifier) FROM \(table.quotedSQLIdentifier) a "
                    + "JOIN \(otherTable.quotedSQLIdentifier) b ON b.\(otherID) = a.\(idColumn) LIMIT 3"
                for row in try Row.fetchAll(db, sql: sql) {
                    let id = Self.text(row[0] as DatabaseValue)
                    let holder = entity(otherTable, row[2] as DatabaseValue)
                    problems.append((entity(table, row[1] as DatabaseValue), id, "'\(id)', which a \(holder) object has too",
                                     "its id is held by an object of another entity, where ids are unique in a store (a later mapping of an object names its "
                                     + "object '<source id>.<mapping name>': rename that mapping; a policy's hooks: give each object an id of its own)"))
                }
            }
        }
        return problems
    }

    /// The relationship's count rules (`RelationshipCountRule`) over an SQL expression of its
    /// count; a broken one reports `shown` (the count itself by default).
    private func countRules(_ relationship: Relationship, count: String, shown: String? = nil) -> [(condition: String, arguments: [DatabaseValue], value: String, property: String, rule: String)] {
        RelationshipCountRule.rules(of: relationship).map { ($0.condition(count: count), [], shown ?? count, relationship.name, $0.summary) }
    }

    /// A min/max bound as the column stores it: numbers as numbers, dates as seconds; a
    /// decimal attribute's bound as its text, for `mapc_compare`.
    private func bound(_ value: Value, _ attribute: Attribute) -> DatabaseValue {
        if attribute.type == .decimal {
            switch value {
            case .decimal(let decimal): return decimal.description.databaseValue
            case .integer(let integer): return String(integer).databaseValue
            case .double(let double): return "\(double)".databaseValue
            default: break
            }
        }
        return store.strategy.encode(value, as: attribute.type)
    }

    /// What reading refuses of a column's values, as SQL tests (1 when refused; NULL passes):
    /// a value of another storage class than the type's (`type`), and among the others one the
    /// format cannot decode (`readabilityRules`) or an integer outside its type's range. The one
    /// definition validation and the compiled path's check of what it reads share.
    static func readingRules(of column: String, type: AttributeType, strategy: any StoreFormatStrategy)
        -> (type: (condition: String, arguments: [DatabaseValue], rule: String), others: [(condition: String, arguments: [DatabaseValue], rule: String)]) {
        let storageClasses = strategy.storageClasses(of: type)
        let typeRule = ("(\(column) IS NOT NULL AND \(Self.storageClass(of: column, notIn: storageClasses)))", [DatabaseValue](), "value is not of type \(type.rawValue)")
        // Only on values of an allowed class: another is the type rule's to report.
        var others = strategy.readabilityRules(of: column, type: type).map { readable in
            ("(\(Self.storageClass(of: column, notIn: storageClasses)) = 0 AND \(readable.condition))", readable.arguments, readable.rule)
        }
        if let range = type.integerRange, type != .int64 {
            others.append(("COALESCE(\(column) < ? OR \(column) > ?, 0)", [range.lowerBound.databaseValue, range.upperBound.databaseValue], "out of range for \(type.rawValue)"))
        }
        return (typeRule, others)
    }

    /// An SQL test that gives 1 when the column's storage class (`typeof`) is none of `allowed`, 0
    /// otherwise. It is a `CASE` rather than `NOT IN (…)`: SQLite answers an `IN` list of more than
    /// two constants from a temporary index, one lookup per row, and this test runs on every row
    /// of every entity; the `CASE` halved the scan (docs/performance.md).
    static func storageClass(of column: String, notIn allowed: [String]) -> String {
        "CASE typeof(\(column))" + allowed.map { " WHEN \(Store.sqlLiteral($0.databaseValue)) THEN 0" }.joined() + " ELSE 1 END"
    }

    /// A stored identity as text, whatever a damaged store holds there.
    static func text(_ value: DatabaseValue) -> String {
        String.fromDatabaseValue(value) ?? describe(value)
    }

    /// The (entity, identity) of each row of a `json_group_array(json_array(discriminator, id, key))`.
    private func objects(inJSON value: DatabaseValue, table: String) -> [(entity: String, id: String)] {
        guard let text = String.fromDatabaseValue(value), let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]] else { return [] }
        return array.compactMap { triple in
            guard triple.count == 3 else { return nil }
            let discriminator: DatabaseValue = (triple[0] as? String)?.databaseValue ?? (triple[0] as? NSNumber).map { $0.int64Value.databaseValue } ?? .null
            let entity = store.layout.entity(withDiscriminator: discriminator, inTable: table) ?? "\(triple[0])"
            let key = (triple[2] as? NSNumber)?.int64Value ?? 0
            return (entity, store.strategy.objectID(entity: entity, key: key, stored: triple[1] as? String))
        }
    }

    /// Text in a message: its first 60 characters, quoted as a data file writes them (a line
    /// break or a quote escaped, so the message stays on its line).
    static func quoted(_ text: String) -> String {
        JSONValue.string(String(text.prefix(60)) + (text.count > 60 ? "…" : "")).serialized()
    }

    /// A value read from a store, for a report (text cut to 60 characters).
    static func describe(_ value: Value) -> String {
        if case .string(let text) = value { return quoted(text) }
        return value.description
    }

    /// A value selected with its `typeof` and its bytes (`CAST(… AS BLOB)`) after it: text as
    /// `describe(_:)` of the value its bytes read as (so bytes that are not UTF-8 are shown as
    /// bytes, not as the replacement characters SQLite's text gives).
    static func describe(stored row: Row, at index: Int) -> String {
        let value: DatabaseValue = row[index]
        guard String.fromDatabaseValue(row[index + 1] as DatabaseValue) == "text", let bytes = Data.fromDatabaseValue(row[index + 2] as DatabaseValue) else { return describe(value) }
        return bytes.withUnsafeBytes { describe(Value.text(fromStored: $0.bindMemory(to: UInt8.self))) }
    }

    static func describe(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "nil"
        case .int64(let n): return String(n)
        case .double(let d): return "\(d)"
        case .string(let text): return quoted(text)
        case .blob(let data): return "<\(data.count) bytes>"
        }
    }
}

/// One broken rule in a migrated store.
public struct ValidationViolation: Sendable, CustomStringConvertible, Equatable {
    /// The entity mapping that created the object, when known.
    public var mapping: String?
    /// The object's entity.
    public var entity: String
    /// The object's identity.
    public var object: String
    /// The property, or nil for whole-object rules (uniqueness across properties names them in `rule`).
    public var property: String?
    /// The offending value, as text.
    public var value: String
    /// The rule broken, e.g. "required", "max 150".
    public var rule: String
    /// How many objects break the same rule of the same entity and property, this one among them
    /// (a report keeps a few examples of each rule and counts the rest).
    public var sameRuleCount = 1
    /// Whether the store a migration read already broke the rule there: the same object,
    /// property and rule (a store Core Data never checked, after a lightweight migration or a
    /// batch update).
    package var wasInSource = false
    /// What the store a migration read held where it broke the rule in another form: a required
    /// relationship made empty because its key there named no object (the run can only make it nil).
    package var sourceFinding: String?
    /// The source object the object was made from, where it is known by another identity (a
    /// mapping step renumbers a Core Data store's objects): the one to look at in the store.
    /// "" when that is not known and the identity is only the migrated store's.
    package var sourceObject: String?

    /// What makes violations "the same rule", for counting them and grouping them in reports.
    static func ruleKey(_ entity: String, _ property: String?, _ rule: String) -> [String?] { [entity, property, rule] }
    package var ruleKey: [String?] { Self.ruleKey(entity, property, rule) }

    public var description: String {
        var text = "\(entity) '\(object)'"
        if let property { text += ", property '\(property)'" }
        // A relationship's count is its value: none to show for an empty one, a count for the others.
        if let count = RelationshipCountRule.rule(summarized: rule) {
            text += ": \(rule)" + (count.shown(count: value).map { " (\($0))" } ?? "")
        } else {
            text += ": \(rule) (value: \(English.abbreviated(value)))"
        }
        if let mapping {
            let origin = sourceObject.map { $0.isEmpty ? "; the id is the migrated store's, which numbered its objects anew" : " from source object \($0)" } ?? ""
            text += " [created by mapping '\(mapping)'\(origin)]"
        }
        if wasInSource {
            text += sourceFinding.map { " (so in the store before this run: \($0), which a migration can only make nil; repair the key, or delete the object)" } ?? " (so in the store before this run)"
        }
        return text
    }

    /// `violations`, each marked `wasInSource` where `before` (what the store the migration read
    /// breaks) has the same object, property and rule.
    package static func marking(_ violations: [ValidationViolation], before: [ValidationViolation]) -> [ValidationViolation] {
        let known = Set(before.map { [$0.entity, $0.object, $0.property ?? "", $0.rule] })
        // A required relationship left empty where the store held a key naming no object.
        var dangling: [[String]: String] = [:]
        for finding in before where finding.rule.hasPrefix(StoreValidator.danglingReferenceRule) {
            dangling[[finding.entity, finding.object, finding.property ?? ""]] = "its key \(finding.value) there \(StoreValidator.danglingReferenceRule)"
        }
        return violations.map { violation in
            var marked = violation
            marked.wasInSource = known.contains([violation.entity, violation.object, violation.property ?? "", violation.rule])
            if !marked.wasInSource, RelationshipCountRule.rule(summarized: violation.rule) == .required,
               let finding = dangling[[violation.entity, violation.object, violation.property ?? ""]] {
                marked.wasInSource = true
                marked.sourceFinding = finding
            }
            return marked
        }
    }
}
