import Foundation
package import GRDB
internal import GRDBSQLite
import MapcFoundation
import MapcModel

/// Rows held back and written several per statement (`buffersRows`), each refused row named as
/// the object it was, and, in debug builds, a watch that nothing else runs while rows are held.
extension RowWriter {
    /// How many rows one statement writes when rows are held back: past 16 the gain is small
    /// (docs/performance.md), and more rows hold more values in memory and bind fewer of them
    /// without a copy.
    static let rowsPerStatement = 16
    /// The bytes of text and data held rows may hold before they are written (rows of megabytes
    /// each are written one at a time, not sixteen).
    static let heldByteBudget = 4 << 20


    /// An object as its row was inserted, kept to name it if the row is refused.
    struct HeldRow {
        var entity: String
        var id: String
        var values: [Value]
        /// Who inserted it (the migration: the mapping's name).
        var origin: String?
    }

    struct HeldRows {
        let plan: InsertPlan
        var rows: [HeldRow] = []
        /// Every row's statement values, one row after the other.
        var arguments: [DatabaseValue] = []
        /// About how many bytes of text and data the rows hold.
        var bytes = 0

        init(plan: InsertPlan, capacity: Int) {
            self.plan = plan
            rows.reserveCapacity(plan.rowsPerStatement)
            arguments.reserveCapacity(capacity)
        }

        mutating func add(_ row: HeldRow, _ values: [DatabaseValue]) {
            rows.append(row)
            arguments.append(contentsOf: values)
            for value in values {
                switch value.storage {
                case .string(let text): bytes += text.utf8.count
                case .blob(let data): bytes += data.count
                default: bytes += 8
                }
            }
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
    func rowsStillWritten(_ batch: HeldRows) throws -> Int {
        let plan = batch.plan
        let conditions = SQLTerms.joined(zip(plan.valueColumns, plan.valuePlaceholders).map { "\($0.quotedSQLIdentifier) IS \($1)" }, by: "AND")
        let statement = try connection.makeStatement(sql: "SELECT 1 FROM \(plan.table.quotedSQLIdentifier) WHERE \(conditions) LIMIT 1")
        var count = 0
        // Text is written by the insert's own binding, which keeps a NUL in it; GRDB's binds a C
        // string, which ends at one: it is looked for as its bytes, made text again by the cast.
        let asText = plan.valuePlaceholders.map { $0 != "?" }
        func arguments(ofRow row: Int) -> StatementArguments {
            StatementArguments(zip(batch.arguments(ofRow: row), asText).map { value, isText in
                if isText, case .string(let text) = value.storage { return Data(text.utf8).databaseValue }
                return value
            })
        }
        while count < batch.rows.count, try Row.fetchOne(statement, arguments: arguments(ofRow: count)) != nil {
            count += 1
        }
        return count
    }

    /// Writes one row by its plan's one-row statement, naming it if a constraint refuses it.
    func write(_ row: HeldRow, _ arguments: [DatabaseValue], by plan: InsertPlan) throws {
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


    #if DEBUG

    /// Records any statement that runs on the connection while rows are held back, so that a
    /// missing `flush()` fails every test that reaches it.
    func watchStatements() {
        connection.trace(options: .statement) { [weak self] event in
            guard let self, let held = self.held, !held.rows.isEmpty, case .statement(let statement) = event else { return }
            let sql = statement.sql
            if !self.scratchSQL.contains(sql), self.ranWhileHeld == nil { self.ranWhileHeld = sql }
        }
    }

    func checkNothingRanWhileHeld() throws {
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
}
