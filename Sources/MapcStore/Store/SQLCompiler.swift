package import GRDB
import MapcModel

/// A piece of SQL with its bound arguments.
package struct SQLFragment: Sendable {
    /// The SQL text, with `?` placeholders.
    package var sql: String
    /// The arguments for the placeholders, in order.
    package var arguments: [DatabaseValue]
    /// The value's static type.
    package var type: ExprType
    /// For a key path to a stored attribute: that attribute's type (for copying values as stored).
    package var attributeType: AttributeType?
    /// For a key path to a stored attribute: whether it allows external storage (in Core Data's
    /// stores, a stored form of its own: `CoreDataExternalValue`).
    package var allowsExternalStorage = false
    /// The stored attributes the SQL reads, by name: what the interpreter would read and decode
    /// (and refuse, for a value its type cannot hold), so the compiled path checks them
    /// (`Store.holdsValuesReadingRefuses`).
    package var reads: [String] = []

    package init(sql: String, arguments: [DatabaseValue], type: ExprType, attributeType: AttributeType? = nil, reads: [String] = []) {
        self.sql = sql
        self.arguments = arguments
        self.type = type
        self.attributeType = attributeType
        self.reads = reads
    }
}

/// Compiles the part of the expression language that SQLite evaluates with exactly mapc's
/// semantics into SQL over one source row, so simple mappings run as `INSERT … SELECT`.
///
/// Compiled: literals (nil, booleans, integers, doubles), key paths to stored attributes of the
/// row's own entity (`title`, `$source.title`, `SELF.title`), nil tests on any attribute (`image
/// != nil`), comparisons of numbers and of dates, `AND`, `OR`, `NOT`, `TRUEPREDICATE` and
/// `FALSEPREDICATE`. Everything else (strings compared, arithmetic, functions, relationships) is
/// left to the interpreter: `compile` returns nil and the caller evaluates row by row. Comparisons
/// compile to 0 or 1, never NULL, so `NOT` agrees with mapc's two-valued logic; a mapping's filter
/// keeps SQL's NULL, as Core Data's fetch of the source objects does (`storePredicate`).
package struct SQLCompiler {
    /// The schema of the rows.
    let schema: Schema
    /// Where the row's columns are.
    let storage: EntityStorage
    /// The rows' entity.
    let entity: Entity
    /// The SQL alias of the row's table.
    let alias: String

    /// Creates a compiler for rows of `entity` read as `alias`.
    package init(schema: Schema, storage: EntityStorage, entity: Entity, alias: String) {
        self.schema = schema
        self.storage = storage
        self.entity = entity
        self.alias = alias
    }

    /// A value expression as SQL, or nil when it is outside the compiled subset.
    package func value(_ expression: Expr) -> SQLFragment? {
        switch expression.kind {
        case .literal(let value):
            switch value {
            case .null: return SQLFragment(sql: "NULL", arguments: [], type: .null)
            case .bool(let flag): return SQLFragment(sql: flag ? "1" : "0", arguments: [], type: .bool)
            case .integer(let n): return SQLFragment(sql: "?", arguments: [n.databaseValue], type: .integer)
            case .double(let d): return SQLFragment(sql: "?", arguments: [d.databaseValue], type: .double)
            default: return nil
            }
        case .keyPath(let root, let components):
            guard components.count == 1, case .key(let name, _) = components[0] else { return nil }
            switch root.kind {
            case .evaluatedObject: break
            case .variable("source"): break
            default: return nil
            }
            guard case .attribute(let attribute)? = schema.property(named: name, in: entity), !attribute.isTransient,
                  let column = storage.attributeColumns[name] else { return nil }
            var fragment = SQLFragment(sql: "\(alias).\(column.quotedSQLIdentifier)", arguments: [], type: ExprType(attribute.type), attributeType: attribute.type, reads: [name])
            fragment.allowsExternalStorage = attribute.allowsExternalStorage
            return fragment
        default:
            return predicate(expression)
        }
    }

    /// A predicate as SQL giving 0 or 1, or nil when it is outside the compiled subset.
    package func predicate(_ expression: Expr) -> SQLFragment? {
        predicate(expression, threeValued: false)
    }

    /// A source fetch's predicate (a mapping's filter) as SQL giving 0 or 1, with SQL's NULL in
    /// its comparisons as Core Data's fetch has it (`Evaluator.evaluateStorePredicate`): a
    /// comparison with a nil value is unknown, and so is its `NOT`; unknown does not hold.
    package func storePredicate(_ expression: Expr) -> SQLFragment? {
        predicate(expression, threeValued: true).map { SQLFragment(sql: "COALESCE(\($0.sql), 0)", arguments: $0.arguments, type: .bool, reads: $0.reads) }
    }

    /// A predicate as SQL: two-valued (0 or 1, never NULL, so `NOT` agrees with mapc's
    /// two-valued logic), or with SQL's NULL kept in comparisons of values (`threeValued`).
    private func predicate(_ expression: Expr, threeValued: Bool) -> SQLFragment? {
        switch expression.kind {
        case .constantPredicate(let flag):
            return SQLFragment(sql: flag ? "1" : "0", arguments: [], type: .bool)
        case .literal(.bool(let flag)):
            return SQLFragment(sql: flag ? "1" : "0", arguments: [], type: .bool)
        case .not(let operand):
            guard let inner = predicate(operand, threeValued: threeValued) else { return nil }
            return SQLFragment(sql: "(NOT \(inner.sql))", arguments: inner.arguments, type: .bool, reads: inner.reads)
        case .and(let left, let right), .or(let left, let right):
            guard let a = predicate(left, threeValued: threeValued), let b = predicate(right, threeValued: threeValued) else { return nil }
            let op: String
            if case .and = expression.kind { op = "AND" } else { op = "OR" }
            return SQLFragment(sql: "(\(a.sql) \(op) \(b.sql))", arguments: a.arguments + b.arguments, type: .bool, reads: a.reads + b.reads)
        case .comparison(let op, nil, let options, let left, let right) where options.isEmpty:
            guard let a = value(left), let b = value(right) else { return nil }
            if a.type == .null || b.type == .null {
                // x == nil holds when the value is missing or nil.
                guard op == .equal || op == .notEqual else {
                    // Two nils are ordered alike in mapc's two-valued logic (NSPredicate's `<=`).
                    if !threeValued, op == .lessOrEqual || op == .greaterOrEqual {
                        let other = a.type == .null ? b : a
                        if other.type == .null { return SQLFragment(sql: "1", arguments: [], type: .bool) }
                        return SQLFragment(sql: "(\(other.sql) IS NULL)", arguments: other.arguments, type: .bool, reads: other.reads)
                    }
                    // SQL's: an order with NULL is unknown (three-valued), or false.
                    if [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) { return SQLFragment(sql: threeValued ? "NULL" : "0", arguments: [], type: .bool) }
                    return nil
                }
                let other = a.type == .null ? b : a
                if other.type == .null { return SQLFragment(sql: op == .equal ? "1" : "0", arguments: [], type: .bool) }
                return SQLFragment(sql: "(\(other.sql) IS \(op == .equal ? "" : "NOT ")NULL)", arguments: other.arguments, type: .bool, reads: other.reads)
            }
            // Numbers with numbers (SQLite compares integers and reals by value), dates with dates (stored as seconds).
            let numeric: (ExprType) -> Bool = { $0 == .integer || $0 == .double || $0 == .bool }
            guard (numeric(a.type) && numeric(b.type)) || (a.type == .date && b.type == .date) else { return nil }
            let sqlOp: String
            switch op {
            case .equal: sqlOp = threeValued ? "=" : "IS"
            case .notEqual: sqlOp = threeValued ? "<>" : "IS NOT"
            case .less: sqlOp = "<"
            case .lessOrEqual: sqlOp = "<="
            case .greater: sqlOp = ">"
            case .greaterOrEqual: sqlOp = ">="
            default: return nil
            }
            // IS / IS NOT never give NULL; ordering with NULL is false in mapc, so COALESCE to 0
            // (three-valued, NULL stays unknown), but for `<=` and `>=` of two nils, which hold
            // (NSPredicate's answer, the interpreter's).
            if !threeValued, op == .lessOrEqual || op == .greaterOrEqual {
                return SQLFragment(sql: "COALESCE(\(a.sql) \(sqlOp) \(b.sql), \(a.sql) IS NULL AND \(b.sql) IS NULL)",
                                   arguments: a.arguments + b.arguments + a.arguments + b.arguments, type: .bool, reads: a.reads + b.reads)
            }
            let sql = threeValued || sqlOp.hasPrefix("IS") ? "(\(a.sql) \(sqlOp) \(b.sql))" : "COALESCE(\(a.sql) \(sqlOp) \(b.sql), 0)"
            return SQLFragment(sql: sql, arguments: a.arguments + b.arguments, type: .bool, reads: a.reads + b.reads)
        default:
            return nil
        }
    }
}
