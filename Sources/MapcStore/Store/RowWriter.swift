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
    let store: Store
    /// The connection; `db` is the way in for everyone else.
    private let connection: Database
    /// The connection, with the rows held back written first.
    package var db: Database {
        get throws {
            try flush()
            return connection
        }
    }
    /// The store's format, held: `Store.strategy` copies it out of the format per call.
    private let strategy: any StoreFormatStrategy
    private var statements: [String: Statement] = [:]
    private var writeStatements: [String: WriteStatement] = [:]
    /// Per entity: the prepared INSERT and the stored attributes in its column order.
    private var insertPlans: [String: InsertPlan] = [:]
    /// Per entity and relationships written with the row: the same, with their foreign keys.
    private var linkedInsertPlans: [RowLinks: InsertPlan] = [:]

    /// How an entity's rows are inserted, with what each row takes from its storage: worked out
    /// once per entity (a copy of the whole `EntityStorage` per row showed in the profile). A
    /// class, so that handing it out per row is one retain.
    package final class InsertPlan {
        fileprivate let statement: WriteStatement
        /// The table, one row's values in SQL (`?` for each value given, literals for the
        /// discriminator and the format's constant columns), and the columns the values go to.
        fileprivate let table: String
        fileprivate let columns: [String]
        fileprivate let row: String
        fileprivate let valueColumns: [String]
        /// How many rows one statement writes when rows are held back: `RowWriter.rowsPerStatement`,
        /// fewer for a table so wide that they would pass SQLite's limit on parameters.
        fileprivate let rowsPerStatement: Int
        /// The statement that writes `rowsPerStatement` rows, prepared when first needed.
        fileprivate var batchStatement: WriteStatement?
        fileprivate let attributes: [(name: String, type: AttributeType)]
        /// The stored attributes, in the order a row's values are given.
        package let attributeNames: [String]
        /// Whether the format stores the object's identity in a column of its own.
        let keepsIdentity: Bool
        /// The relationships whose foreign keys the row takes, after its attributes.
        let links: [String]

        fileprivate init(statement: WriteStatement, table: String, columns: [String], row: String, valueColumns: [String], rowsPerStatement: Int,
                         attributes: [(name: String, type: AttributeType)], keepsIdentity: Bool, links: [String]) {
            self.statement = statement
            self.table = table
            self.columns = columns
            self.row = row
            self.valueColumns = valueColumns
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
    private struct RowLinks: Hashable {
        var entity: String
        var relationships: [String]
    }
    private var foreignKeyLinks: [PropertyName: ForeignKeyLink] = [:]
    /// The next key to hand out, per table.
    private var nextKeys: [String: Int64] = [:]
    /// Per table, the highest key set aside for objects written under keys of their own.
    private var reservedThrough: [String: Int64] = [:]

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
        if let count = held?.rows.count, count >= plan.rowsPerStatement { try flush() }
        return key
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
                              rowsPerStatement: max(1, min(Self.rowsPerStatement, parameterLimit / max(1, valueColumns.count))),
                              attributes: stored.map { (name: $0.name, type: $0.type) }, keepsIdentity: storage.idColumn != nil, links: relationships)
        if relationships.isEmpty { insertPlans[entity] = plan } else { linkedInsertPlans[links] = plan }
        return plan
    }

    /// `INSERT INTO table (columns) VALUES row, row, …` for `rows` rows.
    private static func insertSQL(table: String, columns: [String], row: String, rows: Int) -> String {
        return "INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    // MARK: Rows held back

    /// How many rows one statement writes when rows are held back: past 16 the gain is small
    /// (docs/performance.md), and more rows hold more values in memory and bind fewer of them
    /// without a copy.
    static let rowsPerStatement = 16

    /// Whether inserts are held back and written several per statement.
    let buffersRows: Bool
    /// What a refused row is to the writer's owner.
    private let refusal: (RefusedRow) -> any Error
    /// The rows held back: all of one plan, in the order they were inserted.
    private var held: HeldRows?

    /// An object as its row was inserted, kept to name it if the row is refused.
    private struct HeldRow {
        var entity: String
        var id: String
        var values: [Value]
        /// Who inserted it (the migration: the mapping's name).
        var origin: String?
    }

    private struct HeldRows {
        let plan: InsertPlan
        var rows: [HeldRow] = []
        /// Every row's statement values, one row after the other.
        var arguments: [DatabaseValue] = []

        init(plan: InsertPlan, capacity: Int) {
            self.plan = plan
            rows.reserveCapacity(plan.rowsPerStatement)
            arguments.reserveCapacity(capacity)
        }

        mutating func add(_ row: HeldRow, _ values: [DatabaseValue]) {
            rows.append(row)
            arguments.append(contentsOf: values)
        }

        /// The statement values of row `index`.
        func arguments(ofRow index: Int) -> ArraySlice<DatabaseValue> {
            let width = arguments.count / rows.count
            return arguments[(index * width)..<((index + 1) * width)]
        }
    }

    /// A row a constraint refused: a uniqueness constraint the layout keeps as a UNIQUE index
    /// (Core Data's), or the identity, which formats that keep one hold unique.
    package struct RefusedRow: Error, CustomStringConvertible {
        package enum Reason {
            /// The problem names the constraint and the object already in the store.
            case uniqueness(DataProblem)
            case identityTaken
        }
        package var entity: String
        package var id: String
        package var origin: String?
        package var reason: Reason

        package var description: String { dataProblem.description }

        /// The refusal as a problem of the data being loaded.
        var dataProblem: DataValidationError {
            switch reason {
            case .uniqueness(let problem): return DataValidationError(problems: [problem], total: 1)
            case .identityTaken: return DataValidationError(problems: [DataProblem(entity: entity, objectID: id, key: "id", message: "another object in the store already has this id")], total: 1)
            }
        }
    }

    /// Writes the rows held back; each row a constraint refuses is named (`refusal`), whichever
    /// row of a statement it was.
    package func flush() throws {
        #if DEBUG
        try checkNothingRanWhileHeld()
        #endif
        guard let batch = held else { return }
        held = nil
        let plan = batch.plan
        guard batch.rows.count == plan.rowsPerStatement, batch.rows.count > 1 else {
            for index in batch.rows.indices { try write(batch.rows[index], Array(batch.arguments(ofRow: index)), by: plan) }
            return
        }
        if plan.batchStatement == nil {
            plan.batchStatement = try WriteStatement(connection, sql: Self.insertSQL(table: plan.table, columns: plan.columns, row: plan.row, rows: batch.rows.count))
        }
        do {
            try plan.batchStatement?.execute(batch.arguments)
        } catch let error as DatabaseError where error.resultCode != .SQLITE_INTERRUPT {
            // Which row failed: SQLite says only what. With a journal, the statement's rows are
            // rolled back; without one (a migration's temporary file), those before the failing
            // row stay. Rows after the ones that stayed are written again one by one, so that the
            // failing one fails alone and is named as it would have been. Should every one pass
            // alone, the statement's own failure stands.
            var index = try rowsStillWritten(batch)
            while index < batch.rows.count {
                try write(batch.rows[index], Array(batch.arguments(ofRow: index)), by: plan)
                index += 1
            }
            throw error
        }
    }

    /// How many of a failed statement's rows, from the first, the store holds as written.
    private func rowsStillWritten(_ batch: HeldRows) throws -> Int {
        let plan = batch.plan
        let conditions = plan.valueColumns.map { "\($0.quotedDatabaseIdentifier) IS ?" }.joined(separator: " AND ")
        let statement = try connection.makeStatement(sql: "SELECT 1 FROM \(plan.table.quotedDatabaseIdentifier) WHERE \(conditions) LIMIT 1")
        var count = 0
        while count < batch.rows.count, try Row.fetchOne(statement, arguments: StatementArguments(Array(batch.arguments(ofRow: count)))) != nil {
            count += 1
        }
        return count
    }

    /// Writes one row by its plan's one-row statement, naming it if a constraint refuses it.
    private func write(_ row: HeldRow, _ arguments: [DatabaseValue], by plan: InsertPlan) throws {
        do {
            try plan.statement.execute(arguments)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            let attributes = Dictionary(zip(plan.attributeNames, row.values), uniquingKeysWith: { first, _ in first })
            if let problem = try store.uniquenessProblem(entity: row.entity, objectID: row.id, values: attributes, connection)?.problems.first {
                throw refusal(RefusedRow(entity: row.entity, id: row.id, origin: row.origin, reason: .uniqueness(problem)))
            }
            guard plan.keepsIdentity else { throw error }
            throw refusal(RefusedRow(entity: row.entity, id: row.id, origin: row.origin, reason: .identityTaken))
        }
    }

    /// Statements that only touch the migration's scratch schema, which may run while rows are held back.
    private var scratchSQL: Set<String> = []

    #if DEBUG
    /// A statement that ran while rows were held back, other than a scratch one.
    private var ranWhileHeld: String?

    /// Records any statement that runs on the connection while rows are held back, so that a
    /// missing `flush()` fails every test that reaches it.
    private func watchStatements() {
        connection.trace(options: .statement) { [weak self] event in
            guard let self, let held = self.held, !held.rows.isEmpty, case .statement(let statement) = event else { return }
            let sql = statement.sql
            if !self.scratchSQL.contains(sql), self.ranWhileHeld == nil { self.ranWhileHeld = sql }
        }
    }

    private func checkNothingRanWhileHeld() throws {
        guard let sql = ranWhileHeld else { return }
        ranWhileHeld = nil
        throw MapcError.store("internal error: '\(sql)' ran while inserted rows were held back")
    }
    #endif

    /// Writes the rows held back and stops watching the connection.
    package func finish() throws {
        try flush()
        #if DEBUG
        if buffersRows { connection.trace(options: .statement, nil) }
        #endif
    }

    /// Links `owner` to `target` through a relationship of `owner`'s entity, where the layout keeps
    /// it. `position` is the target's place in an ordered relationship, `inversePosition` the
    /// owner's place in the inverse's list when that is ordered. One-to-one pairs set both sides.
    package func link(_ relationship: String, of storage: EntityStorage, owner: Int64, target: Int64, position: Int = 0, inversePosition: Int? = nil) throws {
        try flush()
        switch try foreignKeyLink(relationship, of: storage) {
        case .foreignKey(let update, let ordered, let inverse)?:
            // A row the other side already placed in its ordered list keeps its place (SQLite
            // evaluates the CASE against the row's old values).
            try update.execute(ordered ? [target.databaseValue, target.databaseValue, (inversePosition ?? 0).databaseValue, owner.databaseValue]
                                       : [target.databaseValue, owner.databaseValue])
            try inverse?.execute([owner.databaseValue, target.databaseValue])
            return
        case .inverseForeignKey(let update, let ordered)?:
            try update.execute(ordered ? [owner.databaseValue, position.databaseValue, target.databaseValue] : [owner.databaseValue, target.databaseValue])
            return
        case nil:
            break
        }
        guard case .joinTable(let table, let ownerColumn, let otherColumn, let ownerOrder, let otherOrder, _, _)? = storage.relationships[relationship] else {
            throw MapcError.notFound("relationship '\(storage.entity).\(relationship)' is not stored (transient?)")
        }
        // Each side writes the positions it knows; a row the other side wrote keeps its own.
        var columns = [ownerColumn, otherColumn]
        var arguments: [DatabaseValue] = [owner.databaseValue, target.databaseValue]
        var written: [String] = []
        if let ownerOrder { columns.append(ownerOrder); arguments.append(position.databaseValue); written.append(ownerOrder) }
        if let otherOrder, let inversePosition { columns.append(otherOrder); arguments.append(inversePosition.databaseValue); written.append(otherOrder) }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let update = written.map { "\($0.quotedDatabaseIdentifier) = excluded.\($0.quotedDatabaseIdentifier)" }
        let conflict = update.isEmpty ? "ON CONFLICT DO NOTHING" : "ON CONFLICT DO UPDATE SET \(update.joined(separator: ", "))"
        try writeStatement("INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(placeholders)) \(conflict)")
            .execute(arguments)
    }

    /// How a link through a foreign key is written: the statements, prepared once per entity and
    /// relationship rather than spelled out per link. Nil for a join table or a relationship the
    /// layout does not store.
    private func foreignKeyLink(_ relationship: String, of storage: EntityStorage) throws -> ForeignKeyLink? {
        let key = PropertyName(entity: storage.entity, property: relationship)
        if let known = foreignKeyLinks[key] { return known }
        let link: ForeignKeyLink
        let owner = storage.primaryKey.quotedDatabaseIdentifier
        switch storage.relationships[relationship] {
        case .foreignKey(let column, let destinationTable, let orderColumn)?:
            var assignments = "\(column.quotedDatabaseIdentifier) = ?"
            if let orderColumn {
                let order = orderColumn.quotedDatabaseIdentifier
                assignments += ", \(order) = CASE WHEN \(column.quotedDatabaseIdentifier) IS ? THEN \(order) ELSE ? END"
            }
            let inverse = try store.oneToOneInverse(relationship, of: storage).map { inverseColumn, _ in
                try writeStatement("UPDATE \(destinationTable.quotedDatabaseIdentifier) SET \(inverseColumn.quotedDatabaseIdentifier) = ? WHERE \(owner) = ?")
            }
            link = .foreignKey(update: try writeStatement("UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(assignments) WHERE \(owner) = ?"),
                               ordered: orderColumn != nil, inverse: inverse)
        case .inverseForeignKey(let table, let column, let orderColumn, _)?:
            let order = orderColumn.map { ", \($0.quotedDatabaseIdentifier) = ?" } ?? ""
            link = .inverseForeignKey(update: try writeStatement("UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ?\(order) WHERE \(owner) = ?"),
                                      ordered: orderColumn != nil)
        default:
            return nil
        }
        foreignKeyLinks[key] = link
        return link
    }

    /// A link kept in a foreign key: on the owner's row (with the inverse's column of a
    /// one-to-one pair), or on the target's row for a to-many whose inverse keeps it.
    private enum ForeignKeyLink {
        case foreignKey(update: WriteStatement, ordered: Bool, inverse: WriteStatement?)
        case inverseForeignKey(update: WriteStatement, ordered: Bool)
    }

    /// Clears a to-one relationship.
    package func unlink(_ relationship: String, of storage: EntityStorage, owner: Int64) throws {
        try flush()
        guard case .foreignKey(let column, _, let orderColumn)? = storage.relationships[relationship] else { return }
        let order = orderColumn.map { ", \($0.quotedDatabaseIdentifier) = NULL" } ?? ""
        try writeStatement("UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = NULL\(order) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?")
            .execute([owner.databaseValue])
    }
}
