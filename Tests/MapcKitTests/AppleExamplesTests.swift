import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The examples of Apple's "Predicate Format String Syntax" and the Predicate Programming Guide, verbatim,
/// and the expressions of the project's guide, evaluated against a JSON object whose keys they use.
@Suite("Apple's and the guide's examples")
struct AppleExamplesTests {
    static let person = #"""
    {"name": "Nick", "firstName": "Adam", "lastName": "Smith", "grade": "7", "index": 1, "array": [1, 2, 3],
     "children": [{"age": 12}, {"age": 17}],
     "residents": [{"firstname": "Jane", "lastname": "Doe"}, {"firstname": "John", "lastname": "Roe"}],
     "expenses": [{"amount": 10}, {"amount": 20.5}],
     "note": {"body": "Milk and eggs"}, "image": "iVBORw0KGgo="}
    """#

    static let examples: [EvalCase] = [
        .init("1 BETWEEN { 0 , 33 }", "true"),
        .init("$INPUT BETWEEN { $LOWER, $UPPER }", "true"),
        .init("firstName BEGINSWITH[cd] $FIRST_NAME", "true"),
        .init("firstName like \"Adam\"", "true"),
        .init("lastName like[cd] \"smith\"", "true"),
        .init("ANY children.age < 18", "true"),
        .init("ALL children.age < 18", "true"),
        .init("NONE children.age < 18", "false"),
        .init("name IN { 'Ben', 'Melissa', 'Nick' }", "true"),
        .init("array[index]", "2"),
        .init("array[FIRST]", "1"),
        .init("array[LAST]", "3"),
        .init("array[SIZE]", "3"),
        .init("SUBQUERY(residents, $x, $x.firstname == \"Jane\" && $x.lastname == \"Doe\").@count != 0", "true"),
        .init("grade == \"7\" OR grade == \"8\"", "true"),
        .init("expenses.@sum.amount", "30.5"),
        .init("expenses.@avg.amount", "15.25"),
        .init("children.@count", "2"),
        .init("TRUEPREDICATE", "true"),
        .init("FALSEPREDICATE", "false"),
        .init("name MATCHES '[A-Z][a-z]+'", "true"),
        .init("MAX(1, 5, 10)", "10"),
        .init("name == %@", "error: '%@' is a format specifier, which mapc does not read"),
        // The project's guide (DEVELOPERS.md).
        .init("$source.note.body", "\"Milk and eggs\""),
        .init("image != nil", "true"),
        .init("FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", ##"[{"entity":"Note","id":"#1'"}]"##),
    ]

    @Test("example", arguments: examples)
    func example(_ testCase: EvalCase) throws {
        let graph = try JSONObjectGraph(json: try JSONValue.parse(Data(Self.person.utf8), path: "person.json"))
        let context = EvaluationContext(
            graph: graph, evaluatedObject: graph.root,
            variables: ["source": graph.root, "INPUT": .scalar(.integer(5)), "LOWER": .scalar(.integer(1)), "UPPER": .scalar(.integer(10)),
                        "FIRST_NAME": .scalar(.string("ADAM"))],
            manager: ExpressionFixture.stubManager)
        let result: String
        switch ExpressionParser.parse(testCase.text) {
        case .failure(let error): result = "error: \(error.message)"
        case .success(let expression):
            do { result = try Evaluator(context: context).evaluate(expression).json.serialized() } catch let error as ExpressionError {
                result = "error: \(error.message)"
            }
        }
        if testCase.expected.hasPrefix("error: ") {
            #expect(result.contains(testCase.expected.dropFirst(7)), "got \(result)")
        } else {
            #expect(result == testCase.expected)
        }
    }
}
