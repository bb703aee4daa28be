import Foundation
import Testing
import GRDB
@testable import MapcKit
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration

/// A to-one relationship whose inverse is an ordered to-many places each object it links at the
/// end of its owner's list: in the order the links are made, positions 0, 1, 2… per owner, never
/// moving an object the list already holds.
@Suite("Places in an ordered inverse")
struct OrderedInverseTests {
    private static func schema(_ version: String) -> String {
        """
        model: Shelf
        version: \(version)
        entities:
          Folder:
            attributes:
              name: string
            relationships:
              items: { destination: Item, toMany: true, ordered: true, inverse: folder, optional: true }
          Item:
            attributes:
              title: string
            relationships:
              folder: { destination: Folder, inverse: items, optional: true }
        """
    }

    private static let folderLookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"FolderToFolder\", $source.folder)"
    /// The items' mapping: each names the folder made from its source's.
    private static let itemToItem = """
      - name: ItemToItem
        source: Item
        destination: Item
        attributes: { title: $source.title }
        relationships: { folder: '\(folderLookup)' }
    """
    private static let itemsLookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ItemToItem\", $source.items)"

    /// Folder A holds the odd items, B the even ones, each list in reverse order of the items' keys.
    private func source(_ layout: TestLayout) throws -> Store {
        let store = try layout.store(try loadSchema(Self.schema("v1")))
        let items = (0..<9).map { ObjectData(id: "i\($0)", entity: "Item", attributes: ["title": .string("i\($0)")]) }
        try store.insert(items + [
            ObjectData(id: "a", entity: "Folder", attributes: ["name": .string("A")], relationships: ["items": ["i7", "i5", "i3", "i1"]]),
            ObjectData(id: "b", entity: "Folder", attributes: ["name": .string("B")], relationships: ["items": ["i8", "i6", "i4", "i2", "i0"]]),
        ])
        return store
    }

    /// Each folder's items by title, and the positions stored for them.
    private func lists(_ store: Store) throws -> [String: (titles: [String], positions: [Int])] {
        let items = Dictionary(uniqueKeysWithValues: try store.objects(ofExactEntity: "Item").map { ($0.id, $0.attributes["title"]) })
        guard case .inverseForeignKey(let table, let column, let order?, _)? = store.layout.entities["Folder"]?.relationships["items"] else { return [:] }
        var lists: [String: (titles: [String], positions: [Int])] = [:]
        for folder in try store.objects(ofExactEntity: "Folder") {
            guard case .string(let name)? = folder.attributes["name"], let key = folder.key else { continue }
            let titles = (folder.relationships["items"] ?? []).map { id -> String in
                if case .string(let title)?? = items[id] { return title } else { return "?" }
            }
            let positions = try store.database.read { db in
                try Int.fetchAll(db, sql: "SELECT \(order.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) = ? ORDER BY 1", arguments: [key])
            }
            lists[name] = (titles, positions)
        }
        return lists
    }

    private func migrate(_ mapping: String, layout: TestLayout, allowsSQL: Bool) throws -> Store {
        let destination = try layout.store(try loadSchema(Self.schema("v2")))
        var step = StepMigration(source: try source(layout), destination: destination, mapping: try loadMapping(mapping))
        step.allowsSQL = allowsSQL
        step.batchSize = 2
        _ = try step.run()
        return destination
    }

    /// Only the items say where they belong: each goes after those related before it, in the
    /// order the items are related (their keys' order), numbered from 0 in each folder.
    @Test(arguments: TestLayout.allCases, [false, true])
    func linksMadeFromTheToOneSideAreAppendedInTheOrderTheyAreMade(layout: TestLayout, allowsSQL: Bool) throws {
        let store = try migrate("""
            source: v1
            destination: v2
            entityMappings:
              - { name: FolderToFolder, source: Folder, destination: Folder, attributes: { name: $source.name } }
            \(Self.itemToItem)
            """, layout: layout, allowsSQL: allowsSQL)
        let lists = try lists(store)
        #expect(lists["A"]?.titles == ["i1", "i3", "i5", "i7"] && lists["B"]?.titles == ["i0", "i2", "i4", "i6", "i8"], "\(lists)")
        #expect(lists["A"]?.positions == [0, 1, 2, 3] && lists["B"]?.positions == [0, 1, 2, 3, 4], "\(lists)")
    }

    /// The folders set their lists first; the items then name the folder each already has, and
    /// keep their places.
    @Test(arguments: TestLayout.allCases, [false, true])
    func aListSetFromItsOwnSideKeepsItsOrder(layout: TestLayout, allowsSQL: Bool) throws {
        let store = try migrate("""
            source: v1
            destination: v2
            entityMappings:
              - name: FolderToFolder
                source: Folder
                destination: Folder
                attributes: { name: $source.name }
                relationships: { items: '\(Self.itemsLookup)' }
            \(Self.itemToItem)
            """, layout: layout, allowsSQL: allowsSQL)
        let lists = try lists(store)
        #expect(lists["A"]?.titles == ["i7", "i5", "i3", "i1"] && lists["B"]?.titles == ["i8", "i6", "i4", "i2", "i0"], "\(lists)")
        #expect(lists["A"]?.positions == [0, 1, 2, 3] && lists["B"]?.positions == [0, 1, 2, 3, 4], "\(lists)")
    }
}
