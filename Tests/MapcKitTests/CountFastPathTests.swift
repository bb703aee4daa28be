import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcModel

/// `owner.items.@count` asks the graph for the count, when it can say, rather than making the
/// list of objects (per object, for a list all of them share: quadratic).
@Suite("@count of a to-many key")
struct CountFastPathTests {
    /// The fixture's graph, counting the to-many lists it makes.
    final class CountingGraph: ObjectGraph {
        let inner = InMemoryObjectGraph(objects: ExpressionFixture.objects, schema: ExpressionFixture.schema)
        var listsMade = 0
        func value(of object: ObjectRef, key: String) throws -> EvalValue? {
            let value = try inner.value(of: object, key: key)
            if case .collection? = value { listsMade += 1 }
            return value
        }
        func objects(of entity: String) throws -> [ObjectRef] { try inner.objects(of: entity) }
        func count(of object: ObjectRef, key: String) throws -> Int? {
            guard case .collection(let items, _)? = try inner.value(of: object, key: key) else { return nil }
            return items.count
        }
    }

    @Test func aCountIsAskedOfTheGraph() throws {
        let graph = CountingGraph()
        let evaluator = Evaluator(context: EvaluationContext(graph: graph, variables: ["person": .object(ObjectRef(entity: "Person", id: "p1"))]))
        func run(_ text: String) throws -> EvalValue {
            guard case .success(let expression) = ExpressionParser.parse(text) else { throw MapcError.input("does not parse") }
            return try evaluator.evaluate(expression)
        }
        #expect(try run("$person.notes.@count") == .scalar(.integer(2)))
        #expect(graph.listsMade == 0)
        // Anything else reads the list as before.
        #expect(try run("$person.notes.title.@count") == .scalar(.integer(2)))
        #expect(graph.listsMade == 1)
    }
}
