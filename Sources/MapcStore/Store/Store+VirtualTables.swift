import Foundation
internal import GRDB

/// A virtual table of a store (`CREATE VIRTUAL TABLE search USING fts5(body)`): its rows are kept
/// by its module (full-text search, R*Tree, an app's own) in shadow tables named after it
/// (`search_data`, `search_config`), which are part of it, not tables of their own. A module
/// this SQLite lacks (an app's tokenizer, `spellfix1`) makes any statement reading the table fail.
package struct VirtualTable: Sendable, Equatable {
    /// The table's name.
    package var name: String
    /// The module named after `USING`, as written.
    package var module: String

    /// The SQL condition on `sqlite_master` (as `prefix`, `m.` or none) that a table is virtual.
    static func isVirtual(_ prefix: String = "") -> String { "\(prefix)sql LIKE 'CREATE VIRTUAL TABLE%'" }

    /// The store's virtual tables, from their definitions (portable to any SQLite, unlike
    /// `pragma_table_list`, which names them only from 3.37).
    static func all(_ db: Database) throws -> [VirtualTable] {
        try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND \(isVirtual())").compactMap { row in
            guard let name = String.fromDatabaseValue(row[0] as DatabaseValue), let sql = String.fromDatabaseValue(row[1] as DatabaseValue) else { return nil }
            return VirtualTable(name: name, module: module(in: sql) ?? "?")
        }
    }

    /// The word after `USING` in a definition.
    private static func module(in sql: String) -> String? {
        guard let using = sql.range(of: "USING", options: .caseInsensitive) else { return nil }
        let rest = sql[using.upperBound...].drop { $0.isWhitespace }
        let word = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return word.isEmpty ? nil : String(word)
    }

    /// The columns each shadow table of SQLite's own modules has, by the suffix after `NAME_`:
    /// a table is taken for one only when it is named so and has exactly these columns (a
    /// module's options decide which it makes: `content=` makes no `_content`, FTS5 takes any
    /// prefix of an option's name, so they are not read). `c*` stands for the content columns
    /// (`c0`, `c1body`), `a*` for an R*Tree's auxiliary ones. A module not listed claims none: a
    /// table named after its virtual table is then counted as the app's.
    private static let shadowColumns: [String: [String: [[String]]]] = [
        "fts5": ["data": [["id", "block"]], "idx": [["segid", "term", "pgno"]], "content": [["id", "c*"]],
                 "docsize": [["id", "sz"], ["id", "sz", "origin"]], "config": [["k", "v"]]],
        "fts4": ["content": [["docid", "c*"]], "segments": [["blockid", "block"]], "segdir": [["level", "idx", "start_block", "leaves_end_block", "end_block", "root"]],
                 "docsize": [["docid", "size"]], "stat": [["id", "value"]]],
        "fts3": ["content": [["docid", "c*"]], "segments": [["blockid", "block"]], "segdir": [["level", "idx", "start_block", "leaves_end_block", "end_block", "root"]]],
        "rtree": ["node": [["nodeno", "data"]], "rowid": [["rowid", "nodeno", "a*"]], "parent": [["nodeno", "parentnode"]]],
        "rtree_i32": ["node": [["nodeno", "data"]], "rowid": [["rowid", "nodeno", "a*"]], "parent": [["nodeno", "parentnode"]]],
        "geopoly": ["node": [["nodeno", "data"]], "rowid": [["rowid", "nodeno", "a*"]], "parent": [["nodeno", "parentnode"]]],
    ]

    /// Whether a table of the store, with these columns, is one of this table's shadow tables.
    func owns(_ table: String, columns: [String]) -> Bool {
        let prefix = name.lowercased() + "_"
        guard table.lowercased().hasPrefix(prefix), let kinds = Self.shadowColumns[module.lowercased()],
              let shapes = kinds[String(table.lowercased().dropFirst(prefix.count))] else { return false }
        let columns = columns.map { $0.lowercased() }
        return shapes.contains { shape in
            // A trailing `c*` or `a*` stands for any number (one at least for content) of such columns.
            guard let last = shape.last, last.hasSuffix("*") else { return columns == shape }
            let fixed = shape.dropLast(), letter = last.dropLast()
            guard columns.count >= fixed.count + (letter == "c" ? 1 : 0), Array(columns.prefix(fixed.count)) == Array(fixed) else { return false }
            return columns.dropFirst(fixed.count).allSatisfy { $0.hasPrefix(letter) && $0.dropFirst().first?.isNumber == true }
        }
    }

    /// The store's shadow tables (lowercased names): tables named after one of its virtual
    /// tables, with the columns its module gives them.
    static func shadowTables(_ db: Database, of virtual: [VirtualTable]) throws -> Set<String> {
        guard !virtual.isEmpty else { return [] }
        var found: Set<String> = []
        for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND NOT \(isVirtual())") {
            guard virtual.contains(where: { table.lowercased().hasPrefix($0.name.lowercased() + "_") }) else { continue }
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
            if virtual.contains(where: { $0.owns(table, columns: columns) }) { found.insert(table.lowercased()) }
        }
        return found
    }
}

extension Store {
    /// The names (lowercased) of the store's virtual tables and their shadow tables, which are
    /// read only through their module: checks that go through every table leave them out.
    static func virtualTableNames(_ db: Database) throws -> Set<String> {
        let virtual = try VirtualTable.all(db)
        guard !virtual.isEmpty else { return [] }
        return try VirtualTable.shadowTables(db, of: virtual).union(virtual.map { $0.name.lowercased() })
    }
}
