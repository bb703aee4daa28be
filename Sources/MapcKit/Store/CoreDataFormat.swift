import Foundation
import GRDB

/// Core Data's SQLite store format, read and written as Core Data does, so that a migrated Core
/// Data store stays one an app opens:
///
/// - one table per inheritance hierarchy, `Z` + the root entity's name in capitals, with `Z_PK`
///   (the key), `Z_ENT` (the entity's number) and `Z_OPT` (Core Data's save counter), then a
///   column `Z` + NAME per attribute and to-one relationship, grouped as Core Data groups them
///   (integers, then foreign keys and their `Z_FOK_` order columns, then dates and doubles by name,
///   then strings, then blobs), the root's properties before each sub-entity's;
/// - entities numbered 1… depth first, siblings by name; `Z_PRIMARYKEY` with each entity's number,
///   name, parent and (on the root) the largest key handed out;
/// - many-to-many relationships in join tables `Z_<n><NAME>`;
/// - `Z_METADATA` with the store's UUID and a binary property list holding the entity version
///   hashes (`NSStoreModelVersionHashes`, computed as `CoreDataVersionHash` does), the version
///   identifiers, the store type and the app's own keys, which a migration carries over;
/// - `Z_MODELCACHE`, the compiled model Core Data caches, which mapc cannot write: a migrated
///   store has it empty, and Core Data fills it again on the app's next save;
/// - dates as seconds since 2001-01-01, UUIDs as 16 bytes, booleans as 0 and 1, decimals as numbers
///   when SQLite holds them exactly and as text otherwise.
///
/// mapc keeps its migration history in the metadata under `mapc.history` (an app key, which Core
/// Data keeps and ignores). Objects have no stored identities: they are named `Entity/p<key>`, as
/// in Core Data's object URIs.
struct CoreDataFormat: StoreFormatStrategy {
    /// Creates the format.
    init() {}

    var identifier: String { "core-data" }
    var name: String { "Core Data" }

    static let historyKey = "mapc.history"
    /// Keys mapc writes itself in the metadata; every other key of a migrated store is kept.
    static let ownKeys: Set<String> = ["NSStoreModelVersionHashes", "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesVersion",
                                       "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey", "NSStoreType", historyKey]

    // MARK: Layout

    /// The entities in Core Data's numbering: depth first, roots and siblings by name, from 1.
    static func numbering(of schema: Schema) -> [(entity: Entity, number: Int)] {
        var result: [(Entity, Int)] = []
        func visit(_ entity: Entity) {
            result.append((entity, result.count + 1))
            for child in schema.subentities(of: entity).sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) { visit(child) }
        }
        for root in schema.entities.filter({ $0.parent.flatMap(schema.entity(named:)) == nil }).sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) {
            visit(root)
        }
        return result
    }

    /// Core Data's column name for a property: `Z` and the name in capitals.
    static func columnName(_ property: String) -> String { "Z" + property.uppercased() }

    /// Core Data's declared type of an attribute's column.
    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .int16, .int32, .int64, .bool: return "INTEGER"
        case .double, .float: return "FLOAT"
        case .date: return "TIMESTAMP"
        case .decimal: return "DECIMAL"
        case .string, .uri: return "VARCHAR"
        case .binary, .transformable, .uuid: return "BLOB"
        }
    }

    /// The group a column falls in, in Core Data's column order.
    private static func group(of type: AttributeType) -> Int {
        switch sqlType(of: type) {
        case "INTEGER": return 0
        case "VARCHAR": return 3
        case "BLOB": return 4
        default: return 2   // TIMESTAMP, FLOAT and DECIMAL, mixed by name
        }
    }

    func layout(for schema: Schema) -> StoreLayout {
        let numbered = Self.numbering(of: schema)
        let number = Dictionary(numbered.map { ($0.entity.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        var tables: [String: TableLayout] = [:]
        var tableOrder: [String] = []
        var storages: [String: EntityStorage] = [:]
        var tableNames = NameAllocator(reserved: ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        var tableOfRoot: [String: String] = [:]
        var ownColumns: [String: [String: String]] = [:]
        var ownRelationships: [String: [String: RelationshipStorage]] = [:]
        let ordered = numbered.map(\.entity)

        for root in ordered where root.parent.flatMap(schema.entity(named:)) == nil {
            let table = tableNames.allocate(Self.columnName(root.name), separator: "")
            tableOfRoot[root.name] = table
            tableOrder.append(table)
        }
        func table(of entity: Entity) -> String { tableOfRoot[schema.root(of: entity).name] ?? Self.columnName(entity.name) }

        // Columns, hierarchy by hierarchy: each group in turn, the entities in numbering order.
        for (root, tableName) in tableOfRoot.sorted(by: { (number[$0.key] ?? 0) < (number[$1.key] ?? 0) }) {
            guard let rootEntity = schema.entity(named: root) else { continue }
            let members = ordered.filter { schema.root(of: $0).name == rootEntity.name }
            var columnNames = NameAllocator(reserved: ["Z_PK", "Z_ENT", "Z_OPT"])
            var columns = [ColumnLayout(name: "Z_PK", sqlType: "INTEGER", constraints: "PRIMARY KEY"), ColumnLayout(name: "Z_ENT", sqlType: "INTEGER"),
                           ColumnLayout(name: "Z_OPT", sqlType: "INTEGER")]
            var attributes: [(group: Int, name: String, entity: Entity, attribute: Attribute)] = []
            var foreignKeys: [(entity: Entity, relationship: Relationship)] = []
            for entity in members {
                for attribute in entity.attributes where !attribute.isTransient { attributes.append((Self.group(of: attribute.type), attribute.name, entity, attribute)) }
                for relationship in entity.relationships.sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) })
                where !relationship.isToMany && !relationship.isTransient && schema.entity(named: relationship.destination) != nil {
                    foreignKeys.append((entity, relationship))
                }
            }
            func addAttributes(inGroup group: Int) {
                for member in members {
                    for item in attributes.filter({ $0.group == group && $0.entity.name == member.name }).sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) {
                        let column = columnNames.allocate(Self.columnName(item.name), fallbackSuffix: "1", separator: "")
                        columns.append(ColumnLayout(name: column, sqlType: Self.sqlType(of: item.attribute.type)))
                        ownColumns[item.entity.name, default: [:]][item.name] = column
                    }
                }
            }
            addAttributes(inGroup: 0)
            var orderColumns: [(owner: Entity, relationship: Relationship, column: String)] = []
            for (owner, relationship) in foreignKeys {
                let column = columnNames.allocate(Self.columnName(relationship.name), fallbackSuffix: "1", separator: "")
                columns.append(ColumnLayout(name: column, sqlType: "INTEGER"))
                ownRelationships[owner.name, default: [:]][relationship.name] = .foreignKey(column: column, destinationTable: "", orderColumn: nil)
                if let inverse = schema.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    orderColumns.append((owner, relationship, column))
                }
            }
            for (owner, relationship, column) in orderColumns {
                let order = columnNames.allocate("Z_FOK_" + column.dropFirst(), separator: "")
                columns.append(ColumnLayout(name: order, sqlType: "INTEGER"))
                ownRelationships[owner.name, default: [:]][relationship.name] = .foreignKey(column: column, destinationTable: "", orderColumn: order)
            }
            for group in 2...4 { addAttributes(inGroup: group) }
            tables[tableName] = TableLayout(name: tableName, columns: columns, indexes: [])
        }
        // Foreign keys now that every table is named.
        for entity in ordered {
            for (name, kept) in ownRelationships[entity.name] ?? [:] {
                guard case .foreignKey(let column, _, let order) = kept, case .relationship(let relationship)? = schema.property(named: name, in: entity),
                      let destination = schema.entity(named: relationship.destination) else { continue }
                ownRelationships[entity.name]?[name] = .foreignKey(column: column, destinationTable: table(of: destination), orderColumn: order)
            }
        }
        // To-many relationships: through the inverse's foreign key, or a join table.
        for entity in ordered {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let destination = schema.entity(named: relationship.destination) else { continue }
                let discriminators = schema.hierarchy(under: destination).compactMap { number[$0.name].map { Int64($0).databaseValue } }
                let inverse = schema.inverse(of: relationship)
                if let inverse, !inverse.isToMany,
                   let owner = schema.ancestry(of: destination).first(where: { $0.relationships.contains { $0.name == inverse.name } }),
                   case .foreignKey(let column, _, let order)? = ownRelationships[owner.name]?[inverse.name] {
                    ownRelationships[entity.name, default: [:]][relationship.name] =
                        .inverseForeignKey(table: table(of: destination), column: column, orderColumn: relationship.isOrdered ? order : nil, destinationDiscriminators: discriminators)
                    continue
                }
                // A join table, named after the side whose relationship name sorts later (as Core Data's are observed to be).
                let inverseOwner = inverse.flatMap { inv in schema.ancestry(of: destination).first { $0.relationships.contains { $0.name == inv.name } } }
                let writes: Bool
                if let inverse, inverse.name != relationship.name {
                    writes = CoreDataVersionHash.nsCompare(inverse.name, relationship.name)
                } else {
                    writes = entity.name <= (inverseOwner?.name ?? entity.name)
                }
                guard writes else { continue }
                let ownNumber = number[entity.name] ?? 0, otherNumber = number[destination.name] ?? 0
                let tableName = tableNames.allocate("Z_\(ownNumber)\(relationship.name.uppercased())", separator: "")
                // The column of each side's objects is named after that side's number and the relationship leading to it.
                let ownColumn = "Z_\(ownNumber)\((inverse?.name ?? entity.name).uppercased())"
                let otherColumn = "Z_\(otherNumber)\(relationship.name.uppercased())"
                let ownOrder = relationship.isOrdered ? "Z_FOK_\(otherNumber)\(relationship.name.uppercased())" : nil
                let otherOrder = inverse?.isOrdered == true ? "Z_FOK_\(ownNumber)\((inverse?.name ?? "").uppercased())" : nil
                var columns = [ColumnLayout(name: ownColumn, sqlType: "INTEGER"), ColumnLayout(name: otherColumn, sqlType: "INTEGER")]
                for order in [ownOrder, otherOrder].compactMap({ $0 }) { columns.append(ColumnLayout(name: order, sqlType: "INTEGER")) }
                tables[tableName] = TableLayout(name: tableName, columns: columns, indexes: [IndexLayout(name: "\(tableName)_\(otherColumn)_INDEX", columns: [otherColumn, ownColumn])],
                                                constraints: ["PRIMARY KEY (\(Self.sqlName(ownColumn)), \(Self.sqlName(otherColumn)))"])
                tableOrder.append(tableName)
                ownRelationships[entity.name, default: [:]][relationship.name] =
                    .joinTable(table: tableName, ownerColumn: ownColumn, otherColumn: otherColumn, ownerOrderColumn: ownOrder, otherOrderColumn: otherOrder,
                               destinationTable: table(of: destination), writesRows: true)
                if let inverse, let inverseOwner {
                    ownRelationships[inverseOwner.name, default: [:]][inverse.name] =
                        .joinTable(table: tableName, ownerColumn: otherColumn, otherColumn: ownColumn, ownerOrderColumn: otherOrder, otherOrderColumn: ownOrder,
                                   destinationTable: table(of: entity), writesRows: false)
                }
            }
        }
        // Indexes, in Core Data's order: single attributes, foreign keys, the entity column, then compound ones.
        for (root, tableName) in tableOfRoot {
            guard let rootEntity = schema.entity(named: root), var table = tables[tableName] else { continue }
            let members = ordered.filter { schema.root(of: $0).name == rootEntity.name }
            func columns(of index: Index, in entity: Entity) -> [String] {
                index.properties.compactMap { property in
                    for ancestor in schema.ancestry(of: entity) {
                        if let column = ownColumns[ancestor.name]?[property] { return column }
                        if case .foreignKey(let column, _, _)? = ownRelationships[ancestor.name]?[property] { return column }
                    }
                    return nil
                }
            }
            var single: [IndexLayout] = [], compound: [IndexLayout] = []
            for member in members {
                for index in member.indexes {
                    let indexed = columns(of: index, in: member)
                    guard !indexed.isEmpty else { continue }
                    if indexed.count == 1 { single.append(IndexLayout(name: "\(tableName)_\(indexed[0])_INDEX", columns: indexed)) }
                    else { compound.append(IndexLayout(name: "\(tableName)_" + indexed.joined(separator: "_"), columns: indexed)) }
                }
            }
            var indexes = single.sorted { $0.name < $1.name }
            for member in members {
                for case .foreignKey(let column, _, _) in (ownRelationships[member.name] ?? [:]).sorted(by: { CoreDataVersionHash.nsCompare($0.key, $1.key) }).map(\.value) {
                    indexes.append(IndexLayout(name: "\(tableName)_\(column)_INDEX", columns: [column]))
                }
            }
            if members.count > 1 { indexes.append(IndexLayout(name: "\(tableName)_Z_ENT_INDEX", columns: ["Z_ENT"])) }
            indexes += compound
            var seen: Set<String> = []
            table.indexes = indexes.filter { seen.insert($0.name).inserted }
            func column(of property: String) -> String? {
                for member in members {
                    if let column = ownColumns[member.name]?[property] { return column }
                    if case .foreignKey(let column, _, _)? = ownRelationships[member.name]?[property] { return column }
                }
                return nil
            }
            for constraint in members.flatMap(\.uniquenessConstraints) {
                let constrained = constraint.compactMap(column(of:))
                guard constrained.count == constraint.count else { continue }
                table.constraints.append("CONSTRAINT \(constrained.joined(separator: "_")) UNIQUE (\(constrained.map(Self.sqlName).joined(separator: ", ")))")
            }
            tables[tableName] = table
        }
        for entity in ordered {
            let (attributeColumns, relationships) = StoreLayout.inherited(by: entity, in: schema, columns: ownColumns, relationships: ownRelationships)
            storages[entity.name] = EntityStorage(
                entity: entity.name, table: table(of: entity), primaryKey: "Z_PK", entityColumn: "Z_ENT",
                discriminator: Int64(number[entity.name] ?? 0).databaseValue,
                discriminators: schema.hierarchy(under: entity).compactMap { number[$0.name].map { Int64($0).databaseValue } },
                idColumn: nil, insertedColumns: [InsertedColumn(name: "Z_OPT", value: 1.databaseValue)],
                attributeColumns: attributeColumns, relationships: relationships)
        }
        return StoreLayout(format: identifier, tables: tableOrder.compactMap { tables[$0] }, entities: storages)
    }

    /// A name as Core Data writes it in SQL: bare, unless it is not a plain identifier.
    static func sqlName(_ name: String) -> String {
        let plain = name.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        return plain ? name : name.quotedDatabaseIdentifier
    }

    // MARK: Values

    func encodingName(of type: AttributeType) -> String {
        switch type {
        case .date: return "date: REAL seconds since 2001"
        case .uuid: return "uuid: BLOB 16 bytes"
        case .decimal: return "decimal: DECIMAL (REAL when exact, text otherwise)"
        case .bool: return "bool: INTEGER 0 or 1"
        default: return "\(type.rawValue): \(MapcFormat.sqlType(of: type))"
        }
    }

    func storageClasses(of type: AttributeType) -> [String] {
        switch Self.sqlType(of: type) {
        case "INTEGER": return ["integer"]
        case "FLOAT", "TIMESTAMP": return ["real", "integer"]
        case "DECIMAL": return ["real", "integer", "text"]
        case "VARCHAR": return ["text"]
        default: return ["blob"]
        }
    }

    /// Seconds since 2001, Foundation's count, as Core Data stores dates.
    var dateEpoch: Timestamp.Epoch { .reference }

    func encode(_ value: Value, as type: AttributeType) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return flag.databaseValue
        case .integer(let number): return number.databaseValue
        case .double(let number): return number.databaseValue
        case .decimal(let number): return Self.decimalCell(number)
        case .string(let text): return text.databaseValue
        // Seconds since 2001, Core Data's own count: a date read from such a store comes back bit for bit.
        case .date(let date): return date.seconds(since: dateEpoch).databaseValue
        case .binary(let data): return data.databaseValue
        case .uuid(let uuid): return withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        case .uri(let text): return text.databaseValue
        case .nonUTF8Text(let bytes): return Self.textBytes(bytes)
        }
    }

    func storageProblem(_ value: Value, as type: AttributeType) -> String? {
        // NaN is written as the text 'NaN', which the column keeps.
        guard case .decimal(let number) = value, !number.isNaN else { return nil }
        guard Self.exactDecimalCell(number) == nil else { return nil }
        let stored = Double(number.description) ?? .nan
        return "decimal \(number) has more digits than a Core Data DECIMAL column keeps (it holds a 64-bit integer or a double, about 15 significant digits) and would be stored as \(stored); round it in the mapping, or store it as a string"
    }

    /// The cell a DECIMAL column holds exactly for a decimal, nil when it holds none: SQLite's
    /// numeric affinity turns numeric text into an INTEGER or a REAL, so what the column keeps
    /// is a whole number within 64 bits, a double, or text that is no number ('NaN'). The double
    /// is Swift's correctly rounded one (Foundation's `doubleValue` of a decimal is off in the
    /// last bits), bound as such rather than left to SQLite's conversion of the text.
    private static func exactDecimalCell(_ number: Decimal) -> DatabaseValue? {
        if number.isNaN { return "NaN".databaseValue }
        let text = number.description
        if let whole = Int64(text) { return whole.databaseValue }
        guard let double = Double(text), double.isFinite, ValueParser.parseDecimal("\(double)") == number else { return nil }
        return double.databaseValue
    }

    /// A decimal's cell: the exact one, or (for a value `storageProblem` refuses, never written)
    /// its text.
    private static func decimalCell(_ number: Decimal) -> DatabaseValue {
        exactDecimalCell(number) ?? number.description.databaseValue
    }

    func decode(_ value: DatabaseValue, as type: AttributeType) throws -> Value {
        let decoded: Value
        func mismatch() -> MapcError {
            MapcError.store("stored value \(StoreValidator.describe(value)) cannot be read as \(type.rawValue); the store does not match its model")
        }
        switch (type, value.storage) {
        case (_, .null): return .null
        case (.int16, .int64(let n)), (.int32, .int64(let n)), (.int64, .int64(let n)): decoded = .integer(n)
        case (.bool, .int64(let n)):
            guard let flag = Self.bool(n) else { throw mismatch() }
            decoded = .bool(flag)
        case (.double, .double(let d)), (.float, .double(let d)): decoded = .double(d)
        case (.double, .int64(let n)), (.float, .int64(let n)): decoded = .double(Double(n))
        case (.date, .double(let d)): decoded = try Self.date(d, since: dateEpoch)
        case (.date, .int64(let n)): decoded = try Self.date(Double(n), since: dateEpoch)
        case (.decimal, .double(let d)):
            // The shortest digits of the double: what the column holds, as a decimal (nil beyond a decimal's range).
            guard let number = ValueParser.parseDecimal("\(d)") else { throw mismatch() }
            decoded = .decimal(number)
        case (.decimal, .int64(let n)): decoded = .decimal(Decimal(n))
        case (.decimal, .string(let text)):
            guard let number = Self.decimal(text) else { throw mismatch() }
            decoded = .decimal(number)
        case (.string, .string(let text)): decoded = .string(text)
        case (.uri, .string(let text)): decoded = .uri(text)
        case (.uuid, .blob(let data)) where data.count == 16:
            decoded = .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw mismatch() }
            decoded = .uuid(uuid)
        case (.binary, .blob(let data)), (.transformable, .blob(let data)): decoded = .binary(data)
        default: throw mismatch()
        }
        if let problem = ValueLimits.problem(decoded, for: type) {
            throw MapcError.store("stored value \(StoreValidator.describe(value)) cannot be read as \(type.rawValue): \(problem)")
        }
        return decoded
    }

    // MARK: Identities and keys

    func objectID(entity: String, key: Int64, stored: String?) -> String { "\(entity)/p\(key)" }

    func key(fromObjectID id: String, entity: String) -> Int64? {
        let prefix = "\(entity)/p"
        guard id.hasPrefix(prefix) else { return nil }
        return Int64(id.dropFirst(prefix.count))
    }

    func highestKey(inTable table: String, layout: StoreLayout, _ db: Database) throws -> Int64 {
        let largest = try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM \(Self.sqlName(table))") ?? 0
        // Z_MAX is kept on the root's row; -1 (seen after an in-place migration) means "count again".
        let members = layout.members(ofTable: table).map { Store.sqlLiteral($0.discriminator) }
        guard !members.isEmpty else { return largest }
        let counter = try Int64.fetchOne(db, sql: "SELECT max(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT IN (\(members.joined(separator: ", "))) AND typeof(Z_MAX) = 'integer'") ?? 0
        return max(largest, counter)
    }

    func raiseKeyCounter(inTable table: String, layout: StoreLayout, to key: Int64, _ db: Database) throws {
        guard let root = Self.root(of: table, layout) else { return }
        try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?", arguments: [key, root.discriminator])
    }

    /// The storage of a table's root entity: the one whose hierarchy holds every member.
    private static func root(of table: String, _ layout: StoreLayout) -> EntityStorage? {
        layout.members(ofTable: table).max(by: { $0.discriminators.count < $1.discriminators.count })
    }

    func finishWriting(_ db: Database, layout: StoreLayout) throws {
        // Z_MAX, kept on each hierarchy's root row, covers every key handed out.
        for (table, members) in layout.entityTables {
            guard let root = Self.root(of: table, layout) else { continue }
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, (SELECT COALESCE(max(Z_PK), 0) FROM \(Self.sqlName(table)))) WHERE Z_ENT = ?", arguments: [root.discriminator])
        }
    }
}
