internal import GRDB

extension Store {
    /// The collations SQLite itself has: any other in a store was registered by the app that made it.
    static let builtInCollations: Set<String> = ["BINARY", "NOCASE", "RTRIM"]

    /// The indexes of the store's tables that mapc writes (its layout's; or of `tables`) that order
    /// text by a collation the app registers with SQLite and mapc does not have
    /// (`mapc_collation_fallback` stands in for reading), each as
    /// `INDEX on TABLE (COLLATE NAME)`: a row added by mapc would be filed in such an index by the
    /// stand-in's order, not the app's, and the app's queries through it would miss rows.
    package func indexesOfAppCollations(onTables tables: Set<String>? = nil) throws -> [String] {
        try reading { db in
            // A trigger of the store may write to any table when mapc writes its own: then every
            // table's indexes count (a review found an app's log table filed by the stand-in).
            var everyTable = false
            if tables == nil { everyTable = try (Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") ?? 0) > 0 }
            let tables = everyTable ? nil : Set((tables ?? Set(layout.tables.map(\.name))).map { $0.lowercased() })
            return try Self.appCollationIndexes(db).filter { tables?.contains($0.table.lowercased()) ?? true }
                .map { "\($0.index) on \($0.table) (COLLATE \($0.collation))" }
        }
    }

    /// The tables of the store (lowercased) with an index ordered by an app's collation: asked
    /// once for all (a store may have thousands of tables, and each question reads every index).
    package func tablesOrderedByAppCollations() throws -> Set<String> {
        try reading { db in Set(try Self.appCollationIndexes(db).map { $0.table.lowercased() }) }
    }

    /// Every index of the store whose key orders by a collation SQLite does not have, by name.
    private static func appCollationIndexes(_ db: Database) throws -> [(index: String, table: String, collation: String)] {
        try Row.fetchAll(db, sql: "SELECT DISTINCT m.name, m.tbl_name, x.coll FROM sqlite_master AS m, pragma_index_xinfo(m.name) AS x "
                         + "WHERE m.type = 'index' AND x.key = 1 AND x.coll IS NOT NULL ORDER BY m.name").compactMap { row in
            guard let index = String.fromDatabaseValue(row[0] as DatabaseValue), let table = String.fromDatabaseValue(row[1] as DatabaseValue),
                  let collation = String.fromDatabaseValue(row[2] as DatabaseValue), !builtInCollations.contains(collation.uppercased()) else { return nil }
            return (index, table, collation)
        }
    }
}
