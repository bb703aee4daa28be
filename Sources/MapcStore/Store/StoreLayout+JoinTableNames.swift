import Foundation

/// A join table as a store names it, where that departs from the names the layout predicts for
/// the store's version. Core Data numbers a repeated column name (`Z_2ARTISTS1`) in an order the
/// model does not give (the layout notes: "suffixes are not derivable from the model; read them
/// from the store"), so a store may number them otherwise than mapc does; the table's name and
/// owner follow a rule (the lower entity number owns), which Core Data applies anew when it
/// migrates a store (a store of one app was migrated by Core Data from one owner's name to the other's).
package struct JoinTableNaming: Sendable, Equatable {
    /// The predicted names: table, owner's column, other's column, and the two order columns.
    var predicted: [String?]
    /// The names the store has, in the same places.
    var actual: [String?]
    /// How many join-table columns share each base name (the name without its number) in the
    /// layout predicted for the store: a number means something only among the same siblings.
    var siblings: [String: Int] = [:]

    /// A column's name without the number Core Data appends to a repeated one (`Z_2ARTISTS1`,
    /// `Z5_OWNER1`), in capitals: ASCII digits only, as Core Data numbers them.
    static func base(_ name: String) -> String { String(name.reversed().drop { ("0"..."9").contains($0) }.reversed()).uppercased() }

    /// Whether the store's names differ from the predicted ones only in the numbers at their
    /// ends: the table and its columns the same but for the suffixes Core Data numbers, which a
    /// migration keeps. Another owner or table name is a rule's, which a migration writes anew.
    var differsOnlyInSuffixes: Bool {
        func base(_ name: String?) -> String? { name.map(Self.base) }
        return predicted[0]?.uppercased() == actual[0]?.uppercased() && zip(predicted.dropFirst(), actual.dropFirst()).allSatisfy { base($0) == base($1) }
    }
}

extension StoreLayout {
    /// The key columns (the first two) of every join table.
    private var joinKeyColumns: [String] {
        var joinTables: Set<String> = []
        for storage in entities.values {
            for case .joinTable(let table, _, _, _, _, _, _) in storage.relationships.values { joinTables.insert(table) }
        }
        return tables.filter { joinTables.contains($0.name) }.flatMap { $0.columns.prefix(2).map(\.name) }
    }

    /// The join tables' key columns, by base name: how many share each.
    private var joinColumnSiblings: [String: Int] {
        joinKeyColumns.reduce(into: [:]) { counts, column in counts[JoinTableNaming.base(column), default: 0] += 1 }
    }

    /// The join tables `actual` (a store's layout, as read from its file) names otherwise than
    /// this layout, predicted for the same version, does.
    package func joinTableDepartures(in actual: StoreLayout) -> [JoinTableNaming] {
        let siblings = joinColumnSiblings
        var found: [JoinTableNaming] = []
        for (entity, storage) in entities.sorted(by: { $0.key < $1.key }) {
            for (name, kept) in storage.relationships.sorted(by: { $0.key < $1.key }) {
                guard case .joinTable(let table, let owner, let other, let ownerOrder, let otherOrder, _, true) = kept,
                      case .joinTable(let storedTable, let storedOwner, let storedOther, let storedOwnerOrder, let storedOtherOrder, _, _)? = actual.entities[entity]?.relationships[name] else { continue }
                let predicted = [table, owner, other, ownerOrder, otherOrder], stored = [storedTable, storedOwner, storedOther, storedOwnerOrder, storedOtherOrder]
                if predicted != stored, !found.contains(where: { $0.predicted == predicted }) {
                    found.append(JoinTableNaming(predicted: predicted, actual: stored, siblings: siblings))
                }
            }
        }
        return found
    }

    /// This layout with the join tables it predicts exactly as a store's departure was predicted
    /// (the same table and columns: the same relationship between the same entity numbers)
    /// numbered as that store numbers their columns, so a migration keeps the suffixes Core Data
    /// gave them. A departure in more than suffixes, or whose names this layout uses for
    /// something else, is not taken.
    package func namingJoinTables(as departures: [JoinTableNaming]) -> StoreLayout {
        var layout = self
        let siblings = joinColumnSiblings
        for departure in departures where departure.differsOnlyInSuffixes {
            // A number the store gave means something only among the same siblings: where the new
            // version has more or fewer columns of that name, they are numbered anew.
            let bases = departure.predicted[1...2].compactMap { $0 }.map(JoinTableNaming.base)
            guard bases.allSatisfy({ siblings[$0] == departure.siblings[$0] }) else { continue }
            guard let predictedTable = departure.predicted[0], let storedTable = departure.actual[0],
                  let index = layout.tables.firstIndex(where: { $0.name == predictedTable }),
                  layout.entities.values.contains(where: { storage in storage.relationships.values.contains { kept in
                      if case .joinTable(let t, let o, let x, let oo, let xo, _, true) = kept { return [t, o, x, oo, xo] == departure.predicted }
                      return false
                  } }) else { continue }
            // Not onto a name another table of this layout has.
            guard storedTable.lowercased() == predictedTable.lowercased() || !layout.tables.contains(where: { $0.name.lowercased() == storedTable.lowercased() }) else { continue }
            var renamed: [String: String] = [:]
            for (predicted, stored) in zip(departure.predicted.dropFirst(), departure.actual.dropFirst()) {
                if let predicted, let stored { renamed[predicted] = stored }
            }
            var table = layout.tables[index]
            let columns = table.columns.map { renamed[$0.name] ?? $0.name }
            // Each column once (a stored name another predicted column of the table has is not taken).
            guard Set(columns.map { $0.lowercased() }).count == columns.count else { continue }
            table.name = storedTable
            for position in table.columns.indices { table.columns[position].name = columns[position] }
            for position in table.indexes.indices {
                let indexColumns = table.indexes[position].columns
                if table.indexes[position].name == "\(predictedTable)_\(indexColumns.first ?? "")_INDEX" {
                    table.indexes[position].name = "\(storedTable)_\(renamed[indexColumns.first ?? ""] ?? indexColumns.first ?? "")_INDEX"
                }
                table.indexes[position].columns = indexColumns.map { renamed[$0] ?? $0 }
            }
            // The key of a join table is its first two columns.
            table.constraints = table.constraints.map { constraint in
                constraint.hasPrefix("PRIMARY KEY") && columns.count >= 2 ? "PRIMARY KEY (\(CoreDataFormat.sqlName(columns[0])), \(CoreDataFormat.sqlName(columns[1])))" : constraint
            }
            layout.tables[index] = table
            for (entity, storage) in layout.entities {
                for (name, kept) in storage.relationships {
                    guard case .joinTable(predictedTable, let owner, let other, let ownerOrder, let otherOrder, let destination, let writes) = kept else { continue }
                    layout.entities[entity]?.relationships[name] = .joinTable(table: storedTable, ownerColumn: renamed[owner] ?? owner, otherColumn: renamed[other] ?? other,
                                                                              ownerOrderColumn: ownerOrder.map { renamed[$0] ?? $0 }, otherOrderColumn: otherOrder.map { renamed[$0] ?? $0 },
                                                                              destinationTable: destination, writesRows: writes)
                }
            }
        }
        // Each key column's name once across the join tables, as Core Data numbers them; else none is kept.
        let keyColumns = layout.joinKeyColumns.map { $0.lowercased() }
        return Set(keyColumns).count == keyColumns.count ? layout : self
    }
}
