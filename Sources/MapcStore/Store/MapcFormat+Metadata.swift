import Foundation
package import GRDB
import MapcFoundation
import MapcModel

extension MapcFormat {
    func recognizes(_ db: Database) throws -> Bool {
        try db.tableExists(Self.metadataTable)
    }

    func entityHashes(of schema: Schema) -> [String: String] {
        VersionHash.entityHashes(of: schema)
    }

    func readMetadata(_ db: Database) throws -> StoreMetadata {
        guard try db.tableExists(Self.metadataTable) else {
            throw MapcError.store("not a mapc store: it has no \(Self.metadataTable) table; stores are made by mapc ('mapc init', 'mapc load', a migration) or by Core Data")
        }
        guard try db.tableExists(Self.entityHashesTable) else {
            throw MapcError.store("the store's metadata is damaged: it has \(Self.metadataTable) but no \(Self.entityHashesTable) table (the entity hashes that identify its version)")
        }
        var values: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM \(Self.metadataTable.quotedSQLIdentifier)") {
            if let key = String.fromDatabaseValue(row[0] as DatabaseValue), let value = String.fromDatabaseValue(row[1] as DatabaseValue) { values[key] = value }
        }
        var hashes: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, hash FROM \(Self.entityHashesTable.quotedSQLIdentifier)") {
            if let name = String.fromDatabaseValue(row[0] as DatabaseValue), let hash = String.fromDatabaseValue(row[1] as DatabaseValue) { hashes[name] = hash }
        }
        guard let model = values["model"], let version = values["version"], values["modelHash"] != nil, let layout = values["layout"] else {
            throw MapcError.store("the store's metadata is incomplete (model, version, modelHash and layout are required)")
        }
        guard layout == identifier else {
            throw MapcError.store("the store uses layout '\(layout)', which this mapc does not know; upgrade mapc")
        }
        guard let formatVersion = Int(values["formatVersion"] ?? "1"), formatVersion >= 1 else {
            throw MapcError.store("the store's metadata format '\(values["formatVersion"] ?? "")' is not a version number; the metadata is damaged")
        }
        guard formatVersion <= Self.currentFormatVersion else {
            throw MapcError.store("the store's metadata format \(formatVersion) is newer than this mapc understands (\(Self.currentFormatVersion)); upgrade mapc")
        }
        return StoreMetadata(format: identifier, model: model, version: version, entityHashes: hashes)
    }

    /// mapc's files need no page-level settings.
    func configureNewFile(_ db: Database) throws {}

    func createStore(for schema: Schema, layout: StoreLayout, in db: Database, carrying previous: StoreMetadata?) throws {
        for table in layout.tables {
            let columns = table.columns.map { "\($0.name.quotedSQLIdentifier) \($0.sqlType) \($0.constraints)".trimmingCharacters(in: .whitespaces) } + table.constraints
            try db.execute(sql: "CREATE TABLE \(table.name.quotedSQLIdentifier) (\(columns.joined(separator: ", ")))")
            for index in table.indexes {
                let unique = index.unique ? "UNIQUE " : ""
                let columns = index.columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
                try db.execute(sql: "CREATE \(unique)INDEX \(index.name.quotedSQLIdentifier) ON \(table.name.quotedSQLIdentifier) (\(columns))")
            }
        }
        try db.execute(sql: "CREATE TABLE \(Self.metadataTable.quotedSQLIdentifier) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        try db.execute(sql: "CREATE TABLE \(Self.entityHashesTable.quotedSQLIdentifier) (name TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL)")
        let hashes = entityHashes(of: schema)
        let pairs = [("model", schema.model), ("version", schema.version), ("modelHash", VersionHash.modelHash(entityHashes: hashes)),
                     ("layout", identifier), ("formatVersion", String(Self.currentFormatVersion))]
        for (key, value) in pairs {
            try db.execute(sql: "INSERT INTO \(Self.metadataTable.quotedSQLIdentifier) (key, value) VALUES (?, ?)", arguments: [key, value])
        }
        for name in hashes.keys.sorted() {
            try db.execute(sql: "INSERT INTO \(Self.entityHashesTable.quotedSQLIdentifier) (name, hash) VALUES (?, ?)", arguments: [name, hashes[name]])
        }
    }

    func finishWriting(_ db: Database, layout: StoreLayout) throws {}

    func highestKey(inTable table: String, layout: StoreLayout, _ db: Database) throws -> Int64 {
        let key = layout.members(ofTable: table).first?.primaryKey ?? "_pk"
        return try Int64.fetchOne(db, sql: "SELECT max(\(key.quotedSQLIdentifier)) FROM \(table.quotedSQLIdentifier)") ?? 0
    }

    /// mapc's stores keep no counter: an object's identity is stored, not made from its key.
    func raiseKeyCounter(inTable table: String, layout: StoreLayout, to key: Int64, _ db: Database) throws {}

    func ownsTable(_ name: String) -> Bool {
        name.lowercased().hasPrefix("_mapc_")
    }

    /// The history table's columns, in order.
    static let historyColumns = ["step", "from_version", "from_hash", "to_version", "to_hash", "inferred", "mapping_sha256", "started_at", "finished_at", "created"]

    var ownTableColumns: [String: [String]] { [Self.historyTable: Self.historyColumns, Self.historyToolsTable: ["step", "tool"]] }

    func readHistory(_ db: Database) throws -> [HistoryEntry] {
        guard try db.tableExists(Self.historyTable) else { return [] }
        // A table of that name without the steps' versions is no history of mapc's (its columns
        // are named among what a migration leaves out): none is read from it.
        let columns = Set(try db.columns(in: Self.historyTable).map { $0.name.lowercased() })
        guard columns.contains("from_version"), columns.contains("to_version") else { return [] }
        // In the order of the steps; a table made otherwise, without them, in its own order (SQLite
        // said only "no such column: step", and stopped a run after its last step).
        let order = columns.contains("step") ? " ORDER BY step" : ""
        // The columns by position, NULL for one the table lacks (read by name, each row's lookups
        // were a fifth of `run --every-version` over 800 versions, which reads the history per step).
        let read = Self.historyColumns.dropFirst()
        let selected = (read + ["step"]).map { columns.contains($0) ? $0.quotedSQLIdentifier : "NULL" }.joined(separator: ", ")
        let tools = try Self.readHistoryTools(db)
        return try Row.fetchAll(db, sql: "SELECT \(selected) FROM \(Self.historyTable.quotedSQLIdentifier)\(order)").map { row in
            // History is informational: a damaged field reads as a description of what is there, never a trap.
            func value(_ column: String) -> DatabaseValue { read.firstIndex(of: column).map { row[$0 - read.startIndex] } ?? .null }
            func text(_ column: String) -> String {
                let found = value(column)
                return found.isNull ? "(missing)" : StoreValidator.text(found)
            }
            return HistoryEntry(fromVersion: text("from_version"), fromHash: text("from_hash"), toVersion: text("to_version"), toHash: text("to_hash"),
                                inferred: Bool.fromDatabaseValue(value("inferred")) ?? false, mappingSHA256: text("mapping_sha256"),
                                startedAt: text("started_at"), finishedAt: text("finished_at"),
                                created: HistoryEntry.created(fromJSON: String.fromDatabaseValue(value("created"))),
                                tool: Int64.fromDatabaseValue(row[read.count]).flatMap { tools[$0] })
        }
    }

    /// The tool of each step, by step (none for a store written before they were recorded).
    private static func readHistoryTools(_ db: Database) throws -> [Int64: String] {
        guard try db.tableExists(historyToolsTable) else { return [:] }
        let columns = Set(try db.columns(in: historyToolsTable).map { $0.name.lowercased() })
        guard columns.contains("step"), columns.contains("tool") else { return [:] }
        var tools: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT step, tool FROM \(historyToolsTable.quotedSQLIdentifier)") {
            if let step = Int64.fromDatabaseValue(row[0]), !(row[1] as DatabaseValue).isNull { tools[step] = StoreValidator.text(row[1]) }
        }
        return tools
    }

    func writeHistory(_ entries: [HistoryEntry], _ db: Database) throws {
        let table = Self.historyTable.quotedSQLIdentifier
        try db.execute(sql: """
        CREATE TABLE IF NOT EXISTS \(table) (step INTEGER PRIMARY KEY, from_version TEXT NOT NULL, from_hash TEXT NOT NULL, \
        to_version TEXT NOT NULL, to_hash TEXT NOT NULL, inferred INTEGER NOT NULL, mapping_sha256 TEXT NOT NULL, started_at TEXT NOT NULL, \
        finished_at TEXT NOT NULL, created TEXT NOT NULL)
        """)
        try db.execute(sql: "DELETE FROM \(table)")
        // One statement for every entry: a history of 800 steps, written into each step's new
        // store, was parsed 800 times per step (43% of `run --every-version` over 800 versions).
        let insert = try db.makeStatement(sql: "INSERT INTO \(table) (\(Self.historyColumns.map(\.quotedSQLIdentifier).joined(separator: ", "))) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        for (index, entry) in entries.enumerated() {
            try insert.execute(arguments: [index + 1, entry.fromVersion, entry.fromHash, entry.toVersion, entry.toHash, entry.inferred,
                                           entry.mappingSHA256, entry.startedAt, entry.finishedAt, entry.createdJSON])
        }
        let tools = Self.historyToolsTable.quotedSQLIdentifier
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(tools) (step INTEGER PRIMARY KEY, tool TEXT NOT NULL)")
        try db.execute(sql: "DELETE FROM \(tools)")
        let insertTool = try db.makeStatement(sql: "INSERT INTO \(tools) (step, tool) VALUES (?, ?)")
        for (index, entry) in entries.enumerated() {
            if let tool = entry.tool { try insertTool.execute(arguments: [index + 1, tool]) }
        }
    }
}
