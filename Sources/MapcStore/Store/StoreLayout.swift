import Foundation
package import GRDB
import MapcFoundation
import MapcModel

/// A schema laid out in tables by a `StoreFormat`: what the store creates, and where each
/// entity's data lives. Everything that reads or writes objects, validates a store or compiles a
/// mapping to SQL asks the layout for names, keys and discriminator values; none assumes a format.
package struct StoreLayout: Sendable {
    /// The identifier of the format that made it.
    var format: String
    /// The entity tables (one per inheritance hierarchy) and join tables, in creation order.
    var tables: [TableLayout]
    /// How each entity is stored, by entity name.
    package var entities: [String: EntityStorage]
    /// Columns whose values follow from others, which the format fills after objects are written
    /// (Core Data's `Z7_COVER`, the entity number of the object `ZCOVER` names).
    var derivedColumns: [DerivedColumn] = []

    /// Whether a table constraint (a uniqueness constraint the format keeps as `UNIQUE`) can
    /// refuse a row of `table`.
    package func constrainsRows(of table: String) -> Bool {
        tables.contains { $0.name == table && !$0.constraints.isEmpty }
    }

    /// The most columns a SQLite table may have (SQLITE_MAX_COLUMN's default).
    static let maxColumns = 2_000

    /// Why SQLite could not build this layout (a table with too many columns), for `mapc check`
    /// to report before `init` or `run` would fail.
    var problems: [String] {
        let wide = tables.filter { $0.columns.count > Self.maxColumns }
        let tooWide = wide.map { table in
            "table \(table.name) needs \(table.columns.count) columns (its entity hierarchy's attributes and to-one relationships); SQLite allows \(Self.maxColumns): split the hierarchy"
        }
        // An object is read in one statement (`ReadPlan`): its result must fit SQLite's columns too
        // (666 to-one relationships made a store `load` wrote that nothing could read).
        let tooWideTables = Set(wide.map(\.name))
        let unreadable = entities.values.sorted { $0.entity < $1.entity }.compactMap { storage -> String? in
            let width = Self.readWidth(of: storage)
            // A table SQLite cannot make is said once, as such.
            guard width > Self.maxColumns, !tooWideTables.contains(storage.table) else { return nil }
            let toOnes = Self.toOneCount(of: storage)
            return "entity \(storage.entity) is read in \(width) columns (two for its key and id, one per attribute, \(storage.attributeColumns.count), and three per to-one relationship, \(toOnes)); "
                + "SQLite allows \(Self.maxColumns) in a result: make some to-one relationships to-many, or move them to a related entity"
        }
        return tooWide + unreadable
    }

    /// How many columns reading an object of `storage` selects (`ReadPlan`): its key and id, its
    /// attributes, and a to-one relationship's key, entity and id.
    static func readWidth(of storage: EntityStorage) -> Int {
        2 + storage.attributeColumns.count + 3 * toOneCount(of: storage)
    }

    private static func toOneCount(of storage: EntityStorage) -> Int {
        storage.relationships.values.filter { if case .foreignKey = $0 { return true } else { return false } }.count
    }

    /// An entity's columns and relationship storage: its own and every ancestor's (the nearest
    /// declaration of a name wins), from what each entity of a hierarchy declares itself.
    static func inherited(by entity: Entity, in schema: Schema, columns: [String: [String: String]],
                          relationships: [String: [String: RelationshipStorage]]) -> (columns: [String: String], relationships: [String: RelationshipStorage]) {
        var ownColumns: [String: String] = [:]
        var ownRelationships: [String: RelationshipStorage] = [:]
        for ancestor in schema.ancestry(of: entity) {
            ownColumns.merge(columns[ancestor.name] ?? [:]) { current, _ in current }
            ownRelationships.merge(relationships[ancestor.name] ?? [:]) { current, _ in current }
        }
        return (ownColumns, ownRelationships)
    }

    /// How an entity is stored.
    package func storage(of entity: String) throws -> EntityStorage {
        guard let storage = entities[entity] else { throw MapcError.notFound("no entity '\(entity)' in this store's schema") }
        return storage
    }

    /// The entity tables (not join tables), each once, with the storage of every entity in it.
    var entityTables: [(table: String, members: [EntityStorage])] {
        let grouped = Dictionary(grouping: entities.values, by: \.table)
        return tables.map(\.name).compactMap { name in grouped[name].map { (name, $0.sorted { $0.entity < $1.entity }) } }
    }

    /// The storage of every entity whose objects live in a table.
    func members(ofTable table: String) -> [EntityStorage] {
        entities.values.filter { $0.table == table }.sorted { $0.entity < $1.entity }
    }

    /// The SQL literals of the discriminators of an entity and those under it (`EntityStorage.discriminatorsSQL`);
    /// empty for an entity the layout does not have.
    func discriminatorsSQL(of entity: String) -> String { entities[entity]?.discriminatorsSQL ?? "" }

    /// The SQL condition that a row found by another key (its primary key, a foreign key, a join
    /// table's) is of one of the `allowed` discriminators: `+column IN (allowed)`. The `+` keeps
    /// SQLite from searching by the entity index instead: with one entity allowed it did, walking
    /// all of the entity's rows for each lookup (quadratic relating and validation).
    package static func entityCheck(_ qualifiedColumn: String, allowed: String) -> String { "+\(qualifiedColumn) IN (\(allowed))" }

    /// The entity whose rows carry this discriminator value in a table.
    package func entity(withDiscriminator value: DatabaseValue, inTable table: String) -> String? {
        entities.values.first { $0.table == table && $0.discriminator == value }?.entity
    }
}

extension StoreLayout {
    /// Every column the layout names, by table, in lower case: the tables' own, and those its
    /// storages read that a table's list may leave out (a join table's order columns, a to-one's
    /// destination entity column found under another number, `Z_FOK_` positions).
    var namedColumns: [String: Set<String>] {
        var named: [String: Set<String>] = [:]
        func add(_ table: String, _ columns: [String?]) {
            named[table.lowercased(), default: []].formUnion(columns.compactMap { $0?.lowercased() })
        }
        for table in tables { add(table.name, table.columns.map(\.name)) }
        for derived in derivedColumns { add(derived.table, [derived.column, derived.foreignKey]) }
        for storage in entities.values {
            add(storage.table, [storage.primaryKey, storage.entityColumn, storage.idColumn] + storage.attributeColumns.values.map(Optional.some) + storage.insertedColumns.map(\.name))
            for kept in storage.relationships.values {
                switch kept {
                case .foreignKey(let column, _, let order): add(storage.table, [column, order])
                case .inverseForeignKey(let table, let column, let order, _): add(table, [column, order])
                case .joinTable(let table, let owner, let other, let ownerOrder, let otherOrder, _, _): add(table, [owner, other, ownerOrder, otherOrder])
                }
            }
        }
        return named
    }
}

/// A column holding the entity number (the discriminator) of the object a foreign key names.
package struct DerivedColumn: Sendable, Equatable {
    /// The table of the foreign key and of this column.
    var table: String
    /// This column.
    var column: String
    /// The foreign key it follows.
    var foreignKey: String
    /// The table the foreign key's objects live in.
    var destinationTable: String
}

/// One SQLite table.
package struct TableLayout: Sendable {
    /// The table's name (always quoted in SQL).
    package var name: String
    /// Columns in creation order.
    var columns: [ColumnLayout]
    /// Indexes to create.
    var indexes: [IndexLayout]
    /// Table constraints (`CONSTRAINT … UNIQUE (…)`), as SQL.
    var constraints: [String] = []
}

/// One column.
package struct ColumnLayout: Sendable {
    /// The column's name (always quoted in SQL).
    var name: String
    /// The declared SQLite type: INTEGER, REAL, TEXT, BLOB, or a format's own (TIMESTAMP, VARCHAR).
    var sqlType: String
    /// The rest of the column definition, e.g. `PRIMARY KEY` or `NOT NULL`.
    var constraints: String = ""
}

/// One index.
package struct IndexLayout: Sendable {
    /// The index's name.
    var name: String
    /// The indexed columns.
    var columns: [String]
    /// Whether the index enforces uniqueness.
    var unique: Bool = false
}

/// Where one entity's objects live.
package struct EntityStorage: Sendable {
    /// The entity's name.
    package var entity: String
    /// The hierarchy table holding this entity's rows (and its relatives').
    package var table: String
    /// The integer primary key column: the object's key in the store.
    package var primaryKey: String
    /// The column telling which entity a row belongs to.
    package var entityColumn: String
    /// This entity's value in `entityColumn` (mapc: its name; Core Data: its entity number).
    package var discriminator: DatabaseValue
    /// The discriminator values of this entity and its concrete and abstract sub-entities, for fetches that include them.
    var discriminators: [DatabaseValue]
    /// `discriminators` as SQL literals for an `IN (…)`: a row of this entity or one under it.
    package var discriminatorsSQL: String { discriminators.map(Store.sqlLiteral).joined(separator: ", ") }
    /// The column holding each object's identity string, when the format keeps one (mapc's `_id`);
    /// nil when identities are derived from keys (Core Data: `Entity/p12`).
    package var idColumn: String?
    /// Bookkeeping columns written with every new row, and their values (Core Data: `Z_OPT = 1`).
    package var insertedColumns: [InsertedColumn] = []
    /// The column of each stored attribute, inherited ones included, by attribute name.
    package var attributeColumns: [String: String]
    /// How each stored relationship is kept, inherited ones included, by relationship name.
    package var relationships: [String: RelationshipStorage]
}

/// A bookkeeping column a format fills on insert.
package struct InsertedColumn: Sendable {
    /// The column.
    package var name: String
    /// Its value for a new row.
    package var value: DatabaseValue
}

/// How one relationship is kept in the tables.
package enum RelationshipStorage: Sendable, Equatable {
    /// A to-one relationship: a column of the owner's table holding the destination's key.
    /// `orderColumn`, when set, holds this object's position in the inverse ordered to-many relationship.
    case foreignKey(column: String, destinationTable: String, orderColumn: String?)
    /// A to-many relationship whose inverse is to-one: found through the inverse's column on the
    /// destination table. `orderColumn` holds positions when this relationship is ordered.
    case inverseForeignKey(table: String, column: String, orderColumn: String?, destinationDiscriminators: [DatabaseValue])
    /// A to-many relationship whose inverse is to-many, or that has no inverse: a join table of
    /// (owner, other) rows seen from this side. `ownerOrderColumn` holds the other's position in
    /// this relationship's list (when ordered), `otherOrderColumn` the owner's position in the
    /// inverse's list (when the inverse is ordered). `writesRows` says this side inserts the rows
    /// (the other side of a pair only reads them).
    case joinTable(table: String, ownerColumn: String, otherColumn: String, ownerOrderColumn: String?, otherOrderColumn: String?,
                   destinationTable: String, writesRows: Bool)
}

/// Hands out unique names, appending a suffix (then a number) when a name is taken.
struct NameAllocator {
    private var used: Set<String>

    init(reserved: Set<String>) {
        used = Set(reserved.map { $0.lowercased() })
    }

    /// SQLite names are case-insensitive, so uniqueness is checked case-insensitively; names
    /// starting `sqlite_` are SQLite's own and get a leading underscore.
    /// A numeric suffix counts on from itself on the name (Core Data's `Z_3ARTWORKS`,
    /// `Z_3ARTWORKS1`, `Z_3ARTWORKS2`); another suffix is numbered after (`title_v`, `title_v_2`).
    mutating func allocate(_ name: String, fallbackSuffix: String? = nil, separator: String = "_") -> String {
        var candidate = name.lowercased().hasPrefix("sqlite_") ? "_" + name : name
        if let suffix = fallbackSuffix, let first = Int(suffix), used.contains(candidate.lowercased()) {
            let base = candidate
            var number = first
            repeat {
                candidate = "\(base)\(separator)\(number)"
                number += 1
            } while used.contains(candidate.lowercased())
            used.insert(candidate.lowercased())
            return candidate
        }
        if used.contains(candidate.lowercased()), let suffix = fallbackSuffix { candidate = "\(candidate)\(separator)\(suffix)" }
        var counter = 2
        let base = candidate
        while used.contains(candidate.lowercased()) {
            candidate = "\(base)\(separator)\(counter)"
            counter += 1
        }
        used.insert(candidate.lowercased())
        return candidate
    }
}
