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
        /// An entity declaring an attribute of a shared name, and the column predicted for it.
        struct Member {
            var entity: Entity
            var attribute: String
            var column: String
            var discriminators: [DatabaseValue]
        }
        // Each table's attributes by the column name Core Data derives from them (capitals).
        var groups: [String: [Member]] = [:]
        for entity in schema.entities {
            guard let storage = entities[entity.name] else { continue }
            for attribute in entity.attributes where !attribute.isTransient {
                guard let column = storage.attributeColumns[attribute.name] else { continue }
                groups["\(storage.table)\u{0}\(attribute.name.uppercased())", default: []]
                    .append(Member(entity: entity, attribute: attribute.name, column: column, discriminators: storage.discriminators))
            }
        }
        let colliding = groups.values.filter { group in group.count >= 2 && Set(group.map { $0.column.uppercased() }).count == group.count }
        guard !colliding.isEmpty else { return self }
        var layout = self
        let byTable = Dictionary(grouping: colliding) { entities[$0[0].entity.name]?.table ?? "" }
        for (table, tableGroups) in byTable.sorted(by: { $0.key < $1.key }) {
            guard let entityColumn = entities[tableGroups[0][0].entity.name]?.entityColumn else { continue }
            let columns = tableGroups.flatMap { $0.map(\.column) }
            // For each entity number, how many of its rows hold a value in each column.
            let counts = try Row.fetchAll(db, sql: "SELECT \(entityColumn.quotedDatabaseIdentifier), "
                                          + columns.map { "count(\($0.quotedDatabaseIdentifier))" }.joined(separator: ", ")
                                          + " FROM \(table.quotedDatabaseIdentifier) GROUP BY 1").map { row in
                (entity: row[0] as DatabaseValue, values: (0..<columns.count).map { (row[$0 + 1] as Int?) ?? 0 })
            }
            for group in tableGroups {
                guard let assignment = Self.assignment(of: group.map { ($0.column, $0.discriminators) }, columns: columns, counts: counts) else { continue }
                for (member, column) in zip(group, assignment) where column != member.column {
                    layout.reassign(member.attribute, of: member.entity, to: column, in: schema)
                }
            }
        }
        return layout
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

    /// Gives an attribute another column, for its entity and every entity under it.
    private mutating func reassign(_ attribute: String, of entity: Entity, to column: String, in schema: Schema) {
        for member in schema.hierarchy(under: entity) where entities[member.name]?.attributeColumns[attribute] != nil {
            entities[member.name]?.attributeColumns[attribute] = column
        }
    }
}
