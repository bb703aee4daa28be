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

    private func sizes(_ store: Store) throws -> [String: String] {
        var found: [String: String] = [:]
        for entity in ["Left", "Right"] {
            for object in try store.objects(ofExactEntity: entity) {
                if case .string(let name)? = object.attributes["name"] { found[name] = { if case .string(let size)? = object.attributes["size"] { return size }; return "nil" }() }
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
        guard let left = store.layout.entities["Left"]?.attributeColumns["size"], let right = store.layout.entities["Right"]?.attributeColumns["size"],
              let table = store.layout.entities["Left"]?.table, left != right else {
            Issue.record("the two sizes have columns of their own in one table"); return
        }
        try store.close()
        if swapped {
            // As a store whose maker numbered the two the other way round.
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "ALTER TABLE \(table) RENAME COLUMN \(left) TO ZTEMPORARY")
                try db.execute(sql: "ALTER TABLE \(table) RENAME COLUMN \(right) TO \(left)")
                try db.execute(sql: "ALTER TABLE \(table) RENAME COLUMN ZTEMPORARY TO \(right)")
            }
            try queue.close()
        }
        let opened = try Store.open(at: path, schema: schema)
        defer { try? opened.close() }
        #expect(try sizes(opened) == ["left": "L", "right": "R"])
        // Written where read: a new object's value lands in its entity's column.
        try opened.insert([ObjectData(id: "l2", entity: "Left", attributes: ["name": .string("left 2"), "size": .string("L2")])])
        #expect(try sizes(opened)["left 2"] == "L2")
    }
}
