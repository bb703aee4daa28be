import Foundation
package import GRDB
import MapcModel

/// How Core Data lays a model out in SQLite, as read off real stores written by Core Data from
/// 2009 to today (see docs/core-data.md): what a new store is created with, and, for a store that
/// exists, what the store itself says where eras differ (join tables' names and numbered columns,
/// a to-many without an inverse kept in a column or a join table, the column of a to-one's
/// destination entity).
extension CoreDataFormat {
    func layout(for schema: Schema) -> StoreLayout {
        CoreDataLayout(schema: schema).build()
    }

    /// The layout of an existing store: the one Core Data would write today, with what the store
    /// keeps otherwise read from the store (`CoreDataLayout.reconciled`).
    func layout(for schema: Schema, in db: Database) throws -> StoreLayout {
        let numbered = try CoreDataFormat.numbering(of: schema, in: db)
        return try CoreDataLayout(schema: schema, numbered: numbered).build().reconciled(with: db, schema: schema, numbered: numbered)
            .withSiblingColumnsReadFromValues(db, schema: schema)
    }
}

/// Builds Core Data's layout of a schema:
///
/// - one table per inheritance hierarchy, `Z` + the root's name in capitals; `Z_PK`, `Z_ENT`,
///   `Z_OPT`, then the columns of its entities in groups, each group entity by entity (root
///   first, in numbering order) and within an entity by name: integers and booleans, then that
///   entity's to-one foreign keys (each followed by `Z<n>_<NAME>`, the destination's entity
///   number, when the destination has sub-entities, and by its `Z_FOK_` position column when the
///   inverse is ordered), then the hidden foreign keys of to-many relationships without an inverse
///   that lead to it (`Z<n><NAME>`, n the owner's number); then dates and floats, then decimals,
///   then strings, then blobs;
/// - a many-to-many pair in a join table `Z_<n><REL>` owned by the side with the lower entity
///   number (for an entity related to itself, by the relationship whose name sorts later), with
///   the owner's keys in `Z_<n><INVERSE>` and the other's in `Z_<m><REL>`, a column name already
///   used by another join table numbered 1, 2…, and the reverse index Core Data writes since 637;
/// - indexes: single attributes, foreign keys (hidden ones included), `Z_ENT` when the hierarchy
///   has several entities, then compound ones.
struct CoreDataLayout {
    let schema: Schema
    let numbered: [(entity: Entity, number: Int)]
    let number: [String: Int]

    /// The layout of `schema` with its entities numbered as `numbered` says (by default, as
    /// Core Data numbers them: `CoreDataFormat.numbering(of:)`).
    init(schema: Schema, numbered: [(entity: Entity, number: Int)]? = nil) {
        self.schema = schema
        self.numbered = numbered ?? CoreDataFormat.numbering(of: schema)
        number = Dictionary(self.numbered.map { ($0.entity.name, $0.number) }, uniquingKeysWith: { first, _ in first })
    }

    private static func column(_ name: String) -> String { CoreDataFormat.columnName(name) }

    /// The group of an attribute's column, in Core Data's column order (foreign keys are group 0's).
    private static func group(of type: AttributeType) -> Int {
        switch CoreDataFormat.sqlType(of: type) {
        case "INTEGER": return 0
        case "TIMESTAMP", "FLOAT": return 1
        case "DECIMAL": return 2
        case "VARCHAR": return 3
        default: return 4
        }
    }

    /// The entity declaring a relationship, among an entity's ancestors.
    private func owner(of relationship: String, from entity: Entity) -> Entity? {
        schema.ancestry(of: entity).first { $0.relationships.contains { $0.name == relationship } }
    }

    /// Whether a to-many relationship is kept in a hidden foreign key on its destination's table:
    /// it has no inverse (and is not ordered, whose positions need a join table).
    private func keptInHiddenKey(_ relationship: Relationship) -> Bool {
        relationship.isToMany && !relationship.isOrdered && !relationship.isTransient && schema.inverse(of: relationship) == nil
            && schema.entity(named: relationship.destination) != nil
    }

    func build() -> StoreLayout {
        var tableNames = NameAllocator(reserved: ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"])
        var tableOfRoot: [String: String] = [:]
        var tableOrder: [String] = []
        var tables: [String: TableLayout] = [:]
        var ownColumns: [String: [String: String]] = [:]
        var ownRelationships: [String: [String: RelationshipStorage]] = [:]
        var derived: [DerivedColumn] = []
        let ordered = numbered.map(\.entity)
        // Each table's entities in number order, grouped once (a schema may have thousands).
        var membersOfRoot: [String: [Entity]] = [:]
        for entity in ordered { membersOfRoot[schema.root(of: entity).name, default: []].append(entity) }
        for root in ordered where root.parent.flatMap(schema.entity(named:)) == nil {
            let table = tableNames.allocate(Self.column(root.name), separator: "")
            tableOfRoot[root.name] = table
            tableOrder.append(table)
        }
        func table(of entity: Entity) -> String { tableOfRoot[schema.root(of: entity).name] ?? Self.column(entity.name) }
        // The to-many relationships without an inverse, by the entity their hidden key lives on.
        var hiddenKeys: [String: [(owner: Entity, relationship: Relationship)]] = [:]
        for entity in ordered {
            for relationship in entity.relationships.sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) where keptInHiddenKey(relationship) {
                hiddenKeys[relationship.destination, default: []].append((entity, relationship))
            }
        }

        for root in ordered where tableOfRoot[root.name] != nil {
            let tableName = tableOfRoot[root.name] ?? ""
            let members = membersOfRoot[root.name] ?? []
            var names = NameAllocator(reserved: ["Z_PK", "Z_ENT", "Z_OPT"])
            var columns = [ColumnLayout(name: "Z_PK", sqlType: "INTEGER", constraints: "PRIMARY KEY"), ColumnLayout(name: "Z_ENT", sqlType: "INTEGER"),
                           ColumnLayout(name: "Z_OPT", sqlType: "INTEGER")]
            func add(_ name: String, _ type: String) -> String {
                let allocated = names.allocate(name, fallbackSuffix: "1", separator: "")
                columns.append(ColumnLayout(name: allocated, sqlType: type))
                return allocated
            }
            func addAttributes(of member: Entity, inGroup group: Int) {
                for attribute in member.attributes.filter({ !$0.isTransient && Self.group(of: $0.type) == group }).sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) {
                    ownColumns[member.name, default: [:]][attribute.name] = add(Self.column(attribute.name), CoreDataFormat.sqlType(of: attribute.type))
                }
            }
            for member in members {
                addAttributes(of: member, inGroup: 0)
                for relationship in member.relationships.sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) })
                where !relationship.isToMany && !relationship.isTransient {
                    guard let destination = schema.entity(named: relationship.destination) else { continue }
                    let column = add(Self.column(relationship.name), "INTEGER")
                    if !schema.subentities(of: destination).isEmpty {
                        let companion = add("Z\(number[destination.name] ?? 0)_\(relationship.name.uppercased())", "INTEGER")
                        derived.append(DerivedColumn(table: tableName, column: companion, foreignKey: column, destinationTable: table(of: destination)))
                    }
                    var order: String?
                    if let inverse = schema.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                        order = add("Z_FOK_" + column.dropFirst(), "INTEGER")
                    }
                    ownRelationships[member.name, default: [:]][relationship.name] = .foreignKey(column: column, destinationTable: table(of: destination), orderColumn: order)
                }
                for (owner, relationship) in hiddenKeys[member.name] ?? [] {
                    let column = add("Z\(number[owner.name] ?? 0)\(relationship.name.uppercased())", "INTEGER")
                    let discriminators = schema.hierarchy(under: member).compactMap { number[$0.name].map { Int64($0).databaseValue } }
                    ownRelationships[owner.name, default: [:]][relationship.name] =
                        .inverseForeignKey(table: tableName, column: column, orderColumn: nil, destinationDiscriminators: discriminators)
                }
            }
            for group in 1...4 {
                for member in members { addAttributes(of: member, inGroup: group) }
            }
            tables[tableName] = TableLayout(name: tableName, columns: columns, indexes: [])
        }

        // Join tables, in creation order (owners by number, relationships by name).
        var joinColumns = NameAllocator(reserved: [])
        for entity in ordered {
            for relationship in entity.relationships.sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) })
            where relationship.isToMany && !relationship.isTransient && !keptInHiddenKey(relationship) {
                guard let destination = schema.entity(named: relationship.destination) else { continue }
                let inverse = schema.inverse(of: relationship)
                let inverseOwner = inverse.flatMap { owner(of: $0.name, from: destination) }
                if let inverse, !inverse.isToMany {
                    // One-to-many: read through the inverse's foreign key on the destination's table.
                    if let inverseOwner, case .foreignKey(let column, _, let order)? = ownRelationships[inverseOwner.name]?[inverse.name] {
                        let discriminators = schema.hierarchy(under: destination).compactMap { number[$0.name].map { Int64($0).databaseValue } }
                        ownRelationships[entity.name, default: [:]][relationship.name] =
                            .inverseForeignKey(table: table(of: destination), column: column, orderColumn: relationship.isOrdered ? order : nil, destinationDiscriminators: discriminators)
                    }
                    continue
                }
                let ownNumber = number[entity.name] ?? 0
                if let inverse, let inverseOwner, inverse.name != relationship.name || inverseOwner.name != entity.name {
                    let otherNumber = number[inverseOwner.name] ?? 0
                    // The lower entity number owns the table; an entity related to itself, the name sorting later.
                    let owns = ownNumber != otherNumber ? ownNumber < otherNumber : CoreDataVersionHash.nsCompare(inverse.name, relationship.name)
                    guard owns else { continue }
                }
                let otherNumber = number[destination.name] ?? 0
                let tableName = tableNames.allocate("Z_\(ownNumber)\(relationship.name.uppercased())", separator: "")
                // Each side's keys are named after its number and the relationship leading to it.
                let ownColumn = joinColumns.allocate("Z_\(ownNumber)\((inverse?.name ?? entity.name).uppercased())", fallbackSuffix: "1", separator: "")
                let otherColumn = joinColumns.allocate("Z_\(otherNumber)\(relationship.name.uppercased())", fallbackSuffix: "1", separator: "")
                let ownOrder = relationship.isOrdered ? "Z_FOK_" + otherColumn.dropFirst(2) : nil
                let otherOrder = inverse?.isOrdered == true ? "Z_FOK_" + ownColumn.dropFirst(2) : nil
                var columns = [ColumnLayout(name: ownColumn, sqlType: "INTEGER"), ColumnLayout(name: otherColumn, sqlType: "INTEGER")]
                for order in [ownOrder, otherOrder].compactMap({ $0 }) { columns.append(ColumnLayout(name: order, sqlType: "INTEGER")) }
                tables[tableName] = TableLayout(name: tableName, columns: columns, indexes: [IndexLayout(name: "\(tableName)_\(otherColumn)_INDEX", columns: [otherColumn, ownColumn])],
                                                constraints: ["PRIMARY KEY (\(CoreDataFormat.sqlName(ownColumn)), \(CoreDataFormat.sqlName(otherColumn)))"])
                tableOrder.append(tableName)
                ownRelationships[entity.name, default: [:]][relationship.name] =
                    .joinTable(table: tableName, ownerColumn: ownColumn, otherColumn: otherColumn, ownerOrderColumn: ownOrder, otherOrderColumn: otherOrder,
                               destinationTable: table(of: destination), writesRows: true)
                // The other side reads the same rows (a relationship that is its own inverse is one side).
                if let inverse, let inverseOwner, inverse.name != relationship.name || inverseOwner.name != entity.name {
                    ownRelationships[inverseOwner.name, default: [:]][inverse.name] =
                        .joinTable(table: tableName, ownerColumn: otherColumn, otherColumn: ownColumn, ownerOrderColumn: otherOrder, otherOrderColumn: ownOrder,
                                   destinationTable: table(of: entity), writesRows: false)
                }
            }
        }

        // Indexes, in Core Data's order: single attributes, foreign keys, the entity column, then compound ones.
        for (root, tableName) in tableOfRoot {
            guard let rootEntity = schema.entity(named: root), var table = tables[tableName] else { continue }
            let members = membersOfRoot[rootEntity.name] ?? []
            func column(of property: String, from entity: Entity) -> String? {
                for ancestor in schema.ancestry(of: entity) {
                    if let column = ownColumns[ancestor.name]?[property] { return column }
                    if case .foreignKey(let column, _, _)? = ownRelationships[ancestor.name]?[property] { return column }
                }
                return nil
            }
            var single: [IndexLayout] = [], compound: [IndexLayout] = []
            for member in members {
                for index in member.indexes {
                    let indexed = index.properties.compactMap { column(of: $0, from: member) }
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
                for (owner, relationship) in hiddenKeys[member.name] ?? [] {
                    if case .inverseForeignKey(_, let column, _, _)? = ownRelationships[owner.name]?[relationship.name] {
                        indexes.append(IndexLayout(name: "\(tableName)_\(column)_INDEX", columns: [column]))
                    }
                }
            }
            if members.count > 1 { indexes.append(IndexLayout(name: "\(tableName)_Z_ENT_INDEX", columns: ["Z_ENT"])) }
            indexes += compound
            // The same index twice (a property indexed alone and as its relationship's key) is one.
            var seen: Set<[String]> = []
            table.indexes = indexes.filter { seen.insert([$0.name] + $0.columns).inserted }
            for constraint in members.flatMap(\.uniquenessConstraints) {
                let constrained = constraint.compactMap { property in members.lazy.compactMap { column(of: property, from: $0) }.first }
                guard constrained.count == constraint.count else { continue }
                table.constraints.append("CONSTRAINT \(constrained.joined(separator: "_")) UNIQUE (\(constrained.map(CoreDataFormat.sqlName).joined(separator: ", ")))")
            }
            tables[tableName] = table
        }
        // Index names share one namespace with tables in SQLite, and the names made from a table's
        // and its columns' can meet (`ZA` + `ZB_ZC` and `ZA_ZB` + `ZC`; `ZNOTE_ZA_ZB_INDEX` for a
        // column `ZA_ZB` and for `ZA` with `ZB_INDEX`): a later one is numbered, where one was an
        // SQLite error ("already exists") or dropped without a word.
        var indexNames = NameAllocator(reserved: Set(tables.keys))
        for name in tables.keys.sorted() {
            guard var table = tables[name] else { continue }
            for position in table.indexes.indices { table.indexes[position].name = indexNames.allocate(table.indexes[position].name) }
            tables[name] = table
        }
        var storages: [String: EntityStorage] = [:]
        for entity in ordered {
            let (attributeColumns, relationships) = StoreLayout.inherited(by: entity, in: schema, columns: ownColumns, relationships: ownRelationships)
            storages[entity.name] = EntityStorage(
                entity: entity.name, table: table(of: entity), primaryKey: "Z_PK", entityColumn: "Z_ENT",
                discriminator: Int64(number[entity.name] ?? 0).databaseValue,
                discriminators: schema.hierarchy(under: entity).compactMap { number[$0.name].map { Int64($0).databaseValue } },
                idColumn: nil, insertedColumns: [InsertedColumn(name: "Z_OPT", value: 1.databaseValue)],
                attributeColumns: attributeColumns, relationships: relationships)
        }
        return StoreLayout(format: "core-data", tables: tableOrder.compactMap { tables[$0] }, entities: storages, derivedColumns: derived)
    }
}

extension StoreLayout {
    /// This layout, with what an existing Core Data store keeps otherwise read from the store:
    /// Core Data's rules changed over the years, and a store keeps the ones it was made with.
    ///
    /// - A many-to-many pair's join table is found under either side's name (`Z_1ARTWORKS` or
    ///   `Z_3COLLECTIONS`), its columns by their names with or without a number (`Z_2ARTISTS1`).
    /// - A to-many without an inverse is kept in a hidden key (`ZDOCUMENT.Z1DOCUMENTS`) or, in a
    ///   store mapc wrote before it followed Core Data there, in a join table.
    /// - A to-one's destination-entity column (`Z7_COVER`) is kept up to date only where the
    ///   store has it, under the name it has.
    func reconciled(with db: Database, schema: Schema, numbered: [(entity: Entity, number: Int)]) throws -> StoreLayout {
        var layout = self
        var columnCache: [String: [String]] = [:]
        let tableNames = Dictionary(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'").map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        func columns(of table: String) throws -> [String] {
            if let known = columnCache[table] { return known }
            let found = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
            columnCache[table] = found
            return found
        }
        /// The column of `table` named `base`, or `base` followed by a number.
        func column(_ base: String, in table: String) throws -> String? {
            let names = try columns(of: table)
            if let exact = names.first(where: { $0.caseInsensitiveCompare(base) == .orderedSame }) { return exact }
            return names.first { $0.count > base.count && $0.uppercased().hasPrefix(base.uppercased()) && $0.dropFirst(base.count).allSatisfy(\.isNumber) }
        }
        let number = Dictionary(numbered.map { ($0.entity.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        var replaced: [String: [String: RelationshipStorage]] = [:]
        // Join tables as the store has them, by the name this layout predicted.
        var joinTables: [String: TableLayout] = [:]
        for entity in schema.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let storage = entities[entity.name]?.relationships[relationship.name], let destination = schema.entity(named: relationship.destination) else { continue }
                let inverse = schema.inverse(of: relationship)
                let inverseOwner = inverse.flatMap { inverse in schema.ancestry(of: destination).first { $0.relationships.contains { $0.name == inverse.name } } }
                switch storage {
                case .joinTable(let table, _, _, _, _, let destinationTable, true):
                    // Where the store keeps the pair: under this side's name or the other's.
                    let own = number[entity.name] ?? 0, other = number[inverseOwner?.name ?? destination.name] ?? 0
                    let ownKeys = "Z_\(own)\((inverse?.name ?? entity.name).uppercased())", otherKeys = "Z_\(number[destination.name] ?? 0)\(relationship.name.uppercased())"
                    var candidates = [table, "Z_\(own)\(relationship.name.uppercased())"]
                    if let inverse { candidates.append("Z_\(other)\(inverse.name.uppercased())") }
                    var found: (table: String, own: String, other: String)?
                    for candidate in candidates {
                        guard let actual = tableNames[candidate.lowercased()] else { continue }
                        if ownKeys.caseInsensitiveCompare(otherKeys) == .orderedSame {
                            // Both sides' keys under one name (a relationship that is its own
                            // inverse): the two columns of that name, numbered or not, the owner's first.
                            let both = try columns(of: actual).filter { name in
                                name.uppercased().hasPrefix(ownKeys.uppercased()) && name.dropFirst(ownKeys.count).allSatisfy(\.isNumber)
                            }
                            guard both.count == 2 else { continue }
                            found = (actual, both[0], both[1])
                            break
                        }
                        guard let ownColumn = try column(ownKeys, in: actual), let otherColumn = try column(otherKeys, in: actual), ownColumn != otherColumn else { continue }
                        found = (actual, ownColumn, otherColumn)
                        break
                    }
                    guard let found else { continue }
                    let ownOrder = try relationship.isOrdered ? column("Z_FOK_" + otherKeys.dropFirst(2), in: found.table) : nil
                    let otherOrder = try inverse?.isOrdered == true ? column("Z_FOK_" + ownKeys.dropFirst(2), in: found.table) : nil
                    joinTables[table] = TableLayout(name: found.table, columns: [found.own, found.other].map { ColumnLayout(name: $0, sqlType: "INTEGER") }, indexes: [])
                    replaced[entity.name, default: [:]][relationship.name] =
                        .joinTable(table: found.table, ownerColumn: found.own, otherColumn: found.other, ownerOrderColumn: ownOrder, otherOrderColumn: otherOrder,
                                   destinationTable: destinationTable, writesRows: true)
                    if let inverse, let inverseOwner, inverse.name != relationship.name || inverseOwner.name != entity.name {
                        replaced[inverseOwner.name, default: [:]][inverse.name] =
                            .joinTable(table: found.table, ownerColumn: found.other, otherColumn: found.own, ownerOrderColumn: otherOrder, otherOrderColumn: ownOrder,
                                       destinationTable: entities[entity.name]?.table ?? "", writesRows: false)
                    }
                case .inverseForeignKey(let table, let hidden, nil, _) where inverse == nil:
                    // A hidden key the store has, or the join table an earlier mapc wrote.
                    guard try column(hidden, in: table) == nil else { continue }
                    let own = number[entity.name] ?? 0
                    let joinName = "Z_\(own)\(relationship.name.uppercased())"
                    guard let actual = tableNames[joinName.lowercased()], let ownColumn = try column("Z_\(own)\(entity.name.uppercased())", in: actual),
                          let otherColumn = try column("Z_\(number[destination.name] ?? 0)\(relationship.name.uppercased())", in: actual) else { continue }
                    replaced[entity.name, default: [:]][relationship.name] =
                        .joinTable(table: actual, ownerColumn: ownColumn, otherColumn: otherColumn, ownerOrderColumn: nil, otherOrderColumn: nil, destinationTable: table, writesRows: true)
                    layout.tables.append(TableLayout(name: actual, columns: [ownColumn, otherColumn].map { ColumnLayout(name: $0, sqlType: "INTEGER") }, indexes: []))
                default:
                    continue
                }
            }
        }
        layout.tables = layout.tables.map { joinTables[$0.name] ?? $0 }
        if !replaced.isEmpty {
            for (name, storage) in layout.entities {
                guard let entity = schema.entity(named: name) else { continue }
                var storage = storage
                for ancestor in schema.ancestry(of: entity).reversed() {
                    for (relationship, kept) in replaced[ancestor.name] ?? [:] { storage.relationships[relationship] = kept }
                }
                layout.entities[name] = storage
            }
        }
        // Destination-entity columns the store has, under its names.
        layout.derivedColumns = try derivedColumns.compactMap { derived in
            guard tableNames[derived.table.lowercased()] != nil else { return nil }
            let prefix = "Z", suffix = derived.column.drop { $0 != "_" }
            let names = try columns(of: derived.table)
            guard let actual = names.first(where: { $0.caseInsensitiveCompare(derived.column) == .orderedSame })
                    ?? names.first(where: { $0.uppercased().hasPrefix(prefix) && $0.uppercased().hasSuffix(suffix.uppercased()) && $0.dropFirst().dropLast(suffix.count).allSatisfy(\.isNumber) && $0.count > suffix.count + 1 })
            else { return nil }
            var found = derived
            found.column = actual
            return found
        }
        return layout
    }
}
