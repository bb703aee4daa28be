import Foundation
import GRDB

/// Decides how a schema is laid out in SQLite: table and column names, keys, the entity
/// discriminator, value encodings and where metadata lives.
///
/// Everything the store reads or writes goes through a strategy, so a second layout (Core Data's
/// Z-tables with Z_PK, Z_ENT, Z_OPT and Z_METADATA) can be added without touching the loader,
/// the dumper or the migration manager.
public protocol StoreLayoutStrategy: Sendable {
    /// A name recorded in the store's metadata, so a store is always read with the layout that wrote it.
    var identifier: String { get }
    /// The tables, columns and relationship storage for a schema. Must depend only on what the
    /// schema's version hashes cover, so that stores with equal hashes have equal layouts.
    func layout(for schema: Schema) -> StoreLayout
    /// The SQLite value stored for an attribute value.
    func encode(_ value: Value, as type: AttributeType) -> DatabaseValue
    /// The attribute value read back from SQLite.
    func decode(_ value: DatabaseValue, as type: AttributeType) throws -> Value
}

/// A schema laid out in tables: what the store creates, and where each entity's data lives.
public struct StoreLayout: Sendable {
    /// The identifier of the strategy that made it.
    public var strategy: String
    /// Every table: one per inheritance hierarchy, plus join tables for to-many relationships.
    public var tables: [TableLayout]
    /// How each entity is stored, by entity name.
    public var entities: [String: EntityStorage]
    /// Key/value metadata: model, version, hashes, layout.
    public var metadataTable: String
    /// Entity hashes, one row per entity.
    public var entityHashesTable: String

    /// The most columns a SQLite table may have (SQLITE_MAX_COLUMN's default).
    public static let maxColumns = 2_000

    /// Why SQLite could not build this layout (a table with too many columns), for `mapc check`
    /// to report before `init` or `run` would fail.
    public var problems: [String] {
        tables.filter { $0.columns.count > Self.maxColumns }.map { table in
            "table \(table.name) needs \(table.columns.count) columns (its entity hierarchy's attributes and to-one relationships); SQLite allows \(Self.maxColumns): split the hierarchy"
        }
    }

    /// How an entity is stored.
    public func storage(of entity: String) throws -> EntityStorage {
        guard let storage = entities[entity] else { throw MapcError.notFound("no entity '\(entity)' in this store's schema") }
        return storage
    }
}

/// One SQLite table.
public struct TableLayout: Sendable {
    /// The table's name (always quoted in SQL).
    public var name: String
    /// Columns in creation order.
    public var columns: [ColumnLayout]
    /// Indexes to create.
    public var indexes: [IndexLayout]
}

/// One column.
public struct ColumnLayout: Sendable {
    /// The column's name (always quoted in SQL).
    public var name: String
    /// The declared SQLite type: INTEGER, REAL, TEXT, BLOB.
    public var sqlType: String
    /// The rest of the column definition, e.g. `PRIMARY KEY` or `NOT NULL`.
    public var constraints: String = ""
}

/// One index.
public struct IndexLayout: Sendable {
    /// The index's name.
    public var name: String
    /// The indexed columns.
    public var columns: [String]
    /// Whether the index enforces uniqueness.
    public var unique: Bool = false
}

/// Where one entity's objects live.
public struct EntityStorage: Sendable {
    /// The entity's name.
    public var entity: String
    /// The hierarchy table holding this entity's rows (and its relatives').
    public var table: String
    /// The integer primary key column.
    public var primaryKey: String
    /// The column holding each row's entity name, so a fetch of a parent also finds sub-entities.
    public var entityColumn: String
    /// The column holding each object's identity string (the data format's `id`).
    public var idColumn: String
    /// The discriminator values of this entity and its sub-entities, for fetches that include them.
    public var discriminators: [String]
    /// The column of each stored attribute, inherited ones included, by attribute name.
    public var attributeColumns: [String: String]
    /// How each stored relationship is kept, inherited ones included, by relationship name.
    public var relationships: [String: RelationshipStorage]
}

/// How one relationship is kept in the tables.
public enum RelationshipStorage: Sendable, Equatable {
    /// A to-one relationship: a column of the owner's table holding the destination's primary key.
    /// `orderColumn`, when set, holds this object's position in the inverse ordered to-many relationship.
    case foreignKey(column: String, destinationTable: String, orderColumn: String?)
    /// A to-many relationship whose inverse is to-one: found through the inverse's column on the
    /// destination table. `orderColumn` holds positions when this relationship is ordered.
    case inverseForeignKey(table: String, column: String, orderColumn: String?, destinationDiscriminators: [String])
    /// A to-many relationship whose inverse is to-many, or that has no inverse: a join table.
    /// Rows are (owner, other); `orderColumn` holds the other's position in the owner's list.
    case joinTable(table: String, ownerColumn: String, otherColumn: String, orderColumn: String?, destinationTable: String)
}
