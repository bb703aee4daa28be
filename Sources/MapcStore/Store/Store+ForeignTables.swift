internal import GRDB
import MapcFoundation
import MapcModel

/// A table in a store's file that no entity of its version keeps and that its format does not
/// own: Core Data's persistent history, NSPersistentCloudKitContainer's mirroring state, the
/// iCloud ubiquitous stores' state, a table named as Core Data names its own, or a table an app
/// made itself (the one kind a run leaves out only when told to). A migration writes a new store
/// from the model, so such a table is not in the migrated store.
package struct ForeignTable: Sendable, Equatable {
    /// What kind of table it is.
    package enum Kind: Sendable, Equatable {
        /// Core Data's persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`).
        case persistentHistory
        /// NSPersistentCloudKitContainer's mirroring state (`ANSCK…`).
        case cloudKitMirroring
        /// The state of Core Data's iCloud ubiquitous stores (iOS 5 to 9: `Y_UBMETA`, `Y_UBRANGE`, `Y_UBKVS`).
        case ubiquity
        /// A table named as Core Data names its own (`Z` and capitals: `ZOLDNOTE`, `Z_3TAGS`) that
        /// this version's model does not have: left by an earlier version or by Core Data itself.
        case coreDataNamed
        /// Any other table: an app's own.
        case other
    }

    /// The table's name.
    package var name: String
    /// How many rows it holds; nil when SQLite cannot count them (a virtual table whose module
    /// this SQLite lacks), which is taken as holding some.
    package var rows: Int?
    /// What kind of table it is.
    package var kind: Kind

    /// `NAME (N rows)`.
    package var described: String { "\(name) (\(rows.map { English.count($0, "row") } ?? "rows not counted"))" }

    /// Whether a migration may leave it out only when the loss is accepted: a table of the app's
    /// own that holds rows (or may). Core Data's history and mirroring state are left out, said.
    package var needsConsent: Bool { kind == .other && rows != 0 }

    /// The kind of a table by its name, as Core Data names its own.
    static func kind(of name: String) -> Kind {
        let upper = name.uppercased()
        if ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"].contains(upper) { return .persistentHistory }
        if upper.hasPrefix("ANSCK") { return .cloudKitMirroring }
        if upper.hasPrefix("Y_UB") { return .ubiquity }
        if name.hasPrefix("Z"), name.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) { return .coreDataNamed }
        return .other
    }

    /// What a migration does with these tables, in sentences for a note, each kind once: nil when there are none.
    package static func notes(_ tables: [ForeignTable]) -> [String] {
        func list(_ kind: Kind) -> String? {
            let of = tables.filter { $0.kind == kind }
            return of.isEmpty ? nil : of.map(\.described).joined(separator: ", ")
        }
        var notes: [String] = []
        if let history = list(.persistentHistory) {
            notes.append("the store keeps Core Data's persistent history, \(history), which a migration leaves out (the migrated store starts without it): "
                         + "history tokens the app saved expire, and it fetches the history from the start")
        }
        if let mirroring = list(.cloudKitMirroring) {
            notes.append("the store keeps NSPersistentCloudKitContainer's mirroring state, \(mirroring), which a migration leaves out; try the migrated store with the app on a copy first")
        }
        if let ubiquity = list(.ubiquity) {
            notes.append("the store keeps the state of Core Data's iCloud ubiquitous stores, \(ubiquity), which a migration leaves out; such stores were deprecated in iOS 10")
        }
        if let named = list(.coreDataNamed) {
            notes.append("the store has tables named as Core Data names its own that this version's model does not have, \(named) (left by an earlier version?), which a migration leaves out")
        }
        if let other = list(.other) {
            notes.append("tables no version of the model has are left out of the migrated store: \(other)")
        }
        return notes
    }
}

extension Store {
    /// The tables of the file that no entity of this version keeps and the format does not own,
    /// with their rows (SQLite's own tables aside), by name.
    package func foreignTables() throws -> [ForeignTable] {
        let kept = Set(layout.tables.map { $0.name.lowercased() })
        return try database.read { db in
            let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
            return names.filter { !kept.contains($0.lowercased()) && !strategy.ownsTable($0) }.map { name in
                ForeignTable(name: name, rows: (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedDatabaseIdentifier)")) ?? nil, kind: ForeignTable.kind(of: name))
            }
        }
    }
}
