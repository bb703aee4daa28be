import Foundation
import GRDB

/// What a store says about itself: the model, version and hashes it was written with.
public struct StoreMetadata: Sendable, Equatable {
    /// The model's name.
    public var model: String
    /// The version name recorded when the store was written (informational: hashes identify it).
    public var version: String
    /// The model hash.
    public var modelHash: String
    /// The hash of every entity, by name.
    public var entityHashes: [String: String]
    /// The identifier of the layout strategy that wrote the store.
    public var layout: String
    /// The metadata format's version.
    public var formatVersion: Int

    /// The current metadata format.
    public static let currentFormatVersion = 1

    /// Metadata describing a schema.
    public init(schema: Schema, layout: String) {
        model = schema.model
        version = schema.version
        entityHashes = VersionHash.entityHashes(of: schema)
        modelHash = VersionHash.modelHash(entityHashes: entityHashes)
        self.layout = layout
        formatVersion = Self.currentFormatVersion
    }

    /// Reads metadata from an open database; throws when it is not a mapc store.
    public static func read(_ db: Database, metadataTable: String = "_mapc_metadata", entityHashesTable: String = "_mapc_entities") throws -> StoreMetadata {
        guard try db.tableExists(metadataTable) else {
            throw MapcError.store("not a mapc store: it has no \(metadataTable) table; create stores with 'mapc init' or 'mapc load'")
        }
        guard try db.tableExists(entityHashesTable) else {
            throw MapcError.store("the store's metadata is damaged: it has \(metadataTable) but no \(entityHashesTable) table (the entity hashes that identify its version)")
        }
        var values: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM \(metadataTable.quotedDatabaseIdentifier)") {
            if let key = String.fromDatabaseValue(row[0] as DatabaseValue), let value = String.fromDatabaseValue(row[1] as DatabaseValue) { values[key] = value }
        }
        var hashes: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, hash FROM \(entityHashesTable.quotedDatabaseIdentifier)") {
            if let name = String.fromDatabaseValue(row[0] as DatabaseValue), let hash = String.fromDatabaseValue(row[1] as DatabaseValue) { hashes[name] = hash }
        }
        guard let model = values["model"], let version = values["version"], let modelHash = values["modelHash"], let layout = values["layout"] else {
            throw MapcError.store("the store's metadata is incomplete (model, version, modelHash and layout are required)")
        }
        guard let format = Int(values["formatVersion"] ?? "1"), format >= 1 else {
            throw MapcError.store("the store's metadata format '\(values["formatVersion"] ?? "")' is not a version number; the metadata is damaged")
        }
        guard format <= currentFormatVersion else {
            throw MapcError.store("the store's metadata format \(format) is newer than this mapc understands (\(currentFormatVersion)); upgrade mapc")
        }
        var metadata = StoreMetadata(model: model, version: version, modelHash: modelHash, entityHashes: hashes, layout: layout)
        metadata.formatVersion = format
        return metadata
    }

    init(model: String, version: String, modelHash: String, entityHashes: [String: String], layout: String) {
        self.model = model
        self.version = version
        self.modelHash = modelHash
        self.entityHashes = entityHashes
        self.layout = layout
        self.formatVersion = Self.currentFormatVersion
    }

    /// Creates the metadata tables and writes this metadata.
    func write(_ db: Database, metadataTable: String, entityHashesTable: String) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(metadataTable.quotedDatabaseIdentifier) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(entityHashesTable.quotedDatabaseIdentifier) (name TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL)")
        let pairs = [("model", model), ("version", version), ("modelHash", modelHash), ("layout", layout), ("formatVersion", String(formatVersion))]
        for (key, value) in pairs {
            try db.execute(sql: "INSERT OR REPLACE INTO \(metadataTable.quotedDatabaseIdentifier) (key, value) VALUES (?, ?)", arguments: [key, value])
        }
        try db.execute(sql: "DELETE FROM \(entityHashesTable.quotedDatabaseIdentifier)")
        for name in entityHashes.keys.sorted() {
            try db.execute(sql: "INSERT INTO \(entityHashesTable.quotedDatabaseIdentifier) (name, hash) VALUES (?, ?)", arguments: [name, entityHashes[name]])
        }
    }

    /// The entities whose hashes differ from a schema's, with a reason each, for "incompatible store" messages.
    public func differences(from schema: Schema) -> [String] {
        let expected = VersionHash.entityHashes(of: schema)
        var lines: [String] = []
        for name in Set(expected.keys).union(entityHashes.keys).sorted() {
            switch (entityHashes[name], expected[name]) {
            case (nil, _?): lines.append("entity '\(name)' is in version \(schema.version) but not in the store")
            case (_?, nil): lines.append("entity '\(name)' is in the store but not in version \(schema.version)")
            case let (stored?, wanted?) where stored != wanted: lines.append("entity '\(name)' differs (store \(stored.prefix(12)), schema \(wanted.prefix(12)))")
            default: break
            }
        }
        return lines
    }
}
