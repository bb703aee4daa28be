import Foundation
import GRDB
import Testing
@testable import MapcKit

/// Phase 3's check of a whole store: every row-level rule finds the row that breaks it, and a row
/// that breaks none is not reported, whatever the store format.
@Suite("Validating a store")
struct StoreValidatorTests {
    static let schema = """
    model: V
    version: v1
    entities:
      Item:
        attributes:
          name: string
          note: string?
          small: { type: int16, optional: true }
          ratio: { type: double, optional: true, max: 10 }
          count: { type: int64, optional: true, min: 0 }
          when: date?
          flag: bool?
          data: binary?
    """

    /// One object per broken rule (set with SQL, as a damaged or mis-migrated store would hold it),
    /// plus objects whose values, nulls included, break nothing.
    @Test(arguments: TestLayout.allCases)
    func everyBrokenRuleIsFoundAndNothingElse(layout: TestLayout) throws {
        let store = try layout.store(try loadSchema(Self.schema))
        let broken: [(id: String, column: String, value: DatabaseValue, property: String, rule: String)] = [
            ("b1", "name", .null, "name", "required value missing"),
            ("b2", "name", Data([7]).databaseValue, "name", "value is not of type string"),  // a number would become text (the column's affinity)
            ("b3", "note", Data([1]).databaseValue, "note", "value is not of type string"),
            ("b4", "small", 70_000.databaseValue, "small", "out of range for int16"),
            ("b5", "small", 1.5.databaseValue, "small", "value is not of type int16"),
            ("b6", "ratio", 11.5.databaseValue, "ratio", "above max 10.0"),
            ("b7", "count", (-1).databaseValue, "count", "below min 0"),
            ("b8", "when", "yesterday".databaseValue, "when", "value is not of type date"),
            ("b9", "flag", "yes".databaseValue, "flag", "value is not of type bool"),
            ("b10", "data", "bytes".databaseValue, "data", "value is not of type binary"),
        ]
        let sound = ObjectData(id: "ok1", entity: "Item", attributes: [
            "name": .string("full"), "note": .string("n"), "small": .integer(-32768), "ratio": .double(10), "count": .integer(0),
            "when": .date(Date(timeIntervalSince1970: 0)), "flag": .bool(true), "data": .binary(Data([0])),
        ])
        let empty = ObjectData(id: "ok2", entity: "Item", attributes: ["name": .string("")])
        try store.insert([sound, empty] + broken.map { ObjectData(id: $0.id, entity: "Item", attributes: ["name": .string($0.id)]) })
        let storage = try store.layout.storage(of: "Item")
        try store.database.write { db in
            for (offset, damage) in broken.enumerated() {
                let column = try #require(storage.attributeColumns[damage.column])
                // Keys follow insertion order: the two sound objects first.
                try db.execute(sql: "UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ? WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?",
                               arguments: [damage.value, offset + 3])
            }
        }
        let (violations, total) = try store.database.read { db in try StoreValidator(store: store, db: db).validate { _, _ in nil } }
        let found = Set(violations.map { "\($0.object) \($0.property ?? "-") \($0.rule)" })
        let expected = Set(broken.enumerated().map { offset, damage in "\(layout.id(damage.id, entity: "Item", key: offset + 3)) \(damage.property) \(damage.rule)" })
        #expect(found == expected)
        #expect(total == broken.count)
    }
}
