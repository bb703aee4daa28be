import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// A policy that stores bytes that are not text in a string attribute.
final class BytesIntoStringPolicy: EntityMigrationPolicy {
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var item = try manager.makeDestination(for: source, mapping: mapping)
        item["name"] = .binary(Data([0xFF, 0xFE, 0x00]))
        try manager.insert(item, associatedWith: source, mapping: mapping)
    }
}

/// A policy that changes what `makeDestination` built: a value through the subscript (coerced
/// there) and one straight into `attributes` (checked when written).
final class EditingAttributesPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var direct: Value = .null
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var item = try manager.makeDestination(for: source, mapping: mapping)
        item["cents"] = .double(1250)
        item.attributes["name"] = Self.direct
        try manager.insert(item, associatedWith: source, mapping: mapping)
    }
}

/// A policy that, while relating one object, asks for the source of another.
final class AskingAboutOthersPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var answers: [String: String] = [:]
    override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        let other = DestinationObject(entity: "Item", id: destination.id == "i1" ? "i2" : "i1")
        Self.answers["\(destination.id) asks about \(other.id)"] = try manager.sourceObject(for: other)?.data.id ?? "nil"
        Self.answers["\(destination.id) asks about itself"] = try manager.sourceObject(for: destination)?.data.id ?? "nil"
    }
}

@Suite("Policies and values", .serialized)
struct PolicySafetyTests {
    static let source = "model: M\nversion: s1\nentities:\n  Item:\n    attributes:\n      name: string\n      price: decimal?\n"
    static let destination = """
    model: M
    version: s2
    entities:
      Item:
        attributes:
          name: { type: string, regex: "[a-z]+" }
          cents: int64?
    """

    private func run(_ mappingText: String, policies: PolicyRegistry, objects: [ObjectData]) throws -> (Store, MigrationSummary) {
        let from = try loadSchema(Self.source), to = try loadSchema(Self.destination)
        let store = try Store.inMemory(schema: from)
        try store.insert(objects)
        let (mapping, diagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: mappingText))
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        let destination = try Store.inMemory(schema: to)
        let summary = try StepMigration(source: store, destination: destination, mapping: try #require(mapping), policies: policies).run()
        return (destination, summary)
    }

    private static func item(_ id: String, price: String? = nil) -> ObjectData {
        ObjectData(id: id, entity: "Item", attributes: ["name": .string("abc"), "price": price.map { .decimal(Decimal(string: $0)!) } ?? .null])
    }

    @Test func valuesAPolicySetsAfterMakeDestinationAreCoercedOrRefused() throws {
        let registry = PolicyRegistry()
        registry.register(EditingAttributesPolicy.self, as: "Editing")
        let mapping = "source: s1\ndestination: s2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    policy: Editing\n    attributes: { name: $source.name }\n"
        EditingAttributesPolicy.direct = .string("xyz")
        let (store, _) = try run(mapping, policies: registry, objects: [Self.item("i1")])
        let written = try #require(store.objects(ofExactEntity: "Item").first)
        #expect(written.attributes["cents"] == .integer(1250) && written.attributes["name"] == .string("xyz"), "\(written.attributes)")
        // Set into the dictionary itself, a value of the wrong type is refused when written.
        EditingAttributesPolicy.direct = .integer(7)
        let error = #expect(throws: MigrationError.self) { _ = try run(mapping, policies: registry, objects: [Self.item("i1")]) }
        #expect(error.map { "\($0)" }?.contains("property 'name': 7 cannot be stored") == true, "\(String(describing: error))")
    }

    @Test func aPolicyValueThatDoesNotFitIsRefusedNamingTheObject() throws {
        let registry = PolicyRegistry()
        registry.register(BytesIntoStringPolicy.self, as: "BytesIntoString")
        let mapping = "source: s1\ndestination: s2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    policy: BytesIntoString\n    attributes: { name: $source.name }\n"
        let error = #expect(throws: MigrationError.self) { _ = try run(mapping, policies: registry, objects: [Self.item("i1")]) }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("Item 'i1'") && message.contains("property 'name'") && message.contains("cannot be stored"), "\(message)")
    }

    @Test func sourceObjectAnswersAboutTheObjectAskedAbout() throws {
        let registry = PolicyRegistry()
        registry.register(AskingAboutOthersPolicy.self, as: "Asking")
        AskingAboutOthersPolicy.answers = [:]
        let mapping = "source: s1\ndestination: s2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    policy: Asking\n    attributes: { name: $source.name }\n"
        _ = try run(mapping, policies: registry, objects: [Self.item("i1"), Self.item("i2")])
        #expect(AskingAboutOthersPolicy.answers == ["i1 asks about i2": "i2", "i1 asks about itself": "i1", "i2 asks about i1": "i1", "i2 asks about itself": "i2"])
    }

    @Test func roundedDecimalsGoIntoIntegersAndFractionsFailNamingTheValue() throws {
        let mapping = { (expression: String) in
            "source: s1\ndestination: s2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      name: $source.name\n      cents: '\(expression)'\n"
        }
        let catalog = SchemaCatalog(schemas: [try loadSchema(Self.source), try loadSchema(Self.destination)])
        func diagnostics(_ expression: String) -> [Diagnostic] {
            var checker = MappingChecker(mapping: MappingLoader.parse(source: SourceFile(path: "m.yaml", text: mapping(expression))).mapping!)
            return checker.check(catalog: catalog)
        }
        let rounded = "TERNARY($source.price == nil, 0, floor:($source.price * 100))"
        #expect(diagnostics(rounded).isEmpty, "\(diagnostics(rounded))")
        let unrounded = diagnostics("$source.price * 100")
        #expect(unrounded.count == 1 && unrounded[0].severity == .warning && unrounded[0].message.contains("fails the migration"), "\(unrounded)")
        let (store, _) = try run(mapping(rounded), policies: PolicyRegistry(), objects: [Self.item("i1", price: "12.345"), Self.item("i2")])
        #expect(try store.object(id: "i1")?.attributes["cents"] == .integer(1234))
        #expect(try store.object(id: "i2")?.attributes["cents"] == .integer(0))
        let exact = try run(mapping("$source.price * 100"), policies: PolicyRegistry(), objects: [Self.item("i1", price: "92233720368547758.07")]).0
        #expect(try exact.object(id: "i1")?.attributes["cents"] == .integer(9_223_372_036_854_775_807), "exact above 2^53")
        let error = #expect(throws: MigrationError.self) { _ = try run(mapping("$source.price * 100"), policies: PolicyRegistry(), objects: [Self.item("i1", price: "0.125")]) }
        #expect(error.map { "\($0)" }?.contains("Item 'i1', property 'cents': 12.5 has a fraction") == true, "\(String(describing: error))")
        let overflow = #expect(throws: MigrationError.self) { _ = try run(mapping("$source.price * 100"), policies: PolicyRegistry(), objects: [Self.item("i1", price: "1e30")]) }
        #expect(overflow.map { "\($0)" }?.contains("out of range") == true, "\(String(describing: overflow))")
    }

    @Test func fetchInAPropertyMappingReadsTheEntityOnce() throws {
        final class CountingGraph: ObjectGraph {
            let inner: InMemoryObjectGraph
            var fetches = 0
            init(_ inner: InMemoryObjectGraph) { self.inner = inner }
            func value(of object: ObjectRef, key: String) throws -> EvalValue? { try inner.value(of: object, key: key) }
            func objects(of entity: String) throws -> [ObjectRef] { fetches += 1; return try inner.objects(of: entity) }
        }
        let schema = try loadSchema(Self.source)
        let graph = CountingGraph(InMemoryObjectGraph(objects: (0..<50).map { Self.item("i\($0)") }, schema: schema))
        let evaluator = Evaluator(context: EvaluationContext(graph: graph))
        let constant = try ExpressionParser.parse(#"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Item", "name == 'abc'"), $manager.sourceContext, NO).@count"#).get()
        for _ in 0..<50 { #expect(try evaluator.evaluate(constant) == .scalar(.integer(50))) }
        #expect(graph.fetches == 1, "a predicate that reads no variables is fetched once, not once per object")
    }
}
