import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// A small deterministic generator, so a failure can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Expression fuzzing")
struct ExpressionFuzzTests {
    static let vocabulary = [
        "title", "body", "tags", "attachments", "author", "children", "name", "size", "$source", "$manager", "$entityPolicy", "$x", "SELF", "#FIRST",
        ".", ".", "@count", "@sum", "@avg", "@max", "@distinctUnionOfSets", "[", "]", "[FIRST]", "[LAST]", "[SIZE]", "(", ")", "(", ")", "{", "}", ",",
        "+", "-", "*", "/", "**", "==", "!=", "<", "<=", ">", ">=", "=<", "<>", "AND", "OR", "NOT", "&&", "||", "!", "ANY", "ALL", "NONE", "SOME",
        "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "[cd]", "[c]", "UNION", "INTERSECT", "MINUS",
        "FUNCTION(", "TERNARY(", "CAST(", "FETCH(", "SUBQUERY(", "sum:(", "add:to:(", "now()", "random:(", "uppercase:(", "MAX(",
        "\"uppercaseString\"", "\"substringToIndex:\"", "\"destinationInstancesForEntityMappingNamed:sourceInstances:\"", "'NoteToNote'", "\"NSString\"", "\"NSDate\"",
        "'a*'", "'(a+)+'", "'[a-z]+'", "0", "1", "-1", "2.5", "1e308", "9223372036854775807", "0x7FFFFFFFFFFFFFFF", "0b101", "0o7", "nil", "TRUE", "FALSE",
        "TRUEPREDICATE", "FALSEPREDICATE", "\"\\u00e9\"", "'x'", "\"", "'", "\\", "$", "@", "#", "?", "%", "🍣", "\u{0}", "\n",
    ]

    static let seeds = [
        "$source.note.body", "image != nil", "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)",
        "ANY tags.name BEGINSWITH[cd] 'ca'", "SUBQUERY(attachments, $a, $a.size > 100).@count", "sum:(attachments.size) / 2",
        "TERNARY(rating > 4, uppercase:(title), lowercase:(title))", "CAST(dateCreated, 'NSNumber') + 1", "{1, 2, 3}[LAST] ** 2",
        "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Note', 'title LIKE \"G*\"'), $manager.sourceContext, NO).@count",
        "author.countries.@distinctUnionOfSets.moods.name", "NOT (title MATCHES '[A-Z].*' OR body CONTAINS[c] 'milk')",
    ]

    @Test func hundredThousandInputsGiveOnlyDiagnostics() throws {
        var random = SplitMix64(state: 0x5EED_CAFE)
        var limits = EvaluationLimits()
        limits.maxSteps = 20_000
        limits.maxCollectionCount = 10_000
        limits.maxStringLength = 100_000
        var context = ExpressionFixture.context()
        context.limits = limits
        let evaluator = Evaluator(context: context)
        var parsed = 0, evaluated = 0
        for round in 0..<100_000 {
            let text: String
            if round % 2 == 0 {
                let count = Int.random(in: 1...14, using: &random)
                text = (0..<count).map { _ in Self.vocabulary.randomElement(using: &random)! }.joined(separator: Bool.random(using: &random) ? " " : "")
            } else {
                var scalars = Array(Self.seeds.randomElement(using: &random)!.unicodeScalars)
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let position = Int.random(in: 0...scalars.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0 where position < scalars.count: scalars.remove(at: position)
                    case 1: scalars.insert(contentsOf: Self.vocabulary.randomElement(using: &random)!.unicodeScalars, at: position)
                    default: if position < scalars.count { scalars[position] = Unicode.Scalar(UInt8.random(in: 32...126, using: &random)) }
                    }
                }
                text = String(String.UnicodeScalarView(scalars))
            }
            guard case .success(let expression) = ExpressionParser.parse(text) else { continue }
            parsed += 1
            var checker = ExpressionChecker(scope: CheckScope(schema: ExpressionFixture.schema, source: "Note"), source: ExpressionSource(text: text))
            checker.check(expression)
            do {
                _ = try evaluator.evaluate(expression)
                evaluated += 1
            } catch is ExpressionError {
                // A diagnostic: exactly what hostile input must produce.
            } catch {
                Issue.record("\(text): threw \(type(of: error)), not an ExpressionError: \(error)")
            }
        }
        // The generator must actually reach the evaluator, or this test proves nothing.
        #expect(parsed > 10_000, "\(parsed) of 100,000 inputs parsed")
        #expect(evaluated > 1_000, "\(evaluated) inputs evaluated without error")
    }

    @Test func deepNestingIsRefusedNotFatal() {
        for text in [String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000),
                     String(repeating: "(", count: 30_000) + "1" + String(repeating: ")", count: 30_000),
                     String(repeating: "NOT ", count: 50_000) + "TRUE", String(repeating: "-", count: 50_000) + "1",
                     String(repeating: "{", count: 50_000), String(repeating: "2 ** ", count: 20_000) + "2",
                     String(repeating: "a.", count: 20_000) + "b", String(repeating: "f(", count: 30_000)] {
            switch ExpressionParser.parse(text) {
            case .success(let expression):
                // Long but shallow input (a key path) may parse; it must then evaluate to a result or a diagnostic.
                #expect(throws: ExpressionError.self) { try Evaluator(context: ExpressionFixture.context()).evaluate(expression) }
            case .failure(let error):
                #expect(error.message.contains("nested too deeply") || error.message.contains("expected") || error.message.contains("the limit is"), "\(error.message)")
            }
        }
    }

    @Test func nestingJustUnderTheLimitStillEvaluates() throws {
        let depth = 50
        let text = String(repeating: "(", count: depth) + "1 + 1" + String(repeating: ")", count: depth)
        let expression = try ExpressionParser.parse(text).get()
        #expect(try Evaluator(context: ExpressionFixture.context()).evaluate(expression) == .scalar(.integer(2)))
    }

    @Test func explosiveEvaluationIsBounded() throws {
        var context = ExpressionFixture.context()
        context.limits.maxSteps = 100_000
        let evaluator = Evaluator(context: context)
        let nestedSubqueries = "SUBQUERY(tags, $a, SUBQUERY(tags, $b, SUBQUERY(tags, $c, SUBQUERY(tags, $d, SUBQUERY(tags, $e, SUBQUERY(tags, $f, SUBQUERY(tags, $g, SUBQUERY(tags, $h, SUBQUERY(tags, $i, SUBQUERY(tags, $j, SUBQUERY(tags, $k, SUBQUERY(tags, $l, SUBQUERY(tags, $m, SUBQUERY(tags, $n, SUBQUERY(tags, $o, SUBQUERY(tags, $p, SUBQUERY(tags, $q, SUBQUERY(tags, $r, TRUE).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0)"
        let error = #expect(throws: ExpressionError.self) { try evaluator.evaluate(try ExpressionParser.parse(nestedSubqueries).get()) }
        #expect(error?.message.contains("steps") == true)
        let many = String(repeating: "a", count: 300)
        let replace = { (inner: String) in "FUNCTION(\(inner), 'stringByReplacingOccurrencesOfString:withString:', 'a', '\(many)')" }
        let longString = replace(replace(replace("'ab'")))
        let stringError = #expect(throws: ExpressionError.self) { try evaluator.evaluate(try ExpressionParser.parse(longString).get()) }
        #expect(stringError?.message.contains("grew past") == true)
        // An operator chain is a tree as tall as the chain: refused past the bound, evaluated up to it.
        let tooLong = String(repeating: "1+", count: 20_000) + "1"
        guard case .failure(let refused) = ExpressionParser.parse(tooLong) else {
            Issue.record("a 20,000-operator chain was accepted")
            return
        }
        #expect(refused.message.contains("operations deep"), "\(refused.message)")
        let longest = String(repeating: "1 + ", count: ExpressionParser.maxHeight - 1) + "1"
        #expect(try Evaluator(context: ExpressionFixture.context()).evaluate(try ExpressionParser.parse(longest).get()) == .scalar(.integer(Int64(ExpressionParser.maxHeight))))
    }
}

/// A function or method can make a string longer than its input (`uppercaseString` of "ß" is
/// "SS"): the limit on a string's length holds for their results too, not only for `+`.
@Suite("String limits past functions")
struct StringLimitTests {
    @Test func aFunctionsResultIsHeldToTheStringLimit() throws {
        var context = ExpressionFixture.context()
        context.limits.maxStringLength = 10
        let evaluator = Evaluator(context: context)
        for text in [#"FUNCTION("ßßßßßßßß", "uppercaseString")"#, #"uppercase:("ßßßßßßßß")"#] {
            guard case .success(let expression) = ExpressionParser.parse(text) else { Issue.record("\(text) does not parse"); continue }
            let error = #expect(throws: ExpressionError.self) { try evaluator.evaluate(expression) }
            #expect(error?.message.contains("a string grew past 10 characters") == true, "\(text): \(String(describing: error))")
        }
        // Within it, as before.
        if case .success(let expression) = ExpressionParser.parse(#"FUNCTION("ßß", "uppercaseString")"#) {
            #expect(try evaluator.evaluate(expression) == .scalar(.string("SSSS")))
        }
    }
}
