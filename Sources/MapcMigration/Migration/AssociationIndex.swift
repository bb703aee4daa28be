import Foundation
internal import GRDB
import MapcModel
import MapcStore

/// The associations a migration records, `(mapping, source object) → destination object`, as
/// `NSMigrationManager.associate` keeps them, in a table of a scratch database attached to the
/// destination connection for the run (so memory stays flat however many objects a policy makes),
/// and every piece of SQL that reads or writes it: the interpreter's lookups and the fragments the
/// compiled path puts in its statements.
///
/// Objects of a mapping that follows a key rule record nothing here (`KeyRule`); the table holds
/// the rest: objects a policy creates, and those of mappings whose keys follow no rule.
struct AssociationIndex {
    /// The scratch database's name on the destination connection.
    static let schemaName = "mapc_scratch"
    /// The table, as statements on the destination connection name it.
    static let table = "mapc_scratch.assoc"
    /// The table and its indexes: by source (`$manager` lookups) and by destination (which mapping
    /// made an object).
    static let schema = [
        """
        CREATE TABLE \(table) (mapping INTEGER NOT NULL, source INTEGER NOT NULL, source_entity TEXT NOT NULL, \
        destination INTEGER NOT NULL, entity TEXT NOT NULL, id TEXT)
        """,
        "CREATE INDEX mapc_scratch.assoc_source ON assoc (mapping, source)",
        "CREATE INDEX mapc_scratch.assoc_destination ON assoc (destination, entity)",
    ]

    /// The run's writer, whose cached statements the index uses: scratch statements may run while
    /// it holds rows back.
    let writer: RowWriter

    /// Attaches an empty scratch database to a connection and creates the table in it.
    static func attach(to db: Database) throws {
        try db.execute(sql: "ATTACH DATABASE '' AS \(schemaName)")
        for statement in schema { try db.execute(sql: statement) }
    }

    /// Detaches the scratch database (its contents go with it).
    static func detach(from db: Database) throws {
        try db.execute(sql: "DETACH DATABASE \(schemaName)")
    }

    // MARK: Recording and looking up

    /// Records that mapping `mapping` made the destination object `destination` (stored under `id`
    /// when its format keeps identities) from the source object `source`.
    func record(mapping: Int, source: StoredKey, destination: StoredKey, id: String?) throws {
        try writer.writeStatement("INSERT INTO \(Self.table) (mapping, source, source_entity, destination, entity, id) VALUES (?, ?, ?, ?, ?, ?)", scratch: true)
            .execute([mapping.databaseValue, source.key.databaseValue, source.entity.databaseValue, destination.key.databaseValue,
                      destination.entity.databaseValue, id.databaseValue])
    }

    /// The number of associations a mapping recorded (from the index by mapping).
    func count(of mapping: Int) throws -> Int {
        try Int.fetchOne(try writer.statement("SELECT count(*) FROM \(Self.table) WHERE mapping = ?", scratch: true), arguments: [mapping]) ?? 0
    }

    /// The destination objects a mapping made from a source object, in the order recorded, with
    /// their stored identities.
    func destinations(of mapping: Int, source: StoredKey) throws -> [(object: StoredKey, id: String?)] {
        let rows = try Row.fetchAll(try writer.statement("SELECT entity, destination, id FROM \(Self.table) WHERE mapping = ? AND source = ? AND source_entity = ? ORDER BY rowid", scratch: true),
                                    arguments: [mapping, source.key, source.entity])
        return try rows.map { row in
            (StoredKey(entity: try row.stored(0, "an entity name"), key: try row.stored(1, "a row key")), try row.storedIfPresent(2, "an object id"))
        }
    }

    /// The mapping and source object recorded for a destination object (its first association).
    func origin(of destination: StoredKey) throws -> (mapping: Int, source: StoredKey)? {
        guard let row = try Row.fetchOne(try writer.statement("SELECT mapping, source_entity, source FROM \(Self.table) WHERE destination = ? AND entity = ? LIMIT 1", scratch: true),
                                         arguments: [destination.key, destination.entity]) else { return nil }
        return (try row.stored(0, "a mapping number"), StoredKey(entity: try row.stored(1, "an entity name"), key: try row.stored(2, "a row key")))
    }

    /// Every source object a mapping associated with a destination object, in the order recorded
    /// (several when a policy merged them into one).
    func origins(of destination: StoredKey, mapping: Int) throws -> [StoredKey] {
        let rows = try Row.fetchAll(try writer.statement("SELECT source_entity, source FROM \(Self.table) WHERE destination = ? AND entity = ? AND mapping = ? ORDER BY rowid", scratch: true),
                                    arguments: [destination.key, destination.entity, mapping])
        return try rows.map { StoredKey(entity: try $0.stored(0, "an entity name"), key: try $0.stored(1, "a row key")) }
    }

    // MARK: Walking a mapping's associations

    /// Where a mapping's associations lie: the row before its first, and its last.
    static let rangeQuery = "SELECT min(rowid) - 1, max(rowid) FROM \(table) WHERE mapping = ?"
    /// A batch of a mapping's associations in the order they were recorded, after a row and up to
    /// its last: a range of rows read in order. A mapping's rows are recorded together, so the range
    /// holds few others. Left to itself SQLite would take the `(mapping, source)` index and read and
    /// sort every row of the mapping for each batch, which made the relate phase quadratic in the
    /// objects a policy made.
    static let batchQuery = "SELECT rowid, source_entity, source, entity, destination, id FROM \(table) NOT INDEXED WHERE rowid > ? AND rowid <= ? AND mapping = ? ORDER BY rowid LIMIT ?"

    /// One recorded association: its row, the source object, and the destination object with its
    /// stored identity (nil in formats that keep none).
    struct Association {
        var row: Int64
        var source: StoredKey
        var destination: StoredKey
        var id: String?
    }

    /// Calls `body` with a mapping's associations in the order they were recorded, `size` at a
    /// time, after the row `after` when given: those recorded when the call starts, not the ones
    /// `body` may record. `body` returns whether to go on.
    static func forEachBatch(of mapping: Int, size: Int, after: Int64? = nil, in db: Database, _ body: ([Association]) throws -> Bool) throws {
        guard let range = try Row.fetchOne(db.cachedStatement(sql: rangeQuery), arguments: [mapping]),
              let first: Int64 = try range.storedIfPresent(0, "a row number"), let end: Int64 = try range.storedIfPresent(1, "a row number") else { return }
        var last = max(first, after ?? first)
        let statement = try db.cachedStatement(sql: batchQuery)
        let columns = StatementColumns(statement)
        while true {
            var batch: [Association] = []
            batch.reserveCapacity(size)
            let rows = try Row.fetchCursor(statement, arguments: [last, end, mapping, size])
            while try rows.next() != nil {
                batch.append(Association(row: try columns.integer(0, "a row number"),
                                         source: StoredKey(entity: try columns.text(1, "an entity name"), key: try columns.integer(2, "a row key")),
                                         destination: StoredKey(entity: try columns.text(3, "an entity name"), key: try columns.integer(4, "a row key")),
                                         id: try columns.textIfPresent(5, "an object id")))
            }
            guard let final = batch.last else { return }
            last = final.row
            guard try body(batch) else { return }
        }
    }

    /// Calls `body` with a mapping's associations, as `forEachBatch(of:size:after:in:body:)`, on
    /// the run's connection (the rows the writer holds back are written first).
    func forEachBatch(of mapping: Int, size: Int, after: Int64? = nil, _ body: ([Association]) throws -> Bool) throws {
        try Self.forEachBatch(of: mapping, size: size, after: after, in: writer.db, body)
    }

    // MARK: SQL for the compiled path

    /// An `INSERT … SELECT` recording a compiled creation's associations: `destination` and `source`
    /// are SQL for each row's keys, `identity` its stored identity (or nil), `from` the creation's
    /// `FROM … WHERE …`. Its arguments: the mapping, the keys' own, the source and destination
    /// entity names, the identity's, then the `from` clause's.
    static func recordingAll(destination: String, source: String, identity: String?, from: String) -> String {
        "INSERT INTO \(table) (mapping, destination, source, source_entity, entity, id) SELECT ?, \(destination), \(source), ?, ?, \(identity ?? "NULL") \(from)"
    }

    /// A scalar subquery giving the object a mapping made from the source object whose key is
    /// `sourceKey`, when it is of one of `entityCount` entities. Arguments: the mapping, the source
    /// entity, then the entity names.
    static func lookup(sourceKey: String, entityCount: Int) -> String {
        let placeholders = Array(repeating: "?", count: entityCount).joined(separator: ", ")
        return "(SELECT a.destination FROM \(table) AS a WHERE a.mapping = ? AND a.source = \(sourceKey) AND a.source_entity = ? AND a.entity IN (\(placeholders)) LIMIT 1)"
    }

    /// A join of each source row to its own association under the alias `own`, for an update of a
    /// mapping's objects. Arguments: the mapping, the source entity.
    static func joinOwn(sourceKey: String) -> String {
        "JOIN \(table) AS own ON own.mapping = ? AND own.source = \(sourceKey) AND own.source_entity = ?"
    }
}
