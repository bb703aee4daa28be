import Foundation
import Testing
@testable import MapcModel

/// A mapping's filter and a `FETCH`'s predicate as Core Data's SQL fetch evaluates them: nil in a
/// comparison is SQL's NULL (unknown), and unknown does not hold. Each case with what the
/// in-memory predicate (`evaluatePredicate`) gives, which must differ where nil decides it.
@Suite("Store predicates (three-valued)")
struct StorePredicateTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var note: String
        var text: String
        var store: Bool
        var inMemory: Bool
        var testDescription: String { "\(text) on \(note)" }
    }

    static let cases: [Case] = [
        Case(note: "n2", text: "rating != 3", store: false, inMemory: true),
        Case(note: "n2", text: "NOT (rating < 3)", store: false, inMemory: true),
        Case(note: "n2", text: "rating == nil", store: true, inMemory: true),
        Case(note: "n2", text: "nil == rating", store: true, inMemory: true),
        Case(note: "n2", text: "rating != nil", store: false, inMemory: false),
        Case(note: "n2", text: "rating != 3 OR title == 'Ideas'", store: true, inMemory: true),
        Case(note: "n2", text: "rating != 3 AND title == 'Ideas'", store: false, inMemory: true),
        Case(note: "n2", text: "NOT (rating != 3 AND title == 'Nope')", store: true, inMemory: true),
        Case(note: "n2", text: "NOT (rating != 3 OR title == 'Nope')", store: false, inMemory: false),
        // Members as a join gives them, nil included (a literal list stands for a to-many's values).
        Case(note: "n1", text: "ANY {1, nil} != 1", store: false, inMemory: true),
        Case(note: "n1", text: "ANY {1, nil} == nil", store: true, inMemory: true),
        Case(note: "n1", text: "ALL {1, nil} == 1", store: true, inMemory: false),
        Case(note: "n1", text: "NONE {1, nil} == 2", store: true, inMemory: true),
        Case(note: "n1", text: "SUBQUERY({1, nil, 3}, $x, $x != 1).@count == 1", store: true, inMemory: false),
        Case(note: "n1", text: "NOT (title IN {'x', nil})", store: false, inMemory: true),
        Case(note: "n1", text: "title IN {'Groceries', nil}", store: true, inMemory: true),
        Case(note: "n1", text: "NOT (displayIndex BETWEEN {nil, 5})", store: false, inMemory: true),
        Case(note: "n1", text: "NOT (displayIndex BETWEEN {nil, 2})", store: true, inMemory: true),
    ]

    @Test(arguments: cases) func aPredicateHoldsAsCoreDatasFetchHasIt(_ testCase: Case) throws {
        guard case .success(let expression) = ExpressionParser.parse(testCase.text) else { Issue.record("does not parse"); return }
        #expect(try Evaluator(context: ExpressionFixture.context(note: testCase.note)).evaluateStorePredicate(expression) == testCase.store)
        // The in-memory answer of a FETCH-free predicate, read with the fetch's to-many rule, for contrast.
        let inMemory = Evaluator(context: ExpressionFixture.context(note: testCase.note))
        inMemory.evaluatesFetchPredicate = true
        #expect(try inMemory.evaluatePredicate(expression) == testCase.inMemory)
    }
}
