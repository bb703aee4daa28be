import Foundation
package import GRDB
internal import GRDBSQLite
import MapcFoundation
import MapcModel

/// Row-level writes on one open write connection, with prepared statements cached: inserting
/// objects under keys it hands out and setting relationship links, in any format. The data loader
/// and the migration manager both write through it.
///
/// A writer made with `buffersRows` holds inserted rows back and writes them several per
/// `INSERT` (`rowsPerStatement`), which spares SQLite the work each statement costs (opening
/// its cursors on the table and each index, halting; a quarter of the insert's time, as
/// docs/performance.md measures it). Rows held back must be
/// written before anything else reads or writes the store: every other way into the connection
/// here (`db`, `statement`, `writeStatement`, links, a key query) writes them first, and the
/// owner calls `flush()` before it commits or uses a statement it kept. In debug builds a trace
/// on the connection checks that no other statement runs while rows are held back.
package final class RowWriter {
    package let store: Store
    /// The connection; `db` is the way in for everyone else.
    let connection: Database
    /// The connection, with the rows held back written first.
    package var db: Database {
        get throws {
            try flush()
            return connection
        }
    }
    /// The store's format, held: `Store.strategy` copies it out of the format per call.
    let strategy: any StoreFormatStrategy
    // Prepared statements are kept, but not all of them: one INSERT into a table of many columns
    // (a hierarchy of 1,800 sub-entities shares one of 1,800 columns) is a program SQLite makes
    // for every column, about 150 KB, and a statement per entity held 312 MB for a load of one
    // object of each. Rows come entity by entity, so a bounded cache misses rarely.
    var statements = BoundedCache<String, Statement>(capacity: RowWriter.statementsKept)
    var writeStatements = BoundedCache<String, WriteStatement>(capacity: RowWriter.statementsKept)
    /// Per entity: the prepared INSERT and the stored attributes in its column order.
    var insertPlans = BoundedCache<String, InsertPlan>(capacity: RowWriter.statementsKept)
    /// Per entity and relationships written with the row: the same, with their foreign keys.
    var linkedInsertPlans = BoundedCache<RowLinks, InsertPlan>(capacity: RowWriter.statementsKept)
    /// How many statements of each kind are kept prepared.
    static let statementsKept = 128

    /// How an entity's rows are inserted, with what each row takes from its storage: worked out
    /// once per entity (a copy of the whole `EntityStorage` per row showed in the profile). A
    /// class, so that handing it out per row is one retain.
    package final class InsertPlan {
        let statement: WriteStatement
        /// The table, one row's values in SQL (`?` for each value given, literals for the
        /// discriminator and the format's constant columns), and the columns the values go to.
        let table: String
        let columns: [String]
        let row: String
        let valueColumns: [String]
        /// Where each value column's value stands in SQL (`?`, or `CAST(? AS TEXT)` for text,
        /// which is bound as its bytes): a row is looked for as it was written.
        let valuePlaceholders: [String]
        /// How many rows one statement writes when rows are held back: `RowWriter.rowsPerStatement`,
        /// fewer for a table so wide that they would pass SQLite's limit on parameters.
        let rowsPerStatement: Int
        /// The statement that writes `rowsPerStatement` rows, prepared when first needed.
        var batchStatement: WriteStatement?
        let attributes: [(name: String, type: AttributeType)]
        /// The stored attributes, in the order a row's values are given.
        package let attributeNames: [String]
        /// Whether the format stores the object's identity in a column of its own.
        let keepsIdentity: Bool
        /// The relationships whose foreign keys the row takes, after its attributes.
        let links: [String]

        init(statement: WriteStatement, table: String, columns: [String], row: String, valueColumns: [String], valuePlaceholders: [String], rowsPerStatement: Int,
                         attributes: [(name: String, type: AttributeType)], keepsIdentity: Bool, links: [String]) {
            self.statement = statement
            self.table = table
            self.columns = columns
            self.row = row
            self.valueColumns = valueColumns
            self.valuePlaceholders = valuePlaceholders
            self.rowsPerStatement = rowsPerStatement
            self.attributes = attributes
            self.attributeNames = attributes.map(\.name)
            self.keepsIdentity = keepsIdentity
            self.links = links
        }
    }

    /// A value the store's format cannot hold exactly (a decimal with more digits than Core Data's
    /// `DECIMAL` column keeps): a data problem when loading, a mapping's failure when migrating.
    package struct UnstorableValue: Error {
        var entity: String
        var id: String
        package var property: String
        package var problem: String

        var dataProblem: MapcError { .data(["\(entity) '\(id)', property '\(property)': \(problem)"]) }
    }

    /// An entity's to-one relationships written with its rows.
    struct RowLinks: Hashable {
        var entity: String
        var relationships: [String]
    }
    var foreignKeyLinks: [PropertyName: ForeignKeyLink] = [:]
    /// The next key to hand out, per table.
    var nextKeys: [String: Int64] = [:]
    /// Per table, the highest key set aside for objects written under keys of their own.
    var reservedThrough: [String: Int64] = [:]

    /// A writer on `db`; with `buffersRows`, inserts are held back and written several per
    /// statement, and `refusal` says what a row refused by a constraint is to its owner (the
    /// migration names the mapping that made it).
    package init(store: Store, db: Database, buffersRows: Bool = false, refusal: @escaping (RefusedRow) -> any Error = { $0 }) {
        self.store = store
        connection = db
        strategy = store.strategy
        self.buffersRows = buffersRows
        self.refusal = refusal
        #if DEBUG
        if buffersRows { watchStatements() }
        #endif
    }

    /// A cached statement; unless it only touches the migration's scratch schema (`scratch`), the
    /// rows held back are written first.
    package func statement(_ sql: String, scratch: Bool = false) throws -> Statement {
        if !scratch { try flush() }
        if let cached = statements[sql] { return cached }
        let made = try connection.makeStatement(sql: sql)
        if scratch { scratchSQL.insert(made.sql) }
        statements[sql] = made
        return made
    }

    /// A cached statement that writes, run once per object with its values bound directly;
    /// unless it only touches the scratch schema, the rows held back are written first.
    package func writeStatement(_ sql: String, scratch: Bool = false) throws -> WriteStatement {
        if !scratch { try flush() }
        if let cached = writeStatements[sql] { return cached }
        let made = try WriteStatement(connection, sql: sql)
        if scratch { scratchSQL.insert(made.sql) }
        writeStatements[sql] = made
        return made
    }

    /// Hands out `count` consecutive keys in an entity's table, returning the first.
    package func reserveKeys(_ count: Int64, for storage: EntityStorage) throws -> Int64 {
        var first = try nextKeys[storage.table] ?? strategy.firstFreeKey(inTable: storage.table, layout: store.layout, db)
        if let reserved = reservedThrough[storage.table], reserved >= first {
            guard reserved < Int64.max else { throw MapcError.store("every key of table \(storage.table) is used; no object can be added to it") }
            first = reserved + 1
        }
        let (next, overflow) = first.addingReportingOverflow(count)
        guard !overflow else { throw MapcError.store("table \(storage.table) has no \(count) keys left above \(first - 1)") }
        nextKeys[storage.table] = next
        return first
    }

    /// Sets aside every key of a table up to `last`: keys are never handed out there again, so
    /// objects written under keys of their own (`insert(…key:)`, or by SQL) in that range cannot
    /// meet an object written later.
    package func reserve(through last: Int64, in table: String) {
        reservedThrough[table] = max(reservedThrough[table] ?? last, last)
        // Through the last key there is: none is left, which `reserveKeys` says when asked for one.
        if let next = nextKeys[table], next <= last { nextKeys[table] = last == .max ? nil : last + 1 }
    }

    /// Forgets the keys handed out for a table, after rows were inserted there another way (SQL).
    package func rowsInserted(into table: String) {
        nextKeys[table] = nil
    }

    /// Inserts a row for an object with its stored attribute values, under `key` (which the caller
    /// has reserved) or a key handed out now; returns the key.
    func insert(entity: String, id: String, attributes: [String: Value], key chosen: Int64? = nil) throws -> Int64 {
        let plan = try insertPlan(entity)
        return try insert(plan, entity: entity, id: id, values: plan.attributeNames.map { attributes[$0] ?? .null }, key: chosen)
    }

    /// Inserts a row by a plan (`insertPlan(_:linking:)`): the stored attributes' values in the
    /// plan's order (`attributeNames`), and the keys of the objects its linked relationships
    /// point to (nil for none).
    package func insert(_ plan: InsertPlan, entity: String, id: String, values: [Value], key chosen: Int64?, linkedTo targets: [Int64?] = [], origin: String? = nil) throws -> Int64 {
        guard values.count == plan.attributes.count, targets.count == plan.links.count else {
            throw MapcError.data(["\(entity) '\(id)': \(values.count) values and \(targets.count) related objects for a row of \(plan.attributes.count) attributes and \(plan.links.count) relationships"])
        }
        let key = try chosen ?? reserveKeys(1, for: store.layout.storage(of: entity))
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(2 + values.count + targets.count)
        arguments.append(key.databaseValue)
        if plan.keepsIdentity { arguments.append(id.databaseValue) }
        for (attribute, value) in zip(plan.attributes, values) {
            if let problem = strategy.storageProblem(value, as: attribute.type) {
                throw UnstorableValue(entity: entity, id: id, property: attribute.name, problem: problem)
            }
            arguments.append(strategy.encode(value, as: attribute.type))
        }
        for target in targets { arguments.append(target?.databaseValue ?? .null) }
        let row = HeldRow(entity: entity, id: id, values: values, origin: origin)
        guard buffersRows else {
            try write(row, arguments, by: plan)
            return key
        }
        if held?.plan !== plan { try flush() }
        if held == nil { held = HeldRows(plan: plan, capacity: plan.rowsPerStatement * arguments.count) }
        held?.add(row, arguments)
        // Written at a statement's rows, or sooner when they are large (16 rows of megabytes each).
        if let held, held.rows.count >= plan.rowsPerStatement || held.bytes >= Self.heldByteBudget { try flush() }
        return key
    }

    /// Writes one attribute of a row written already (a policy's value set after creation):
    /// refused as `insert` refuses a value the format cannot store.
    package func update(entity: String, id: String, key: Int64, attribute: String, type: AttributeType, value: Value) throws {
        try flush()
        let storage = try store.layout.storage(of: entity)
        guard let column = storage.attributeColumns[attribute] else { throw MapcError.notFound("\(entity) stores no attribute '\(attribute)'") }
        if let problem = strategy.storageProblem(value, as: type) {
            throw UnstorableValue(entity: entity, id: id, property: attribute, problem: problem)
        }
        try writeStatement("UPDATE \(storage.table.quotedSQLIdentifier) SET \(column.quotedSQLIdentifier) = \(strategy.placeholder(for: type)) WHERE \(storage.primaryKey.quotedSQLIdentifier) = ?")
            .execute([strategy.encode(value, as: type), key.databaseValue])
    }

    /// Whether the format stores an entity's objects' identities in a column of their own.
    package func keepsIdentity(of entity: String) throws -> Bool {
        try insertPlan(entity).keepsIdentity
    }

    /// How an entity's rows are inserted, with the foreign keys of `relationships` when given:
    /// each must be a to-one the row alone keeps (`linkColumn`), or this fails.
    package func insertPlan(_ entity: String, linking relationships: [String] = []) throws -> InsertPlan {
        if relationships.isEmpty, let plan = insertPlans[entity] { return plan }
        let links = RowLinks(entity: entity, relationships: relationships)
        if let plan = linkedInsertPlans[links] { return plan }
        let storage = try store.layout.storage(of: entity)
        let schema = store.schema
        guard let description = schema.entity(named: entity) else { throw MapcError.notFound("no entity '\(entity)' in version \(schema.version)") }
        let stored = schema.allAttributes(of: description).filter { !$0.isTransient && storage.attributeColumns[$0.name] != nil }
        let linkColumns = try relationships.map { name in
            guard let column = store.linkColumn(name, of: storage) else { throw MapcError.notFound("relationship '\(entity).\(name)' is not a foreign key its rows keep alone") }
            return column
        }
        let columns = [storage.primaryKey, storage.entityColumn] + (storage.idColumn.map { [$0] } ?? []) + storage.insertedColumns.map(\.name)
            + stored.compactMap { storage.attributeColumns[$0.name] } + linkColumns
        // The same in every row: written in the statement, not bound per row.
        var constants = [storage.entityColumn: Store.sqlLiteral(storage.discriminator)]
        for column in storage.insertedColumns { constants[column.name] = Store.sqlLiteral(column.value) }
        // Text columns take text whose bytes are not UTF-8 bound as a blob (`placeholder(for:)`).
        var placeholders: [String: String] = [:]
        for attribute in stored { if let column = storage.attributeColumns[attribute.name] { placeholders[column] = strategy.placeholder(for: attribute.type) } }
        let row = "(" + columns.map { constants[$0] ?? placeholders[$0] ?? "?" }.joined(separator: ", ") + ")"
        let sql = Self.insertSQL(table: storage.table, columns: columns, row: row, rows: 1)
        // SQLite refuses a statement with more parameters than its limit (32,766 by default).
        let parameterLimit = Int(sqlite3_limit(connection.sqliteConnection, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let valueColumns = columns.filter { constants[$0] == nil }
        let plan = InsertPlan(statement: try WriteStatement(connection, sql: sql), table: storage.table, columns: columns, row: row, valueColumns: valueColumns,
                              valuePlaceholders: valueColumns.map { placeholders[$0] ?? "?" },
                              rowsPerStatement: max(1, min(Self.rowsPerStatement, parameterLimit / max(1, valueColumns.count))),
                              attributes: stored.map { (name: $0.name, type: $0.type) }, keepsIdentity: storage.idColumn != nil, links: relationships)
        if relationships.isEmpty { insertPlans[entity] = plan } else { linkedInsertPlans[links] = plan }
        return plan
    }

    /// `INSERT INTO table (columns) VALUES row, row, …` for `rows` rows.
    static func insertSQL(table: String, columns: [String], row: String, rows: Int) -> String {
        return "INSERT INTO \(table.quotedSQLIdentifier) (\(columns.map(\.quotedSQLIdentifier).joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    // Stored here, used by the rows held back (RowWriter+HeldRows.swift).
    /// Whether inserts are held back and written several per statement.
    let buffersRows: Bool
    /// What a refused row is to the writer's owner.
    let refusal: (RefusedRow) -> any Error
    /// The rows held back: all of one plan, in the order they were inserted.
    var held: HeldRows?
    /// Statements that only touch the migration's scratch schema, which may run while rows are held back.
    var scratchSQL: Set<String> = []
    #if DEBUG
    /// A statement that ran while rows were held back, other than a scratch one.
    var ranWhileHeld: String?
    #endif
}
