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
    /// The module's arguments, lowercased, without spaces (`body,content=''`).
    var arguments: String = ""

    /// The store's virtual tables, from their definitions (portable to any SQLite, unlike
    /// `pragma_table_list`, which names them only from 3.37).
    static func all(_ db: Database) throws -> [VirtualTable] {
        try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'").compactMap { row in
            guard let name = String.fromDatabaseValue(row[0] as DatabaseValue), let sql = String.fromDatabaseValue(row[1] as DatabaseValue) else { return nil }
            let arguments = sql.firstIndex(of: "(").map { String(sql[$0...]).lowercased().filter { !$0.isWhitespace } } ?? ""
            return VirtualTable(name: name, module: module(in: sql) ?? "?", arguments: arguments)
        }
    }

    /// The word after `USING` in a definition.
    private static func module(in sql: String) -> String? {
        guard let using = sql.range(of: "USING", options: .caseInsensitive) else { return nil }
        let rest = sql[using.upperBound...].drop { $0.isWhitespace }
        let word = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return word.isEmpty ? nil : String(word)
    }

    /// The shadow tables each module SQLite ships makes, by the suffix after `NAME_` (SQLite's
    /// own lists, `xShadowName`). A module not listed claims none: a table named after its
    /// virtual table (`search_backup`) may be the app's own, and is counted as such.
    private static let shadowSuffixes: [String: Set<String>] = [
        "fts3": ["content", "segments", "segdir", "docsize", "stat"],
        "fts4": ["content", "segments", "segdir", "docsize", "stat"],
        "fts5": ["data", "idx", "content", "docsize", "config"],
        "rtree": ["node", "rowid", "parent"],
        "rtree_i32": ["node", "rowid", "parent"],
        "geopoly": ["node", "rowid", "parent"],
    ]

    /// Whether a table of the store is one of this table's shadow tables (`search_data`).
    func owns(_ table: String) -> Bool {
        let prefix = name.lowercased() + "_"
        guard table.lowercased().hasPrefix(prefix), let suffixes = Self.shadowSuffixes[module.lowercased()] else { return false }
        let suffix = String(table.lowercased().dropFirst(prefix.count))
        // A full-text table given its content elsewhere (`content=`, external or none) makes no
        // `_content` table, and one without column sizes (`columnsize=0`) no `_docsize`: a table of
        // that name is then the app's (an external content table often is named so).
        if suffix == "content" && (arguments.contains(",content=") || arguments.contains("(content=")) { return false }
        if suffix == "docsize" && arguments.contains("columnsize=0") { return false }
        return suffixes.contains(suffix)
    }
}

extension Store {
    /// The names (lowercased) of the store's virtual tables and their shadow tables, which are
    /// read only through their module: checks that go through every table leave them out.
    static func virtualTableNames(_ db: Database) throws -> Set<String> {
        let virtual = try VirtualTable.all(db)
        guard !virtual.isEmpty else { return [] }
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        return Set(tables.filter { table in virtual.contains { $0.name.lowercased() == table.lowercased() || $0.owns(table) } }.map { $0.lowercased() })
    }
}
