import Foundation
import GRDB

/// One applied migration, as a store's history records it.
public struct HistoryEntry: Sendable, Equatable {
    /// Version and model hash before.
    public var fromVersion: String
    public var fromHash: String
    /// Version and model hash after.
    public var toVersion: String
    public var toHash: String
    /// Whether the mapping was inferred.
    public var inferred: Bool
    /// SHA-256 of the mapping used.
    public var mappingSHA256: String
    /// When the step started and finished (ISO 8601, UTC).
    public var startedAt: String
    public var finishedAt: String
    /// Objects created by each entity mapping.
    public var created: [String: Int]

    /// Creates an entry.
    public init(fromVersion: String, fromHash: String, toVersion: String, toHash: String, inferred: Bool, mappingSHA256: String,
                startedAt: String, finishedAt: String, created: [String: Int]) {
        self.fromVersion = fromVersion
        self.fromHash = fromHash
        self.toVersion = toVersion
        self.toHash = toHash
        self.inferred = inferred
        self.mappingSHA256 = mappingSHA256
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.created = created
    }
}

/// The migration history kept in a store's metadata (`_mapc_history`): every migration applied to
/// it, oldest first, carried from store to store as it is migrated.
public enum StoreHistory {
    static let table = "_mapc_history"

    /// The history of a store (empty for a store never migrated).
    public static func read(_ store: Store) throws -> [HistoryEntry] {
        try store.database.read { try read($0) }
    }

    static func read(_ db: Database) throws -> [HistoryEntry] {
        guard try db.tableExists(table) else { return [] }
        return try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier) ORDER BY step").map { row in
            // History is informational: a damaged field reads as a description of what is there, never a trap.
            func text(_ column: String) -> String {
                guard let value = row[column] as DatabaseValue? else { return "(missing)" }
                return value.isNull ? "(missing)" : StoreValidator.text(value)
            }
            var created: [String: Int] = [:]
            if let text = String.fromDatabaseValue(row["created"] as DatabaseValue? ?? .null), case .object(let pairs)? = try? JSONValue.parse(Data(text.utf8), path: "history") {
                for (name, value) in pairs { if case .integer(let n) = value, let count = Int(exactly: n) { created[name] = count } }
            }
            return HistoryEntry(fromVersion: text("from_version"), fromHash: text("from_hash"), toVersion: text("to_version"), toHash: text("to_hash"),
                                inferred: Bool.fromDatabaseValue(row["inferred"] as DatabaseValue? ?? .null) ?? false, mappingSHA256: text("mapping_sha256"),
                                startedAt: text("started_at"), finishedAt: text("finished_at"), created: created)
        }
    }

    /// Writes `entries` (the source's history plus the new step) into a store.
    public static func write(_ entries: [HistoryEntry], to store: Store) throws {
        try store.database.write { db in
            try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(table.quotedDatabaseIdentifier) (step INTEGER PRIMARY KEY, from_version TEXT NOT NULL, from_hash TEXT NOT NULL, \
            to_version TEXT NOT NULL, to_hash TEXT NOT NULL, inferred INTEGER NOT NULL, mapping_sha256 TEXT NOT NULL, started_at TEXT NOT NULL, \
            finished_at TEXT NOT NULL, created TEXT NOT NULL)
            """)
            try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier)")
            for (index, entry) in entries.enumerated() {
                let created = JSONValue.object(entry.created.keys.sorted().map { ($0, .integer(Int64(entry.created[$0]!))) }).serialized()
                try db.execute(sql: "INSERT INTO \(table.quotedDatabaseIdentifier) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: [index + 1, entry.fromVersion, entry.fromHash, entry.toVersion, entry.toHash, entry.inferred,
                                           entry.mappingSHA256, entry.startedAt, entry.finishedAt, created])
            }
        }
    }
}
