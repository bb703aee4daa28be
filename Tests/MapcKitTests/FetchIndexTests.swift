import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcModel

/// A `FETCH` of `key == value` per object filtered the whole entity each time (10,000 items x
/// 1,000 tags 48 s): it looks the value up in an index of the entity's values of `key`, made once.
/// The objects found are the ones the predicate gives, in the same order.
@Suite("FETCH by an equal key")
struct FetchIndexTests {
    private func fetch(_ predicate: String, entity: String = "Note", note: String = "n1") throws -> EvalValue {
        let text = "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', '\(entity)', '\(predicate)'), $manager.sourceContext, NO)"
        guard case .success(let expression) = ExpressionParser.parse(text) else { throw MapcError.input("does not parse") }
        return try Evaluator(context: ExpressionFixture.context(note: note)).evaluate(expression)
    }

    @Test(arguments: [("title == $source.title", "n1"), ("$source.title == title", "n2"), ("lastName == \"Doe\"", "n1"), ("age == 40.0", "n1"),
                      ("rating == $source.rating", "n2"), ("firstName == $source.title", "n1"),
                      // The value as the predicate asked of each object has it: inside a fetch a
                      // to-many's values keep their repeats (4 moods, not 3: the review's case).
                      ("displayIndex == $source.author.countries.moods.@count", "n1")])
    func anIndexedFetchFindsWhatThePredicateFinds(predicate: String, note: String) throws {
        let entity = predicate.contains("Name") || predicate.contains("age") ? "Person" : "Note"
        // Not an indexed shape (an OR), evaluated object by object: the same objects, in order.
        #expect(try fetch(predicate, entity: entity, note: note) == fetch("(\(predicate)) OR FALSEPREDICATE", entity: entity, note: note))
        #expect(Evaluator.equalityLookup(try #require(try? ExpressionParser.parse(predicate).get())) != nil)
    }

    /// `key == value AND …` filtered every object too: the index gives the candidates, the whole
    /// predicate is asked of them (three-valued: an unknown conjunct keeps an object out, as in SQL).
    @Test(arguments: [("title == $source.title AND rating > 1", "n2"), ("rating >= 0 AND title == $source.title", "n1"), ("title == $source.title AND rating != 3", "n2"),
                      ("lastName == \"Doe\" AND age > 30", "n1"), ("lastName == \"Doe\" AND (age > 30 OR firstName == nil)", "n1"), ("title == $source.title AND FALSEPREDICATE", "n1"),
                      ("lastName == $source.title AND age > 30", "n1"), ("displayIndex == $source.author.countries.moods.@count AND TRUEPREDICATE", "n1")])
    func anIndexedConjunctionFindsWhatThePredicateFinds(predicate: String, note: String) throws {
        let entity = predicate.contains("Name") || predicate.contains("age") ? "Person" : "Note"
        #expect(try fetch(predicate, entity: entity, note: note) == fetch("(\(predicate)) OR FALSEPREDICATE", entity: entity, note: note))
        #expect(Evaluator.conjuncts(of: try #require(try? ExpressionParser.parse(predicate).get())).contains { Evaluator.equalityLookup($0) != nil })
    }

    @Test func theIndexedShapeIsAKeyOfTheFetchedObjectAgainstAValueNotOfIt() throws {
        func lookup(_ text: String) throws -> String? { Evaluator.equalityLookup(try ExpressionParser.parse(text).get())?.key }
        #expect(try lookup("name == $source.tag") == "name")
        #expect(try lookup("name == nil") == nil)
        #expect(try lookup("name ==[c] $source.tag") == nil)
        #expect(try lookup("name == title") == nil)
        #expect(try lookup("owner.name == $source.tag") == nil)
    }
}
