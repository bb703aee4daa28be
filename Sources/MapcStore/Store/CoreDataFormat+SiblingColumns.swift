import Foundation
internal import GRDB
import MapcModel

extension StoreLayout {
    /// This layout, with the columns of same-named attributes of entities sharing a table (two
    /// sibling sub-entities' `size`) assigned by what the store holds in them.
    ///
    /// Core Data gives such attributes one column each, `ZSIZE`, `ZSIZE1`, …; which entity gets
    /// which follows an order the corpus cannot confirm (mapc numbers them in the order it lays
    /// out the columns). A column holds values of its own entity's rows only, so the values say
    /// which is whose: a column holding values of one entity's rows is that entity's, and the
    /// entities without values anywhere keep their predicted columns where those are free, else
    /// take the ones left, in order. Where a column holds values of several entities' rows (a
    /// damaged store), or of rows of none of them, the layout stays as predicted. One scan of each
    /// table that has such columns, at most.
    func withSiblingColumnsReadFromValues(_ db: Database, schema: Schema) throws -> StoreLayout {
        /// An entity declaring an attribute or a to-one relationship of a shared name, and the
        /// column predicted for it.
        struct Member {
            var entity: Entity
            var property: String
            var isRelationship: Bool
            var column: String
            var discriminators: [DatabaseValue]
        }
        // Each table's attributes and to-one keys by the column name Core Data derives from them
        // (capitals): a to-one's key column holds values of its own entity's rows only, too.
        var groups: [String: [Member]] = [:]
        for entity in schema.entities {
            guard let storage = entities[entity.name] else { continue }
            for attribute in entity.attributes where !attribute.isTransient {
                guard let column = storage.attributeColumns[attribute.name] else { continue }
                groups["\(storage.table)\u{0}\(attribute.name.uppercased())", default: []]
                    .append(Member(entity: entity, property: attribute.name, isRelationship: false, column: column, discriminators: storage.discriminators))
            }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                guard case .foreignKey(let column, _, _)? = storage.relationships[relationship.name] else { continue }
                groups["\(storage.table)\u{0}\u{1}\(relationship.name.uppercased())", default: []]
                    .append(Member(entity: entity, property: relationship.name, isRelationship: true, column: column, discriminators: storage.discriminators))
            }
        }
        let colliding = groups.values.filter { group in group.count >= 2 && Set(group.map { $0.column.uppercased() }).count == group.count }
        guard !colliding.isEmpty else { return self }
        var layout = self
        let byTable = Dictionary(grouping: colliding) { entities[$0[0].entity.name]?.table ?? "" }
        for (table, tableGroups) in byTable.sorted(by: { $0.key < $1.key }) {
            // A missing table is for the store's own checks to name (`has no table …`), not SQLite.
            guard let entityColumn = entities[tableGroups[0][0].entity.name]?.entityColumn, try db.tableExists(table) else { continue }
            let present = Set(try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table]).map { $0.uppercased() })
            guard tableGroups.allSatisfy({ $0.allSatisfy { present.contains($0.column.uppercased()) } }) else { continue }
            // Each key's destination-entity column (`Z5_OWNER`), where it has one the store keeps.
            let companions = tableGroups.map { group in
                group.map { member in
                    member.isRelationship ? layout.derivedColumns.firstIndex { $0.table == table && $0.foreignKey == member.column && present.contains($0.column.uppercased()) } : nil
                }
            }
            let columns = tableGroups.flatMap { $0.map(\.column) } + companions.flatMap { $0.compactMap { $0.map { layout.derivedColumns[$0].column } } }
            // For each entity number, how many of its rows hold a value in each column.
            let counts = try Row.fetchAll(db, sql: "SELECT \(entityColumn.quotedSQLIdentifier), "
                                          + columns.map { "count(\($0.quotedSQLIdentifier))" }.joined(separator: ", ")
                                          + " FROM \(table.quotedSQLIdentifier) GROUP BY 1").map { row in
                (entity: row[0] as DatabaseValue, values: (0..<columns.count).map { (row[$0 + 1] as Int?) ?? 0 })
            }
            for (group, groupCompanions) in zip(tableGroups, companions) {
                let assignment = Self.assignment(of: group.map { ($0.column, $0.discriminators) }, columns: columns, counts: counts)
                let keys = assignment ?? group.map(\.column)
                for (member, column) in zip(group, keys) where column != member.column {
                    if member.isRelationship {
                        layout.reassignKey(member.property, of: member.entity, from: member.column, to: column, in: schema)
                    } else {
                        layout.reassign(member.property, of: member.entity, to: column, in: schema)
                    }
                }
                // A destination-entity column named for one key alone goes with that key. Ones
                // numbered among the group (the same destination's, `Z5_OWNER1`) are read by
                // their values as the keys are; without values they are taken to have been
                // exchanged with the keys (left paired by name).
                let found = groupCompanions.compactMap { $0 }
                let names = found.map { Self.unnumbered(layout.derivedColumns[$0].column) }
                if found.count == group.count, found.count > 1, Set(names).count == 1 {
                    let companionColumns = found.map { layout.derivedColumns[$0].column }
                    let members = zip(companionColumns, group).map { ($0, $1.discriminators) }
                    guard Self.valuesSayWhose(members, columns: columns, counts: counts) else { continue }
                    let owned = Self.assignment(of: members, columns: columns, counts: counts) ?? companionColumns
                    let byColumn = Dictionary(zip(companionColumns, found).map { ($0, $1) }, uniquingKeysWith: { first, _ in first })
                    for (member, column) in owned.enumerated() { if let index = byColumn[column] { layout.derivedColumns[index].foreignKey = keys[member] } }
                } else {
                    for (companion, key) in zip(groupCompanions, keys) {
                        guard let companion, names.filter({ $0 == Self.unnumbered(layout.derivedColumns[companion].column) }).count == 1 else { continue }
                        layout.derivedColumns[companion].foreignKey = key
                    }
                }
            }
        }
        return layout
    }

    /// A column's name without the number a repeated name takes (`Z5_OWNER1` → `Z5_OWNER`): the
    /// one rule for Core Data's numbered names (`JoinTableNaming.base`).
    private static func unnumbered(_ column: String) -> String { JoinTableNaming.base(column) }

    /// Whether the members' columns hold values, each of one member's rows only: then the
    /// values say which column is whose (`assignment`, nil when as predicted).
    private static func valuesSayWhose(_ members: [(column: String, discriminators: [DatabaseValue])], columns: [String],
                                       counts: [(entity: DatabaseValue, values: [Int])]) -> Bool {
        var any = false
        for (column, _) in members {
            guard let position = columns.firstIndex(of: column) else { return false }
            var holders: Set<Int> = []
            for row in counts where row.values[position] > 0 {
                guard let member = members.firstIndex(where: { $0.discriminators.contains(row.entity) }) else { return false }
                holders.insert(member)
            }
            if holders.count > 1 { return false }
            any = any || !holders.isEmpty
        }
        return any
    }

    /// The column each member takes, by the values: nil to keep the prediction (the values say
    /// nothing new, or contradict one another).
    private static func assignment(of members: [(column: String, discriminators: [DatabaseValue])], columns: [String],
                                   counts: [(entity: DatabaseValue, values: [Int])]) -> [String]? {
        var owner: [String: Int] = [:]
        for (column, _) in members {
            guard let position = columns.firstIndex(of: column) else { return nil }
            var holders: Set<Int> = []
            for row in counts where row.values[position] > 0 {
                // A value in a row of none of the members: not a question of numbering.
                guard let member = members.firstIndex(where: { $0.discriminators.contains(row.entity) }) else { return nil }
                holders.insert(member)
            }
            guard holders.count <= 1 else { return nil }
            if let member = holders.first {
                guard !owner.values.contains(member) else { return nil }
                owner[column] = member
            }
        }
        var assigned = [String?](repeating: nil, count: members.count)
        for (column, member) in owner { assigned[member] = column }
        var free = members.map(\.column).filter { owner[$0] == nil }
        // Without values: the predicted column where it is free, else the first one left.
        for index in members.indices where assigned[index] == nil && free.contains(members[index].column) {
            assigned[index] = members[index].column
            free.removeAll { $0 == members[index].column }
        }
        for index in members.indices where assigned[index] == nil {
            guard !free.isEmpty else { return nil }
            assigned[index] = free.removeFirst()
        }
        let result = assigned.compactMap { $0 }
        return result == members.map(\.column) ? nil : result
    }

    /// Gives a to-one relationship's key another column (its position column following), for its
    /// entity and every entity under it, and for the inverse read through that column.
    private mutating func reassignKey(_ name: String, of entity: Entity, from old: String, to column: String, in schema: Schema) {
        guard let relationship = entity.relationships.first(where: { $0.name == name }), let table = entities[entity.name]?.table else { return }
        func order(_ current: String?) -> String? { current.map { _ in "Z_FOK_" + column.dropFirst() } }
        for member in schema.hierarchy(under: entity) {
            if case .foreignKey(old, let destinationTable, let orderColumn)? = entities[member.name]?.relationships[name] {
                entities[member.name]?.relationships[name] = .foreignKey(column: column, destinationTable: destinationTable, orderColumn: order(orderColumn))
            }
        }
        guard let inverse = schema.inverse(of: relationship), let destination = schema.entity(named: relationship.destination) else { return }
        for member in schema.hierarchy(under: destination) {
            if case .inverseForeignKey(table, old, let orderColumn, let discriminators)? = entities[member.name]?.relationships[inverse.name] {
                entities[member.name]?.relationships[inverse.name] = .inverseForeignKey(table: table, column: column, orderColumn: order(orderColumn), destinationDiscriminators: discriminators)
            }
        }
    }

    /// Gives an attribute another column, for its entity and every entity under it.
    private mutating func reassign(_ attribute: String, of entity: Entity, to column: String, in schema: Schema) {
        for member in schema.hierarchy(under: entity) where entities[member.name]?.attributeColumns[attribute] != nil {
            entities[member.name]?.attributeColumns[attribute] = column
        }
    }
}

/// A column a store names otherwise than the layout predicts for its version: an attribute of
/// sibling entities numbered the other way (`withSiblingColumnsReadFromValues`).
package struct ColumnNaming: Sendable, Equatable {
    var table: String
    var entity: String
    /// The attribute, or the to-one relationship whose key the column holds.
    var property: String
    var isKey = false
    var predicted: String
    var actual: String
    /// For a key: the column of its destination's entity (`Z4_OWNER`) as predicted and as the store has it.
    var companion: (predicted: String, actual: String)?

    package static func == (lhs: ColumnNaming, rhs: ColumnNaming) -> Bool {
        lhs.table == rhs.table && lhs.entity == rhs.entity && lhs.property == rhs.property && lhs.isKey == rhs.isKey
            && lhs.predicted == rhs.predicted && lhs.actual == rhs.actual && lhs.companion?.predicted == rhs.companion?.predicted && lhs.companion?.actual == rhs.companion?.actual
    }
}

extension StoreLayout {
    /// The attribute and to-one key columns `actual` (a store's layout, as read from its file)
    /// names otherwise than this layout, predicted for the same version, does.
    package func columnDepartures(in actual: StoreLayout) -> [ColumnNaming] {
        var found: [ColumnNaming] = []
        for (entity, storage) in entities.sorted(by: { $0.key < $1.key }) {
            guard let stored = actual.entities[entity], stored.table == storage.table else { continue }
            for (attribute, column) in storage.attributeColumns.sorted(by: { $0.key < $1.key }) {
                if let storedColumn = stored.attributeColumns[attribute], storedColumn != column {
                    found.append(ColumnNaming(table: storage.table, entity: entity, property: attribute, predicted: column, actual: storedColumn))
                }
            }
            for (relationship, kept) in storage.relationships.sorted(by: { $0.key < $1.key }) {
                if case .foreignKey(let column, _, _) = kept, case .foreignKey(let storedColumn, _, _)? = stored.relationships[relationship], storedColumn != column {
                    var naming = ColumnNaming(table: storage.table, entity: entity, property: relationship, isKey: true, predicted: column, actual: storedColumn)
                    if let predictedCompanion = derivedColumns.first(where: { $0.table == storage.table && $0.foreignKey == column })?.column,
                       let storedCompanion = actual.derivedColumns.first(where: { $0.table == storage.table && $0.foreignKey == storedColumn })?.column {
                        naming.companion = (predictedCompanion, storedCompanion)
                    }
                    found.append(naming)
                }
            }
        }
        return found
    }

    /// This layout with the columns a store numbered otherwise named as that store names them,
    /// where this layout predicts the same columns for the same entities' attributes and to-one
    /// keys in the same table, so a migration keeps the numbering the store's maker gave to both
    /// (a key's position column with it; what reads a renamed column follows). A table is left
    /// as predicted where the names would not be only exchanged among its own columns.
    package func namingColumns(as departures: [ColumnNaming]) -> StoreLayout {
        var layout = self
        for (table, taken) in Dictionary(grouping: departures, by: \.table) {
            guard let index = layout.tables.firstIndex(where: { $0.name == table }), layout.tables[index].constraints.isEmpty else { continue }
            var renames: [String: String] = [:]
            var consistent = true
            let names = Set(layout.tables[index].columns.map(\.name))
            func rename(_ predicted: String, _ actual: String) {
                if let known = renames[predicted], known != actual { consistent = false }
                renames[predicted] = actual
            }
            for departure in taken {
                // The same property of the same entity has the same predicted column here.
                guard let storage = entities[departure.entity], storage.table == table else { continue }
                if departure.isKey {
                    guard case .foreignKey(departure.predicted, _, let order)? = storage.relationships[departure.property] else { continue }
                    rename(departure.predicted, departure.actual)
                    // Its position column is named after it, wherever the new version gives it one.
                    if let order { rename(order, "Z_FOK_" + departure.actual.dropFirst()) }
                    // Its destination-entity column, as the store pairs them.
                    if let companion = departure.companion, layout.derivedColumns.contains(where: { $0.table == table && $0.foreignKey == departure.predicted && $0.column == companion.predicted }) {
                        rename(companion.predicted, companion.actual)
                    }
                } else {
                    guard storage.attributeColumns[departure.property] == departure.predicted else { continue }
                    rename(departure.predicted, departure.actual)
                }
            }
            renames = renames.filter { $0.key != $0.value }
            // Exchanged among the table's own columns, or onto a name no column has: nothing
            // renamed onto a name kept, no two columns onto one.
            let targets = Set(renames.values)
            guard consistent, !renames.isEmpty, targets.count == renames.count, renames.keys.allSatisfy(names.contains),
                  targets.allSatisfy({ renames[$0] != nil || !names.contains($0) }) else { continue }
            func renamed(_ name: String) -> String { renames[name] ?? name }
            layout.tables[index].columns = layout.tables[index].columns.map { column in
                var column = column
                column.name = renamed(column.name)
                return column
            }
            layout.tables[index].indexes = layout.tables[index].indexes.map { index in
                var index = index
                index.columns = index.columns.map(renamed)
                return index
            }
            for (entity, storage) in layout.entities {
                if storage.table == table { layout.entities[entity]?.attributeColumns = storage.attributeColumns.mapValues(renamed) }
                for (relationship, kept) in storage.relationships {
                    switch kept {
                    case .foreignKey(let column, let destinationTable, let orderColumn) where storage.table == table:
                        layout.entities[entity]?.relationships[relationship] = .foreignKey(column: renamed(column), destinationTable: destinationTable, orderColumn: orderColumn.map(renamed))
                    case .inverseForeignKey(table, let column, let orderColumn, let discriminators):
                        layout.entities[entity]?.relationships[relationship] = .inverseForeignKey(table: table, column: renamed(column), orderColumn: orderColumn.map(renamed), destinationDiscriminators: discriminators)
                    default: continue
                    }
                }
            }
            for position in layout.derivedColumns.indices where layout.derivedColumns[position].table == table {
                layout.derivedColumns[position].column = renamed(layout.derivedColumns[position].column)
                layout.derivedColumns[position].foreignKey = renamed(layout.derivedColumns[position].foreignKey)
            }
        }
        return layout
    }
}
