import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// How SQLite runs the queries that read an object's to-many relationships. With one
/// discriminator to allow (`d.entity IN ('Book')`), SQLite chose the table's entity index to
/// avoid sorting, and walked every Book for each Tag: relating 32,000 books took 4.2 s, not 0.58.
/// The plan is deterministic, so it is asserted here; the benchmark measures the time.
@Suite("Query plans of reading relationships")
struct ReadQueryPlanTests {
    private static let schemaText = """
        model: Shelves
        version: v1
        entities:
          Item: { abstract: true, attributes: { title: string } }
          Book:
            parent: Item
            relationships:
              tags: { destination: Tag, toMany: true, inverse: books, optional: true }
              shelf: { destination: Shelf, inverse: books, optional: true }
          Tag:
            attributes: { name: string }
            relationships: { books: { destination: Book, toMany: true, inverse: tags, optional: true } }
          Shelf:
            attributes: { label: string }
            relationships: { books: { destination: Book, toMany: true, inverse: shelf, optional: true } }
        """ + "\n"

    @Test(arguments: TestLayout.allCases)
    func aToManyRelationshipIsReadByItsKeysNotByWalkingTheEntity(layout: TestLayout) throws {
        let schema = try loadSchema(Self.schemaText)
        let store = try layout.store(schema)
        for entity in ["Tag", "Shelf"] {
            let plan = try ReadPlan(entity: entity, store: store, properties: nil)
            #expect(!plan.toMany.isEmpty)
            for query in plan.toMany {
                let steps = try store.reading { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + query.sql, arguments: [1]).map { $0["detail"] as String? ?? "" }
                }
                // The related rows are found through the relationship's own key (a join table's
                // index, the foreign key's column), then by primary key: never a walk of the entity.
                let walks = steps.filter { $0.hasPrefix("SCAN") || $0.contains("(_entity=?)") || $0.contains("(Z_ENT=?)") }
                #expect(walks.isEmpty, "\(layout) \(entity).\(query.name): \(steps)")
            }
        }
    }
}
