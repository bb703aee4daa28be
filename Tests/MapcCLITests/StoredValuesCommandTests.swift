import Foundation
import Testing

/// What a store holds, as a user's commands meet it: text with NUL bytes or bytes that are not
/// UTF-8, dates no store should hold, keys at their limit and Core Data's key counters, through
/// `run` (compiled and interpreted), `dump`, `load` and `eval`.
@Suite("Stored values through the commands")
struct StoredValuesCommandTests {
    /// A project with the shipped schemas and mappings.
    private func project() throws -> URL {
        let folder = try CLI.project()
        try CLI.addMappingsAndPolicies(to: folder)
        return folder
    }

    /// A v2 UnCloudNotes store with one note whose body holds a NUL byte and whose title is not UTF-8.
    private func oddTextStore() throws -> URL {
        let folder = try project()
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n1","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n1.json")
        #expect(try CLI.run(["load", "n1.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "UPDATE Note SET body = 'abc' || char(0) || 'def', title = CAST(x'c328ff' AS TEXT)")
        return folder
    }

    @Test func textWithANulByteOrBytesThatAreNotUTF8SurvivesEveryCommand() throws {
        let folder = try oddTextStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = try sqliteOutput(folder, "s.db", "SELECT hex(title), hex(body) FROM Note")
        #expect(original == "C328FF|61626300646566")
        for (name, interpret) in [("c.db", false), ("i.db", true)] {
            try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent(name))
            let run = try CLI.run(["run", "--to", "v3", "--quiet"] + (interpret ? ["--interpret"] : []) + [name], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try sqliteOutput(folder, name, "SELECT hex(title), hex(body), typeof(title) FROM Note") == original + "|text", "\(name)")
        }
        // dump writes the NUL as JSON's \u0000 and the other bytes as base64; load gives them back.
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains(#""body": "abc\u0000def""#) && dump.stdout.contains(#""base64": "wyj/""#), "\(dump.stdout)")
        try folder.write(dump.stdout, to: "dump.json")
        #expect(try CLI.run(["load", "dump.json", "l.db"], in: folder).status == 0)
        #expect(try sqliteOutput(folder, "l.db", "SELECT hex(title), hex(body) FROM Note") == original)
        // eval shows them the same way, and refuses to read the bytes as characters, naming the object.
        #expect(try CLI.run(["eval", "--store", "s.db", "--entity", "Note", "$source.body"], in: folder).stdout.contains(#""abc\u0000def""#))
        let upper = try CLI.run(["eval", "--store", "s.db", "--entity", "Note", #"FUNCTION($source.title, "uppercaseString")"#], in: folder)
        #expect(upper.status == 1 && upper.stderr.contains("text whose bytes are not UTF-8 (C3 28 FF)") && upper.stderr.contains("Note 'n1'"), "\(upper.stderr)")
    }

    /// The shipped policy made an empty caption of a body that is not UTF-8 (it read text only):
    /// the caption is the body's beginning, byte for byte.
    @Test func theShippedPolicyKeepsABodyThatIsNotUTF8InTheCaption() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n1","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z","image":"iVBORw0KGgo="}]}}"#, to: "n1.json")
        #expect(try CLI.run(["load", "n1.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "UPDATE Note SET body = CAST(x'c328ff41' AS TEXT)")
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try sqliteOutput(folder, "s.db", "SELECT hex(caption), typeof(caption) FROM Attachment").trimmingCharacters(in: .whitespacesAndNewlines) == "C328FF41|text")
    }

    @Test func aMappingThatReadsSuchTextAsCharactersIsRefusedNamingTheObject() throws {
        let folder = try oddTextStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("""
            source: v2
            destination: v3
            entityMappings:
              - name: NoteToNote
                source: Note
                destination: Note
                attributes:
                  title: FUNCTION($source.title, "uppercaseString")
                  body: $source.body
                  dateCreated: $source.dateCreated
                  displayIndex: $source.displayIndex
            """, to: "mappings/mapping_v2_to_v3.yaml")
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        let run = try CLI.run(["run", "--to", "v3", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("Note 'n1'") && run.stderr.contains("not UTF-8"), "\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
    }

    @Test func aDateNoStoreHoldsIsRefusedByEveryCommandThatMeetsIt() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n1","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n1.json")
        for (name, format) in [("m.db", "mapc"), ("c.db", "core-data")] {
            #expect(try CLI.run(["load", "--layout", format, "n1.json", name], in: folder).status == 0)
            let column = format == "mapc" ? "dateCreated" : "ZDATECREATED"
            try sqlite(folder, name, "UPDATE \(format == "mapc" ? "Note" : "ZNOTE") SET \(column) = 1e300")
            let before = try Data(contentsOf: folder.appendingPathComponent(name))
            for interpret in [false, true] {
                let run = try CLI.run(["run", "--to", "v3", "--quiet"] + (interpret ? ["--interpret"] : []) + [name], in: folder)
                #expect(run.status != 0 && run.stderr.contains("outside the years 0001 to 9999"), "\(format) \(interpret): \(run.stdout)\(run.stderr)")
                #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == before)
            }
            #expect(try CLI.run(["dump", name], in: folder).status == 2)
            // Where the run stopped, in JSON and in words.
            let json = try CLI.run(["run", "--format", "json", "--to", "v4", name], in: folder)
            #expect(json.status == 2 && json.stdout.contains(#""failedStep""#), "\(json.stdout)")
            let failed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            let step = failed?["failedStep"] as? [String: Any]
            #expect(step?["number"] as? Int == 1 && step?["of"] as? Int == 2 && step?["step"] as? String == "v2 -> v3", "\(json.stdout)")
            #expect((failed?["seconds"] as? Double ?? 0) > 0, "\(json.stdout)")
            let text = try CLI.run(["run", "--quiet", "--to", "v4", name], in: folder)
            #expect(text.stderr.contains("was not changed (the run stopped in step 1 of 2, v2 -> v3)"), "\(text.stderr)")
            try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n2","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n2.json")
            let load = try CLI.run(["load", "n2.json", name], in: folder)
            #expect(load.status == 1 && load.stderr.contains("outside the years 0001 to 9999"), "\(load.stderr)")
        }
    }

    @Test func aStoreWhoseKeysAreAllUsedRefusesMoreObjectsWithoutATrap() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n1","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n1.json")
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n2","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n2.json")
        for (name, format, sql) in [("m.db", "mapc", "UPDATE Note SET _pk = 9223372036854775807"), ("c.db", "core-data", "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807")] {
            #expect(try CLI.run(["load", "--layout", format, "n1.json", name], in: folder).status == 0)
            try sqlite(folder, name, sql)
            let load = try CLI.run(["load", "n2.json", name], in: folder)
            #expect(load.status == 2 && load.stderr.contains("every key of table") && load.stderr.contains("is used"), "\(format): \(load.stderr)")
        }
    }

    /// An inferred step keeps every key, and Core Data's counter with them: the keys of deleted
    /// objects are not handed out again under the same store UUID.
    @Test func anInferredCoreDataStepKeepsTheKeyCounters() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = (1...5).map { #"{"id":"n\#($0)","title":"t","body":"b","dateCreated":"2024-01-01T00:00:00Z"}"# }.joined(separator: ",")
        try folder.write(#"{"version":"v1","objects":{"Note":[\#(notes)]}}"#, to: "v1.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "v1.json", "c.db"], in: folder).status == 0)
        try sqlite(folder, "c.db", "DELETE FROM ZNOTE WHERE Z_PK IN (4, 5)")
        #expect(try sqliteOutput(folder, "c.db", "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'") == "5")
        let run = try CLI.run(["run", "--to", "v2", "--quiet", "c.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try sqliteOutput(folder, "c.db", "SELECT max(Z_PK), Z_MAX FROM ZNOTE, Z_PRIMARYKEY WHERE Z_NAME = 'Note'") == "3|5")
        // A counter at the last key there is: kept as it is, without a trap (the store fuzz's find).
        #expect(try CLI.run(["load", "--layout", "core-data", "v1.json", "full.db"], in: folder).status == 0)
        try sqlite(folder, "full.db", "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807")
        let full = try CLI.run(["run", "--to", "v2", "--quiet", "full.db"], in: folder)
        #expect(full.status == 0, "\(full.stderr)")
        #expect(try sqliteOutput(folder, "full.db", "SELECT count(*), Z_MAX FROM ZNOTE, Z_PRIMARYKEY WHERE Z_NAME = 'Note'") == "5|9223372036854775807")
    }
}

/// The output of the sqlite3 shell for a query, trimmed.
func sqliteOutput(_ folder: URL, _ store: String, _ sql: String) throws -> String {
    let process = Process()
    let pipe = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", store, sql]
    process.currentDirectoryURL = folder
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// `load` and `run` hold a decimal to its bounds in the same exact order.
@Suite("Decimal bounds, load and run alike")
struct DecimalBoundsTests {
    @Test func aDecimalJustAboveItsMaxIsRefusedByLoadAndByRun() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: Shop\nversion: v1\nentities:\n  Item:\n    attributes:\n      amount: { type: decimal, max: 0.1 }\n", to: "schemas/v1.yaml")
        try folder.write("model: Shop\nversion: v2\nentities:\n  Item:\n    attributes:\n      amount: { type: decimal, max: 0.1 }\n      note: string?\n", to: "schemas/v2.yaml")
        try folder.write(#"{"version":"v1","objects":{"Item":[{"id":"i1","amount":"0.10000000000000000001"}]}}"#, to: "above.json")
        let load = try CLI.run(["load", "above.json", "above.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains("above max 0.1"), "\(load.stderr)")
        try folder.write(#"{"version":"v1","objects":{"Item":[{"id":"i1","amount":"0.1"}]}}"#, to: "at.json")
        // mapc's format keeps a decimal's digits (a Core Data store keeps what a double holds).
        #expect(try CLI.run(["load", "at.json", "at.db"], in: folder).status == 0)
        try sqlite(folder, "at.db", "UPDATE Item SET amount = '0.10000000000000000001'")
        let run = try CLI.run(["run", "--to", "v2", "at.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("above max 0.1"), "\(run.stderr)")
    }
}

/// A decimal written in a data file as a JSON number keeps every digit written, as a string does:
/// a number has no more digits than its text.
@Suite("Decimals written as JSON numbers")
struct DecimalNumbersInDataTests {
    @Test func everyDigitOfADecimalWrittenAsANumberIsKept() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: Shop\nversion: v1\nentities:\n  Item:\n    attributes:\n      amount: decimal\n      count: int64?\n      ratio: double?\n      small: int16?\n", to: "schemas/v1.yaml")
        let amounts = ["123456789012345678901234", "12345678901234567.89", "1234567890.123456789", "-0.10000000000000000001", "0.1", "1e-30", "2.5E+3"]
        // A double attribute takes such a number as a double does (0.10000000000000001 is 0.1); an
        // integer attribute reads its digits, so 1.000 is 1 (and 1.0000000000000001 is refused:
        // ValuesProbeDefectTests).
        let items = amounts.enumerated().map { #"{"id":"i\#($0.offset)","amount":\#($0.element),"small":1.000,"ratio":0.10000000000000001}"# }.joined(separator: ",")
        try folder.write(#"{"version":"v1","objects":{"Item":[\#(items)]}}"#, to: "numbers.json")
        let load = try CLI.run(["load", "numbers.json", "n.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        let dump = try CLI.run(["dump", "n.db"], in: folder)
        let expected = ["123456789012345678901234", "12345678901234567.89", "1234567890.123456789", "-0.10000000000000000001", "0.1", "0.000000000000000000000000000001", "2500"]
        for value in expected { #expect(dump.stdout.contains(#""amount": "\#(value)""#), "\(value) in \(dump.stdout)") }
        #expect(dump.stdout.contains(#""small": 1"# + "\n") && dump.stdout.contains(#""ratio": 0.1,"#), "\(dump.stdout)")
        // More digits than a decimal holds are refused, as in a string; a whole number beyond
        // 64 bits is named as written, not as the double it would round to.
        try folder.write(#"{"version":"v1","objects":{"Item":[{"id":"i1","amount":1.000000000000000000000000000000000000001},{"id":"i2","amount":1,"count":9223372036854775808}]}}"#, to: "long.json")
        let refused = try CLI.run(["load", "long.json", "l.db"], in: folder)
        #expect(refused.status == 1 && refused.stderr.contains("significant digits") && refused.stderr.contains("9223372036854775808") && !refused.stderr.contains("e+18"), "\(refused.stderr)")
    }
}

/// A store whose own bookkeeping is damaged is said to be damaged, not of an unknown version.
@Suite("Damaged stores")
struct DamagedStoreTests {
    @Test func aStoreWithDamagedMetadataIsSaidToBeDamagedNotUnknown() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n1","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n1.json")
        #expect(try CLI.run(["load", "n1.json", "s.db"], in: folder).status == 0)
        // The first cell pointer of the entity hashes' page points into the page's header.
        let page = try #require(Int(try sqliteOutput(folder, "s.db", "SELECT rootpage FROM sqlite_master WHERE name = '_mapc_entities'")))
        let size = try #require(Int(try sqliteOutput(folder, "s.db", "PRAGMA page_size")))
        let url = folder.appendingPathComponent("s.db")
        var bytes = try Data(contentsOf: url)
        bytes[(page - 1) * size + 8] = 0
        try bytes.write(to: url)
        for command in [["run", "s.db"], ["status", "s.db"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 2 && result.stderr.contains("is damaged") && result.stderr.contains("integrity check") && !result.stderr.contains("matches no version"),
                    "\(command): \(result.status) \(result.stderr)")
        }
        #expect(try Data(contentsOf: url) == bytes)
    }
}

/// A date a store cannot keep exactly is refused for what it is: a store keeps seconds in a
/// double, and the last microseconds of year 9999 round into year 10000.
@Suite("Dates at the end of year 9999")
struct LastDateTests {
    @Test func theLastMicrosecondOfYear9999IsRefusedAsAStoreCannotKeepIt() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: v1\nentities:\n  Pump:\n    attributes:\n      at: date\n", to: "schemas/v1.yaml")
        try folder.write(#"{"version":"v1","objects":{"Pump":[{"id":"p1","at":"9999-12-31T23:59:59.999999Z"}]}}"#, to: "late.json")
        let late = try CLI.run(["load", "late.json", "late.db"], in: folder)
        #expect(late.status == 1 && late.stderr.contains("seconds in a double") && late.stderr.contains("10000-01-01"), "\(late.stderr)")
        try folder.write(#"{"version":"v1","objects":{"Pump":[{"id":"p1","at":"9999-12-31T23:59:59.99996Z"}]}}"#, to: "last.json")
        let last = try CLI.run(["load", "last.json", "last.db"], in: folder)
        #expect(last.status == 0, "\(last.stderr)")
    }
}
