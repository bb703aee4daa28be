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
        /// A trigger, a view or an index of the model's tables the format does not make (an app's,
        /// or Core Data's own for a feature mapc does not write, such as derived attributes): its
        /// definition, not data.
        case schemaObject
    }

    /// The table's name.
    package var name: String
    /// How many rows it holds; nil when SQLite cannot count them (a virtual table whose module
    /// this SQLite lacks), which is taken as holding some. For a column, its values (not NULL).
    package var rows: Int?
    /// What kind of table it is (for a column, by the column's name).
    package var kind: Kind
    /// A column of an entity's table that the layout does not have, rather than a whole table.
    package var column: String? = nil
    /// For a trigger, a view or an index: which ("trigger", "view", "index", "unique index").
    package var objectType: String? = nil
    /// For a virtual table: its module (`fts5`, `rtree`, an app's own).
    package var virtualModule: String? = nil
    /// Why SQLite could not count its rows, when it could not.
    package var countFailure: String? = nil

    /// `NAME (N rows)`, `TABLE.COLUMN (N values)`, `trigger NAME`.
    package var described: String {
        if let objectType { return "\(objectType) \(name)" }
        if let column { return "\(name).\(column) (\(rows.map { English.count($0, "value") } ?? "values not counted"))" }
        if let virtualModule {
            let uncounted = countFailure.map { "whose rows SQLite cannot count (\($0))" } ?? "whose rows cannot be counted"
            return "\(name) (a virtual table of module \(virtualModule), \(rows.map { English.count($0, "row") } ?? uncounted))"
        }
        return "\(name) (\(rows.map { English.count($0, "row") } ?? "rows not counted"))"
    }

    /// Whether a migration may leave it out only when the loss is accepted: a table of the app's
    /// own that holds rows (or may), and NSPersistentCloudKitContainer's mirroring state, without
    /// which the app would take every object for new and sync it again (duplicates on every
    /// device). Core Data's history is left out, said.
    package var needsConsent: Bool { (kind == .other || kind == .cloudKitMirroring) && rows != 0 }

    /// `described`, with what leaving it out costs where that is not plain.
    package var describedWithCost: String {
        kind == .cloudKitMirroring ? "\(described), NSPersistentCloudKitContainer's mirroring state (without it the app syncs every object again, as new)" : described
    }

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
        func list(_ kind: Kind, columns: Bool = false) -> String? {
            let of = tables.filter { $0.kind == kind && $0.objectType == nil && ($0.column != nil) == columns }
            return of.isEmpty ? nil : of.map(\.described).joined(separator: ", ")
        }
        var notes: [String] = []
        if let history = list(.persistentHistory) {
            notes.append("the store keeps Core Data's persistent history, \(history), which a migration leaves out (the migrated store starts without it): "
                         + "history tokens the app saved expire, and it fetches the history from the start")
        }
        if let mirroring = list(.cloudKitMirroring) {
            notes.append("the store keeps NSPersistentCloudKitContainer's mirroring state, \(mirroring), which a migration by mapc leaves out: the app would then take every object for new "
                         + "and sync it again (duplicates on every device). Migrate a store that syncs with Core Data itself, or accept the loss (`--accept-data-loss`) for one whose sync you will reset")
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
        if let named = list(.coreDataNamed, columns: true) {
            notes.append("the store's tables have columns named as Core Data names its own that this version's model does not have, \(named) (left by an earlier version?), which a migration leaves out")
        }
        if let other = list(.other, columns: true) {
            notes.append("columns no version of the model has are left out of the migrated store: \(other)")
        }
        let objects = tables.filter { $0.objectType != nil }
        if !objects.isEmpty {
            let triggers = objects.contains { $0.objectType == "trigger" }
            let indexes = objects.contains { $0.objectType?.hasSuffix("index") == true }
            let unique = objects.contains { $0.objectType == "unique index" }
            var costs: [String] = []
            if triggers { costs.append("whatever they kept up to date (a derived attribute's values, an app's own rule) is no longer kept by the store until the app makes them again") }
            if indexes { costs.append("an index the app made for its fetches is gone until it makes it again (the rows it indexed are kept)") }
            if unique { costs.append("a unique index kept its columns' values apart, which the migrated store no longer enforces") }
            notes.append("the store has \(objects.map(\.described).joined(separator: ", ")), which the migrated store, made from the model, does not have"
                         + (costs.isEmpty ? "" : ": " + costs.joined(separator: "; ")))
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
            // A virtual table is one table, counted through its module; its shadow tables are its own.
            let virtual = try VirtualTable.all(db)
            let shadows = try VirtualTable.shadowTables(db, of: virtual)
            var found = names.filter { name in !kept.contains(name.lowercased()) && !strategy.ownsTable(name) && !shadows.contains(name.lowercased()) }.map { name in
                let module = virtual.first { $0.name.lowercased() == name.lowercased() }?.module
                var rows: Int?
                var failure: String?
                do { rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedSQLIdentifier)") } catch let error as DatabaseError { failure = error.message } catch { failure = "\(error)" }
                return ForeignTable(name: name, rows: rows, kind: ForeignTable.kind(of: name), virtualModule: module, countFailure: failure)
            }
            // Columns of the model's tables that its layout does not have: an app's own, or an
            // earlier version's left in place; a new store made from the model has none of them.
            // The format's own tables count alike (a history table made by someone else).
            let present = Set(names.map { $0.lowercased() })
            let named = layout.namedColumns
            let expectedColumns = layout.tables.map { (name: $0.name, columns: named[$0.name.lowercased()] ?? []) }
                + strategy.ownTableColumns.sorted { $0.key < $1.key }.map { (name: $0.key, columns: Set($0.value.map { $0.lowercased() })) }
            for (name, expected) in expectedColumns where present.contains(name.lowercased()) {
                let columns = try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [name]).compactMap { String.fromDatabaseValue($0[0] as DatabaseValue) }
                for column in columns where !expected.contains(column.lowercased()) {
                    let values = try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedSQLIdentifier) WHERE \(column.quotedSQLIdentifier) IS NOT NULL")
                    found.append(ForeignTable(name: name, rows: values ?? nil, kind: ForeignTable.kind(of: column), column: column))
                }
            }
            // Triggers and views: definitions the migrated store, made from the model, has not.
            for row in try Row.fetchAll(db, sql: "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY type, name") {
                guard let type = String.fromDatabaseValue(row[0] as DatabaseValue), let name = String.fromDatabaseValue(row[1] as DatabaseValue) else { continue }
                found.append(ForeignTable(name: name, rows: nil, kind: .schemaObject, objectType: type))
            }
            // So are indexes of the model's tables that the layout does not make (an app's own,
            // made for its fetches): the migrated store has the model's only. SQLite's own
            // (`sqlite_autoindex_…`, for UNIQUE constraints) come with the tables.
            // An index counts as the model's by its name or by its columns (Core Data names a
            // fetch index otherwise than mapc; the migrated store has one on the same columns).
            let madeIndexes = Set(layout.tables.flatMap { $0.indexes.map { $0.name.lowercased() } })
            let madeColumns = Set(layout.tables.flatMap { table in table.indexes.map { ([table.name] + $0.columns).map { $0.lowercased() } } })
            // Entities' tables only: a join table read off a store keeps no list of its indexes
            // (Core Data's one index there is named by its columns, which stores of some eras lack).
            let entityTables = Set(layout.entities.values.map { $0.table.lowercased() })
            let indexes = try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
            for row in indexes {
                guard let name = String.fromDatabaseValue(row[0] as DatabaseValue), let table = String.fromDatabaseValue(row[1] as DatabaseValue),
                      entityTables.contains(table.lowercased()), !madeIndexes.contains(name.lowercased()) else { continue }
                let columns = try Row.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [name]).map { (String.fromDatabaseValue($0[0] as DatabaseValue) ?? "").lowercased() }
                guard !madeColumns.contains([table.lowercased()] + columns) else { continue }
                let unique = (String.fromDatabaseValue(row[2] as DatabaseValue) ?? "").uppercased().hasPrefix("CREATE UNIQUE")
                found.append(ForeignTable(name: name, rows: nil, kind: .schemaObject, objectType: unique ? "unique index" : "index"))
            }
            return found
        }
    }
}

extension Store {
    /// What `plan` and `run` say about where the store's layout departs from mapc's prediction
    /// for its version: entity numbers, join tables, destination-entity columns (the prediction
    /// laid out once for the three).
    package func layoutNotes() -> [String] {
        let predicted = strategy.layout(for: schema)
        return [entityNumberingNote(predicted), joinTableNamingNote(predicted), destinationEntityColumnNote(predicted)].compactMap { $0 }
    }

    /// A note when the store numbers its entities otherwise than mapc predicts for its version
    /// (it is read as it says): the migrated store is numbered as mapc predicts for the new one,
    /// which this store suggests may not be Core Data's numbering there either.
    private func entityNumberingNote(_ predicted: StoreLayout) -> String? {
        let departures = schema.entities.compactMap { entity -> (name: String, stored: DatabaseValue, predicted: DatabaseValue)? in
            guard let stored = layout.entities[entity.name]?.discriminator, let expected = predicted.entities[entity.name]?.discriminator, stored != expected else { return nil }
            return (entity.name, stored, expected)
        }
        guard !departures.isEmpty else { return nil }
        let listed = departures.map { "\($0.name) \($0.stored) where mapc predicts \($0.predicted)" }.joined(separator: ", ")
        return "the store numbers its entities otherwise than mapc predicts for \(schema.version) (\(listed)), as its Z_PRIMARYKEY says: it is read as it says; "
            + "the migrated store's entities are numbered as mapc predicts Core Data numbers the new version's, which this store suggests may differ: open a migrated copy with the app before migrating users' stores, and please report the model"
    }

    /// A note when the store names the columns holding to-ones' destination entities (`Z7_COVER`)
    /// otherwise than mapc predicts: read under its names, written by mapc's rule in a migrated
    /// store (Core Data's number for a destination that is not its hierarchy's root is not confirmed).
    private func destinationEntityColumnNote(_ predictedLayout: StoreLayout) -> String? {
        let predictedColumns = predictedLayout.derivedColumns
        let predicted = Dictionary(predictedColumns.map { ("\($0.table)\u{0}\($0.foreignKey)", $0.column) }, uniquingKeysWith: { first, _ in first })
        // A name mapc writes too is no departure (sibling keys read the other way round keep their columns' names).
        let predictedNames = Set(predictedColumns.map { "\($0.table)\u{0}\($0.column.uppercased())" })
        let departures = layout.derivedColumns.compactMap { actual -> String? in
            guard !predictedNames.contains("\(actual.table)\u{0}\(actual.column.uppercased())"), let expected = predicted["\(actual.table)\u{0}\(actual.foreignKey)"] else { return nil }
            return "\(actual.table).\(actual.column) where mapc would write \(expected)"
        }
        guard !departures.isEmpty else { return nil }
        return "the store numbers the columns of to-ones' destination entities otherwise than mapc would: \(departures.joined(separator: ", ")); they are read as the store names them, "
            + "and a migrated store has mapc's names (which number Core Data gives a destination that is not its hierarchy's root is not confirmed): open a migrated copy with the app before migrating users' stores, and please report the model"
    }

    /// Where the store names its join tables and their columns otherwise than mapc predicts for
    /// this version: a note saying which a migration keeps (the numbers Core Data gave repeated
    /// columns, where the new version has the same table) and which it writes by the rule (another
    /// owner or table name). Nil when they agree.
    private func joinTableNamingNote(_ predicted: StoreLayout) -> String? {
        let departures = predicted.joinTableDepartures(in: layout)
        guard !departures.isEmpty else { return nil }
        func listed(_ kept: Bool) -> String {
            departures.filter { $0.differsOnlyInSuffixes == kept }.map { departure -> String in
                let stored = departure.actual.dropFirst().compactMap { $0 }.joined(separator: ", ")
                let predicted = departure.predicted.dropFirst().compactMap { $0 }.joined(separator: ", ")
                return "\(departure.actual[0] ?? "") (\(stored)) where mapc would write \(departure.predicted[0] ?? "") (\(predicted))"
            }.joined(separator: "; ")
        }
        var sentences: [String] = []
        let numbered = listed(true), named = listed(false)
        if !numbered.isEmpty {
            sentences.append("the store numbers join table columns otherwise than mapc would: \(numbered); a migration keeps these numbers where the new version has the same table "
                             + "and the same columns of that name, and numbers them as mapc does elsewhere")
        }
        if !named.isEmpty {
            sentences.append("the store names join tables otherwise than mapc would write them: \(named); a migration writes them by the rule Core Data's stores follow "
                             + "(the lower entity number owns; between an entity and itself, the relationship whose name sorts later), as Core Data's own migration does; open a migrated copy with the app before migrating users' stores")
        }
        return sentences.joined(separator: ". ")
    }
}
