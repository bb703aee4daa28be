import Foundation
import Testing

/// What the fourth hostile-input probe found: values a Core Data store's metadata can hold,
/// files past a parser's limits, stores another tool left odd.
@Suite("Defects found by the fourth hostile-input probe")
struct HostileInputProbeFindingsTests {
    /// A Core Data store at v1 of the example, its metadata given the app key `app.value`, whose
    /// value `replace` rewrites in the binary property list (a placeholder swapped for bytes no
    /// Python library writes).
    private func store(placeholder: String, replace: String) throws -> URL {
        let folder = try CLI.project()
        #expect(try CLI.run(["init", "s.sqlite", "--schema", "v1", "--layout", "core-data"], in: folder).status == 0)
        try python("""
            import sqlite3, plistlib, struct
            c = sqlite3.connect('s.sqlite')
            d = plistlib.loads(c.execute('SELECT Z_PLIST FROM Z_METADATA').fetchone()[0])
            d['app.value'] = \(placeholder)
            blob = plistlib.dumps(d, fmt=plistlib.FMT_BINARY)
            old, new = \(replace)
            assert not old or blob.count(old) == 1
            c.execute('UPDATE Z_METADATA SET Z_PLIST = ?', (blob.replace(old, new),))
            c.commit()
            """, in: folder)
        return folder
    }

    /// A date of NaN seconds in the metadata crashed `status`, `dump` and `run` (exit 132, a
    /// trap: describing it called `Date.description`); infinity showed "<description unavailable>".
    @Test func aDateOfNoNumberInTheMetadataIsShown() throws {
        for (bits, shown) in [("float('nan')", "nan"), ("float('inf')", "inf")] {
            let folder = try store(placeholder: "0.5", replace: "(b'\\x23' + struct.pack('>d', 0.5), b'\\x33' + struct.pack('>d', \(bits)))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let status = try CLI.run(["status", "s.sqlite"], in: folder)
            #expect(status.status == 0 && status.stdout.contains("app.value") && status.stdout.contains("a date \(shown) seconds after 2001-01-01"), "\(status.stdout)\(status.stderr)")
            #expect(try CLI.run(["dump", "s.sqlite"], in: folder).status == 0)
        }
    }

    /// An integer of 128 bits (2^100) became 0, and UTF-16 text with a lone surrogate, or ASCII
    /// text with a byte past 127, became U+FFFD, when a run wrote the metadata back (exit 0):
    /// such a value cannot be written back as it is, so the run refuses, naming the key.
    @Test func metadataThatCannotBeWrittenBackAsItIsStopsTheRun() throws {
        let cases = [
            ("2**64 - 1", "(b'\\x14' + b'\\x00' * 8 + b'\\xff' * 8, b'\\x14' + (2**100).to_bytes(16, 'big'))", "an integer of 128 bits"),
            ("'\\u00e9'", "(b'\\x61\\x00\\xe9', b'\\x61\\xd8\\x00')", "UTF-16 text with a lone surrogate"),
            ("'a~b'", "(b'\\x53a~b', b'\\x53a\\xffb')", "ASCII text with a byte past 127"),
            // A set (written back as an array) and a key listed twice (one value kept): the review.
            ("[7, 8]", "(b'\\xa2', b'\\xc2')", "a set, which would be written back as an array"),
            ("{'qa': 1, 'qb': 2}", "(b'\\x52qb', b'\\x52qa')", "the key 'qa' twice"),
        ]
        for (placeholder, replace, what) in cases {
            let folder = try store(placeholder: placeholder, replace: replace)
            defer { try? FileManager.default.removeItem(at: folder) }
            let before = try Data(contentsOf: folder.appendingPathComponent("s.sqlite"))
            let run = try CLI.run(["run", "s.sqlite", "--to", "v2"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("app.value") && run.stderr.contains(what), "\(what): \(run.stderr)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("s.sqlite")) == before, "\(what)")
        }
        // A set under a key a write replaces (the version identifiers, which Core Data keeps as
        // a set in the model) stops nothing.
        let identifiers = try store(placeholder: "'x'", replace: "(b'\\xa1', b'\\xc1')")
        defer { try? FileManager.default.removeItem(at: identifiers) }
        let replaced = try CLI.run(["run", "s.sqlite", "--to", "v2"], in: identifiers)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        // A UInt64 past Int64.max (Foundation writes it in 128 bits) is kept.
        let folder = try store(placeholder: "2**64 - 1", replace: "(b'', b'')")
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["run", "s.sqlite", "--to", "v2"], in: folder).status == 0)
        let status = try CLI.run(["status", "s.sqlite"], in: folder).stdout
        #expect(status.contains("app.value") && status.contains(" 18446744073709551615\n"), "\(status)")
    }

    /// A store holding an object with an empty id (another tool's write) was migrated and called
    /// valid, exit 0, where `dump` of the result said it broke the rules and `load` refused the
    /// dump: the run's validation holds every id to the rule `load` holds them to.
    @Test func anEmptyIdFailsARunsValidationAsItFailsLoad() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2020-01-01T00:00:00Z"}]}}"#, to: "v1.json")
        #expect(try CLI.run(["load", "v1.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "UPDATE Note SET _id = '' WHERE _id = 'n1'")
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        let run = try CLI.run(["run", "s.db", "--to", "v2"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("its id is empty, where an id is a non-empty string (give every object a unique, non-empty id)")
                && run.stderr.contains("before this run"), "\(run.stdout)\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
    }

    /// A model written on one line (generated, minified) took time in the square of the line's
    /// length to import (8,000 entities: 30 s), each element's place counted from the line's
    /// start; counted once per line now, a place is still the tag's own character column.
    @Test func elementsOfALongLineArePlacedByTheirCharacters() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let entities = (0..<3_000).map { #"<entity name="E\#($0)"><attribute name="é\#($0)" optional="YES" attributeType="String"/></entity>"# }.joined()
        let mistake = #"<attribute name="x" optional="YES" attributeType="Strin"/>"#
        let line = #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">"# + entities + #"<entity name="Last">"# + mistake + "</entity></model>"
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("M.xcdatamodel"), withIntermediateDirectories: true)
        try folder.write("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n" + line + "\n", to: "M.xcdatamodel/contents")
        let column = line.components(separatedBy: mistake)[0].count + 1
        let imported = try CLI.run(["import", "M.xcdatamodel"], in: folder)
        #expect(imported.status == 1 && imported.stderr.contains("M.xcdatamodel/contents:2:\(column): error: attribute Last.x has the unknown type 'Strin'"), "\(imported.stderr.prefix(300))")
    }

    /// An Xcode model with a name of 1,030 characters, or an entity of 3,000 attributes, failed
    /// import with "cannot be written as a schema file mapc reads back … please report it": a
    /// name past what a YAML key holds (said at its element, as a schema file's is), a table
    /// past SQLite's columns (said as `check` says it).
    @Test func namesAndEntitiesPastWhatFilesAndTablesHoldAreSaidAtTheirElement() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let long = "a" + String(repeating: "b", count: 1_029)
        let wide = (0..<2_001).map { #"<attribute name="a\#($0)" optional="YES" attributeType="String"/>"# }.joined(separator: "\n")
        let model = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Note">
            <attribute name="\(long)" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Wide">
            \(wide)
            </entity>
            </model>
            """
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("M.xcdatamodel"), withIntermediateDirectories: true)
        try folder.write(model, to: "M.xcdatamodel/contents")
        let imported = try CLI.run(["import", "M.xcdatamodel"], in: folder)
        #expect(imported.status == 1 && imported.stderr.contains("contents:4:1: error: attribute name 'abbbbbbbbbbbbbbbbbbb…' is 1030 characters long, longer than the 500 characters a name may have")
                && !imported.stderr.contains("please report"), "\(imported.stderr.prefix(1_500))")
        // A hierarchy past SQLite's columns, said as `check` says it (the review found a parent
        // of 1,100 attributes and a sub-entity of 1,000 imported, and refused by `check` after).
        let wideModel = model.replacingOccurrences(of: #"<attribute name="\#(long)" optional="YES" attributeType="String"/>"#, with: "")
            .replacingOccurrences(of: #"<entity name="Wide">"#, with: #"<entity name="Wide" parentEntity="Note">"#)
        try folder.write(wideModel, to: "M.xcdatamodel/contents")
        let hierarchy = try CLI.run(["import", "M.xcdatamodel"], in: folder)
        #expect(hierarchy.status == 1 && hierarchy.stderr.contains("error: this version cannot be stored: table ZNOTE needs") && hierarchy.stderr.contains("SQLite allows 2000")
                && !hierarchy.stderr.contains("please report"), "\(hierarchy.stderr.prefix(1_500))")
        // A schema file's name is held to the same length.
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      a\(String(repeating: "b", count: 600)): string?\n", to: "schemas/v1.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("v1.yaml:6:7: error: attribute name 'abbbbbbbbbbbbbbbbbbb…' is 601 characters long"), "\(check.stderr.prefix(600))")
    }

    /// `load` into a Core Data store whose `Z_MAX` another tool left as text (or NULL, or a
    /// blob) added its objects and left the text there (SQLite's `max` keeps text over any
    /// number), so the app's key counter named no key: a number covering every key is written.
    @Test func loadWritesANumberOverAKeyCounterThatIsNone() throws {
        for stored in ["'lots'", "NULL", "x'00'"] {
            let folder = try CLI.project()
            defer { try? FileManager.default.removeItem(at: folder) }
            #expect(try CLI.run(["init", "s.sqlite", "--schema", "v1", "--layout", "core-data"], in: folder).status == 0)
            try sqlite(folder, "s.sqlite", "UPDATE Z_PRIMARYKEY SET Z_MAX = \(stored) WHERE Z_NAME = 'Note'")
            try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2020-01-01T00:00:00Z"}]}}"#, to: "v1.json")
            #expect(try CLI.run(["load", "v1.json", "s.sqlite"], in: folder).status == 0)
            try python("""
                import sqlite3
                c = sqlite3.connect('s.sqlite')
                counter, kind = c.execute("SELECT Z_MAX, typeof(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'").fetchone()
                largest = c.execute('SELECT max(Z_PK) FROM ZNOTE').fetchone()[0]
                open('counter.txt', 'w').write(f'{kind} {counter >= largest if kind == "integer" else False}')
                """, in: folder)
            #expect(try folder.read("counter.txt") == "integer True", "\(stored)")
        }
    }

    /// A well-formed file with a text or attribute value past libxml2's 10,000,000 bytes was
    /// "malformed XML: not well-formed … is the file complete?" at its last line: the value and
    /// the parser's limit are said, where the value starts.
    @Test func aValuePastTheXMLParsersLimitIsSaidAsSuch() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Note"><userInfo><entry key="k" value="\(String(repeating: "a", count: 10_000_001))"/></userInfo></entity>
            </model>
            """
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("M.xcdatamodel"), withIntermediateDirectories: true)
        try folder.write(model, to: "M.xcdatamodel/contents")
        let imported = try CLI.run(["import", "M.xcdatamodel"], in: folder)
        #expect(imported.status == 1 && imported.stderr.contains("contents:3:32: error: this element holds a text or attribute value of more than 10000000 bytes, the most the XML parser reads in one (libxml2's limit)"), "\(imported.stderr.prefix(400))")
    }

    /// A view in an entity table's place was "has no table ZNOTE … restore it from a backup",
    /// sending the reader after a dropped table: the view is named.
    @Test func aViewInATablesPlaceIsNamed() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "s.sqlite", "--schema", "v1", "--layout", "core-data"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", "ALTER TABLE ZNOTE RENAME TO ZNOTE_REAL; CREATE VIEW ZNOTE AS SELECT * FROM ZNOTE_REAL")
        let status = try CLI.run(["status", "s.sqlite"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("s.sqlite's ZNOTE is a view, where version v1 keeps a table of its objects or links"), "\(status.stderr)")
    }

    /// A store's own trigger that broke objects as `load` wrote them made `load` report broken
    /// objects without a word of the trigger: it is named.
    @Test func loadNamesTheStoresTriggersWhenItsObjectsBreak() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "s.db", "--schema", "v1"], in: folder).status == 0)
        try sqlite(folder, "s.db", "CREATE TRIGGER blank_titles AFTER INSERT ON Note BEGIN UPDATE Note SET title = NULL; END")
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2020-01-01T00:00:00Z"}]}}"#, to: "v1.json")
        let load = try CLI.run(["load", "v1.json", "s.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains("the store has triggers of its own (blank_titles), which ran on the objects written"), "\(load.stderr)")
    }
}
