import Foundation
import Testing
import GRDB
@testable import MapcKit
@testable import MapcModel
@testable import MapcStore

/// Sibling sub-entities sharing one table may each have an attribute of the same name: Core Data
/// gives them `ZSIZE` and `ZSIZE1`, in an order the corpus cannot confirm. A store whose two
/// columns are the other way round is read by what they hold (each column holds values of its
/// own entity's rows only), not read as nil for every object of one entity.
@Suite("Same-named attributes of sibling entities")
struct SiblingColumnTests {
    static let schema = """
    model: Shapes
    version: s1
    entities:
      Thing:
        abstract: true
        attributes:
          name: string
      Left:
        parent: Thing
        attributes:
          size: string?
      Right:
        parent: Thing
        attributes:
          size: string?
    """

    private func sizes(_ store: Store, middle: String = "size") throws -> [String: String] {
        var found: [String: String] = [:]
        for entity in ["Left", "Middle", "Right"] where store.schema.entity(named: entity) != nil {
            for object in try store.objects(ofExactEntity: entity) {
                let key = entity == "Middle" ? middle : "size"
                if case .string(let name)? = object.attributes["name"] { found[name] = { if case .string(let size)? = object.attributes[key] { return size }; return "nil" }() }
            }
        }
        return found
    }

    @Test(arguments: [false, true])
    func theColumnsAreReadByWhatTheyHold(swapped: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-siblings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let schema = try loadSchema(Self.schema)
        let store = try Store.create(at: path, schema: schema, format: .coreData)
        try store.insert([
            ObjectData(id: "l", entity: "Left", attributes: ["name": .string("left"), "size": .string("L")]),
            ObjectData(id: "r", entity: "Right", attributes: ["name": .string("right"), "size": .string("R")]),
        ])
        let columns = try #require(sizeColumns(store, ["Left", "Right"]))
        try store.close()
        if swapped { try rename(path, table: columns.table, columns.names, to: columns.names.reversed()) }
        let opened = try Store.open(at: path, schema: schema)
        defer { try? opened.close() }
        #expect(try sizes(opened) == ["left": "L", "right": "R"])
        // Written where read: a new object's value lands in its entity's column.
        try opened.insert([ObjectData(id: "l2", entity: "Left", attributes: ["name": .string("left 2"), "size": .string("L2")])])
        #expect(try sizes(opened)["left 2"] == "L2")
    }

    /// Values in one column only say whose it is; three siblings' columns in any order; names
    /// that differ in case share the numbering (`size`, `sIZE`: `ZSIZE`, `ZSIZE1`).
    @Test(arguments: [["Left"], ["Left", "Middle", "Right"]], [false, true])
    func oneEntitysValuesOrThreeSiblingsAreEnoughToTell(valued: [String], differInCase: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-siblings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let three = Self.schema + "\n  Middle:\n    parent: Thing\n    attributes:\n      \(differInCase ? "sIZE" : "size"): string?\n"
        let schema = try loadSchema(three)
        let store = try Store.create(at: path, schema: schema, format: .coreData)
        try store.insert(["Left", "Middle", "Right"].map { entity in
            let size = differInCase && entity == "Middle" ? "sIZE" : "size"
            return ObjectData(id: entity, entity: entity, attributes: ["name": .string(entity)].merging(valued.contains(entity) ? [size: .string(String(entity.prefix(1)))] : [:]) { $1 })
        })
        let columns = try #require(sizeColumns(store, ["Left", "Middle", "Right"]))
        try store.close()
        // Each entity's column moved one place along.
        try rename(path, table: columns.table, columns.names, to: Array(columns.names.dropFirst()) + [columns.names[0]])
        let opened = try Store.open(at: path, schema: schema)
        defer { try? opened.close() }
        let found = try sizes(opened, middle: differInCase ? "sIZE" : "size")
        for entity in ["Left", "Middle", "Right"] { #expect(found[entity] == (valued.contains(entity) ? String(entity.prefix(1)) : "nil"), "\(entity): \(found)") }
        if valued.count == 1 {
            // The entities without values take what is left, and keep what they are given.
            try opened.insert([ObjectData(id: "r2", entity: "Right", attributes: ["name": .string("Right 2"), "size": .string("R2")])])
            #expect(try sizes(opened, middle: differInCase ? "sIZE" : "size")["Right 2"] == "R2")
            #expect(try sizes(opened, middle: differInCase ? "sIZE" : "size")["Left"] == "L")
        }
    }

    /// A migration keeps the store's numbering where the new version has the same columns: the
    /// app, reading the store as its maker numbered it, finds its values after the migration too
    /// (the migrated store went back to mapc's numbering).
    @Test func aMigrationKeepsTheStoresNumbering() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-siblings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let v1 = try loadSchema(Self.schema)
        let v2 = try loadSchema(Self.schema.replacingOccurrences(of: "version: s1", with: "version: s2") + "\n      note: string?\n")
        let store = try Store.create(at: path, schema: v1, format: .coreData)
        try store.insert([
            ObjectData(id: "l", entity: "Left", attributes: ["name": .string("left"), "size": .string("L")]),
            ObjectData(id: "r", entity: "Right", attributes: ["name": .string("right"), "size": .string("R")]),
        ])
        let columns = try #require(sizeColumns(store, ["Left", "Right"]))
        try store.close()
        try rename(path, table: columns.table, columns.names, to: columns.names.reversed())
        let migrator = Migrator(schemas: SchemaCatalog(schemas: [v1, v2]))
        _ = try migrator.migrate(storeAt: URL(fileURLWithPath: path))
        // The maker's numbering, read by column name as the app reads it.
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        let byColumn = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT \(columns.names[0]) AS first, \(columns.names[1]) AS second FROM \(columns.table) ORDER BY Z_PK").map { [$0["first"] as String?, $0["second"] as String?] }
        }
        #expect(byColumn == [[nil, "L"], ["R", nil]], "\(byColumn)")
    }

    /// The table and each entity's `size` column, in entity order; nil unless all are apart in one table.
    private func sizeColumns(_ store: Store, _ names: [String]) -> (table: String, names: [String])? {
        let found = names.compactMap { name in store.layout.entities[name]?.attributeColumns.first { $0.key.lowercased() == "size" }?.value }
        guard found.count == names.count, Set(found).count == names.count, let table = store.layout.entities[names[0]]?.table else { return nil }
        return (table, found)
    }

    /// Renames each column to another's name, as a store numbered otherwise would have them.
    private func rename(_ path: String, table: String, _ from: [String], to: [String]) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for (index, name) in from.enumerated() { try db.execute(sql: "ALTER TABLE \(table) RENAME COLUMN \(name) TO ZTEMPORARY\(index)") }
            for (index, name) in to.enumerated() { try db.execute(sql: "ALTER TABLE \(table) RENAME COLUMN ZTEMPORARY\(index) TO \(name)") }
        }
        try queue.close()
    }
}
