import Foundation
import Testing
import GRDB
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// One expression and what it must give: compact JSON, or "error: " and part of the message.
struct EvalCase: CustomTestStringConvertible, Sendable {
    let text: String
    let expected: String
    init(_ text: String, _ expected: String) {
        self.text = text
        self.expected = expected
    }
    var testDescription: String { text }
}

/// What Foundation's NSPredicate gives where mapc once differed: MATCHES runs with ICU's DOTALL and
/// MULTILINE flags, `[c]` and `[d]` ignore width too, `[n]` supersedes `[c]` and `[d]`, `[d]`
/// folds a MATCHES pattern as its text, LIKE takes backslash escapes.
let appleParityCases: [EvalCase] = [
    .init(#""a\nb" MATCHES "a.b""#, "true"), .init(#""Groceries:\nmilk, eggs" MATCHES ".*milk.*""#, "true"), .init(#""a\nb" MATCHES "a$\\n^b""#, "true"),
    .init(#""ｆｕｌｌ" ==[c] "full""#, "true"), .init(#""ＡＢＣ" BEGINSWITH[c] "abc""#, "true"), .init(#""Ｃａｆｅ" CONTAINS[c] "cafe""#, "true"),
    .init(#""ｆｕｌｌ" == "full""#, "false"), .init(#""ｆｕｌｌ" LIKE[c] "f*l""#, "true"),
    .init(#""ABC" ==[cn] "abc""#, "false"), .init(#""ABC" BEGINSWITH[cn] "abc""#, "false"), .init(#""ABC" LIKE[cn] "abc""#, "false"),
    .init(#""ABC" MATCHES[cn] "abc""#, "false"), .init(#""café" ==[dn] "cafe""#, "false"), .init(#""ABC" ==[n] "ABC""#, "true"),
    .init(#""cafe" MATCHES[d] "café""#, "true"), .init(#""café" MATCHES[d] "cafe""#, "true"),
    .init(#""a*b" LIKE "a\\*b""#, "true"), .init(#""axb" LIKE "a\\*b""#, "false"), .init(#""a?b" LIKE "a\\?b""#, "true"), .init(#""axb" LIKE "a\\?b""#, "false"),
    .init(#"'public.png' UTI-CONFORMS-TO 'public.image'"#, "error: UTI-CONFORMS-TO is not supported"), .init(#"'public.png' uti-equals 'public.png'"#, "error: UTI-EQUALS is not supported"),
    .init(#""ab" LIKE[c] "a＊""#, "false"), .init(#""a＊" LIKE[c] "a*""#, "true"), .init(#""Straße" LIKE[c] "STRASSE""#, "true"),
    .init(#""(a" MATCHES[d] "（a""#, "error: MATCHES pattern refused"),
    .init("nil <= nil", "true"), .init("nil >= nil", "true"), .init("nil < nil", "false"), .init("nil > nil", "false"), .init("nil <= 1", "false"),
    .init(#""a\\b" LIKE "a\\\\b""#, "true"), .init(#""ab" LIKE "\\a\\b""#, "true"), .init(#""a\\" LIKE "a\\""#, "error: a lone backslash"),
]

let literalCases: [EvalCase] = [
    .init("42", "42"), .init("-7", "-7"), .init("3.25", "3.25"), .init("1e3", "1000.0"), .init("2.5E-1", "0.25"), .init(".5", "0.5"),
    .init("0x1F", "31"), .init("0XfF", "255"), .init("0o17", "15"), .init("0b1011", "11"), .init("9223372036854775807", "9223372036854775807"),
    .init("\"text\"", "\"text\""), .init("'text'", "\"text\""), .init(#""a\"b""#, #""a\"b""#), .init(#"'it\'s'"#, #""it's""#),
    .init(#""line\nbreak\ttab""#, #""line\nbreak\ttab""#), .init(#""\u00e9""#, "\"é\""), .init("\"ünïcödé ✓\"", "\"ünïcödé ✓\""),
    .init("TRUE", "true"), .init("true", "true"), .init("YES", "true"), .init("yes", "true"), .init("FALSE", "false"), .init("NO", "false"),
    .init("NIL", "null"), .init("null", "null"), .init("NULL", "null"),
    .init("{1, 2, 3}", "[1,2,3]"), .init("{}", "[]"), .init("{'comma', 'separated', 'literal', 'array'}", #"["comma","separated","literal","array"]"#),
    .init("{1, {2, 3}}", "[1,[2,3]]"), .init("SELF", #"{"entity":"Note","id":"n1"}"#), .init("self", #"{"entity":"Note","id":"n1"}"#),
    .init("TRUEPREDICATE", "true"), .init("FALSEPREDICATE", "false"), .init("truepredicate", "true"),
]

let arithmeticCases: [EvalCase] = [
    // Decimals stay exact where the operators keep them: modulus, whole powers, CAST of a double
    // (its shortest digits, as a double stored in a decimal attribute), average and median.
    .init("modulus:by:(CAST('12345678901234567.89', 'NSDecimalNumber'), 10)", "\"7.89\""),
    .init("modulus:by:(CAST('0.3', 'NSDecimalNumber'), CAST('0.1', 'NSDecimalNumber'))", "\"0\""),
    .init("modulus:by:(CAST('-7.5', 'NSDecimalNumber'), 2)", "\"-1.5\""), .init("modulus:by:(CAST('1', 'NSDecimalNumber'), 0)", "error: modulus by zero"),
    .init("modulus:by:(7.5, 2)", "1.5"),
    .init("modulus:by:(CAST('1e120', 'NSDecimalNumber'), CAST('7e-120', 'NSDecimalNumber'))", "error: cannot be computed exactly"),
    .init("modulus:by:(CAST('6', 'NSDecimalNumber'), CAST('-1e38', 'NSDecimalNumber'))", "\"6\""),
    .init("modulus:by:(CAST('-1e-33', 'NSDecimalNumber'), 6033637980)", "\"-0.000000000000000000000000000000001\""),
    .init("modulus:by:(CAST('-7.5', 'NSDecimalNumber'), CAST('-2', 'NSDecimalNumber'))", "\"-1.5\""), .init("modulus:by:(CAST('7.5', 'NSDecimalNumber'), -2)", "\"1.5\""),
    // Powers: exact to 38 digits, the negative ones through exact division; a product leaving the
    // range a decimal holds is an error, not a trap.
    // (Python's decimal at 60 digits: 1.96841923011759994866266175292287960744…e-51, 6.22301527786114170714406405378012424059…e-61,
    // 9.78388059772574743525667053516290140331…e-92: right to the last digit but one.)
    .init("CAST('7', 'NSDecimalNumber') ** -60", "\"0.0000000000000000000000000000000000000000000000000019684192301175999486626617529228796075\""),
    .init("CAST('2', 'NSDecimalNumber') ** -200", "\"0.00000000000000000000000000000000000000000000000000000000000062230152778611417071440640537801242407\""),
    .init("CAST('0.123', 'NSDecimalNumber') ** 100", "\"0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000009783880597725747435256670535162901403\""),
    .init("CAST('0.1', 'NSDecimalNumber') ** 129", "error: not a number a decimal holds"),
    .init("CAST('1e-60', 'NSDecimalNumber') ** -2", "\"1\(String(repeating: "0", count: 120))\""), .init("CAST('12e-5', 'NSDecimalNumber') ** -32 > CAST('2.9255e125', 'NSDecimalNumber')", "true"),
    .init("average:({-0.0, -0.0})", "-0.0"),
    .init("CAST('1', 'NSDecimalNumber') ** -9223372036854775808", "1.0"),
    .init("modulus:by:(CAST('1e50', 'NSDecimalNumber'), 7)", "error: cannot be computed exactly"),
    .init("modulus:by:(CAST('99999999999999999999999999999999999999', 'NSDecimalNumber'), 7)", "error: cannot be computed exactly"),
    .init("modulus:by:(CAST('9999999999999999999999999999999999999', 'NSDecimalNumber'), 7)", "\"2\""),
    .init("modulus:by:(CAST('12345678901234567890123456789012345678', 'NSDecimalNumber'), CAST('0.37', 'NSDecimalNumber'))", "error: cannot be computed exactly"), .init("modulus:by:(-7, 2)", "-1"),
    .init("CAST('1.1', 'NSDecimalNumber') ** 2", "\"1.21\""), .init("raise:toPower:(CAST('2', 'NSDecimalNumber'), 3)", "\"8\""),
    .init("CAST('2', 'NSDecimalNumber') ** -2", "\"0.25\""), .init("CAST('4', 'NSDecimalNumber') ** 0.5", "2.0"), .init("2 ** 3", "8.0"),
    .init("CAST('10', 'NSDecimalNumber') ** 200", "error: not a number a decimal holds"),
    .init("CAST(123456789012.345678, 'NSDecimalNumber')", "\"123456789012.34567\""), .init("CAST(1e-11, 'NSDecimalNumber')", "\"0.00000000001\""),
    .init("average:({CAST('0.1', 'NSDecimalNumber'), CAST('0.2', 'NSDecimalNumber')})", "\"0.15\""), .init("average:({1, 2})", "1.5"),
    .init("median:({CAST('12345678901234567', 'NSDecimalNumber'), CAST('12345678901234569', 'NSDecimalNumber')})", "\"12345678901234568\""),
    .init("median:({3, 1, 2})", "2"),
    .init("average:({9223372036854775807, 9223372036854775807})", "9.223372036854776e+18"), .init("median:({4611686018427387904, 4611686018427387904})", "4611686018427387904"),
    .init("median:({CAST('0.1', 'NSDecimalNumber'), 9007199254740993, 9007199254740994, CAST('1e17', 'NSDecimalNumber')})", "9007199254740993"),
    .init("{9223372036854775807, 9223372036854775807}.@avg", "9.223372036854776e+18"), .init("{CAST('0.1', 'NSDecimalNumber'), CAST('0.2', 'NSDecimalNumber')}.@avg", "\"0.15\""), .init("median:({1, 2})", "1"), .init("median:({1.5, 2})", "1"), .init("median:({-1, -2})", "-1"), .init("median:({1.5, 2.5})", "2.0"),
    .init("1 + 2", "3"), .init("1 + 2 * 3", "7"), .init("(1 + 2) * 3", "9"), .init("10 - 4 - 3", "3"), .init("7 / 2", "3"), .init("-7 / 2", "-3"), .init("8 / 2", "4"), .init("7.0 / 2", "3.5"), .init("7 / 2.0", "3.5"), .init("(-9223372036854775807 - 1) / -1", "error: integer overflow"), .init("7 / 0", "error: division by zero"),
    .init("2 ** 10", "1024.0"), .init("2 ** 3 ** 2", "512.0"), .init("-2 ** 2", "4.0"), .init("-(3)", "-3"), .init("- - 3", "3"), .init("1.5 + 1", "2.5"),
    .init("0.1 + 0.2", "0.30000000000000004"), .init("displayIndex * 2", "6"), .init("displayIndex + rating", "7.5"), .init("price * 2", "\"25\""),
    .init("price + 0.5", "13.0"), .init("price + 1", "\"13.5\""), .init("9223372036854775807 + 1", "error: integer overflow"),
    .init("-9223372036854775807 - 2", "error: integer overflow"), .init("4611686018427387904 * 2", "error: integer overflow"),
    .init("1 / 0", "error: division by zero"), .init("1.0 / 0", "error: division by zero"), .init("10 ** 400", "error: not a finite number"),
    // Foundation traps on a product whose exponent is below -128; the others give NaN.
    .init(#"CAST("1e-100", "NSDecimalNumber") * CAST("1e-100", "NSDecimalNumber")"#, "error: decimal arithmetic underflowed"),
    .init(#"CAST("1e-63", "NSDecimalNumber") * CAST("1e-65", "NSDecimalNumber") == CAST("1e-128", "NSDecimalNumber")"#, "true"),
    // Exponents adding up below -128, and a product a decimal holds: computed, not refused.
    .init(#"CAST("12345678901234567890123456789012345678e-100", "NSDecimalNumber") * CAST("1e-30", "NSDecimalNumber") == CAST("1.23456789012345678901234567890123457e-93", "NSDecimalNumber")"#, "true"),
    // 1e128 is ten times 10^127, which a decimal holds; past it, the product overflows.
    .init(#"CAST("1e127", "NSDecimalNumber") * 10"#, "\"1" + String(repeating: "0", count: 128) + "\""),
    .init(#"CAST("1e127", "NSDecimalNumber") * CAST("1e38", "NSDecimalNumber")"#, "error: decimal arithmetic overflowed"),
    .init(#"CAST("1e-110", "NSDecimalNumber") / 7"#, "\"0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000142857142857142857\""),
    .init(#"CAST("1e-120", "NSDecimalNumber") / CAST("1e20", "NSDecimalNumber")"#, "error: decimal arithmetic underflowed"),
    .init(#""ab" MATCHES "a|ab""#, "true"), .init(#""abc" MATCHES "a|ab""#, "false"), .init(#""AB" MATCHES[c] "a|ab""#, "true"),
    .init("stddev:({1e308, -1e308})", "1e+308"), .init("stddev:({1.5e308, 1.5e308, -1e308})", "1.1785113019775793e+308"), .init("average:({1e308, 1e308})", "error: average: the mean of these numbers is not a finite number"),
    .init(#"CAST("12345678901234567890123456789012345678901", "NSDecimalNumber")"#, "error: '12345678901234567890123456789012345678901' has 41 significant digits; decimals keep at most 38"),
    .init("rating + nil", "null"), .init("nil * 3", "null"), .init("\"ab\" + \"cd\"", "\"abcd\""), .init("title + \"!\"", "\"Groceries!\""),
    .init("\"a\" + 1", "error: cannot apply '+' to a string and a number"), .init("title * 2", "error: cannot apply '*'"),
    .init("dateCreated + 60", "\"2024-05-01T10:01:00Z\""), .init("dateCreated - 3600", "\"2024-05-01T09:00:00Z\""),
    .init("$source.dateCreated - dateCreated", "0.0"), .init("-title", "error: cannot negate a string"), .init("3 - -3", "6"), .init("+4", "4"),
]

let keyPathCases: [EvalCase] = [
    .init("title", "\"Groceries\""), .init("$source.title", "\"Groceries\""), .init("SELF.title", "\"Groceries\""), .init("displayIndex", "3"),
    .init("rating", "4.5"), .init("price", "\"12.5\""), .init("flag", "true"), .init("image", "\"iVBORw==\""),
    .init("uid", "\"123e4567-e89b-12d3-a456-426614174000\""), .init("link", "\"https://example.com\""), .init("dateCreated", "\"2024-05-01T10:00:00Z\""),
    .init("author", #"{"entity":"Person","id":"p1"}"#), .init("author.firstName", "\"Adam\""), .init("$source.author.lastName", "\"Smith\""),
    .init("tags.name", #"["home","Café"]"#),
    // A key of an unordered to-many (an NSSet in Core Data) is a set, as key-value coding makes it:
    // each value once, no nil (the two children's "Doe" is one; n2's nil rating is none).
    .init("author.children.lastName", #"["Doe"]"#), .init("author.children.lastName.@count", "1"),
    .init("author.notes.rating", "[4.5]"), .init("ANY author.notes.rating == nil", "false"),
    // A fetch's predicate is Core Data's SQL, where a to-many key is a join: a nil is there.
    .init("FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Person', 'ANY notes.rating == nil'), $manager.sourceContext, NO).firstName", #"["Adam"]"#), .init("count:(author.children.lastName)", "1"),
    // An array keeps every value (a fetch's results, a literal collection).
    .init("FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Person', 'lastName == \\'Doe\\''), $manager.sourceContext, NO).lastName", #"["Doe","Doe"]"#), .init("attachments.size", "[100,250]"), .init("author.children.firstName", #"["Jane","Bob"]"#),
    .init("author.countries.moods.name", #"["calm","happy","busy"]"#), .init("title.length", "9"), .init("image.length", "4"),
    .init("author.parent", "null"), .init("author.parent.firstName", "null"), .init("$person.age", "40"), .init("$person.children[FIRST].age", "12"),
    .init("#title", "\"Groceries\""), .init("$source.#author.#firstName", "\"Adam\""), .init("attachments[FIRST].caption", "\"A photo\""),
    .init("attachments[LAST].caption", "error: Attachment has no key 'caption'"), .init("$nothing", "error: unknown variable $nothing"), .init("titel", "error: Note has no key 'titel'"),
    .init("title.foo", "error: cannot read key 'foo' of a string"), .init("$manager.sourceContext", "\"<a context>\""),
]

let collectionOperatorCases: [EvalCase] = [
    .init("tags.@count", "2"), .init("attachments.@count", "2"), .init("$source.attachments.@count", "2"), .init("attachments.@sum.size", "350"),
    .init("attachments.@avg.size", "175.0"), .init("attachments.@min.size", "100"), .init("attachments.@max.size", "250"),
    .init("author.children.@max.age", "17"), .init("author.children.@min.firstName", "\"Bob\""), .init("{1, 2, 3}.@sum", "6"), .init("{1, 2, 3}.@avg", "2.0"),
    .init("{}.@avg", "null"), .init("{1, nil, 3}.@avg", "1.3333333333333333"), .init("{1, nil, 3}.@sum", "4"), .init("{nil}.@avg", "0.0"), .init("{}.@sum", "0"), .init("{}.@max", "null"), .init("{1, 2.5}.@sum", "3.5"), .init("{3, 1, 2}.@min", "1"),
    .init("author.countries.@distinctUnionOfSets.moods.name", #"["calm","happy","busy"]"#),
    .init("author.countries.@unionOfSets.moods.name", #"["calm","happy","busy"]"#),
    .init("author.countries.@unionOfArrays.moods.name", #"["calm","happy","happy","busy"]"#),
    .init("{1, 2, 2, 3}.@distinctUnionOfObjects", "[1,2,3]"), .init("{1, 2, 2, 3}.@unionOfObjects", "[1,2,2,3]"),
    .init("attachments.@distinctUnionOfObjects.kind", #"["image","pdf"]"#), .init("title.@count", "error: @count needs a collection"),
    .init("tags.@sum.name", "error: @sum needs numbers"), .init("tags.@count.name", "error: nothing can follow @count"),
    .init("{1, 'a'}.@max", "error: @max cannot order"), .init("author.notes.@count", "2"),
]

let indexCases: [EvalCase] = [
    .init("{10, 20, 30}[0]", "10"), .init("{10, 20, 30}[2]", "30"), .init("{10, 20, 30}[FIRST]", "10"), .init("{10, 20, 30}[LAST]", "30"),
    .init("{10, 20, 30}[SIZE]", "3"), .init("{}[FIRST]", "null"), .init("{}[SIZE]", "0"), .init("{10, 20}[1 + 0]", "20"),
    .init("{10, 20}[5]", "error: index 5 is out of range for a collection of 2"), .init("{10, 20}[-1]", "error: out of range"),
    .init("{10}['a']", "error: an index must be a whole number"), .init("title[0]", "error: cannot index a string"),
    .init("attachments[0].kind", "\"image\""), .init("tags[SIZE]", "2"), .init("nil[FIRST]", "null"),
]

let comparisonCases: [EvalCase] = [
    .init("1 == 1", "true"), .init("1 = 1", "true"), .init("1 == 1.0", "true"), .init("1 != 2", "true"), .init("1 <> 1", "false"),
    .init("1 < 2", "true"), .init("2 <= 2", "true"), .init("2 =< 1", "false"), .init("3 > 2", "true"), .init("3 >= 4", "false"), .init("3 => 3", "true"),
    .init("price == 12.5", "true"), .init("price > 12", "true"), .init("price < 12.51", "true"), .init("TRUE == 1", "true"), .init("FALSE == 0", "true"),
    .init("\"a\" < \"b\"", "true"), .init("\"B\" < \"a\"", "true"), .init("\"abc\" == \"abc\"", "true"), .init("\"abc\" ==[c] \"ABC\"", "true"),
    .init("\"cafe\" ==[d] \"café\"", "true"), .init("\"CAFE\" ==[cd] \"café\"", "true"), .init("\"b\" >[c] \"A\"", "true"),
    .init("1 == \"1\"", "false"), .init("nil == nil", "true"), .init("rating == nil", "false"), .init("image != nil", "true"),
    .init("$source.image != nil", "true"), .init("nil < 1", "false"), .init("nil != 1", "true"),
    .init("dateCreated < CAST('2025-01-01T00:00:00Z', 'NSDate')", "true"), .init("dateCreated == dateCreated", "true"),
    .init("author == $person", "true"), .init("author != nil", "true"), .init("tags == tags", "true"),
    .init("1 BETWEEN { 0 , 33 }", "true"), .init("$INPUT BETWEEN { $LOWER, $UPPER }", "true"), .init("0 BETWEEN {1, 2}", "false"),
    .init("2 BETWEEN {1, 2}", "true"), .init("displayIndex BETWEEN {1, 3}", "true"), .init("1 BETWEEN 5", "error: BETWEEN needs two bounds"),
    .init("uid == uid", "true"), .init("link == \"https://example.com\"", "false"), .init("displayIndex IN {1, 2, 3}", "true"),
    .init("title IN {'Ben', 'Melissa', 'Nick'}", "false"), .init("'ell' IN 'hello'", "true"), .init("'X' IN[c] 'box'", "true"),
    .init("nil IN {1, nil}", "true"), .init("3 IN nil", "false"), .init("3 IN 4", "error: IN needs a collection or a string"),
]

let stringCases: [EvalCase] = [
    // Text is tested by Unicode scalars, as == compares it: é as one scalar is not e + accent,
    // and a character made of several scalars can be tested in part.
    .init("'e\\u0301' BEGINSWITH '\\u00e9'", "false"), .init("'e\\u0301x' BEGINSWITH 'e'", "true"), .init("'\\u00e9' ENDSWITH 'e\\u0301'", "false"),
    .init("'e\\u0301' CONTAINS '\\u00e9'", "false"), .init("'e\\u0301' IN '\\u00e9'", "false"), .init("'e\\u0301' LIKE '\\u00e9'", "false"),
    .init("'\\r\\n' BEGINSWITH '\\r'", "true"), .init("'a\\r\\nb' LIKE 'a??b'", "true"), .init("'e\\u0301' BEGINSWITH[d] '\\u00e9'", "true"),
    // An empty string is found in no text, as Foundation's hasPrefix:, hasSuffix: and containsString: answer.
    .init("{1, nil, 3} CONTAINS nil", "true"), .init("nil IN {1, nil, 3}", "true"), .init("{1, 3} CONTAINS nil", "false"), .init("nil CONTAINS 1", "false"),
    .init("'abc' BEGINSWITH ''", "false"), .init("'abc' ENDSWITH ''", "false"), .init("'abc' CONTAINS ''", "false"), .init("'' IN 'abc'", "false"),
    .init("FUNCTION('abc', 'hasPrefix:', '')", "false"), .init("FUNCTION('abc', 'hasSuffix:', '')", "false"), .init("FUNCTION('abc', 'containsString:', '')", "false"),
    .init("FUNCTION('e\\u0301x', 'hasPrefix:', 'e')", "true"),
    .init("FUNCTION('cafe\\u0301', 'stringByReplacingOccurrencesOfString:withString:', '\\u00e9', 'E')", "\"cafe\u{301}\""),
    .init("FUNCTION('cafe\\u0301', 'componentsSeparatedByString:', '\\u00e9')", "[\"cafe\u{301}\"]"),
    .init("FUNCTION('a--b', 'componentsSeparatedByString:', '-')", #"["a","","b"]"#), .init("FUNCTION('e\\u0301', 'containsString:', '\\u00e9')", "false"),
    .init("title BEGINSWITH 'Gro'", "true"), .init("title BEGINSWITH 'gro'", "false"), .init("title BEGINSWITH[c] 'gro'", "true"),
    .init("title ENDSWITH 'ries'", "true"), .init("title ENDSWITH[c] 'RIES'", "true"), .init("title CONTAINS 'cer'", "true"),
    .init("title CONTAINS[c] 'CER'", "true"), .init("title CONTAINS 'xyz'", "false"), .init("'Café' CONTAINS[d] 'fe'", "true"),
    .init("'Café' CONTAINS 'fe'", "false"), .init("title LIKE 'Gro*'", "true"), .init("title LIKE 'G?oceries'", "true"),
    .init("title LIKE '*'", "true"), .init("title LIKE 'gro*'", "false"), .init("title LIKE[c] 'gro*'", "true"), .init("title LIKE '*ceri*'", "true"),
    .init("'' LIKE '*'", "true"), .init("'' LIKE '?'", "false"), .init("'abc' LIKE 'a*b*c'", "true"), .init("'a.c' LIKE 'a.c'", "true"),
    .init("'abc' LIKE 'a.c'", "false"), .init("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaab' LIKE '*a*a*a*a*a*a*a*a*a*c'", "false"),
    .init("title MATCHES 'G[a-z]+'", "true"), .init("title MATCHES '[a-z]+'", "false"), .init("title MATCHES[c] '[a-z]+'", "true"),
    .init("title MATCHES 'Gro'", "false"), .init("title MATCHES '^[A-Z][a-z]+$'", "true"), .init("'ab' MATCHES '[ab]+'", "true"), .init("'ab' MATCHES '(a|b)+'", "error: MATCHES pattern refused"),
    .init("'aaaa' MATCHES '(a+)+'", "error: MATCHES pattern refused"), .init("'x' MATCHES '(a*)*b'", "error: MATCHES pattern refused"),
    .init("'x' MATCHES '(x)\\\\1'", "error: back-references"), .init("'x' MATCHES '['", "error: not a valid regular expression"),
    .init("rating BEGINSWITH '4'", "error: BEGINSWITH compares strings"), .init("nil BEGINSWITH 'a'", "false"), .init("title CONTAINS nil", "false"),
    .init("$person.firstName BEGINSWITH[cd] $FIRST_NAME", "true"), .init("$person.firstName like \"Adam\"", "true"),
    .init("$person.lastName like[cd] 'SMITH'", "true"), .init("tags CONTAINS tags[0]", "true"), .init("{1, 2} CONTAINS 2", "true"),
    .init("title ==[n] 'Groceries'", "true"), .init("title ==[l] 'Groceries'", "true"),
]

let logicCases: [EvalCase] = [
    .init("TRUE AND FALSE", "false"), .init("TRUE && TRUE", "true"), .init("FALSE OR TRUE", "true"), .init("FALSE || FALSE", "false"),
    .init("NOT TRUE", "false"), .init("!FALSE", "true"), .init("NOT NOT TRUE", "true"), .init("TRUE OR FALSE AND FALSE", "true"),
    .init("(TRUE OR FALSE) AND FALSE", "false"), .init("NOT FALSE AND FALSE", "false"), .init("NOT (FALSE AND FALSE)", "true"),
    .init("title == 'Groceries' AND displayIndex > 2", "true"), .init("grade == '7' OR title == 'Groceries'", "error: Note has no key 'grade'"),
    .init("displayIndex == 7 OR displayIndex == 3", "true"), .init("NOT title BEGINSWITH 'X'", "true"), .init("nil AND TRUE", "false"),
    .init("1 AND 2", "true"), .init("0 OR 0", "false"), .init("'a' AND TRUE", "error: expected a predicate"), .init("TRUEPREDICATE AND NOT FALSEPREDICATE", "true"),
    .init("FALSE AND (1 / 0 == 1)", "false"), .init("TRUE OR (1 / 0 == 1)", "true"),
]

let aggregateCases: [EvalCase] = [
    .init("ANY tags.name == 'home'", "true"), .init("SOME tags.name == 'home'", "true"), .init("ALL tags.name == 'home'", "false"),
    .init("NONE tags.name == 'work'", "true"), .init("ANY $person.children.age < 18", "true"), .init("ALL $person.children.age < 18", "true"),
    .init("NONE $person.children.age < 18", "false"), .init("ANY attachments.size > 200", "true"), .init("ALL attachments.size > 200", "false"),
    .init("ALL {}.x == 1", "true"), .init("ANY {} == 1", "false"), .init("ANY tags.name BEGINSWITH[cd] 'CAF'", "true"),
    .init("ANY author.countries.moods.name == 'busy'", "true"),
    .init("SUBQUERY($person.children, $x, $x.firstName == \"Jane\" && $x.lastName == \"Doe\").@count != 0", "true"),
    .init("SUBQUERY($person.children, $x, $x.age > 15).firstName", #"["Bob"]"#), .init("SUBQUERY(attachments, $a, $a.size > 1000).@count", "0"),
    .init("SUBQUERY(tags, $t, ANY $t.notes.title == 'Ideas').name", #"["home"]"#), .init("SUBQUERY(title, $x, TRUE)", "error: SUBQUERY needs a collection"),
    .init("{1, 2} UNION {2, 3}", "[1,2,3]"), .init("{1, 2, 3} INTERSECT {2, 3, 4}", "[2,3]"), .init("{1, 2, 3} MINUS {2}", "[1,3]"),
    .init("tags UNION tags", #"[{"entity":"Tag","id":"t1"},{"entity":"Tag","id":"t2"}]"#), .init("1 UNION {2}", "error: UNION needs two collections"),
    .init("(tags.name UNION {'x'}).@count", "3"),
]

let functionCases: [EvalCase] = [
    .init("sum:({1, 2, 3})", "6"), .init("SUM(1, 2, 3)", "6"), .init("sum(1, 2.5)", "3.5"), .init("count:({1, 2, 3})", "3"), .init("COUNT(tags)", "2"),
    .init("min:({4, 2, 8})", "2"), .init("MIN(4, 2, 8)", "2"), .init("max:({4, 2, 8})", "8"), .init("MAX(1, 5, 10)", "10"),
    .init("average:({1, 2, 3, 4})", "2.5"), .init("AVERAGE(2, 4)", "3.0"), .init("median:({5, 1, 3})", "3"), .init("median:({4, 1, 3, 2})", "2"),
    .init("mode:({1, 2, 2, 3})", "[2]"), .init("mode:({1, 2, 2, 3, 3})", "[2,3]"), .init("mode:({3, 3, 2, 2})", "[2,3]"), .init("mode:({3, 1, 2})", "[1]"), .init("mode:({})", "[]"), .init("stddev:({2, 4, 4, 4, 5, 5, 7, 9})", "2.0"), .init("sum:(attachments.size)", "350"),
    .init("max:($person.children.age)", "17"), .init("add:to:(1, 2)", "3"), .init("ADD(1, 2)", "3"), .init("from:subtract:(10, 4)", "6"),
    .init("multiply:by:(3, 4)", "12"), .init("divide:by:(9, 2)", "4"), .init("divide:by:(9.0, 2)", "4.5"), .init("modulus:by:(10, 3)", "1"), .init("modulus:by:(10.5, 3)", "1.5"),
    .init("modulus:by:(1, 0)", "error: modulus by zero"), .init("sqrt:(16)", "4.0"), .init("SQRT(2.25)", "1.5"), .init("sqrt:(-1)", "error: sqrt of a negative number"),
    .init("log:(1000)", "3.0"), .init("ln:(1)", "0.0"), .init("ln:(0)", "error: ln of a number that is not positive"), .init("raise:toPower:(2, 8)", "256.0"),
    .init("exp:(0)", "1.0"), .init("floor:(2.7)", "2.0"), .init("floor:(-2.5)", "-3.0"), .init("ceiling:(2.1)", "3.0"), .init("trunc:(-2.7)", "-2.0"),
    .init("floor:(5)", "5"), .init("abs:(-5)", "5"), .init("abs:(-2.5)", "2.5"), .init("abs:(-9223372036854775807 - 1)", "error: integer overflow"),
    .init("uppercase:('abc')", "\"ABC\""), .init("UPPERCASE(title)", "\"GROCERIES\""), .init("lowercase:('ÀB')", "\"àb\""), .init("lowercase:('ΟΔΟΣ ΣΟΦΟΣ, Σ')", "\"οδος σοφος, σ\""), .init("FUNCTION('ΟΔΟΣ', 'lowercaseString')", "\"οδος\""), .init("length:('héllo')", "5"),
    .init("length:(tags)", "2"), .init("now()", "\"2026-01-01T00:00:00Z\""), .init("random()", "0.5"), .init("random:(10)", "5"), .init("randomn:(10)", "5"), .init("RANDOMN(10)", "5"),
    .init("random:(0)", "error: randomn: needs a positive limit"), .init("bitwiseAnd:with:(12, 10)", "8"), .init("bitwiseOr:with:(12, 10)", "14"),
    .init("bitwiseXor:with:(12, 10)", "6"), .init("leftshift:by:(1, 4)", "16"), .init("rightshift:by:(256, 4)", "16"), .init("onesComplement:(0)", "-1"),
    .init("leftshift:by:(1, 64)", "error: shift amounts run from 0 to 63"), .init("bitwiseAnd:with:(1.5, 1)", "error: needs whole numbers"),
    .init("sqrt:(nil)", "null"), .init("frobnicate:(1)", "error: unknown function 'frobnicate:'"), .init("sqrt:(1, 2)", "error: sqrt: takes 1 argument"),
    .init("uppercase:(3)", "error: uppercase: needs a string"), .init("sum:({'a'})", "error: sum: needs numbers"), .init("average:({})", "null"),
]

let methodCases: [EvalCase] = [
    .init("FUNCTION(title, 'uppercaseString')", "\"GROCERIES\""), .init("FUNCTION('ABC', 'lowercaseString')", "\"abc\""),
    .init("FUNCTION('hello world', 'capitalizedString')", "\"Hello World\""), .init("FUNCTION(title, 'length')", "9"),
    .init("FUNCTION($source.body, 'substringToIndex:', 80)", "\"\(ExpressionFixture.longBody.prefix(80))\""),
    .init("FUNCTION('short', 'substringToIndex:', 80)", "\"short\""), .init("FUNCTION('short', 'substringToIndex:', -3)", "\"\""),
    .init("FUNCTION('abcdef', 'substringFromIndex:', 2)", "\"cdef\""), .init("FUNCTION('abcdef', 'substringFromIndex:', -2)", "\"abcdef\""), .init("FUNCTION('  padded  ', 'stringByTrimmingCharactersInSet:', 'whitespace')", "\"padded\""),
    .init("FUNCTION('xxhixx', 'stringByTrimmingCharactersInSet:', 'x')", "\"hi\""),
    .init("FUNCTION('a-b-c', 'stringByReplacingOccurrencesOfString:withString:', '-', '+')", "\"a+b+c\""),
    .init("FUNCTION('ab', 'stringByAppendingString:', 'cd')", "\"abcd\""), .init("FUNCTION(title, 'hasPrefix:', 'Gro')", "true"),
    .init("FUNCTION(title, 'hasSuffix:', 'x')", "false"), .init("FUNCTION(title, 'containsString:', 'cer')", "true"),
    .init("FUNCTION('a,b,c', 'componentsSeparatedByString:', ',')", #"["a","b","c"]"#), .init("FUNCTION('42', 'intValue')", "42"),
    .init("FUNCTION('2.5', 'doubleValue')", "2.5"), .init("FUNCTION('1', 'boolValue')", "true"), .init("FUNCTION(42, 'stringValue')", "\"42\""),
    .init("FUNCTION(tags, 'count')", "2"), .init("FUNCTION(tags.name, 'firstObject')", "\"home\""), .init("FUNCTION(tags.name, 'lastObject')", "\"Café\""),
    .init("FUNCTION({1, 2}, 'objectAtIndex:', 1)", "2"), .init("FUNCTION({1, 2}, 'containsObject:', 3)", "false"),
    .init("FUNCTION(tags.name, 'componentsJoinedByString:', ', ')", "\"home, Café\""), .init("FUNCTION(SELF, 'valueForKey:', 'title')", "\"Groceries\""),
    .init("FUNCTION($source, 'valueForKeyPath:', 'author.firstName')", "\"Adam\""), .init("FUNCTION(attachments, 'valueForKeyPath:', '@sum.size')", "350"),
    .init("FUNCTION(dateCreated, 'timeIntervalSince1970')", "1714557600.0"), .init("FUNCTION(nil, 'uppercaseString')", "null"),
    .init("FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", #"[{"entity":"Note","id":"n1'"}]"#),
    .init("FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'NoteToNote', author.notes)", #"[{"entity":"Note","id":"n1'"},{"entity":"Note","id":"n2'"}]"#),
    .init("FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'Nope', $source)", "error: no entity mapping named 'Nope'"),
    .init("FUNCTION($manager, 'sourceInstancesForEntityMappingNamed:destinationInstances:', 'NoteToNote', $source)", #"[{"entity":"Note","id":"n"}]"#),
    .init("FUNCTION($manager, 'destinationInstancesForSourceRelationshipNamed:sourceInstances:', 'tags', tags)", #"[{"entity":"Tag","id":"t1'"},{"entity":"Tag","id":"t2'"}]"#),
    .init("FUNCTION($entityPolicy, 'captionFor:', title)", "\"Groce\""), .init("FUNCTION($entityPolicy, 'captionFor', title)", "\"Groce\""),
    .init("FUNCTION($entityPolicy, 'nope:', 1)", "error: the entity policy has no function 'nope:'"),
    .init("FUNCTION(title, 'performSelector:', 'x')", "error: 'performSelector:' is not a selector mapc can call"),
    .init("FUNCTION(title, 'uppercaseStrin')", "error: is not a selector mapc can call"), .init("FUNCTION(title, 'substringToIndex:')", "error: takes 1 argument"),
    .init("FUNCTION(3, 'uppercaseString')", "error: 'uppercaseString' cannot be called on a number"),
    .init("FUNCTION(title, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'X', SELF)", "error: call it on $manager"),
    // A number read from text keeps every digit: never through a double.
    .init("FUNCTION('9007199254740993', 'integerValue')", "9007199254740993"), .init("FUNCTION('9223372036854775807', 'integerValue')", "9223372036854775807"),
    .init("FUNCTION('-9223372036854775808', 'integerValue')", "-9223372036854775808"),
    .init("FUNCTION('9223372036854775808', 'integerValue')", "error: does not fit a 64-bit integer"),
    .init("FUNCTION('9007199254740993.9', 'integerValue')", "9007199254740993"), .init("FUNCTION(' -42.9 ', 'integerValue')", "-42"),
    .init("FUNCTION('1e5', 'integerValue')", "100000"), .init("FUNCTION('1e-400', 'integerValue')", "0"), .init("FUNCTION('0e20', 'integerValue')", "0"), .init("FUNCTION('-0.0e9223372036854775807', 'integerValue')", "0"), .init("FUNCTION('1.5e999999999999', 'integerValue')", "error: does not fit a 64-bit integer"),
    .init("FUNCTION('0x1F', 'integerValue')", "error: '0x1F' is not a number"), .init("FUNCTION('0x1F', 'doubleValue')", "error: '0x1F' is not a number"),
    .init("FUNCTION('2147483647', 'intValue')", "2147483647"), .init("FUNCTION('-2147483648', 'intValue')", "-2147483648"),
    .init("FUNCTION('2147483648', 'intValue')", "error: does not fit a 32-bit integer"), .init("FUNCTION(3000000000, 'intValue')", "error: 3000000000 does not fit a 32-bit integer"),
    .init("FUNCTION(9007199254740993, 'integerValue')", "9007199254740993"), .init("FUNCTION(-2.9, 'integerValue')", "-2"),
    .init("FUNCTION(9223372036854775807.0, 'integerValue')", "error: does not fit a 64-bit integer"),
    .init("FUNCTION(CAST('123456789012345678.9', 'NSDecimalNumber'), 'integerValue')", "123456789012345678"),
    .init("FUNCTION(CAST('12345678901234567890.5', 'NSDecimalNumber'), 'integerValue')", "error: does not fit a 64-bit integer"),
    .init("FUNCTION('1e-400', 'boolValue')", "true"), .init("FUNCTION('-0.000', 'boolValue')", "false"), .init("FUNCTION(TRUE, 'intValue')", "1"),
]

let castAndMiscCases: [EvalCase] = [
    .init("CAST(42, 'NSString')", "\"42\""), .init("CAST(2.5, 'NSString')", "\"2.5\""), .init("CAST(3.0, 'NSString')", "\"3\""),
    // A whole double is written as %g writes it, without a fraction up to 16 digits (1e15 was "1000000000000000.0").
    .init("FUNCTION(CAST(0, 'NSDate'), 'description')", "\"2001-01-01 00:00:00 +0000\""), .init("FUNCTION(CAST(-0.5, 'NSDate'), 'description')", "\"2000-12-31 23:59:59 +0000\""),
    .init("CAST(-0.0, 'NSString')", "\"-0\""), .init("CAST(0.0, 'NSString')", "\"0\""),
    .init("CAST(1e15, 'NSString')", "\"1000000000000000\""), .init("CAST(-5e15, 'NSString')", "\"-5000000000000000\""), .init("CAST(1e16, 'NSString')", "\"1e+16\""), .init("CAST('12', 'NSNumber')", "12"),
    .init("CAST('1.5', 'NSNumber')", "1.5"), .init("CAST('x', 'NSNumber')", "error: 'x' is not a number"), .init("CAST('0x1F', 'NSNumber')", "error: '0x1F' is not a number"),
    .init("CAST('1e400', 'NSNumber')", "error: beyond a double's range"), .init("CAST('9007199254740993', 'NSNumber')", "9007199254740993"),
    // A whole number a double would change is read on its digits however written; one a double
    // holds stays a double (7.0 / 2 is 3.5); text a double would make 0 is refused.
    .init("CAST('9007199254740993.0', 'NSNumber')", "9007199254740993"), .init("CAST(' -9.007199254740993e15 ', 'NSNumber')", "-9007199254740993"),
    .init("CAST('7.0', 'NSNumber') / 2", "3.5"), .init("CAST('1e18', 'NSNumber') * 10", "1e+19"), .init("CAST('3.0', 'NSNumber')", "3.0"),
    .init("CAST('1e-400', 'NSNumber')", "error: too small for a double"), .init("FUNCTION('-1e-330', 'doubleValue')", "error: too small for a double"),
    .init("CAST('0e-400', 'NSNumber')", "0.0"), .init("CAST('2.5e-300', 'NSNumber')", "2.5e-300"), .init("CAST(0, 'NSDate')", "\"2001-01-01T00:00:00Z\""),
    .init("CAST(dateCreated, 'NSNumber')", "736250400.0"), .init("CAST('2024-05-01T10:00:00Z', 'NSDate') == dateCreated", "true"),
    .init("CAST('12.50', 'NSDecimalNumber')", "\"12.5\""), .init("CAST(TRUE, 'NSString')", "\"1\""), .init("CAST(nil, 'NSString')", "null"),
    .init("CAST(1, 'NSArray')", "error: CAST to 'NSArray' is not supported"), .init("TERNARY(image != nil, 'has image', 'no image')", "\"has image\""),
    .init("TERNARY(rating == nil, 1, 0)", "0"), .init("TERNARY(FALSE, 1 / 0, 2)", "2"),
    .init("FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Note', 'TRUEPREDICATE'), $manager.sourceContext, NO).@count", "2"),
    .init("FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Attachment', 'size > 200'), $manager.sourceContext, NO).kind", #"["pdf"]"#),
    .init("FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Note', 'title =='), $manager.sourceContext, NO)", "error: does not parse"),
    .init("FETCH(1, 2, 3)", "error: FETCH needs a fetch request"),
]

let errorCases: [EvalCase] = [
    .init("", "error: expected a value, found the end of the expression"), .init("1 +", "error: expected a value"), .init("(1 + 2", "error: expected ')'"),
    .init("{1, 2", "error: expected '}'"), .init("1 2", "error: unexpected '2' after a complete expression"), .init("\"open", "error: unterminated string"),
    .init("a ^ b", "error: unexpected character '^'"), .init("$", "error: expected a variable name"), .init("@", "error: expected a collection operator"),
    .init("tags.@frob", "error: unknown collection operator '@frob'"), .init("ANY tags.name", "error: expected a comparison after ANY"),
    .init("title ==[x] 'a'", "error: unknown comparison option 'x'"), .init("0xZZ", "error: is not a valid base-16 number"), .init("12abc", "error: a number cannot run into a name"),
    .init("title.AND", "error: 'AND' is a reserved word"), .init("FUNCTION(title)", "error: FUNCTION takes"), .init("FUNCTION(title, title)", "error: FUNCTION's second argument must be a selector string"),
    .init("TERNARY(TRUE, 1)", "error: TERNARY takes 3 arguments"), .init("CAST(1)", "error: CAST takes a value and a class name"),
    .init("SUBQUERY(tags, x, TRUE)", "error: SUBQUERY's second argument must be a variable"), .init("\"\\u12\"", "error: '\\u' must be followed by four hex digits"),
    .init("1e999", "error: is not a finite number"), .init("{1,}", "error: expected a value"), .init("title[", "error: expected a value"),
    .init("99999999999999999999", "\"99999999999999999999\""), .init("12345678901234567890123456789012345678901", "error: has 41 significant digits; decimals keep at most 38"),
    .init("CAST('0x1F', 'NSDecimalNumber')", "error: '0x1F' is not a decimal number"), .init("NOT", "error: expected a value"), .init("title BETWEEN", "error: expected a value"),
]

@Suite("Expression evaluation")
struct ExpressionEvaluationTests {
    static let all = appleParityCases + literalCases + arithmeticCases + keyPathCases + collectionOperatorCases + indexCases + comparisonCases + stringCases
        + logicCases + aggregateCases + functionCases + methodCases + castAndMiscCases + errorCases

    @Test func thereAreAtLeastThreeHundredCases() {
        #expect(Self.all.count >= 300, "\(Self.all.count) cases")
    }

    /// An evaluator remembers the functions it looked up (by spelling and argument count): the
    /// same evaluator gives each spelling its own function, every time.
    @Test func oneEvaluatorLooksUpEachSpellingByItsArgumentCount() throws {
        let evaluator = Evaluator(context: ExpressionFixture.context())
        func evaluate(_ text: String) throws -> EvalValue { try evaluator.evaluate(ExpressionParser.parse(text).get()) }
        for _ in 0..<2 {
            #expect(try evaluate("RANDOM()") == .scalar(.double(0.5)))
            #expect(try evaluate("random:(4)") == .scalar(.integer(2)))
            #expect(try evaluate("UPPERCASE('a')") == .scalar(.string("A")))
            #expect(try evaluate("uppercase:('b')") == .scalar(.string("B")))
            #expect(try evaluate("MAX(1, 5, 3)") == .scalar(.integer(5)))
        }
        #expect(throws: ExpressionError.self) { try evaluate("RANDOM(1, 2)") }
    }

    /// A `$manager` lookup the store fails (a statement stopped by Ctrl-C, a full disk) is the
    /// store's failure, not the expression's: it comes through unchanged, so the run reports a
    /// cancellation as one. A lookup the mapping gets wrong (an unknown name) stays located.
    @Test func aStoreFailureInAManagerLookupIsNotTheExpressions() throws {
        final class FailingManager: MigrationManagerFunctions {
            let error: any Error
            init(_ error: any Error) { self.error = error }
            func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] { throw error }
            func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] { throw error }
            func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef] { throw error }
        }
        let lookup = try ExpressionParser.parse("FUNCTION($manager, 'destinationInstancesForSourceRelationshipNamed:sourceInstances:', 'tags', tags)").get()
        let interrupted = FailingManager(DatabaseError(resultCode: .SQLITE_INTERRUPT))
        var context = ExpressionFixture.context()
        context.manager = interrupted
        let thrown = #expect(throws: DatabaseError.self) { try Evaluator(context: context).evaluate(lookup) }
        #expect(thrown?.resultCode == .SQLITE_INTERRUPT)
        let unknown = FailingManager(MapcError.notFound("no entity mapping named 'Tgs'"))
        context.manager = unknown
        #expect(throws: ExpressionError.self) { try Evaluator(context: context).evaluate(lookup) }
    }

    @Test("parse and evaluate", arguments: all)
    func evaluate(_ testCase: EvalCase) {
        let result = ExpressionFixture.run(testCase.text)
        if testCase.expected.hasPrefix("error: ") {
            #expect(result.hasPrefix("error: ") && result.contains(testCase.expected.dropFirst(7)), "got \(result)")
        } else {
            #expect(result == testCase.expected)
        }
    }
}
