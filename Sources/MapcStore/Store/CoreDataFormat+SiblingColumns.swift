import Foundation
internal import GRDB
import MapcModel

extension StoreLayout {
    /// This layout, with the columns of same-named attributes of entities sharing a table (two
    /// sibling sub-entities' `size`) assigned by what the store holds in them.
    ///
    /// Core Data gives such attributes one column each, `ZSIZE` and `ZSIZE1`; which entity gets
    /// which follows an order the corpus cannot confirm (mapc numbers them in the order it lays
    /// out the columns). A column holds values of its own entity's rows only, so when each of the
    /// two holds values of rows of the other entity and of none of its own, the store numbered them
    /// the other way round, and they are read (and written) that way. Without values to tell by,
    /// or with values of both, the layout stays as predicted.
    func withSiblingColumnsReadFromValues(_ db: Database, schema: Schema) throws -> StoreLayout {
        // Each table's attributes by name, with the entities declaring them and their columns.
        var declared: [String: [(entity: Entity, column: String)]] = [:]
        for entity in schema.entities {
            guard let storage = entities[entity.name] else { continue }
            for attribute in entity.attributes where !attribute.isTransient {
                guard let column = storage.attributeColumns[attribute.name] else { continue }
                declared["\(storage.table)\u{0}\(attribute.name)", default: []].append((entity, column))
            }
        }
        var layout = self
        for (key, group) in declared where group.count == 2 && group[0].column != group[1].column {
            let attribute = String(key.split(separator: "\u{0}", omittingEmptySubsequences: false).last ?? "")
            let (first, second) = (group[0], group[1])
            guard let one = entities[first.entity.name], let two = entities[second.entity.name] else { continue }
            /// How many rows not of `storage`'s entities hold a value in `column`.
            func strangers(in column: String, besides storage: EntityStorage) throws -> Int {
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(one.table.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL "
                                 + "AND \(one.entityColumn.quotedDatabaseIdentifier) NOT IN (\(storage.discriminatorsSQL))") ?? 0
            }
            guard try strangers(in: first.column, besides: one) > 0, try strangers(in: second.column, besides: two) > 0,
                  try strangers(in: first.column, besides: two) == 0, try strangers(in: second.column, besides: one) == 0 else { continue }
            layout.reassign(attribute, of: first.entity, to: second.column, in: schema)
            layout.reassign(attribute, of: second.entity, to: first.column, in: schema)
        }
        return layout
    }

    /// Gives an attribute another column, for its entity and every entity under it.
    private mutating func reassign(_ attribute: String, of entity: Entity, to column: String, in schema: Schema) {
        for member in schema.hierarchy(under: entity) where entities[member.name]?.attributeColumns[attribute] != nil {
            entities[member.name]?.attributeColumns[attribute] = column
        }
    }
}
