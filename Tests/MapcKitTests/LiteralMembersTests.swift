import Foundation
import Testing
@testable import MapcModel

/// `IN` a list written of literals asks a set made once (`LiteralMembers`), not a scan per object:
/// the set must answer as the scan with `ValueSemantics.equal` does, under every option, nil and
/// the store's three-valued `IN` included.
@Suite("IN a literal list")
struct LiteralMembersTests {
    /// Literals whose equalities cross kinds and options: case, accents, a letter written two ways,
    /// whole doubles equal to integers, booleans, nil.
    static let literals: [(text: String, value: EvalValue)] = [
        ("'café'", .scalar(.string("caf\u{E9}"))), ("'cafe\u{301}'", .scalar(.string("cafe\u{301}"))), ("'CAFÉ'", .scalar(.string("CAF\u{C9}"))),
        ("'cafe'", .scalar(.string("cafe"))), ("'Straße'", .scalar(.string("Stra\u{DF}e"))), ("'STRASSE'", .scalar(.string("STRASSE"))),
        ("''", .scalar(.string(""))), ("1", .scalar(.integer(1))), ("1.0", .scalar(.double(1))), ("2.5", .scalar(.double(2.5))),
        ("-7", .scalar(.integer(-7))), ("9007199254740993", .scalar(.integer(9_007_199_254_740_993))), ("9007199254740992.0", .scalar(.double(9_007_199_254_740_992))),
        ("YES", .scalar(.bool(true))), ("NO", .scalar(.bool(false))), ("0", .scalar(.integer(0))), ("nil", .scalar(.null)),
    ]

    @Test func aLongListAnswersAsAScanUnderEveryOption() throws {
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &generator)
        var random = SplitMix64(state: seed)
        for round in 0..<60 {
            // Past the size a set is made for, with every literal likely present or missing.
            let count = LiteralMembers.smallestHashed + Int(random.next() % 12)
            let members = (0..<count).map { _ in Self.literals[Int(random.next() % UInt64(Self.literals.count))] }
            let list = "{" + members.map(\.text).joined(separator: ", ") + "}"
            for probe in Self.literals {
                for options in ["", "[c]", "[d]", "[cd]"] {
                    let text = "\(probe.text) IN\(options) \(list)"
                    guard case .success(let expression) = ExpressionParser.parse(text) else { Issue.record("seed \(seed): \(text) does not parse"); return }
                    var folding: ComparisonOptions = []
                    if options.contains("c") { folding.insert(.caseInsensitive) }
                    if options.contains("d") { folding.insert(.diacriticInsensitive) }
                    let scanned = members.contains { ValueSemantics.equal(probe.value, $0.value, options: folding) }
                    let evaluator = Evaluator(context: ExpressionFixture.context(note: "n1"))
                    #expect(try evaluator.evaluatePredicate(expression) == scanned, "seed \(seed) round \(round): \(text)")
                    // A fetch's IN: a list holding nil without a match is unknown (the literal nil on
                    // the left is SQL's IS NULL, two-valued).
                    let stored: Bool = probe.value.isNull ? scanned : (members.contains { !$0.value.isNull && ValueSemantics.equal(probe.value, $0.value, options: folding) })
                    #expect(try evaluator.evaluateStorePredicate(expression) == stored, "seed \(seed) round \(round): \(text) as a fetch")
                }
            }
        }
    }

    @Test func theListIsMadeOnceAndOnlyOfLiterals() throws {
        guard case .success(let literal) = ExpressionParser.parse("title IN {'a', 'b', nil, 3}"),
              case .comparison(_, _, _, _, let right) = literal.kind else { Issue.record("does not parse"); return }
        #expect(right.literalMembers?.values.count == 4 && right.literalMembers?.holdsNil == true)
        guard case .success(let computed) = ExpressionParser.parse("title IN {'a', title}"),
              case .comparison(_, _, _, _, let other) = computed.kind else { Issue.record("does not parse"); return }
        #expect(other.literalMembers == nil)
        // A quantified comparison asks the same set for each member.
        guard case .success(let any) = ExpressionParser.parse("ANY tags.name IN[c] {\((0..<20).map { "'x\($0)'" }.joined(separator: ", ")), 'HOME'}") else { Issue.record("does not parse"); return }
        #expect(try Evaluator(context: ExpressionFixture.context(note: "n1")).evaluatePredicate(any))
    }
}
