import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// One exact order over integers, doubles and decimals, shared by the expression language, schema
/// validation and inference, with hashing (sets, DISTINCT, INTERSECT) that agrees with equality.
@Suite("One numeric order")
struct NumericOrderTests {
    @Test func numbersCompareByTheirExactValue() {
        let twoTo53 = 9_007_199_254_740_992.0
        #expect(Value.compare(.integer(9_007_199_254_740_993), .double(twoTo53)) == .orderedDescending)
        #expect(Value.compare(.decimal(Decimal(string: "9007199254740993")!), .double(twoTo53)) == .orderedDescending)
        #expect(Value.compare(.decimal(Decimal(string: "9007199254740992")!), .double(twoTo53)) == .orderedSame)
        #expect(Value.compare(.decimal(Decimal(string: "9007199254740992.5")!), .double(9_007_199_254_740_992.0)) == .orderedDescending, "rounds to the double, is above it")
        // The double 0.1 is 0.1000000000000000055…, 55 digits a decimal cannot hold: no decimal
        // equals it, and each is exactly above or below it.
        #expect(Value.compare(.decimal(Decimal(string: "0.1")!), .double(0.1)) == .orderedAscending)
        #expect(Value.compare(.decimal(Decimal(string: "0.10000000000000000556")!), .double(0.1)) == .orderedDescending)
        #expect(Value.compare(.decimal(Decimal(string: "-0.1")!), .double(-0.1)) == .orderedDescending)
        #expect(Value.compare(.double(1e-100), .decimal(Decimal(string: "1e-100")!)) != .orderedSame, "the double 1e-100 is not 10^-100")
        #expect(Value.compare(.double(0.5), .decimal(Decimal(string: "0.5")!)) == .orderedSame)
        #expect(Value.compare(.decimal(Decimal(string: "0.5")!), .double(0.5)) == .orderedSame)
        #expect(Value.compare(.decimal(Decimal(string: "-2.75")!), .integer(-3)) == .orderedDescending)
        #expect(Value.compare(.double(1e300), .decimal(Decimal(string: "1e30")!)) == .orderedDescending)
    }

    @Test func theLanguageAgreesWithItself() {
        let decimal = "CAST(\"9007199254740993\", \"NSDecimalNumber\")"
        #expect(ExpressionFixture.run("\(decimal) == 9007199254740992.0") == "false")
        #expect(ExpressionFixture.run("\(decimal) IN {9007199254740992.0}") == "false")
        #expect(ExpressionFixture.run("{\(decimal)} INTERSECT {9007199254740992.0}") == "[]")
        #expect(ExpressionFixture.run("{CAST(\"0.5\", \"NSDecimalNumber\")} INTERSECT {0.5}") != "[]")
        #expect(ExpressionFixture.run("CAST(\"0.5\", \"NSDecimalNumber\") == 0.5") == "true")
    }

    /// Random integers, doubles, decimals and texts (one written two ways), many near 2^53 and
    /// near each other: the order is
    /// antisymmetric and transitive, equality is the order's, and equal values share a set.
    @Test func theOrderIsTotalAndHashingAgreesWithEquality() {
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &generator)
        var random = SplitMix64(state: seed)
        func number() -> EvalValue {
            let base: Int64 = [0, 1, 9_007_199_254_740_992, -9_007_199_254_740_992, 1 << 62][Int(random.next() % 5)]
            let offset = Int64(random.next() % 5) - 2
            switch random.next() % 5 {
            case 4: return .scalar(.string(["caf\u{E9}", "cafe\u{301}", "cafe", "Cafe", ""][Int(random.next() % 5)]))
            case 0: return .scalar(.integer(base &+ offset))
            case 1: return .scalar(.double(Double(base &+ offset) + [0, 0.5, 0.25, 1e-300, 0.1][Int(random.next() % 5)]))
            case 2: return .scalar(.decimal(Decimal(base &+ offset) + [Decimal(0), Decimal(string: "0.5")!, Decimal(string: "0.1")!][Int(random.next() % 3)]))
            default: return .scalar(.bool(random.next() % 2 == 0))
            }
        }
        let values = (0..<300).map { _ in number() }
        for a in values.prefix(60) {
            for b in values.prefix(60) {
                let ab = ValueSemantics.compare(a, b), ba = ValueSemantics.compare(b, a)
                #expect(ab == ba.map(\.reversed), "seed \(seed): \(a) \(b)")
                #expect(ValueSemantics.equal(a, b) == (ab == .orderedSame), "seed \(seed): \(a) \(b)")
                if ValueSemantics.equal(a, b) { #expect(ValueSet([a]).contains(b), "seed \(seed): \(a) and \(b) are equal but hash apart") }
                for c in values.prefix(12) where ab == .orderedAscending && ValueSemantics.compare(b, c) == .orderedAscending {
                    #expect(ValueSemantics.compare(a, c) == .orderedAscending, "seed \(seed): \(a) < \(b) < \(c)")
                }
            }
        }
    }

    /// A decimal NaN (Core Data stores hold them) into an integer was "NaN is out of range": it is no number.
    @Test func aDecimalNaNIntoAnIntegerIsSaidToBeNoNumber() {
        for type in [AttributeType.int16, .int32, .int64] {
            guard case .failure(let problem) = ValueRules.coerce(.decimal(Decimal.nan), to: type) else { Issue.record("\(type) took NaN"); continue }
            #expect(problem.message.contains("the decimal NaN is not a number") && !problem.message.contains("out of range"), "\(problem.message)")
        }
    }

    /// A number in a data file goes into an attribute as the same number does from an expression
    /// or a policy (`ValueRules.coerce`): same value, or a refusal on both paths. Random numbers
    /// near the edges (int16, int32, int64, 2^53, Float's range, fractions) into every numeric type.
    @Test func dataFilesConvertNumbersAsEveryPathDoes() {
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &generator)
        var random = SplitMix64(state: seed)
        let edges: [Double] = [0, 32_767, 32_768, -32_769, 2_147_483_647, 2_147_483_648, 9_007_199_254_740_992, 9.2e18, 3.4028234e38, 3.5e38, 1e-46, 1e300]
        let types: [AttributeType] = [.int16, .int32, .int64, .double, .float, .decimal]
        for _ in 0..<2_000 {
            let edge = edges[Int(random.next() % UInt64(edges.count))] * (random.next() % 2 == 0 ? 1 : -1)
            let nudge = [0, 1, -1, 0.5, 0.1][Int(random.next() % 5)]
            let number = edge + nudge
            let asJSON: JSONValue, asValue: Value
            if number.rounded() == number, let whole = Int64(exactly: number), random.next() % 2 == 0 {
                (asJSON, asValue) = (.integer(whole), .integer(whole))
            } else {
                (asJSON, asValue) = (.double(number), .double(number))
            }
            for type in types {
                let fromFile = DataFile.convert(asJSON, to: type), fromValue = ValueRules.coerce(asValue, to: type)
                switch (fromFile, fromValue) {
                case (.success(let a), .success(let b)): #expect(a == b, "seed \(seed): \(asJSON) into \(type)")
                case (.failure, .failure): break
                default: Issue.record("seed \(seed): \(asJSON) into \(type): the data file gives \(fromFile), an expression \(fromValue)")
                }
            }
        }
    }
}
