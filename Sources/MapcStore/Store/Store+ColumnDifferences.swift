import Foundation
package import GRDB
import MapcModel

extension Store {
    /// The columns of every table of a store, by table name lowercased, read in one statement;
    /// empty when the store cannot be read (the diagnosis is best effort).
    package static func tableColumns(at path: String) -> [String: [String]] {
        guard let queue = try? openQueue(path: path, readOnly: true, recovering: false) else { return [:] }
        defer { try? queue.close() }
        let rows = (try? queue.read { db in
            try Row.fetchAll(db, sql: "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p WHERE m.type = 'table' AND NOT \(VirtualTable.isVirtual("m.")) ORDER BY m.name, p.cid")
        }) ?? []
        var columns: [String: [String]] = [:]
        for row in rows {
            guard let table = row[0] as String?, let column = row[1] as String? else { continue }
            columns[table.lowercased(), default: []].append(column)
        }
        return columns
    }

    /// What the columns of a store's tables (`tableColumns`) say about entities whose version
    /// hashes differ from a schema's: the columns a table has that the schema's layout of it lacks
    /// (a property added without a new model version, most often), and the attributes the schema
    /// has that the table lacks. The hashes say which entity differs; the columns say which property.
    package static func columnDifferences(_ columns: [String: [String]], schema: Schema, format: StoreFormat, entities: [String]) -> [String] {
        compareColumns(columns, schema: schema, format: format, entities: entities).flatMap { found -> [String] in
            var lines: [String] = []
            if !found.extra.isEmpty {
                lines.append("the store's table \(found.table) has \(found.extra.count == 1 ? "a column" : "columns") \(found.extra.joined(separator: ", ")) that \(found.entity) in \(schema.version) does not "
                             + "(a property added to \(found.entity) without a new model version?)")
            }
            if !found.missing.isEmpty {
                lines.append("\(found.entity) in \(schema.version) has \(found.missing.count == 1 ? "attribute" : "attributes") \(found.missing.map { "'\($0)'" }.joined(separator: ", ")) that the store's table \(found.table) lacks")
            }
            return lines
        }
    }

    /// How many columns differ between a store's tables (`tableColumns`) and a schema's layout of
    /// `entities`: columns the tables have that the layout lacks, and attributes whose columns they lack.
    package static func columnDistance(_ columns: [String: [String]], schema: Schema, format: StoreFormat, entities: [String]) -> Int {
        compareColumns(columns, schema: schema, format: format, entities: entities).reduce(0) { $0 + $1.extra.count + $1.missing.count }
    }

    private static func compareColumns(_ columns: [String: [String]], schema: Schema, format: StoreFormat, entities: [String]) -> [(entity: String, table: String, extra: [String], missing: [String])] {
        let layout = format.strategy.layout(for: schema)
        let named = layout.namedColumns
        var found: [(entity: String, table: String, extra: [String], missing: [String])] = []
        for name in entities {
            guard let storage = layout.entities[name], let table = layout.tables.first(where: { $0.name == storage.table }),
                  let stored = columns[storage.table.lowercased()], !stored.isEmpty else { continue }
            let expected = named[table.name.lowercased()] ?? [], present = Set(stored)
            let extra = stored.filter { !expected.contains($0.lowercased()) }
            let missing = storage.attributeColumns.filter { !present.contains($0.value) }.keys.sorted()
            if !extra.isEmpty || !missing.isEmpty { found.append((name, storage.table, extra, missing)) }
        }
        return found
    }
}
