import Foundation
import GRDB
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Defects a second hostile-input probe found: answers that were wrong rather than refused, and
/// work without a bound.
@Suite("Defects found by a second hostile-input probe", .serialized)
struct HostileProbeDefectTests {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// ICU gives up on a pattern that backtracks polynomially (the screen passes it) and reports
    /// no match: MATCHES said false, and a filter dropped the object. Now it has no answer, said.
    @Test func aRegexTheEngineGivesUpOnIsAnErrorNotFalse() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let subject = String(repeating: "a", count: 5_000) + "!"
        try folder.write(#"{"s": "\#(subject)"}"#, to: "object.json")
        let pattern = "[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[0-9]|a*!"
        let eval = try CLI.run(["eval", "s MATCHES '\(pattern)'", "--predicate", "--object", "@object.json"], in: folder)
        #expect(eval.status != 0 && eval.stderr.contains("MATCHES has no answer") && !eval.stdout.contains("false"), "\(eval.stdout)\(eval.stderr)")
        // A schema's regex rule: the value cannot be checked, said once per value and quickly
        // (the engine's wait is paid once per pattern, not once per value).
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try folder.write("model: P\nversion: v1\nentities:\n  Item:\n    attributes:\n      code: { type: string, regex: '\(pattern)' }\n", to: "schemas/v1.yaml")
        // A short value that matches is still matched once the pattern had no answer on long ones.
        let items = (0..<30).map { #"{"id": "i\#($0)", "code": "\#(subject)"}"# }.joined(separator: ",") + #", {"id": "short", "code": "abc1"}"#
        try folder.write(#"{"version": "v1", "objects": {"Item": [\#(items)]}}"#, to: "items.json")
        let started = Date()
        let load = try CLI.run(["load", "items.json", "items.db"], in: folder)
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(load.status == 1 && load.stderr.contains("cannot be checked against regex") && !load.stderr.contains("does not match regex"), "\(load.stderr.prefix(2_000))")
        #expect(!load.stderr.contains("'short'"), "a short value is matched, and matches")
        // Each value is named by its first characters and its length, not written out 30 times.
        #expect(load.stderr.contains("… (5003 characters)") && load.stderr.utf8.count < 30_000, "\(load.stderr.utf8.count) bytes")
    }

    /// A to-one key naming no object of its destination (a missing row, a fraction): the
    /// migration made it nil, silently, and the reader gave a phantom object. Now it reads as
    /// none, and a run says what became nil (real stores have such keys: it is not refused).
    @Test func referencesThatLeadNowhereReadAsNoneAndARunSaysSo() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try folder.write(#"{"version": "v3", "objects": {"Note": [{"id": "n1", "title": "T", "body": "B", "dateCreated": "2024-01-01T00:00:00Z"}], "#
                         + #""Attachment": [{"id": "a1", "image": "AA==", "dateCreated": "2024-01-01T00:00:00Z", "note": "n1"}, {"id": "a2", "image": "AA==", "dateCreated": "2024-01-01T00:00:00Z", "note": "n1"}]}}"#, to: "n.json")
        let load = try CLI.run(["load", "--layout", "core-data", "n.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("s.db").path)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZATTACHMENT SET ZNOTE = 9999 WHERE Z_PK = 1")
            try db.execute(sql: "UPDATE ZATTACHMENT SET ZNOTE = 1.5 WHERE Z_PK = 2")
        }
        try queue.close()
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains(#""note": null"#) && !dump.stdout.contains("?/p"), "\(dump.stdout)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("note: 2 references to no object") && run.stderr.contains("Attachment 'Attachment/p1', note: key 9999 is no Note")
                && run.stderr.contains("key 1.5 is no Note") && run.stderr.contains("became nil"), "\(run.stderr)")
    }

    /// A join table's row naming an object of another entity sharing the destination's table
    /// (a Folder where a Tag belongs) was read as that object; it is read as none.
    @Test func aJoinRowNamingAnotherEntitysObjectReadsAsNone() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try folder.write("""
            model: J
            version: v1
            entities:
              Item:
                attributes:
                  name: { type: string }
                relationships:
                  tags: { destination: Tag, toMany: true, inverse: items, optional: true }
              Label:
                attributes:
                  name: { type: string }
              Tag:
                parent: Label
                relationships:
                  items: { destination: Item, toMany: true, inverse: tags, optional: true }
              Folder:
                parent: Label

            """, to: "schemas/v1.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i1", "name": "a", "tags": ["t1"]}], "Tag": [{"id": "t1", "name": "x", "items": ["i1"]}], "Folder": [{"id": "f1", "name": "f"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.db"], in: folder).status == 0)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("s.db").path)
        let folderKey = try queue.read { db in try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ZLABEL WHERE ZNAME = 'f'") }
        try queue.write { db in try db.execute(sql: "INSERT INTO Z_1TAGS VALUES (1, ?)", arguments: [folderKey]) }
        try queue.close()
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains(#""tags": ["Tag/p1"]"#), "\(dump.stdout)")
    }

    /// An ordered many-to-many keeps positions in its join table's `Z_FOK_` column, which the
    /// layout reads: it was noted as a column the model does not have.
    @Test func anOrderedJoinTablesPositionsAreNotForeignColumns() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        let v1 = """
            model: O
            version: v1
            entities:
              Song:
                attributes:
                  name: { type: string }
                relationships:
                  lists: { destination: Playlist, toMany: true, inverse: songs, optional: true }
              Playlist:
                attributes:
                  name: { type: string }
                relationships:
                  songs: { destination: Song, toMany: true, ordered: true, inverse: lists, optional: true }

            """
        try folder.write(v1, to: "schemas/v1.yaml")
        try folder.write(v1.replacingOccurrences(of: "version: v1", with: "version: v2") + "  Extra:\n    attributes:\n      x: { type: string, optional: true }\n", to: "schemas/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Song": [{"id": "s1", "name": "a"}, {"id": "s2", "name": "b"}], "Playlist": [{"id": "p1", "name": "l", "songs": ["s2", "s1"]}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "s.db"], in: folder)
        #expect(plan.status == 0 && !plan.stdout.contains("Z_FOK") && !plan.stdout.contains("note:"), "\(plan.stdout)")
    }

    /// Columns the model does not have, and triggers: a migration made from the model left them
    /// out, silently. An app's own column with values is refused as an app's own table is; a
    /// column named as Core Data names its own, and triggers and views, are left out with a note.
    @Test func columnsAndTriggersTheModelDoesNotHaveAreNotLeftOutSilently() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "T", "body": "B", "dateCreated": "2024-01-01T00:00:00Z"}]}}"#, to: "n.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "n.json", "s.db"], in: folder).status == 0)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("s.db").path)
        try queue.write { db in
            try db.execute(sql: "ALTER TABLE ZNOTE ADD COLUMN ZOLDFLAG INTEGER")
            try db.execute(sql: "ALTER TABLE ZNOTE ADD COLUMN appNotes TEXT")
            try db.execute(sql: "UPDATE ZNOTE SET ZOLDFLAG = 1, appNotes = 'keep me'")
            try db.execute(sql: "CREATE TRIGGER note_touched AFTER UPDATE ON ZNOTE BEGIN SELECT 1; END")
        }
        let refused = try CLI.run(["run", "--to", "v2", "s.db"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("tables or columns no version of the model has: ZNOTE.appNotes (1 value)"), "\(refused.stderr)")
        try queue.write { db in try db.execute(sql: "UPDATE ZNOTE SET appNotes = NULL") }
        try queue.close()
        let plan = try CLI.run(["plan", "--to", "v2", "s.db"], in: folder)
        #expect(plan.stdout.contains("ZNOTE.ZOLDFLAG (1 value)") && plan.stdout.contains("trigger note_touched"), "\(plan.stdout)\(plan.stderr)")
        let run = try CLI.run(["run", "--to", "v2", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("note: the store's tables have columns named as Core Data names its own") && run.stderr.contains("ZNOTE.ZOLDFLAG (1 value)")
                && run.stderr.contains("trigger note_touched"), "\(run.stderr)")
        // What leaving a trigger out costs is said: what it kept up to date is no longer kept.
        #expect(run.stderr.contains("whatever they kept up to date (a derived attribute's values, an app's own rule) is no longer kept by the store"), "\(run.stderr)")
    }

    /// `--output b.db-journal` beside b.db wrote the migrated store where SQLite looks for b.db's
    /// journal: the next program to open b.db deleted it.
    @Test func anOutputNamedAsAStoresJournalIsRefused() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "b.db"], in: folder).status == 0)
        for suffix in ["-journal", "-wal", "-shm"] {
            let run = try CLI.run(["run", "--to", "v2", "--output", "b.db\(suffix)", "b.db"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("is the name SQLite gives b.db's \(suffix.dropFirst()) file"), "\(run.stderr)")
            #expect(!folder.exists("b.db\(suffix)"))
        }
    }

    /// A FIFO among the fixtures blocked `mapc test` for ever in its copy.
    @Test func aFIFOAmongTheFixturesFailsItsCaseAtOnce() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        #expect(mkfifo(folder.appendingPathComponent("fixtures/pipe.sqlite").path, 0o644) == 0)
        #expect(try CLI.run(["init", "--schema", "v1", "fixtures/a.sqlite"], in: folder).status == 0)
        let started = Date()
        let test = try CLI.run(["test"], in: folder)
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(test.status == 1 && test.stdout.contains("FAIL pipe") && test.stdout.contains("not a store file"), "\(test.stdout)\(test.stderr)")
    }

    /// libxml2 expanded entities a model declared itself and dropped, silently, references to
    /// an external DTD's: `name="n&ext;"` was imported as `n`. Xcode writes neither.
    @Test(arguments: [
        ("<!DOCTYPE model SYSTEM \"x.dtd\">\n<model><entity name=\"Note\"><attribute name=\"n&ext;\" attributeType=\"String\"/></entity></model>\n", "the entity &ext; is not one of XML's own"),
        ("<!DOCTYPE model [<!ENTITY b \"aaaa\">]>\n<model><entity name=\"N&b;\"/></model>\n", "declares its own XML entities"),
    ])
    func entitiesXcodeNeverWritesAreRefused(contents: String, message: String) throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("m.xcdatamodel"), withIntermediateDirectories: true)
        try folder.write("<?xml version=\"1.0\"?>\n" + contents, to: "m.xcdatamodel/contents")
        let run = try CLI.run(["import", "m.xcdatamodel", "--output", "out"], in: folder)
        #expect(run.status == 1 && run.stderr.contains("m.xcdatamodel/contents:") && run.stderr.contains(message), "\(run.stderr)")
        #expect(!folder.exists("out"))
    }

    /// A case-insensitive comparison of a long string of "ß" (which folds to "ss") took time
    /// quadratic in its length: 17 s for 1.28 million characters. (A hang guard, not a benchmark.)
    @Test func aCaseInsensitiveComparisonOfALongStringEnds() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"s": "\#(String(repeating: "ß", count: 1_280_000))"}"#, to: "s.json")
        let started = Date()
        let eval = try CLI.run(["eval", #"s ==[c] "x" OR s CONTAINS[c] "sß!""#, "--predicate", "--object", "@s.json"], in: folder)
        #expect(eval.status == 0 && eval.stdout == "false\n", "\(eval.stdout)\(eval.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// `mapc lsp` searched its whole buffer for the end of a header with every chunk read
    /// (16 MB without a line end took 48 s), and input it could not frame ended it silently, exit 0.
    @Test(arguments: [
        (String(repeating: "x", count: 300_000), "no end of a message's header"),
        ("Content-Length: -5\r\n\r\n{}", "Content-Length is '-5', not a number of bytes"),
        // Past any message a client sends: a broken header (one over 64 MiB is skipped).
        ("Content-Length: 99999999999\r\n\r\n{}", "more than any message an editor sends"),
        ("Content-Length: 70000000\r\n\r\n{}", "the input ended inside a message (2 of its 70000000 bytes read)"),
        ("Content-Type: json\r\n\r\n{}", "has no Content-Length"),
        ("Content-Length: 50\r\n\r\n{\"jsonrpc\"", "the input ended inside a message"),
        ("Content-Length: 2\r\nX-Long: \(String(repeating: "y", count: 70_000))\r\n\r\n{}", "65536 bytes"),
    ])
    func lspInputThatCannotBeFramedIsSaid(input: String, message: String) throws {
        try lspRun(input: input, expectStatus: 1, saying: message)
    }

    /// A JSON-RPC batch was left without an answer.
    @Test func anLSPBatchIsAnsweredAsAnInvalidRequest() throws {
        let body = #"[{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}]"#
        let exit = #"{"jsonrpc": "2.0", "method": "exit"}"#
        let output = try lspRun(input: "Content-Length: \(body.utf8.count)\r\n\r\n\(body)Content-Length: \(exit.utf8.count)\r\n\r\n\(exit)", expectStatus: 1, saying: nil)
        #expect(output.contains("-32600") && output.contains("batches of messages are not supported"), "\(output)")
    }

    /// Runs `mapc lsp` on the input; returns what it wrote to standard output.
    @discardableResult
    private func lspRun(input: String, expectStatus: Int32, saying message: String?) throws -> String {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(input, to: "input")
        let run = try CLI.run(["lsp"], in: folder, input: folder.appendingPathComponent("input"))
        #expect(run.status == expectStatus && (message.map(run.stderr.contains) ?? true), "\(run.stderr)")
        return run.stdout
    }

    /// A loop of links was named as a link to nothing; a name Xcode refuses was called a mapc bug.
    @Test func aLinkLoopAndANameXcodeRefusesAreNamedForWhatTheyAre() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("a.db").path, withDestinationPath: "b.db")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("b.db").path, withDestinationPath: "a.db")
        let status = try CLI.run(["status", "a.db"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("a.db is a symbolic link to b.db in a loop of links"), "\(status.stderr)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("m.xcdatamodel"), withIntermediateDirectories: true)
        try folder.write("<?xml version=\"1.0\"?>\n<model><entity name=\"No te\"><attribute name=\"title\" attributeType=\"String\"/></entity></model>\n", to: "m.xcdatamodel/contents")
        let imported = try CLI.run(["import", "m.xcdatamodel", "--output", "out"], in: folder)
        #expect(imported.status == 1 && imported.stderr.contains("entity name 'No te' is not a valid name; Xcode's model editor does not accept it either")
                && !imported.stderr.contains("please report"), "\(imported.stderr)")
    }

    /// A data file's `"version"` was taken for a schema file's path when it named a file: a data
    /// file from elsewhere (`"version": "/etc/passwd"`) had mapc read that file and quote it.
    @Test func aDataFilesVersionIsNeverAPath() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("secret line\n", to: "outside.txt")
        for version in [folder.appendingPathComponent("outside.txt").path, "../outside.txt", "schemas/v2.yaml"] {
            try folder.write(#"{"version": "\#(version)", "objects": {}}"#, to: "d.json")
            let load = try CLI.run(["load", "d.json", "s.db"], in: folder)
            #expect(load.status == 2 && load.stderr.contains("unknown version") && !load.stderr.contains("secret line"), "\(version): \(load.stderr)")
        }
    }

    /// A schema whose inheritance chain or cycle spans 10,000 entities kept a chain of up to
    /// 10,000 for each (2 GB, 47 s to say "inheritance cycle"); each is cut at the deepest a
    /// schema may have, and the file is refused quickly, in bounded memory.
    @Test func aLongInheritanceChainOrCycleIsRefusedInBoundedMemory() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        let count = 10_000
        let cycle = (0..<count).map { "  E\($0): {parent: E\(($0 + 1) % count)}" }.joined(separator: "\n")
        try folder.write("model: M\nversion: v1\nentities:\n\(cycle)\n", to: "schemas/v1.yaml")
        // 1.5 GB of address space: the chains of the cycle alone took more.
        let check = try CLI.run(["-c", #"ulimit -v 1500000; "$MAPC" check schemas/v1.yaml > /dev/null 2> err.txt; echo "rc=$?""#], in: folder,
                                environment: ["MAPC": CLI.executable.path], program: URL(fileURLWithPath: "/bin/sh"))
        let errors = try folder.read("err.txt")
        #expect(check.stdout.contains("rc=1") && errors.contains("levels deep"), "\(check.stdout)\(errors.prefix(500))")
    }

    /// A parent of 1,990 attributes under 200 sub-entities is 398,000 properties to infer, hash
    /// and check (10,000 sub-entities exhausted memory and aborted, SIGABRT): refused, said why.
    @Test func aSchemaOfMillionsOfInheritedPropertiesIsRefused() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        let attributes = (0..<1_990).map { "x\($0): string" }.joined(separator: ", ")
        let leaves = (0..<200).map { "  F\($0): {parent: E0}" }.joined(separator: "\n")
        try folder.write("model: M\nversion: v1\nentities:\n  E0: {attributes: {\(attributes)}}\n\(leaves)\n", to: "schemas/v1.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("the entities hold more than 200000 properties counting each sub-entity's inherited ones"), "\(check.stderr.prefix(500))")
    }

    /// Each attribute with its own backtracking pattern (`a*a*a*a*a*a*b{1,N}`, N per attribute)
    /// and a default that sets it off paid the engine's budget once per pattern: 40 took 17 s,
    /// 1,990 about 14 minutes. Once patterns have spent a few budgets together, texts as long are
    /// not tried again: every default is still said to be unchecked, in seconds.
    @Test func manyBacktrackingPatternsShareOneBudget() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        let text = String(repeating: "a", count: 400)
        let attributes = (0..<80).map { #"      a\#($0): {type: string, optional: true, regex: "a*a*a*a*a*a*b{1,\#($0 + 1)}", default: "\#(text)"}"# }.joined(separator: "\n")
        try folder.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n\(attributes)\n", to: "schemas/v1.yaml")
        let started = Date()
        let check = try CLI.run(["check", "schemas/v1.yaml"], in: folder)
        // Not a measure of speed: 80 patterns at the engine's budget each would take over 30 s.
        #expect(Date().timeIntervalSince(started) < 20)
        // A default against its own rule is a warning (Core Data accepts the model).
        #expect(check.status == 0 && check.stderr.components(separatedBy: "cannot be checked against regex").count - 1 == 80, "\(check.stderr.prefix(800))")
    }

    /// A version order listing 50,000 versions no file declares took 84 s to check: each
    /// diagnostic was compared with every other, and each rendered from its own copy of the one
    /// 400 KB line. Each is still said, each line taken once.
    @Test func manyDiagnosticsOnOneLongLineAreSaidInLinearTime() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try folder.write("model: M\nversion: v1\nentities:\n  A: {}\n", to: "schemas/v1.yaml")
        try folder.write("versions: [v1, " + (0..<50_000).map { "u\($0)" }.joined(separator: ", ") + "]\n", to: "schemas/versions.yaml")
        let started = Date()
        let check = try CLI.run(["check"], in: folder)
        // Not a measure of speed: the quadratic work took over 40 s here.
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(check.status == 1 && check.stderr.components(separatedBy: "is listed, but no schema file declares it").count - 1 == 50_000, "\(check.stderr.suffix(300))")
    }

    /// A generated column (none that Core Data or mapc makes) is computed by SQLite's integrity
    /// check for every row: one building a gigabyte a row took that much memory per row in a
    /// dry run. Refused by name before any check, the store unchanged.
    @Test func aGeneratedColumnIsRefusedBeforeTheIntegrityCheck() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v2-coredata.sqlite"), to: folder.appendingPathComponent("s.db"))
        try sqlite(folder, "s.db", "ALTER TABLE ZNOTE ADD COLUMN ZBIG TEXT GENERATED ALWAYS AS (printf('%.*c', 300000000, 'x')) VIRTUAL")
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        for arguments in [["status", "s.db"], ["run", "--dry-run", "--to", "v3", "s.db"], ["dump", "s.db"]] {
            let result = try CLI.run(["-c", #"ulimit -v 1200000; "$MAPC" "$@""#, "sh"] + arguments, in: folder,
                                     environment: ["MAPC": CLI.executable.path], program: URL(fileURLWithPath: "/bin/sh"))
            #expect(result.status == 2 && result.stderr.contains("has generated columns (ZNOTE.ZBIG)") && result.stderr.contains("DROP COLUMN \"ZBIG\""), "\(arguments): \(result.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
    }

    /// A bidirectional control in a name (U+202E RIGHT-TO-LEFT OVERRIDE) was printed raw by
    /// `check` and `status`: a terminal reorders the text around it, showing a name or a line
    /// as other than it is. Shown as `<U+202E>`, the caret still under the name.
    @Test func bidirectionalControlsAreShownAsWhatTheyAre() throws {
        let folder = try CLI.project(versions: [("v1", "  Note:\n    attributes:\n      title: string\n  Ev\u{202E}il:\n    attributes:\n      x: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("Ev<U+202E>il") && !check.stderr.unicodeScalars.contains("\u{202E}"), "\(check.stderr)")
        let lines = check.stderr.components(separatedBy: "\n")
        if let quoted = lines.firstIndex(where: { $0.hasPrefix("  Ev<U+202E>il:") }), quoted + 1 < lines.count {
            #expect(lines[quoted + 1] == "  ^" + String(repeating: "~", count: "Ev<U+202E>il".count - 1), "\(lines[quoted + 1])")
        } else {
            Issue.record("no quoted line: \(check.stderr)")
        }
        // A table of the store named so, in `status`'s list of other tables.
        try folder.write("model: S\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: string\n", to: "schemas/v1.yaml")
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "CREATE TABLE \"Ev\u{202E}il\" (x)")
        let status = try CLI.run(["status", "s.db"], in: folder)
        #expect(status.stdout.contains("Ev<U+202E>il") && !status.stdout.unicodeScalars.contains("\u{202E}"), "\(status.stdout)")
    }

    /// A key path of thousands of keys (`$source.next.next…`) was parsed in time proportional to
    /// its square, the path copied at each key: 14 attributes of 12,900 keys took 14 s to check.
    @Test func aLongKeyPathIsParsedInLinearTime() throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Note:\n    attributes:\n      title: string?\n    relationships:\n      next: {destination: Note, inverse: prev, optional: true}\n      prev: {destination: Note, inverse: next, optional: true}\n"),
            ("v2", "  Note:\n    attributes:\n      title: string?\n" + (0..<14).map { "      x\($0): string?\n" }.joined()
                + "    relationships:\n      next: {destination: Note, inverse: prev, optional: true}\n      prev: {destination: Note, inverse: next, optional: true}\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let chain = "$source" + String(repeating: ".next", count: 12_900) + ".title"
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    attributes:\n"
                         + (0..<14).map { "      x\($0): \(chain)\n" }.joined(), to: "mappings/mapping_v1_to_v2.yaml")
        let started = Date()
        let check = try CLI.run(["check", "mappings/mapping_v1_to_v2.yaml"], in: folder)
        // Not a measure of speed: the quadratic parse took 14 s here.
        #expect(Date().timeIntervalSince(started) < 6)
        #expect(!check.stderr.contains("error:"), "\(check.stderr.prefix(600))")
    }

    /// An Xcode mapping model whose object graph lists one attribute mapping twice (`idrefs="z114
    /// z114"`) was refused with "duplicate key 'name'" in a mapping file that was never written:
    /// a relationship of the graph is a set, and the mapping is imported once.
    @Test func anIdListedTwiceInAMappingModelIsOneObject() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/xcode")
        #expect(try CLI.run(["import", fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path], in: folder).status == 0)
        let model = folder.appendingPathComponent("Twice.xcmappingmodel")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel"), to: model)
        let xml = model.appendingPathComponent("xcmapping.xml")
        try (try String(contentsOf: xml, encoding: .utf8)).replacingOccurrences(of: #"idrefs="z300 z301""#, with: #"idrefs="z300 z301 z300""#).write(to: xml, atomically: true, encoding: .utf8)
        let run = try CLI.run(["import", model.path], in: folder)
        #expect(run.status == 0 && !run.stderr.contains("duplicate key"), "\(run.stderr)")
    }
}
