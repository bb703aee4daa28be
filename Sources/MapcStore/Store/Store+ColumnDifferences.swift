import Foundation
package import GRDB
import MapcModel

extension Store {
    /// What the columns of a store's tables say about entities whose version hashes differ from
    /// a schema's: the columns a table has that the schema's layout of it lacks (a property added
    /// without a new model version, most often), and the attributes the schema has that the table
    /// lacks. The hashes say which entity differs; the columns say which property. Best effort:
    /// nothing when the store cannot be read.
    package static func columnDifferences(at path: String, schema: Schema, format: StoreFormat, entities: [String]) -> [String] {
        guard let queue = try? openQueue(path: path, readOnly: true, recovering: false) else { return [] }
        defer { try? queue.close() }
        let layout = format.strategy.layout(for: schema)
        var lines: [String] = []
        let named = layout.namedColumns
        for name in entities {
            guard let storage = layout.entities[name], let table = layout.tables.first(where: { $0.name == storage.table }) else { continue }
            guard let stored = try? queue.read({ db in try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [storage.table]).compactMap { $0[0] as String? } }),
                  !stored.isEmpty else { continue }
            let expected = named[table.name.lowercased()] ?? [], present = Set(stored)
            let extra = stored.filter { !expected.contains($0.lowercased()) }
            if !extra.isEmpty {
                lines.append("the store's table \(storage.table) has \(extra.count == 1 ? "a column" : "columns") \(extra.joined(separator: ", ")) that \(name) in \(schema.version) does not "
                             + "(a property added to \(name) without a new model version?)")
            }
            let missing = storage.attributeColumns.filter { !present.contains($0.value) }.keys.sorted()
            if !missing.isEmpty {
                lines.append("\(name) in \(schema.version) has \(missing.count == 1 ? "attribute" : "attributes") \(missing.map { "'\($0)'" }.joined(separator: ", ")) that the store's table \(storage.table) lacks")
            }
        }
        return lines
    }
}
