import Foundation
package import GRDB
import MapcFoundation
import MapcModel

/// mapc's own SQLite layout, designed to be readable with the sqlite3 shell.
///
/// - One table per inheritance hierarchy, named after the root entity, with `_pk` (INTEGER
///   PRIMARY KEY), `_entity` (the row's entity name) and `_id` (the object's identity string).
/// - One column per stored attribute of every entity in the hierarchy, named after the attribute
///   (suffixed with `_<Entity>` when two sub-entities use one name).
/// - To-one relationships: a column with the destination's `_pk`. A to-many relationship whose
///   inverse is to-one uses that column; when it is ordered, an `<inverse>_order` column beside it.
/// - Many-to-many relationships, and to-many ones without an inverse: a join table `<Entity>_<rel>`
///   with `owner`, `other` and, when ordered, `owner_order` / `other_order` positions.
/// - Metadata in `_mapc_metadata` (key, value) and `_mapc_entities` (name, hash); migration
///   history in `_mapc_history`.
///
/// The full description, with value encodings, is `docs/store-layout.md`.
struct MapcFormat: StoreFormatStrategy {
    /// Creates the format.
    init() {}

    var identifier: String { "mapc-1" }
    var name: String { "mapc" }

    static let metadataTable = "_mapc_metadata"
    static let entityHashesTable = "_mapc_entities"
    static let historyTable = "_mapc_history"
    /// The tool that made each step of the history, by step: a table of its own, as a column
    /// added to the history table would be a column builds before it do not know, and they
    /// refuse to migrate a store holding one (a fleet upgraded in stages runs both). Such a build
    /// passes the table over, and a store it migrates keeps no tool for any step.
    static let historyToolsTable = "_mapc_history_tools"
    /// The current metadata format.
    static let currentFormatVersion = 1

    static let primaryKey = "_pk"
    static let entityColumn = "_entity"
    static let idColumn = "_id"

    func layout(for schema: Schema) -> StoreLayout {
        // Layout decisions depend only on hashed content; sorting by name makes them independent
        // of the order entities and properties are written in the file.
        let entities = schema.entities.sorted { $0.name < $1.name }
        var tableNames = NameAllocator(reserved: [Self.metadataTable, Self.entityHashesTable, Self.historyTable, Self.historyToolsTable])
        var tables: [String: TableLayout] = [:]
        var tableOrder: [String] = []
        var rootTable: [String: String] = [:]
        var columnsOfTable: [String: NameAllocator] = [:]
        var storages: [String: EntityStorage] = [:]

        // Tables for hierarchies, created when a hierarchy's root is first seen. (A hierarchy without a
        // root, as a schema built in code with an inheritance cycle has, still gets one.)
        func ensureTable(for root: Entity) -> String {
            if let existing = rootTable[root.name] { return existing }
            let name = tableNames.allocate(root.name)
            rootTable[root.name] = name
            tableOrder.append(name)
            tables[name] = TableLayout(name: name, columns: [
                ColumnLayout(name: Self.primaryKey, sqlType: "INTEGER", constraints: "PRIMARY KEY"),
                ColumnLayout(name: Self.entityColumn, sqlType: "TEXT", constraints: "NOT NULL"),
                ColumnLayout(name: Self.idColumn, sqlType: "TEXT", constraints: "NOT NULL"),
            ], indexes: [IndexLayout(name: "\(name)__id", columns: [Self.idColumn], unique: true)])
            columnsOfTable[name] = NameAllocator(reserved: [Self.primaryKey, Self.entityColumn, Self.idColumn])
            return name
        }
        for root in entities where root.parent == nil || schema.entity(named: root.parent!) == nil {
            _ = ensureTable(for: root)
        }
        func table(of entity: Entity) -> String { ensureTable(for: schema.root(of: entity)) }
        func addColumn(_ column: ColumnLayout, to table: String) { tables[table]?.columns.append(column) }
        func addIndex(_ index: IndexLayout, to table: String) { tables[table]?.indexes.append(index) }
        func allocateColumn(_ name: String, in table: String, suffix: String) -> String {
            let allocated = columnsOfTable[table, default: NameAllocator(reserved: [])].allocate(name, fallbackSuffix: suffix)
            return allocated
        }

        // Entities ordered root-first so inherited columns are allocated before sub-entities' own.
        let byDepth = entities.sorted { (schema.ancestry(of: $0).count, $0.name) < (schema.ancestry(of: $1).count, $1.name) }
        var ownColumns: [String: [String: String]] = [:]
        var ownRelationships: [String: [String: RelationshipStorage]] = [:]
        for entity in byDepth {
            let tableName = table(of: entity)
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                let column = allocateColumn(attribute.name, in: tableName, suffix: entity.name)
                addColumn(ColumnLayout(name: column, sqlType: Self.sqlType(of: attribute.type)), to: tableName)
                ownColumns[entity.name, default: [:]][attribute.name] = column
            }
            if schema.hierarchy(under: schema.root(of: entity)).count > 1, entity.parent == nil {
                addIndex(IndexLayout(name: "\(tableName)__entity", columns: [Self.entityColumn]), to: tableName)
            }
        }
        // To-one relationships first: to-many relationships with a to-one inverse reuse their columns.
        for entity in byDepth {
            let tableName = table(of: entity)
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isToMany && !relationship.isTransient {
                guard let destination = schema.entity(named: relationship.destination) else { continue }
                let column = allocateColumn(relationship.name, in: tableName, suffix: entity.name)
                addColumn(ColumnLayout(name: column, sqlType: "INTEGER"), to: tableName)
                addIndex(IndexLayout(name: "\(tableName)_\(column)", columns: [column]), to: tableName)
                var orderColumn: String?
                if let inverse = schema.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    let order = allocateColumn("\(relationship.name)_order", in: tableName, suffix: entity.name)
                    addColumn(ColumnLayout(name: order, sqlType: "INTEGER"), to: tableName)
                    orderColumn = order
                }
                ownRelationships[entity.name, default: [:]][relationship.name] =
                    .foreignKey(column: column, destinationTable: table(of: destination), orderColumn: orderColumn)
            }
        }
        for entity in byDepth {
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where relationship.isToMany && !relationship.isTransient {
                guard let destination = schema.entity(named: relationship.destination) else { continue }
                let destinationTable = table(of: destination)
                let discriminators = schema.hierarchy(under: destination).map(\.name.databaseValue)
                if let inverse = schema.inverse(of: relationship), !inverse.isToMany,
                   let owner = schema.ancestry(of: destination).first(where: { $0.relationships.contains { $0.name == inverse.name } }),
                   case .foreignKey(let column, _, let orderColumn)? = ownRelationships[owner.name]?[inverse.name] {
                    ownRelationships[entity.name, default: [:]][relationship.name] =
                        .inverseForeignKey(table: destinationTable, column: column, orderColumn: orderColumn, destinationDiscriminators: discriminators)
                    continue
                }
                // Join table, shared by a many-to-many pair: the side whose "Entity.relationship" sorts
                // first owns it and is the `owner` column.
                let inverse = schema.inverse(of: relationship)
                let inverseOwner = inverse.flatMap { inv in schema.ancestry(of: destination).first { $0.relationships.contains { $0.name == inv.name } } }
                let selfKey = "\(entity.name).\(relationship.name)"
                let inverseKey = inverse.flatMap { inv in inverseOwner.map { "\($0.name).\(inv.name)" } }
                let ownsTable = inverseKey == nil || selfKey <= inverseKey!
                if ownsTable {
                    let name = tableNames.allocate("\(entity.name)_\(relationship.name)")
                    var columns = [
                        ColumnLayout(name: "owner", sqlType: "INTEGER", constraints: "NOT NULL"),
                        ColumnLayout(name: "other", sqlType: "INTEGER", constraints: "NOT NULL"),
                    ]
                    if relationship.isOrdered { columns.append(ColumnLayout(name: "owner_order", sqlType: "INTEGER")) }
                    if inverse?.isOrdered == true { columns.append(ColumnLayout(name: "other_order", sqlType: "INTEGER")) }
                    tables[name] = TableLayout(name: name, columns: columns, indexes: [
                        IndexLayout(name: "\(name)_owner", columns: ["owner", "other"], unique: true),
                        IndexLayout(name: "\(name)_other", columns: ["other"]),
                    ])
                    tableOrder.append(name)
                    ownRelationships[entity.name, default: [:]][relationship.name] =
                        .joinTable(table: name, ownerColumn: "owner", otherColumn: "other", ownerOrderColumn: relationship.isOrdered ? "owner_order" : nil,
                                   otherOrderColumn: inverse?.isOrdered == true ? "other_order" : nil, destinationTable: destinationTable, writesRows: true)
                    // The other side reads the same rows (a relationship that is its own inverse is one side).
                    if let inverse, let inverseOwner, inverseKey != selfKey {
                        ownRelationships[inverseOwner.name, default: [:]][inverse.name] =
                            .joinTable(table: name, ownerColumn: "other", otherColumn: "owner", ownerOrderColumn: inverse.isOrdered ? "other_order" : nil,
                                       otherOrderColumn: relationship.isOrdered ? "owner_order" : nil, destinationTable: table(of: entity), writesRows: false)
                    }
                }
            }
        }
        // The schema's own indexes, on their entities' tables.
        for entity in byDepth {
            for index in entity.indexes {
                let columns = index.properties.compactMap { name -> String? in
                    for ancestor in schema.ancestry(of: entity) {
                        if let column = ownColumns[ancestor.name]?[name] { return column }
                        if case .foreignKey(let column, _, _)? = ownRelationships[ancestor.name]?[name] { return column }
                    }
                    return nil
                }
                guard !columns.isEmpty else { continue }
                addIndex(IndexLayout(name: "\(table(of: entity))_\(index.name)", columns: columns), to: table(of: entity))
            }
        }
        // Tables and indexes share SQLite's namespace: index names are allocated after every table
        // name, so a clash (an index `Note_folder` and an entity `Note_folder`) renames the index.
        for name in tableOrder {
            guard var table = tables[name] else { continue }
            table.indexes = table.indexes.map { index in
                var renamed = index
                renamed.name = tableNames.allocate(index.name)
                return renamed
            }
            tables[name] = table
        }
        for entity in entities {
            let (attributeColumns, relationships) = StoreLayout.inherited(by: entity, in: schema, columns: ownColumns, relationships: ownRelationships)
            storages[entity.name] = EntityStorage(
                entity: entity.name, table: table(of: entity), primaryKey: Self.primaryKey, entityColumn: Self.entityColumn,
                discriminator: entity.name.databaseValue, discriminators: schema.hierarchy(under: entity).map(\.name.databaseValue), idColumn: Self.idColumn,
                attributeColumns: attributeColumns, relationships: relationships)
        }
        return StoreLayout(format: identifier, tables: tableOrder.compactMap { tables[$0] }, entities: storages)
    }

    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .int16, .int32, .int64, .bool: return "INTEGER"
        case .double, .float, .date: return "REAL"
        case .decimal, .string, .uuid, .uri: return "TEXT"
        case .binary, .transformable: return "BLOB"
        }
    }

    func encodingName(of type: AttributeType) -> String {
        switch type {
        case .date: return "date: REAL seconds since 1970"
        case .decimal: return "decimal: TEXT"
        case .uuid: return "uuid: TEXT lowercase"
        case .bool: return "bool: INTEGER 0 or 1"
        default: return "\(type.rawValue): \(Self.sqlType(of: type))"
        }
    }

    func storageClasses(of type: AttributeType) -> [String] {
        switch Self.sqlType(of: type) {
        case "INTEGER": return ["integer"]
        case "REAL": return ["real", "integer"]
        case "TEXT": return ["text"]
        default: return ["blob"]
        }
    }

    func objectID(entity: String, key: Int64, stored: String?) -> String { stored ?? "\(entity)/p\(key)" }

    func key(fromObjectID id: String, entity: String) -> Int64? { nil }

    /// Seconds since 1970.
    var dateEpoch: Timestamp.Epoch { .unix }

    func encode(_ value: Value, as type: AttributeType) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return flag.databaseValue
        case .integer(let number): return number.databaseValue
        case .double(let number): return number.databaseValue
        case .decimal(let number): return number.description.databaseValue
        case .string(let text): return text.databaseValue
        case .date(let date): return date.seconds(since: dateEpoch).databaseValue
        case .binary(let data): return data.databaseValue
        case .uuid(let uuid): return uuid.uuidString.lowercased().databaseValue
        case .uri(let text): return text.databaseValue
        case .nonUTF8Text(let bytes): return Self.textBytes(bytes)
        }
    }

    /// mapc's columns hold every value the schema's types allow exactly.
    func storageProblem(_ value: Value, as type: AttributeType) -> String? { nil }

    func decode(_ value: DatabaseValue, as type: AttributeType) throws -> Value {
        let decoded = try decodeKind(value, as: type)
        if let problem = ValueLimits.problem(decoded, for: type) {
            throw Self.unreadable(value, as: type, problem: problem)
        }
        return decoded
    }

    private func decodeKind(_ value: DatabaseValue, as type: AttributeType) throws -> Value {
        if value.isNull { return .null }
        func mismatch() -> MapcError { Self.unreadable(value, as: type) }
        switch (type, value.storage) {
        case (.int16, .int64(let n)), (.int32, .int64(let n)), (.int64, .int64(let n)): return .integer(n)
        case (.bool, .int64(let n)):
            guard let flag = Self.bool(n) else { throw Self.notABoolean(n) }
            return .bool(flag)
        case (.double, .double(let d)), (.float, .double(let d)): return .double(d)
        case (.double, .int64(let n)), (.float, .int64(let n)): return .double(Double(n))
        case (.date, .double(let d)): return try Self.date(d, since: dateEpoch)
        case (.date, .int64(let n)): return try Self.date(Double(n), since: dateEpoch)
        case (.decimal, .string(let text)):
            // As mapc writes a decimal: its shortest digits (`description`), so that the value
            // written back is the same text.
            guard let decimal = Self.decimal(text) else { throw mismatch() }
            guard decimal.description == text else {
                throw MapcError.store("stored value '\(English.abbreviated(text, limit: 60))' cannot be read as decimal: mapc's format keeps a decimal as its shortest digits "
                                      + "('\(English.abbreviated(decimal.description, limit: 60))'), and another writer spelled this one otherwise; "
                                      + "set it to '\(English.abbreviated(decimal.description, limit: 60))' in the store and run again")
            }
            return .decimal(decimal)
        case (.string, .string(let text)): return .string(text)
        case (.uri, .string(let text)): return .uri(text)
        case (.uuid, .string(let text)):
            // As mapc writes a UUID, lowercase, so that the value written back is the same text
            // on every path (the compiled one copies it as stored).
            guard let uuid = UUID(uuidString: text) else { throw mismatch() }
            guard uuid.uuidString.lowercased() == text else {
                throw MapcError.store("stored value '\(text)' cannot be read as uuid: mapc's format keeps a UUID in lowercase, and another writer stored this one otherwise; "
                                      + "lowercase it in the store (SQLite's lower()) and run again")
            }
            return .uuid(uuid)
        case (.binary, .blob(let data)), (.transformable, .blob(let data)): return .binary(data)
        default: throw mismatch()
        }
    }
}
