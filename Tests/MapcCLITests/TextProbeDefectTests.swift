import Foundation
import Testing

/// Defects a probe of text found: Unicode forms, code points beyond the BMP and bytes that are not
/// UTF-8, through `load`, `dump`, `eval`, runs and `mapc test`.
@Suite("Defects found by a probe of text")
struct TextProbeDefectTests {
    static let composed = "caf\u{E9}", decomposed = "cafe\u{301}"

    /// A project of one version holding Tags and Notes related by `tag`.
    private func tagsProject() throws -> URL {
        try CLI.project(versions: [("v1", """
              Tag:
                attributes: { name: string? }
                relationships:
                  notes: { destination: Note, toMany: true, inverse: tag, optional: true }
              Note:
                attributes: { title: string? }
                relationships:
                  tag: { destination: Tag, inverse: notes, optional: true }

            """)])
    }

    private func json(_ text: String) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: [text], options: [])) ?? Data(), as: UTF8.self).dropFirst().dropLast().description
    }

    /// Ids "café" written with one scalar and with e and an accent are two objects, as the store's
    /// index has them: a note referring to one was linked to the other (silently, exit 0), and one
    /// file holding both was refused while two files were taken, so a dump could not be loaded.
    @Test func idsInTwoUnicodeFormsAreTwoObjectsOnEveryPath() throws {
        let folder = try tagsProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Tag\": [{\"id\": \(json(Self.composed)), \"name\": \"composed\"}]}}", to: "r1.json")
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Tag\": [{\"id\": \(json(Self.decomposed)), \"name\": \"decomposed\"}]}}", to: "r2.json")
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Note\": [{\"id\": \"n1\", \"title\": \"decomposed\", \"tag\": \(json(Self.decomposed))}, "
                         + "{\"id\": \"n2\", \"title\": \"composed\", \"tag\": \(json(Self.composed))}]}}", to: "r3.json")
        for file in ["r1.json", "r2.json", "r3.json"] {
            let load = try CLI.run(["load", file, "apart.db"], in: folder)
            #expect(load.status == 0, "\(file): \(load.stderr)")
        }
        let links = try sqliteOutput(folder, "apart.db", "SELECT n.title, t.name FROM Note n JOIN Tag t ON n.tag = t._pk ORDER BY n._id")
        #expect(links == "decomposed|decomposed\ncomposed|composed", "\(links)")
        // The dump of that store loads again, in one file.
        let dump = try CLI.run(["dump", "apart.db", "--output", "dump.json"], in: folder)
        #expect(dump.status == 0 && !dump.stderr.contains("break"), "\(dump.stderr)")
        let again = try CLI.run(["load", "dump.json", "together.db"], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sqliteOutput(folder, "together.db", "SELECT n.title, t.name FROM Note n JOIN Tag t ON n.tag = t._pk ORDER BY n._id") == links)
    }

    /// `substringToIndex:` and `substringFromIndex:` cut where Foundation cuts, and at the same
    /// place inside a surrogate pair: the 🍣 at the cut was in neither part.
    @Test func substringsCutAtOnePlaceAndLoseNothing() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (expression, expected) in [("FUNCTION(\"a🍣b\", \"substringToIndex:\", 2)", "\"a\""), ("FUNCTION(\"a🍣b\", \"substringFromIndex:\", 2)", "\"🍣b\""),
                                       ("FUNCTION(\"a🍣b\", \"substringFromIndex:\", 3)", "\"b\""), ("FUNCTION(\"e\\u0301x\", \"substringFromIndex:\", 1)", "\"\u{301}x\""),
                                       ("FUNCTION(\"e\\u0301x\", \"substringToIndex:\", 1)", "\"e\"")] {
            let eval = try CLI.run(["eval", expression], in: folder)
            #expect(eval.status == 0 && Array(eval.stdout.unicodeScalars) == Array((expected + "\n").unicodeScalars), "\(expression): \(eval.stdout)\(eval.stderr)")
        }
    }

    /// Text whose bytes are not UTF-8 is ordered byte for byte, as SQLite orders it: both `name < "f"`
    /// and `name >= "f"` were false, so two filters meant to split the objects both left it out.
    @Test func textNotUTF8IsOrderedByItsBytes() throws {
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes: { name: string?, n: int64? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "INSERT INTO Item(_entity, _id, n, name) VALUES ('Item', 'bad', 1, CAST(X'61C328' AS TEXT)), ('Item', 'good', 2, 'g')")
        for (predicate, expected) in [("name < \"f\"", "Item 'bad'"), ("name >= \"f\"", "Item 'good'"), ("name BETWEEN {\"\", \"b\"}", "Item 'bad'")] {
            let eval = try CLI.run(["eval", "--store", "s.db", "--entity", "Item", "--where", predicate, "n"], in: folder)
            #expect(eval.status == 0 && eval.stdout.hasPrefix(expected + ":") && eval.stdout.split(separator: "\n").count == 1, "\(predicate): \(eval.stdout)\(eval.stderr)")
        }
    }

    /// `nil IN "abc"` said "IN needs a collection or a string on its right, found a string":
    /// nil is in no text, as `CONTAINS` has it; a number on the left is named as what is wrong.
    @Test func nilInATextIsFalseAndANumberIsNamed() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let none = try CLI.run(["eval", "--object", "{\"name\": null}", "--predicate", "name IN \"abc\""], in: folder)
        #expect(none.status == 0 && none.stdout == "false\n", "\(none.stdout)\(none.stderr)")
        let number = try CLI.run(["eval", "--object", "{\"name\": 5}", "--predicate", "name IN \"abc\""], in: folder)
        #expect(number.status == 1 && number.stderr.contains("IN a string tests for a part of it, which needs a string on the left, found a number"), "\(number.stderr)")
    }

    /// A `mapc test` difference between texts that read alike showed `expected "café", got
    /// "café"`: the scalars that differ are named.
    @Test func textsThatReadAlikeAreShownByTheirScalars() throws {
        let folder = try CLI.project(versions: [("v1", "  Rec:\n    attributes: { s: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["fixtures", "expected"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Rec\": [{\"id\": \"r1\", \"s\": \(json(Self.decomposed))}]}}", to: "d.json")
        #expect(try CLI.run(["load", "d.json", "fixtures/f.db"], in: folder).status == 0)
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Rec\": [{\"id\": \"r1\", \"s\": \(json(Self.composed))}]}}", to: "expected/f.json")
        let test = try CLI.run(["test"], in: folder)
        #expect(test.status == 1 && test.stdout.contains("they read alike but differ at character 4, written U+00E9 against U+0065 U+0301"), "\(test.stdout)")
    }

    /// A broken uniqueness constraint on text that is not UTF-8 showed the value as "�": its bytes
    /// are shown, as every other message shows them.
    @Test func aSharedValueNotUTF8IsShownAsBytes() throws {
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes: { name: string? }\n"),
                                                ("v2", "  Item:\n    uniquenessConstraints: [[name]]\n    attributes: { name: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "INSERT INTO Item(_entity, _id, name) VALUES ('Item', 'a', CAST(X'61C328' AS TEXT)), ('Item', 'b', CAST(X'61C328' AS TEXT))")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("61 C3 28") && !run.stderr.contains("\u{FFFD}"), "\(run.stderr)")
    }
    /// Trimming took characters past U+FFFF as two halves and trimmed none of them (`"🍣x🍣"`
    /// trimmed of 🍣 was unchanged); Foundation trims by code point.
    @Test func trimmingIsByCodePoint() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (expression, expected) in [("FUNCTION(\"🍣x🍣\", \"stringByTrimmingCharactersInSet:\", \"🍣\")", "\"x\""),
                                       ("FUNCTION(\"👍🏽x\", \"stringByTrimmingCharactersInSet:\", \"👍🏽\")", "\"x\""),
                                       ("FUNCTION(\"e\\u0301\", \"stringByTrimmingCharactersInSet:\", \"e\")", "\"\u{301}\""),
                                       ("FUNCTION(\"🍣\", \"stringByTrimmingCharactersInSet:\", \"🍣\")", "\"\"")] {
            let eval = try CLI.run(["eval", expression], in: folder)
            #expect(eval.status == 0 && Array(eval.stdout.unicodeScalars) == Array((expected + "\n").unicodeScalars), "\(expression): \(eval.stdout)\(eval.stderr)")
        }
    }

    /// A character past U+FFFF could not be escaped in an expression's string (`\ud83c\udf63`, as
    /// JSON and Foundation write one, was refused): the pair is one character; half of one is
    /// refused, saying why.
    @Test func aSurrogatePairEscapesOneCharacter() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pair = try CLI.run(["eval", "\"\\ud83c\\udf63\" == \"🍣\""], in: folder)
        #expect(pair.status == 0 && pair.stdout == "true\n", "\(pair.stdout)\(pair.stderr)")
        let half = try CLI.run(["eval", "\"\\ud83cx\""], in: folder)
        #expect(half.status == 1 && half.stderr.contains("'\\ud83c' is half of a surrogate pair"), "\(half.stderr)")
    }

    /// Renaming identifiers written in two Unicode forms matched (Swift's `==`), where Core Data's
    /// `isEqual:` does not: the property is removed and another added, not renamed.
    @Test func renamingIdentifiersMatchExactly() throws {
        let folder = try CLI.project(versions: [("v1", "  Note:\n    attributes:\n      a: { type: string, optional: true, renamingIdentifier: \"\(Self.composed)\" }\n"),
                                                ("v2", "  Note:\n    attributes:\n      b: { type: string, optional: true, renamingIdentifier: \"\(Self.decomposed)\" }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.status == 0 && !diff.stdout.contains("renamed  Note.b") && diff.stdout.contains("removed  Note.a"), "\(diff.stdout)")
        #expect(diff.stdout.contains("written U+0063 U+0061 U+0066 U+0065 U+0301 where a's is U+0063 U+0061 U+0066 U+00E9"), "\(diff.stdout)")
        try folder.write("model: S\nversion: v2\nentities:\n  Note:\n    attributes:\n      b: { type: string, optional: true, renamingIdentifier: \"\(Self.composed)\" }\n", to: "schemas/v2.yaml")
        let same = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(same.stdout.contains("renamed  Note.b"), "\(same.stdout)")
    }
    /// A review's finds: a to-many listing both forms was refused as "listed twice", a dump kept
    /// one of them (its de-duplication took them for one), and a uniqueness constraint on the
    /// relationship took the two objects for one.
    @Test func aToManyAndAConstraintTellTheTwoFormsApart() throws {
        let folder = try CLI.project(versions: [("v1", """
              Tag:
                attributes: { name: string? }
                relationships:
                  notes: { destination: Note, toMany: true, inverse: tags, optional: true }
              Note:
                attributes: { title: string? }
                relationships:
                  tags: { destination: Tag, toMany: true, inverse: notes, optional: true }
                  first: { destination: Tag, optional: true }
                uniquenessConstraints: [[first]]

            """)])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Tag\": [{\"id\": \(json(Self.composed))}, {\"id\": \(json(Self.decomposed))}], "
                         + "\"Note\": [{\"id\": \"n1\", \"tags\": [\(json(Self.composed)), \(json(Self.decomposed))], \"first\": \(json(Self.composed))}, "
                         + "{\"id\": \"n2\", \"first\": \(json(Self.decomposed))}]}}", to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        let dump = try CLI.run(["dump", "s.db", "--output", "dump.json"], in: folder)
        #expect(dump.status == 0, "\(dump.stderr)")
        let again = try CLI.run(["load", "dump.json", "t.db"], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        for store in ["s.db", "t.db"] {
            #expect(try sqliteOutput(folder, store, "SELECT count(*) FROM Note_tags") == "2", "\(store)")
        }
    }
}
