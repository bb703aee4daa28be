import Foundation
import Testing

@Suite("mapc eval", .serialized)
struct EvalCommandTests {
    @Test func constantExpressionsPrintJSON() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        #expect(try CLI.run(["eval", "1 + 2 * 3"], in: project).stdout == "7\n")
        #expect(try CLI.run(["eval", "{1, 2}.@avg"], in: project).stdout == "1.5\n")
        #expect(try CLI.run(["eval", "uppercase:('abc')"], in: project).stdout == "\"ABC\"\n")
        #expect(try CLI.run(["eval", "--predicate", "5 BETWEEN {1, 10}"], in: project).stdout == "true\n")
    }

    /// `-9223372036854775808`, the least 64-bit integer, was a decimal (its digits alone are
    /// beyond an integer), so bitwise functions refused it as "not a whole number".
    @Test func theLeastIntegerWrittenOutIsAnInteger() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        #expect(try CLI.run(["eval", "rightshift:by:(-9223372036854775808, 1)"], in: project).stdout == "-4611686018427387904\n")
        #expect(try CLI.run(["eval", "--", "-9223372036854775808 == -9223372036854775807 - 1"], in: project).stdout == "true\n")
        // Beyond it, still a decimal (printed as text, as JSON prints a decimal).
        #expect(try CLI.run(["eval", "--", "-9223372036854775809"], in: project).stdout == "\"-9223372036854775809\"\n")
    }

    /// `"\x41"` was "x41", `"\101"` "101" and `"^\d+$"` the pattern `^d+$`: an escape a string
    /// did not know lost its backslash, in silence. C's escapes are read; any other is an error.
    @Test func stringEscapesAreCsOrAnError() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        #expect(try CLI.run(["eval", "--", #""A" == "\x41" AND "A" == "\101" AND "\a\b\f\v" == "\u0007\u0008\u000C\u000B""#], in: project).stdout == "true\n")
        #expect(try CLI.run(["eval", "--", #""12" MATCHES "^\\d+$""#], in: project).stdout == "true\n")
        let unknown = try CLI.run(["eval", "--", #""12" MATCHES "^\d+$""#], in: project)
        #expect(unknown.status == 1 && unknown.stderr.contains(#"'\d' is no escape a string knows; write '\\d'"#), "\(unknown.stderr)")
        // `\b` is a string's escape (backspace): a pattern's word boundary so written is warned of.
        let boundary = try CLI.run(["eval", "--predicate", "--", #""a cat" MATCHES ".*\bcat\b.*""#], in: project)
        #expect(boundary.stderr.contains("warning: the MATCHES pattern holds the control character U+0008, which the string's escape \\b made"), "\(boundary.stderr)")
    }

    /// A grammar probe's findings: a reserved word's hint named another key (`#NO` for `no`);
    /// `nums CONTAINS 2` was refused when the key's type is not known (Apple's CONTAINS is also
    /// membership); `noindex:` was unknown; `%@` and `:=` were "unexpected character"; `1.5.2`
    /// said "unexpected '0.2'"; `mode:` broke ties by a hash's order.
    @Test func whatTheGrammarProbeFound() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        let reserved = try CLI.run(["eval", "--object", #"{"d": {"no": 5}}"#, "d.no"], in: project)
        #expect(reserved.stderr.contains("write '#no' to use it as a key"), "\(reserved.stderr)")
        #expect(try CLI.run(["eval", "--object", #"{"d": {"no": 5}}"#, "d.#no"], in: project).stdout == "5\n")
        #expect(try CLI.run(["eval", "--object", #"{"nums": [1, 2, 3]}"#, "--predicate", "nums CONTAINS 2"], in: project).stdout == "true\n")
        #expect(try CLI.run(["eval", "noindex:(5) + 1"], in: project).stdout == "6\n")
        let format = try CLI.run(["eval", "--", "name == %@"], in: project)
        #expect(format.status == 1 && format.stderr.contains("'%@' is a format specifier, which mapc does not read"), "\(format.stderr)")
        let number = try CLI.run(["eval", "--", "1.5.2"], in: project)
        #expect(number.stderr.contains("unexpected '.2' after a complete expression"), "\(number.stderr)")
        let mode = try CLI.run(["eval", #"mode:({"b", "a", "a", "b"})"#], in: project).stdout.filter { !$0.isWhitespace }
        #expect(mode == #"["a","b"]"#, "\(mode)")
    }

    @Test func anObjectIsBoundToSourceAndSelf() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        let object = #"{"title": "Groceries", "body": "Milk and eggs", "image": null, "tags": [{"name": "home"}, {"name": "food"}]}"#
        #expect(try CLI.run(["eval", "--object", object, "FUNCTION($source.body, 'substringToIndex:', 4)"], in: project).stdout == "\"Milk\"\n")
        #expect(try CLI.run(["eval", "--object", object, "--predicate", "image != nil"], in: project).stdout == "false\n")
        #expect(try CLI.run(["eval", "--object", object, "tags.name"], in: project).stdout == "[\"home\",\"food\"]\n")
        try project.write(object, to: "note.json")
        #expect(try CLI.run(["eval", "--object", "@note.json", "title"], in: project).stdout == "\"Groceries\"\n")
    }

    /// FIRST, LAST and SIZE read as keys where they are not indexes, as written: an object may
    /// have both `size` and `sIZE` (they read `size` whatever the case, copying one over the other).
    @Test func aKeywordReadAsAKeyIsTheKeyAsWritten() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        let object = #"{"sIZE": "upper", "size": "lower", "Last": 1, "items": [1, 2, 3]}"#
        #expect(try CLI.run(["eval", "--object", object, "sIZE"], in: project).stdout == "\"upper\"\n")
        #expect(try CLI.run(["eval", "--object", object, "$source.sIZE"], in: project).stdout == "\"upper\"\n")
        #expect(try CLI.run(["eval", "--object", object, "$source.size"], in: project).stdout == "\"lower\"\n")
        #expect(try CLI.run(["eval", "--object", object, "Last"], in: project).stdout == "1\n")
        #expect(try CLI.run(["eval", "--object", object, "items[size]"], in: project).stdout == "3\n")
    }

    @Test func errorsPointAtTheExpressionWithACaret() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        let parse = try CLI.run(["eval", "title == (1 +"], in: project)
        #expect(parse.status == 1)
        #expect(parse.stderr == "<expression>:1:14: error: expected a value, found the end of the expression\ntitle == (1 +\n             ^\n")
        let runtime = try CLI.run(["eval", "1 + 1 / 0"], in: project)
        #expect(runtime.status == 1)
        #expect(runtime.stderr.contains("<expression>:1:5: error: division by zero\n1 + 1 / 0\n    ^~~~~\n"))
        let bad = try CLI.run(["eval", "--object", "{not json", "title"], in: project)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("--object:1:2: not valid JSON: expected a member name in double quotes"), "\(bad.stderr)")
        #expect(try CLI.run(["eval", "--store", "x.db", "title"], in: project).status == 64)
    }

    @Test func aStoreIsEvaluatedObjectByObjectAfterChecking() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write("""
        {"version": "v2", "objects": {"Note": [
          {"id": "n1", "title": "Groceries", "body": "Milk", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": 0, "image": "iVBORw0KGgo="},
          {"id": "n2", "title": "Ideas", "body": "Lots of them", "dateCreated": "2024-05-02T10:00:00Z", "displayIndex": 1},
          {"id": "n3", "title": "Trip", "body": "Kyoto", "dateCreated": "2024-05-03T10:00:00Z", "displayIndex": 2, "image": "/9j/4AAQ"}
        ]}}
        """, to: "notes.json")
        #expect(try CLI.run(["load", "notes.json", "notes.db"], in: project).status == 0)
        let titles = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "--where", "image != nil", "uppercase:($source.title)"], in: project)
        #expect(titles.status == 0, "\(titles.stderr)")
        #expect(titles.stdout == "Note 'n1': \"GROCERIES\"\nNote 'n3': \"TRIP\"\n")
        // --where selects as a mapping's filter does: a note without an image is not one whose image differs.
        let differing = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "--where", "NOT (image.length > 100)", "$id"], in: project)
        #expect(differing.stdout == "Note 'n1': \"n1\"\nNote 'n3': \"n3\"\n", "\(differing.stdout)\(differing.stderr)")
        let flags = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "--predicate", "image != nil"], in: project)
        #expect(flags.stdout == "Note 'n1': true\nNote 'n2': false\nNote 'n3': true\n")
        let typo = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "$source.titel"], in: project)
        #expect(typo.status == 1)
        #expect(typo.stderr.contains("<expression>:1:9: error: unknown key 'titel' on Note; did you mean 'title'?"))
        let wrongEntity = try CLI.run(["eval", "--store", "notes.db", "--entity", "Nte", "title"], in: project)
        #expect(wrongEntity.status == 2)
        #expect(wrongEntity.stderr.contains("no entity 'Nte' in version v2; did you mean 'Note'?"))
        let failing = try CLI.run(["eval", "--store", "notes.db", "--entity", "Note", "10 / displayIndex"], in: project)
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("division by zero (evaluating Note 'n1')"))
    }
}
