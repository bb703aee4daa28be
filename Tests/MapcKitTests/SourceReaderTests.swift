import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// How a run reads its source, on its own: which objects a mapping reads (its entity, Xcode's
/// standard fetch with sub-entities and a predicate, a source expression), the counts progress
/// and the key rules use, and that a batch is forgotten once its work is done.
@Suite("Reading the source")
struct SourceReaderTests {
    private static let schemaText = """
        model: Items
        version: v1
        entities:
          Item:
            attributes:
              name: string
              n: int64
          Special:
            parent: Item
            attributes:
              extra: { type: string, optional: true }
          Other:
            attributes:
              label: { type: string, optional: true }
        """ + "\n"

    /// A store of three items, two specials and one other, and a reader over it for `mappingYAML`.
    private func reader(_ layout: TestLayout, mappingYAML: String) throws -> (SourceReader, MappingModel, Store) {
        let schema = try loadSchema(Self.schemaText)
        let store = try layout.store(schema)
        try store.insert((1...3).map { ObjectData(id: "i\($0)", entity: "Item", attributes: ["name": .string("item \($0)"), "n": .integer(Int64($0))]) }
            + (4...5).map { ObjectData(id: "s\($0)", entity: "Special", attributes: ["name": .string("special \($0)"), "n": .integer(Int64($0)), "extra": .string("x")]) }
            + [ObjectData(id: "o1", entity: "Other", attributes: ["label": .string("other")])])
        let mapping = try loadMapping("source: v1\ndestination: v1\nentityMappings:\n" + mappingYAML)
        let destination = try layout.store(schema)
        let analysis = try MigrationAnalysis(mapping: mapping, source: store, destination: destination)
        let graph = StoreObjectGraph(store: store, readsMigrationSource: true)
        let evaluators = MappingEvaluators(mapping: mapping, policies: mapping.entityMappings.map { _ in EntityMigrationPolicy() }, graph: graph, now: Date())
        return (SourceReader(store: store, graph: graph, analysis: analysis, evaluators: evaluators, batchSize: 2, readsAhead: false), mapping, store)
    }

    private func names(_ reader: SourceReader, _ mapping: MappingModel, _ index: Int = 0) throws -> [String] {
        var names: [String] = []
        try reader.forEachObject(of: index, mapping.entityMappings[index], readingAhead: false) { object in
            names.append(object.data.attributes["name"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? object.data.entity)
        }
        return names
    }

    @Test(arguments: TestLayout.allCases)
    func aMappingReadsEveryObjectOfExactlyItsEntityInBatches(layout: TestLayout) throws {
        let (reader, mapping, _) = try reader(layout, mappingYAML: "  - { name: ItemToItem, source: Item, destination: Item }\n")
        #expect(try names(reader, mapping) == ["item 1", "item 2", "item 3"])
        #expect(try reader.count(of: mapping.entityMappings[0]) == 3)
    }

    @Test(arguments: TestLayout.allCases)
    func theStandardFetchReadsSubEntitiesThroughItsPredicate(layout: TestLayout) throws {
        let fetch = #"FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Item\", \"n >= 2\"), $manager.sourceContext, NO)"#
        let (reader, mapping, _) = try reader(layout, mappingYAML: "  - name: ItemToItem\n    source: Item\n    destination: Item\n    sourceExpression: \"\(fetch)\"\n")
        #expect(try names(reader, mapping).sorted() == ["item 2", "item 3", "special 4", "special 5"])
        // A source expression chooses the objects: no total to report progress against.
        #expect(try reader.count(of: mapping.entityMappings[0]) == nil)
    }

    @Test(arguments: TestLayout.allCases)
    func rowCountsTellATableSharedWithSubEntitiesFromOneOfItsOwn(layout: TestLayout) throws {
        let (reader, _, store) = try reader(layout, mappingYAML: "  - { name: ItemToItem, source: Item, destination: Item }\n")
        let item = try #require(store.layout.entities["Item"]), other = try #require(store.layout.entities["Other"])
        let counts = try #require(try reader.rowCounts(item, reading: "Item"))
        // Core Data keeps a hierarchy in one table; mapc's format gives each entity its own.
        let shared = store.layout.entities.values.filter { $0.table == item.table }.count > 1
        #expect(counts.read == 3 && counts.total == (shared ? 5 : 3), "\(counts)")
        #expect(try reader.rowCounts(other, reading: "Other").map { [$0.total, $0.read] } == [1, 1])
        #expect(try reader.count(ofExactEntity: "Special") == 2)
    }

    @Test(arguments: TestLayout.allCases)
    func theSourcesOfDestinationObjectsAreReadAndForgottenByBatch(layout: TestLayout) throws {
        let (reader, _, store) = try reader(layout, mappingYAML: "  - { name: ItemToItem, source: Item, destination: Item }\n")
        let keys = try store.objects(ofExactEntity: "Special").compactMap(\.key)
        #expect(keys.count == 2)
        let found = try reader.objects(keys: keys, ofEntities: ["Item", "Special"], mapping: 0)
        #expect(Set(found.values.map(\.entity)) == ["Special"] && found.count == 2)
        #expect(reader.graph.batchCount == 2)
        reader.forgetBatch()
        #expect(reader.graph.batchCount == 0)
    }
}
