import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The rules several layers share, each written once (`ValueRules`, `ValueSemantics`), checked
/// against every layer that applies them.
@Suite("One definition of each value rule")
struct ValueRulesTests {
    static let samples: [ValueKind: Value] = [
        .bool: .bool(true), .integer: .integer(7), .double: .double(2.5), .decimal: .decimal(Decimal(string: "1.25")!),
        .string: .string("x"), .date: .date(Date(timeIntervalSince1970: 0)), .binary: .binary(Data([1])),
        .uuid: .uuid(UUID()), .uri: .uri("https://example.com"),
    ]
    static let exprTypes: [ValueKind: ExprType] = [.bool: .bool, .integer: .integer, .double: .double, .decimal: .decimal, .string: .string,
                                                  .date: .date, .binary: .binary, .uuid: .uuid, .uri: .uri]

    @Test func theCheckerAndTheCoercionAcceptTheSameAssignments() throws {
        for (kind, value) in Self.samples {
            for type in AttributeType.allCases {
                let rule = ValueRules.assignment(of: kind, to: type)
                // The checker: an error exactly when the rule refuses.
                var checker = ExpressionChecker(scope: CheckScope(schema: nil, source: nil, variables: ["v": Self.exprTypes[kind]!]), source: ExpressionSource(text: "$v"))
                checker.checkAssignable(try ExpressionParser.parse("$v").get(), to: Attribute(name: "a", type: type), entity: "E")
                let refusedStatically = checker.diagnostics.contains { $0.severity == .error }
                if case .refused = rule { #expect(refusedStatically, "\(kind) into \(type)") } else { #expect(!refusedStatically, "\(kind) into \(type): \(checker.diagnostics)") }
                // The run-time coercion: never accepts what the rule refuses.
                let coerced = ValueCoercion.coerce(.scalar(value), to: type)
                if case .refused = rule, case .success = coerced { Issue.record("\(kind) into \(type) is refused by the rule but coerced at run time") }
                if case .lossless = rule, case .failure(let problem) = coerced { Issue.record("\(kind) into \(type) is lossless but failed: \(problem.message)") }
            }
        }
    }

    /// Text holds any character, U+0000 included (it is bound and read with its length); only an
    /// identity may not hold U+0000, and a zero byte in UTF-8 is that character and no other's part.
    /// Decimal text is the grammar `[+-]?(digits[.digits?] | .digits)([eE][+-]?digits)?`, nothing around it.
    @Test func decimalTextIsExactlyItsGrammar() {
        for text in ["0", "-12.50", "+3", "5.", ".5", "1e10", "2.5E-3", "-.25e+2", "00012", String(repeating: "9", count: 60)] {
            #expect(ValueParser.isDecimalText(text), "\(text)")
        }
        for text in ["", ".", "-", "+.", "e5", "1e", "1e+", "1.2.3", "1,5", " 1", "1 ", "5\n", "0x10", "NaN", "Infinity", "1e5.0", "١٢"] {
            #expect(!ValueParser.isDecimalText(text), "\(text)")
        }
        // One count of significant digits for the decimal limit and the JSON reader.
        for (text, digits) in [("0.0150", 2), ("1e50", 1), ("1.500", 2), ("1000.5", 5), ("-0.000", 0), ("12345678901234567.89", 19), ("100", 1), ("10.01", 4)] {
            #expect(NumberText.significantDigits(text) == digits, "\(text)")
        }
    }

    @Test func textHoldsEveryCharacterAndOnlyIdentitiesRefuseNUL() {
        for text in ["\u{0}", "a\u{0}", "\u{0}b", "寺\u{0}庭", String(repeating: "x", count: 10_000) + "\u{0}"] {
            #expect(ValueLimits.problem(.string(text), for: .string) == nil, "\(text.debugDescription)")
            #expect(ValueLimits.problem(.uri(text), for: .uri) == nil)
            #expect(ValueLimits.containsNUL(text))
        }
        for text in ["", "a", "寺と庭 京都", "😀", "\u{1}\u{7F}", String(repeating: "é", count: 10_000), ("a" as Substring).description] {
            #expect(ValueLimits.problem(.string(text), for: .string) == nil, "\(text.debugDescription)")
            #expect(!ValueLimits.containsNUL(text))
        }
    }

    @Test func stringsAreMeasuredInUTF16UnitsLikeNSString() throws {
        let thumbs = "👍🏽", decomposed = "e\u{301}", plain = "abc"
        #expect(ValueRules.length(of: thumbs) == 4 && ValueRules.length(of: decomposed) == 2 && ValueRules.length(of: plain) == 3)
        let evaluator = Evaluator(context: EvaluationContext(graph: InMemoryObjectGraph(objects: [], schema: nil)))
        for (text, expected) in [(thumbs, 4), (decomposed, 2)] {
            let value = try evaluator.evaluate(try ExpressionParser.parse("FUNCTION(\"\(text)\", \"length\")").get())
            #expect(value == .scalar(.integer(Int64(expected))))
            #expect(try evaluator.evaluate(try ExpressionParser.parse("length:(\"\(text)\")").get()) == .scalar(.integer(Int64(expected))))
        }
        // Substrings take UTF-16 units, as Foundation's, but never split a code point in two.
        #expect(ValueRules.prefix("ab👍🏽c", length: 4).unicodeScalars.elementsEqual("ab👍".unicodeScalars), "the thumb's 2 units fit, its skin tone's do not")
        #expect(ValueRules.prefix("ab👍🏽c", length: 6) == "ab👍🏽")
        #expect(try evaluator.evaluate(try ExpressionParser.parse("FUNCTION(\"ab👍🏽c\", \"substringToIndex:\", 3)").get()) == .scalar(.string("ab")))
        // Validation counts the same way.
        var attribute = Attribute(name: "t", type: .string)
        attribute.validation.maxLength = 3
        #expect(AttributeValidator.violation(of: .string(thumbs), for: attribute) == "longer than maxLength 3")
        #expect(AttributeValidator.violation(of: .string("abc"), for: attribute) == nil)
    }

    @Test func setOperationsUseTheSameEqualityAsComparisons() throws {
        let evaluator = Evaluator(context: EvaluationContext(graph: InMemoryObjectGraph(objects: [], schema: nil)))
        func value(_ text: String) throws -> EvalValue { try evaluator.evaluate(try ExpressionParser.parse(text).get()) }
        #expect(try value("1 IN {1.0}") == .scalar(.bool(true)))
        #expect(try value("({1} INTERSECT {1.0}).@count") == .scalar(.integer(1)))
        #expect(try value("({1, 2} MINUS {2.0}).@count") == .scalar(.integer(1)))
        #expect(try value("({1, 1.0, 2} UNION {2}).@count") == .scalar(.integer(2)))
        #expect(try value("{1, 1.0, 1.5, 1.5}.@distinctUnionOfObjects").elements?.count == 2)
        // Above 2^53 integers and doubles stay apart, in comparisons and in sets alike.
        #expect(try value("9007199254740993 == 9007199254740992.0") == .scalar(.bool(false)))
        #expect(try value("({9007199254740993} INTERSECT {9007199254740992.0}).@count") == .scalar(.integer(0)))
    }

    /// Messages name types with the right article, one rule for all of them.
    @Test func refusalsReadAsEnglish() {
        #expect(ValueRules.assignment(of: .uuid, to: .uri) == .refused("a uuid value cannot be stored in a uri attribute"))
        #expect(ValueRules.assignment(of: .integer, to: .string) == .refused("an integer value cannot be stored in a string attribute"))
        #expect(["Author", "Note", "integer", "uuid", "uri"].map(English.withArticle) == ["an Author", "a Note", "an integer", "a uuid", "a uri"])
    }

    /// Dates follow the proleptic Gregorian calendar of ISO 8601 and SQLite in every year from 0001
    /// to 9999, and what is not a date (or not a whole one) is refused rather than rolled over.
    @Test func datesAreProlepticGregorianAndStrict() throws {
        let known: [(String, Double)] = [("0001-01-01T00:00:00Z", -62_135_596_800), ("1500-01-01T00:00:00Z", -14_831_769_600), ("1582-10-10T00:00:00Z", -12_219_724_800),
                                         ("2024-02-29T00:00:00Z", 1_709_164_800), ("9999-12-31T00:00:00Z", 253_402_214_400), ("1969-12-31T23:59:59Z", -1)]
        for (text, seconds) in known {
            #expect(ISO8601.parse(text)?.secondsSince1970 == seconds, "\(text)")
            #expect(ISO8601.format(Timestamp(Date(timeIntervalSince1970: seconds))) == text)
        }
        #expect(ISO8601.parse("2024-05-01")?.secondsSince1970 == 1_714_521_600)
        #expect(ISO8601.parse("2024-05-01 10:00:00Z") == ISO8601.parse("2024-05-01T10:00:00Z"))
        #expect(ISO8601.parse("2024-05-01T12:00:00+02:00") == ISO8601.parse("2024-05-01T10:00:00Z"))
        #expect(ISO8601.parse("2024-05-01T04:30:00-0530") == ISO8601.parse("2024-05-01T10:00:00Z"))
        #expect(ISO8601.parse("2024-05-01T10:00:00,5Z")?.secondsSince1970 == 1_714_557_600.5)
        #expect(ISO8601.format(try #require(ISO8601.parse("2024-05-01T10:00:00.123456Z"))) == "2024-05-01T10:00:00.123456Z")
        for refused in ["2024-05-01T10:00:00", "2024-05-01T10:00Z", "2024-02-30T00:00:00Z", "2023-02-29", "2024-05-01T25:00:00Z", "2024-05-01T10:60:00Z",
                        "2024-05-01garbage", "2024-05-01T10:00:00Zjunk", "0000-01-01", "24-05-01", "2024-5-1", "2024-05-01T10:00:00.Z", ""] {
            #expect(ISO8601.parse(refused) == nil, "\(refused)")
        }
        #expect(ISO8601.problem(with: "2024-05-01T10:00:00") == "'2024-05-01T10:00:00' has no time zone: add Z for UTC, or an offset such as +02:00")
        #expect(ISO8601.problem(with: "10000-01-01T00:00:00Z").contains("outside the years 0001 to 9999"))
        // An integer written with a point or an exponent is read on its digits, in a schema's
        // default as in a data file ("'1.0e2' is not a whole number").
        #expect(ValueParser.parse("1.0e2", as: .int64) == .success(.integer(100)))
        #expect(ValueParser.parse("9007199254740993.0", as: .int64) == .success(.integer(9007199254740993)))
        #expect(ValueParser.parse("12.5", as: .int64).failureMessage?.contains("has a fraction") == true)
        #expect(ValueParser.parse("1e5", as: .int16).failureMessage?.contains("int16") == true)
        #expect(ValueParser.parse("1.0e20", as: .int16).failureMessage?.contains("out of range for int16") == true)
        #expect(ValueParser.parse("100000000000000000000", as: .int16).failureMessage?.contains("out of range for int16") == true)
        #expect(ValueParser.parse("9223372036854775808", as: .int64).failureMessage?.contains("out of range for int64") == true)
        // A leap second is said to be one (it was "not an ISO 8601 date").
        #expect(ISO8601.problem(with: "2016-12-31T23:59:60Z").contains("is a leap second (:60)"))

        #expect(!ISO8601.problem(with: "2016-12-31T23:60:00Z").contains("leap second"))
        #expect(!ISO8601.problem(with: "2016-12-31T12:00:60Z").contains("leap second"))
        #expect(!ISO8601.problem(with: "2016-12-31T12:59:60Z").contains("leap second"))
        #expect(ISO8601.problem(with: "2017-01-01T00:59:60+01:00").contains("leap second"))
        // An offset that moves a date out of the years stores hold is refused, and said so.
        #expect(ISO8601.parse("0001-01-01T00:30:00+01:00") == nil)
        for outside in ["0001-01-01T00:30:00+01:00", "0000-12-31T23:59:59Z"] { #expect(ISO8601.problem(with: outside).contains("outside the years 0001 to 9999"), "\(outside)") }
        // Far from 1970 a double holds no microseconds: milliseconds are written back as written.
        for text in ["1000-03-28T05:18:20.001Z", "2500-12-12T22:53:47.999Z", "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00.5Z".replacingOccurrences(of: ".5Z", with: ".500Z")] {
            #expect(ISO8601.format(try #require(ISO8601.parse(text))) == text)
        }
    }
}

private extension Result where Success == Value, Failure == ValueProblem {
    var failureMessage: String? { if case .failure(let problem) = self { return problem.message } else { return nil } }
}

/// A URI in a message: bare, as a data file reads it, unless a line break or a space in it would
/// break the message's one line (a review's and a probe's find: text was quoted, URIs were not).
@Suite("A URI as a message shows it")
struct URIDescriptionTests {
    @Test func aURIIsQuotedOnlyWhereItWouldBreakTheLine() {
        #expect(Value.uri("https://e.com/x?a=1").description == "https://e.com/x?a=1")
        #expect(Value.uri("https://e.com/a b").description == #""https://e.com/a b""#)
        #expect(Value.uri("a:\nerror: forged").description == #""a:\nerror: forged""#)
    }

    /// A double NaN into an integer attribute was "nan has a fraction" (the policy-porting probe).
    @Test func aNaNIntoAnIntegerIsSaidToBeNoNumber() {
        guard case .failure(let problem) = ValueRules.coerce(.double(.nan), to: .int32) else { Issue.record("NaN was taken"); return }
        #expect(problem.message == "NaN is not a number, which an int32 attribute cannot hold", "\(problem.message)")
    }
}
