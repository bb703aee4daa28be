import Foundation
internal import GRDB

/// A column's type affinity, as SQLite derives it from the declared type (§3.1 of SQLite's
/// "Datatypes" page): what a value becomes when it is stored in the column. Two columns of one
/// affinity store a value alike, whatever their declared types are called (`VARCHAR` and `TEXT`).
package enum SQLiteAffinity: Sendable, Equatable {
    case integer, text, blob, real, numeric

    /// The affinity of a declared type, by SQLite's rules in their order.
    package init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.contains("BLOB") || type.trimmingCharacters(in: .whitespaces).isEmpty {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }
}

extension Store {
    /// The columns of `table` whose declared type has another affinity than the one this store's
    /// format declares for them (`title STRING` where mapc writes `TEXT`), each as `COLUMN TYPE`.
    /// Such a column may hold what the format's own never does (an integer where the model keeps
    /// text), and a value copied from it in SQL takes the destination column's affinity in
    /// silence: only what reads each value (and refuses one of the wrong kind) may copy it.
    package func columnsOfAnotherAffinity(inTable table: String) throws -> [String] {
        guard let expected = layout.tables.first(where: { $0.name == table }) else { return [] }
        let declared = try reading { db in
            try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_info(?)", arguments: [table]).compactMap { row -> (String, String)? in
                guard let name = String.fromDatabaseValue(row[0] as DatabaseValue) else { return nil }
                return (name.lowercased(), String.fromDatabaseValue(row[1] as DatabaseValue) ?? "")
            }
        }
        let types = Dictionary(declared, uniquingKeysWith: { first, _ in first })
        return expected.columns.compactMap { column in
            guard let found = types[column.name.lowercased()], SQLiteAffinity(declaredType: found) != SQLiteAffinity(declaredType: column.sqlType) else { return nil }
            return "\(column.name) \(found.isEmpty ? "(no type)" : found)"
        }
    }
}
