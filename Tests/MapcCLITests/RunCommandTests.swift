import Foundation
import GRDB
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let fixtures = CLI.packageRoot.appendingPathComponent("Tests/MapcCLITests/Fixtures")

/// A project folder with the shipped schemas and mappings.
private func project() throws -> URL {
    let folder = try CLI.project()
    try CLI.addMappingsAndPolicies(to: folder)
    return folder
}

private func bytes(_ folder: URL, _ name: String) throws -> Data {
    try Data(contentsOf: folder.appendingPathComponent(name))
}

/// The files' SHA-256 digests, read by another process: a file this process opens and closes
/// releases every POSIX lock the process holds on it, SQLite's included.
private func digests(_ folder: URL, _ names: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = names
    process.currentDirectoryURL = folder
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self)
}

/// A v2 store of `count` notes, every third with a PNG image.
private func makeV2Store(_ folder: URL, count: Int, name: String = "notes.db") throws {
    var notes: [String] = []
    for index in 0..<count {
        let image = index % 3 == 0 ? "\"iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA=\"" : "null"
        notes.append(#"{"id": "n\#(index)", "title": "Note \#(index)", "body": "Body \#(index)", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": \#(index), "image": \#(image)}"#)
    }
    try folder.write(#"{"version": "v2", "objects": {"Note": [\#(notes.joined(separator: ",\n"))]}}"#, to: "\(name).json")
    let loaded = try CLI.run(["load", "\(name).json", name], in: folder)
    #expect(loaded.status == 0, "\(loaded.stderr)")
}

@Suite("mapc run", .serialized)
struct RunCommandTests {
    @Test func bothUnCloudNotesStepsGiveTheExpectedData() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["load", fixtures.appendingPathComponent("uncloudnotes-v2.json").path, "store.db"], in: folder).status == 0)
        let first = try CLI.run(["run", "--from", "v2", "--to", "v3", "store.db"], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("migrated store.db from v2 to v3"))
        #expect(first.stdout.contains("NoteToAttachment  3 objects created"))
        #expect(try CLI.run(["dump", "store.db"], in: folder).stdout == String(contentsOf: fixtures.appendingPathComponent("expected-v3.json"), encoding: .utf8))
        let second = try CLI.run(["run", "--from", "v3", "--to", "v4", "store.db"], in: folder)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try CLI.run(["dump", "store.db"], in: folder).stdout == String(contentsOf: fixtures.appendingPathComponent("expected-v4.json"), encoding: .utf8))
        #expect(try CLI.run(["status", "store.db"], in: folder).stdout.contains("compatible  v4"))
        // What a killed run left beside the store goes with the next run, even one with nothing to do.
        try folder.write("partial", to: ".store.db.mapc-1234-5678.tmp")
        let again = try CLI.run(["run", "--to", "v4", "store.db"], in: folder)
        #expect(again.status == 0 && again.stdout.contains("already at v4; nothing to do"))
        #expect(!folder.exists(".store.db.mapc-1234-5678.tmp"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp") || $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// `plan` checks the mapping files as `run` would: a step naming a policy this mapc does not
    /// have is reported by both, with where to put the policy.
    @Test func planReportsAnUnknownPolicyAsRunDoes() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 3)
        #expect(try CLI.run(["run", "--to", "v3", "notes.db"], in: folder).status == 0)
        let mapping = try String(contentsOf: CLI.packageRoot.appendingPathComponent("mappings/mapping_v3_to_v4.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4", with: "UnCloudNotes.CaptionPolicy")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write(mapping, to: "mappings/mapping_v3_to_v4.yaml")
        let before = try Data(contentsOf: folder.appendingPathComponent("notes.db"))
        for command in ["plan", "run"] {
            let result = try CLI.run([command, "--to", "v4", "notes.db"], in: folder)
            #expect(result.status == 1, "\(command): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("unknown policy 'UnCloudNotes.CaptionPolicy'"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("policies/CaptionPolicy.swift"), "\(command): \(result.stderr)")
            #expect(!result.stdout.contains("v3 -> v4"), "\(command): no plan is shown that cannot run: \(result.stdout)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("notes.db")) == before)
        // From v2, the steps before the one that cannot run are ready, and the message says how far the store can go now.
        try makeV2Store(folder, count: 3, name: "older.db")
        let older = try CLI.run(["run", "--to", "v4", "older.db"], in: folder)
        #expect(older.status == 1 && older.stderr.contains("note: the steps before v3 -> v4 are ready: the store can be migrated to v3 now (`mapc run --to v3`"), "\(older.stderr)")
    }

    /// A mapping with nothing to migrate gets one progress line per phase, not the same line at
    /// its start and at its end.
    @Test func progressOfAnEmptyMappingIsOneLine() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 0)
        let run = try CLI.run(["run", "--to", "v4", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.contains { $0.hasSuffix("[create] NoteToAttachment 0 objects") }, "\(run.stderr)")
        #expect(zip(lines, lines.dropFirst()).allSatisfy { $0 != $1 }, "\(run.stderr)")
    }

    @Test func progressAndJSONSummary() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 30)
        let run = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status == 0)
        #expect(run.stderr.contains("[create] NoteToNote 100% 30/30"), "plain progress lines when standard error is not a terminal: \(run.stderr)")
        #expect(run.stderr.contains("[create] NoteToAttachment"))
        #expect(run.stderr.contains("[validate] the migrated store is valid"))
        let json = try CLI.run(["run", "--to", "v4", "--format", "json", "notes.db"], in: folder)
        #expect(json.status == 0)
        let parsed = try JSONValue.parse(Data(json.stdout.utf8), path: "summary")
        #expect(parsed["created"]?["AttachmentToImageAttachment"] == .integer(10))
        #expect(parsed["objects"]?["ImageAttachment"] == .integer(10))
        #expect(json.stderr.isEmpty, "no progress with --format json")
    }

    @Test func dryRunOutputAndBackupLeaveTheOriginalAlone() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 12)
        let original = try bytes(folder, "notes.db")
        let dry = try CLI.run(["run", "--dry-run", "--to", "v3", "notes.db"], in: folder)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("dry run: notes.db would migrate from v2 to v3"))
        #expect(try bytes(folder, "notes.db") == original)
        let output = try CLI.run(["run", "--to", "v3", "--output", "migrated.db", "notes.db"], in: folder)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try bytes(folder, "notes.db") == original)
        #expect(try CLI.run(["status", "migrated.db"], in: folder).stdout.contains("compatible  v3"))
        #expect(try CLI.run(["run", "--to", "v3", "--output", "migrated.db", "notes.db"], in: folder).status == 2, "--output never overwrites")
        let backup = try CLI.run(["run", "--to", "v3", "--keep-backup", "notes.db"], in: folder)
        #expect(backup.status == 0)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("notes.db.backup-v2-") })
        #expect(try bytes(folder, name) == original)
        #expect(try CLI.run(["status", "notes.db"], in: folder).stdout.contains("compatible  v3"))
    }

    @Test func wrongVersionsAndMissingMappingsAreRefusedBeforeAnythingRuns() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 3)
        let original = try bytes(folder, "notes.db")
        let wrongFrom = try CLI.run(["run", "--from", "v1", "--to", "v3", "notes.db"], in: folder)
        #expect(wrongFrom.status == 2)
        #expect(wrongFrom.stderr.contains("notes.db is at version v2, not v1 (checked by its hashes)"))
        let backwards = try CLI.run(["run", "--to", "v1", "notes.db"], in: folder)
        #expect(backwards.status == 2)
        #expect(backwards.stderr.contains("cannot migrate from v2 down to v1: a downgrade runs only with a mapping file"), "\(backwards.stderr)")
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "image: $source.image", with: "image: $source.imag"), to: "mappings/mapping_v2_to_v3.yaml")
        let invalid = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(invalid.status == 1)
        #expect(invalid.stderr.contains("mapping_v2_to_v3.yaml:24:22: error: unknown key 'imag' on Note; did you mean 'image'?"), "\(invalid.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"))
        // A v5 whose step from v4 is neither mapped nor inferable: refused before anything runs.
        try folder.write(try folder.read("schemas/v4.yaml").replacingOccurrences(of: "version: v4", with: "version: v5").replacingOccurrences(of: "title:        { type: string }", with: "title:        { type: int64 }"), to: "schemas/v5.yaml")
        try folder.write("versions: [v1, v2, v3, v4, v5]\n", to: "schemas/versions.yaml")
        let notInferable = try CLI.run(["run", "notes.db"], in: folder)
        #expect(notInferable.status == 2)
        #expect(notInferable.stderr.contains("cannot migrate from v4 to v5: no mapping file for the step and it cannot be inferred"), "\(notInferable.stderr)")
        #expect(notInferable.stderr.contains("Note.title: type change string -> int64 can lose data"))
        let plan = try CLI.run(["plan", "--to", "v4", "notes.db"], in: folder)
        #expect(plan.stdout == "notes.db is at v2; 2 steps to v4:\n  1. v2 -> v3 (inferred, drops Note.image)\n  2. v3 -> v4 (mapping mapping_v3_to_v4.yaml)\n")
        #expect(try bytes(folder, "notes.db") == original)
    }

    @Test func anExpressionErrorOnTheThousandthObjectChangesNothing() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 1_500)
        let original = try bytes(folder, "notes.db")
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "displayIndex: $source.displayIndex", with: "displayIndex: modulus:by:(1000, $source.displayIndex - 999)"), to: "mappings/mapping_v2_to_v3.yaml")
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status == 3)
        #expect(run.stderr.contains("error: modulus by zero"), "\(run.stderr)")
        #expect(run.stderr.contains("while mapping 'NoteToNote', property 'displayIndex', source object Note 'n999'"))
        #expect(run.stderr.contains("^~~~"), "the error points into the mapping file")
        #expect(run.stderr.contains("notes.db was not changed"))
        #expect(try bytes(folder, "notes.db") == original)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty)
    }

    /// A value the destination cannot hold (a fraction for an integer attribute) is located in the
    /// mapping file like an expression error: file:line:col and the expression underlined.
    @Test func aValueThatDoesNotFitIsLocatedInTheMappingFile() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 10)
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "displayIndex: $source.displayIndex", with: "displayIndex: $source.displayIndex / 2.5"), to: "mappings/mapping_v2_to_v3.yaml")
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status == 3)
        #expect(run.stderr.contains("mappings/mapping_v2_to_v3.yaml:16:21: error: Note 'n1': 0.4 has a fraction"), "\(run.stderr)")
        #expect(run.stderr.contains("while mapping 'NoteToNote', property 'displayIndex'") && run.stderr.contains("^~~~"), "\(run.stderr)")
        // Through v4 too, though NoteToNote is also the v3 -> v4 file's: the failing step's file is named.
        let chain = try CLI.run(["run", "--quiet", "notes.db"], in: folder)
        #expect(chain.status == 3 && chain.stderr.contains("mappings/mapping_v2_to_v3.yaml:16:21: error: Note 'n1': 0.4 has a fraction"), "\(chain.stderr)")
    }

    /// `--output` on a store already at the version asked for writes the store there unchanged:
    /// the output holds that version either way (it was ignored, leaving no file).
    @Test func outputOfAStoreAlreadyAtItsVersionIsACopy() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 4)
        let before = try bytes(folder, "notes.db")
        let text = try CLI.run(["run", "--to", "v2", "--output", "copy.db", "notes.db"], in: folder)
        #expect(text.status == 0 && text.stdout.contains("notes.db is already at v2; copied it to copy.db unchanged"), "\(text.stdout)\(text.stderr)")
        #expect(try bytes(folder, "notes.db") == before)
        let status = try CLI.run(["status", "copy.db"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("v2"), "\(status.stdout)\(status.stderr)")
        #expect(try CLI.run(["dump", "copy.db"], in: folder).stdout == CLI.run(["dump", "notes.db"], in: folder).stdout)
        let json = try CLI.run(["run", "--to", "v2", "--output", "again.db", "--format", "json", "notes.db"], in: folder)
        let report = try JSONValue.parse(Data(json.stdout.utf8), path: "stdout")
        #expect(report["result"] == .string("current") && report["output"] == .string("again.db"), "\(json.stdout)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("again.db").path))
        // An existing output is not overwritten.
        let refused = try CLI.run(["run", "--to", "v2", "--output", "copy.db", "notes.db"], in: folder)
        #expect(refused.status != 0, "\(refused.stdout)")
    }

    /// The text summary says what ran as SQL: a mapping's objects, or only its relationships.
    @Test func theSummarySaysWhenOnlyRelationshipsRanAsSQL() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 9)
        // An expression the SQL compiler leaves to the interpreter: the attachments' objects are
        // interpreted. Their mapping comes first, so its lookup of NoteToNote's objects waits for
        // phase 2 (the interpreter writes a lookup of an earlier mapping with the rows), where SQL sets it.
        let shipped = try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "      dateCreated: $source.dateCreated\n    relationships:", with: "      dateCreated: FUNCTION($source, \"valueForKey:\", \"dateCreated\")\n    relationships:")
        let noteToNote = try #require(shipped.range(of: "  - name: NoteToNote\n")), noteToAttachment = try #require(shipped.range(of: "  - name: NoteToAttachment\n"))
        try folder.write(String(shipped[..<noteToNote.lowerBound]) + shipped[noteToAttachment.lowerBound...] + shipped[noteToNote.lowerBound..<noteToAttachment.lowerBound], to: "mappings/mapping_v2_to_v3.yaml")
        let json = try CLI.run(["run", "--format", "json", "--dry-run", "--to", "v3", "notes.db"], in: folder)
        #expect(json.status == 0, "\(json.stderr)")
        let compiled = try JSONValue.parse(Data(json.stdout.utf8), path: "stdout")["compiled"]
        #expect(compiled == .array([.string("NoteToNote"), .string("NoteToAttachment.relationships")]), "\(json.stdout)")
        let text = try CLI.run(["run", "--quiet", "--dry-run", "--to", "v3", "notes.db"], in: folder)
        #expect(text.stdout.contains("NoteToNote        9 objects created (SQL)"), "\(text.stdout)")
        #expect(text.stdout.contains("NoteToAttachment  3 objects created (relationships in SQL)"), "\(text.stdout)")
    }

    @Test func aValidationFailureChangesNothing() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 40)
        let original = try bytes(folder, "notes.db")
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "      title: $source.title", with: "      title: TERNARY($source.displayIndex == 7, nil, $source.title)"), to: "mappings/mapping_v2_to_v3.yaml")
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status == 3)
        #expect(run.stderr.contains("Note 'n7', property 'title': required value missing (value: nil) [created by mapping 'NoteToNote']"), "\(run.stderr)")
        // Where the broken property gets its value: the expression in the mapping file.
        #expect(run.stderr.contains("mappings/mapping_v2_to_v3.yaml:13:14: note: 'title' of the objects 'NoteToNote' creates comes from TERNARY($source.displayIndex == 7, nil, $source.title)"), "\(run.stderr)")
        #expect(try bytes(folder, "notes.db") == original)
    }

    /// With `--format json` a failed run still prints a JSON object (the store, `failed`, the error
    /// and the exit status), as a folder of stores does for each store: a tool reading standard
    /// output always gets JSON. The error is written to standard error too.
    @Test func aFailedRunWithJSONOutputPrintsJSON() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 40)
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "      title: $source.title", with: "      title: TERNARY($source.displayIndex == 7, nil, $source.title)"), to: "mappings/mapping_v2_to_v3.yaml")
        // Once the plan is made, the failure names its versions and steps, as a success does;
        // before, the versions asked for.
        let planned: [(from: JSONValue, to: JSONValue, steps: Int64)] = [(.string("v2"), .string("v3"), 1), (.null, .string("v9"), 0)]
        for ((arguments, status, message), plan) in zip([(["--to", "v3"], 3, "required value missing"), (["--to", "v9"], 2, "v9")], planned) {
            let run = try CLI.run(["run", "--format", "json"] + arguments + ["notes.db"], in: folder)
            #expect(run.status == Int32(status))
            let parsed = try JSONValue.parse(Data(run.stdout.utf8), path: "stdout")
            #expect(parsed["store"] == .string("notes.db") && parsed["result"] == .string("failed") && parsed["exitCode"] == .integer(Int64(status)), "\(run.stdout)")
            #expect(parsed["from"] == plan.from && parsed["to"] == plan.to && parsed["steps"] == .integer(plan.steps), "\(run.stdout)")
            guard case .string(let error)? = parsed["error"] else { Issue.record("no error in \(run.stdout)"); continue }
            #expect(error.contains(message) && run.stderr.contains(message), "\(error)")
        }
    }

    /// With `--format json`, a store already at the version asked for is a JSON object too (as a
    /// folder of stores reports it: `current`), not a sentence.
    @Test func aStoreAlreadyThereWithJSONOutputPrintsJSON() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 3)
        let run = try CLI.run(["run", "--format", "json", "--to", "v2", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let parsed = try JSONValue.parse(Data(run.stdout.utf8), path: "stdout")
        #expect(parsed["store"] == .string("notes.db") && parsed["result"] == .string("current"), "\(run.stdout)")
        #expect(parsed["from"] == .string("v2") && parsed["to"] == .string("v2") && parsed["steps"] == .integer(0) && parsed["exitCode"] == .integer(0), "\(run.stdout)")
    }

    @Test func aKilledMigrationLeavesTheStoreWholeAndTheNextRunCleansUp() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 12_000)
        let original = try bytes(folder, "notes.db")
        var killedMidway = 0
        for delay in [0.05, 0.25, 0.6] {
            let process = Process()
            process.executableURL = CLI.executable
            // The interpreter path takes long enough for kills to land mid-run.
            process.arguments = ["run", "--quiet", "--interpret", "--to", "v3", "notes.db"]
            process.currentDirectoryURL = folder
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            let stillRunning = process.isRunning
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let now = try bytes(folder, "notes.db")
            if now == original {
                if stillRunning { killedMidway += 1 }
                continue
            }
            // Killed after the atomic rename: the store must then be complete and valid at v3.
            let status = try CLI.run(["status", "notes.db"], in: folder)
            #expect(status.stdout.contains("compatible  v3") && status.stdout.contains("  Note        12000"), "\(status.stdout)")
            break
        }
        #expect(killedMidway > 0, "at least one kill must land during the migration for this test to mean anything")
        if try bytes(folder, "notes.db") == original {
            let finish = try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder)
            #expect(finish.status == 0, "\(finish.stderr)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty, "the next run removes what killed runs left: \(leftovers)")
        #expect(try CLI.run(["status", "notes.db"], in: folder).stdout.contains("compatible  v3"))
    }

    @Test func compiledAndInterpretedRunsGiveTheSameStore() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["load", fixtures.appendingPathComponent("uncloudnotes-v2.json").path, "a.db"], in: folder).status == 0)
        try makeV2Store(folder, count: 500, name: "b.db")
        // A filter and expressions inside the compiled subset, with nil and number semantics to agree on.
        try folder.write(try folder.read("mappings/mapping_v2_to_v3.yaml").replacingOccurrences(of: "filter: image != nil", with: "filter: NOT (image == nil OR displayIndex > 400) AND TRUEPREDICATE"), to: "mappings/mapping_v2_to_v3.yaml")
        for store in ["a.db", "b.db"] {
            try FileManager.default.copyItem(at: folder.appendingPathComponent(store), to: folder.appendingPathComponent("slow-" + store))
            let compiled = try CLI.run(["run", "--format", "json", "--to", "v3", store], in: folder)
            #expect(compiled.stdout.contains(#""compiled": ["NoteToNote", "NoteToAttachment", "NoteToAttachment.relationships"]"#), "\(compiled.stdout)")
            let interpreted = try CLI.run(["run", "--format", "json", "--interpret", "--to", "v3", "slow-" + store], in: folder)
            #expect(interpreted.stdout.contains(#""compiled": []"#))
            let fast = try CLI.run(["dump", store], in: folder).stdout, slow = try CLI.run(["dump", "slow-" + store], in: folder).stdout
            #expect(fast == slow)
            #expect(fast.contains("\"Attachment\""))
        }
        #expect(!(try CLI.run(["dump", "b.db"], in: folder).stdout.contains("n402.NoteToAttachment")), "the filter excluded it")
    }

    @Test func twoMigrationsOfOneStoreCannotRunAtOnce() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 3)
        let lockPath = folder.appendingPathComponent("notes.db.mapc-lock").path
        let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o644)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let blocked = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(blocked.status == 2)
        #expect(blocked.stderr.contains("another mapc command is writing notes.db"), "\(blocked.stderr)")
        // Reached through a link, the lock named is the one there is, beside the real store (it
        // named `link.db.mapc-lock`, which does not exist; the README says a lock is harmless to delete).
        #expect(symlink("notes.db", folder.appendingPathComponent("link.db").path) == 0)
        let linked = try CLI.run(["run", "--to", "v3", "link.db"], in: folder)
        #expect(linked.status == 2 && linked.stderr.contains("\(Files.realPath(lockPath)) is locked"), "\(linked.stderr)")
        flock(descriptor, LOCK_UN)
        close(descriptor)
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder).status == 0)
    }

    /// An app in the middle of reading a rollback-journal store (a read transaction: SQLite's
    /// shared lock) would go on reading the old, unlinked file: the replacement takes SQLite's
    /// exclusive lock first, so such a reader makes the run stop as "in use", the store unchanged.
    @Test func aReaderInATransactionOnARollbackStoreStopsTheReplacement() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 3)
        let before = try bytes(folder, "notes.db")
        let reader = try DatabaseQueue(path: folder.appendingPathComponent("notes.db").path)
        let run = try reader.read { db -> CLIResult in
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM Note")
            return try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder)
        }
        try reader.close()
        #expect(run.status == 2 && run.stderr.contains("notes.db is in use"), "\(run.stderr)")
        #expect(try bytes(folder, "notes.db") == before)
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "notes.db"], in: folder).status == 0, "once the reader is gone")
    }

    @Test func aStoreWithAnUncheckpointedWriteAheadLogMigratesWithItsLatestData() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let catalog = try SchemaCatalog(directory: folder.appendingPathComponent("schemas").path)
        let v2 = try catalog.require(version: "v2")
        let live = try Store.create(at: folder.appendingPathComponent("live.db").path, schema: v2)
        _ = try live.database.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode=WAL") }
        try live.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint=0") }
        try live.insert((0..<25).map { ObjectData(id: "n\($0)", entity: "Note", attributes: ["title": .string("t"), "body": .string("b"), "dateCreated": .date(Date()), "displayIndex": .integer(Int64($0))]) })
        // While the app still has it open, mapc must refuse to swap the file under it, and leave
        // both of its files as they were (the log not folded in: the run said "not changed").
        // (Read by another process: closing a file this process opened would drop its SQLite locks.)
        let before = try digests(folder, ["live.db", "live.db-wal"])
        let inUse = try CLI.run(["run", "--quiet", "--to", "v3", "live.db"], in: folder)
        #expect(inUse.status == 2, "\(inUse.stderr)")
        #expect(inUse.stderr.contains("live.db is in use"), "\(inUse.stderr)")
        #expect(try digests(folder, ["live.db", "live.db-wal"]) == before, "the store's files changed")
        // A dry run says so too, rather than "would migrate" for a run that would be refused.
        let dryRun = try CLI.run(["run", "--dry-run", "--to", "v3", "live.db"], in: folder)
        #expect(dryRun.status == 2 && dryRun.stderr.contains("live.db is in use") && dryRun.stderr.contains("a run would be refused"), "\(dryRun.stdout)\(dryRun.stderr)")
        #expect(try digests(folder, ["live.db", "live.db-wal"]) == before, "the dry run changed the store's files")
        // Written to a new file, the store is not replaced: its holder does not matter.
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "--output", "out.db", "live.db"], in: folder).status == 0)
        // A copy with its -wal (as a crashed app leaves it) migrates with every object, and no stale -wal survives.
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: folder.appendingPathComponent("live.db").path + suffix, toPath: folder.appendingPathComponent("copy.db").path + suffix)
        }
        try live.database.close()
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "copy.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("copy.db-wal").path))
        // The migrated store keeps the mode its file had: an app that does not set it finds WAL.
        let mode = try DatabaseQueue(path: folder.appendingPathComponent("copy.db").path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        #expect(try CLI.run(["status", "copy.db"], in: folder).stdout.contains("  Note        25"))
    }
}

@Suite("mapc run on many stores", .serialized)
struct ManyStoresTests {
    /// A UUID widened to a string in a Core Data store, where it is kept as 16 bytes: the compiled
    /// path and the interpreter give the same text (the compiled one copied the bytes, and failed).
    @Test func aUUIDBecomesTheSameStringOnEveryPath() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("ids"), withIntermediateDirectories: true)
        try folder.write("model: I\nversion: u1\nentities:\n  Item:\n    attributes: { u: uuid? }\n", to: "ids/u1.yaml")
        try folder.write("model: I\nversion: u2\nentities:\n  Item:\n    attributes: { u: string? }\n", to: "ids/u2.yaml")
        try folder.write("versions: [u1, u2]\n", to: "ids/versions.yaml")
        try folder.write(#"{"version": "u1", "objects": {"Item": [{"id": "i1", "u": "6f9619ff-8b86-d011-b42d-00c04fc964ff"}, {"id": "i2"}]}}"#, to: "u.json")
        for (name, extra) in [("compiled.db", [String]()), ("interpreted.db", ["--interpret"])] {
            #expect(try CLI.run(["load", "--schemas", "ids", "--layout", "core-data", "u.json", name], in: folder).status == 0)
            let run = try CLI.run(["run", "--quiet", "--schemas", "ids", "--mappings", "ids"] + extra + [name], in: folder)
            #expect(run.status == 0, "\(name): \(run.stderr)")
        }
        let compiled = try CLI.run(["dump", "--schemas", "ids", "compiled.db"], in: folder).stdout
        #expect(compiled == (try CLI.run(["dump", "--schemas", "ids", "interpreted.db"], in: folder).stdout) && compiled.contains(#""u": "6f9619ff-8b86-d011-b42d-00c04fc964ff""#), "\(compiled)")
    }

    /// Core Data keeps a to-many without an inverse as one key on each object it leads to: a
    /// second owner would take the first's link away. `load` and an inferred step that turns a
    /// shared to-one into such a to-many refuse it, saying why, where both dropped a link silently.
    @Test func aToManyWithoutAnInverseKeptAsOneKeyRefusesASecondOwner() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        func schema(_ version: String, _ tag: String) -> String {
            "model: T\nversion: \(version)\nentities:\n  Note:\n    attributes: { text: string }\n    relationships:\n      tag: { destination: Tag, optional: true\(tag) }\n  Tag:\n    attributes: { name: string }\n"
        }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("tags"), withIntermediateDirectories: true)
        try folder.write(schema("e1", ""), to: "tags/e1.yaml")
        try folder.write(schema("e2", ", toMany: true"), to: "tags/e2.yaml")
        try folder.write("versions: [e1, e2]\n", to: "tags/versions.yaml")
        try folder.write(#"{"version": "e2", "objects": {"Note": [{"id": "n1", "text": "a", "tag": ["t0"]}, {"id": "n2", "text": "b", "tag": ["t0"]}], "Tag": [{"id": "t0", "name": "x"}]}}"#, to: "e2.json")
        let load = try CLI.run(["load", "--schemas", "tags", "--layout", "core-data", "e2.json", "e2.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains("Tag 't0' is linked from Note 'n1' already, and a to-many without an inverse is kept as one key on each Tag") && !folder.exists("e2.db"), "\(load.stderr)")
        // The same data at e1 (a to-one each), migrated: refused, the store unchanged.
        try folder.write(#"{"version": "e1", "objects": {"Note": [{"id": "n1", "text": "a", "tag": "t0"}, {"id": "n2", "text": "b", "tag": "t0"}], "Tag": [{"id": "t0", "name": "x"}]}}"#, to: "e1.json")
        #expect(try CLI.run(["load", "--schemas", "tags", "--layout", "core-data", "e1.json", "e1.db"], in: folder).status == 0)
        let before = try bytes(folder, "e1.db")
        let run = try CLI.run(["run", "--schemas", "tags", "--mappings", "tags", "e1.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("mapping 'NoteToNote'") && run.stderr.contains("is linked from Note 'Note/p1' already"), "\(run.stderr)")
        #expect(try bytes(folder, "e1.db") == before)
        // A to-many whose to-one inverse is the key is set from both sides, as a mapping says:
        // a many-to-many made one-to-many, both sides mapped, runs (a first version refused it).
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("pairs/mappings"), withIntermediateDirectories: true)
        let pair = { (version: String, toMany: String) in
            "model: P\nversion: \(version)\nentities:\n  Note:\n    attributes: { text: string }\n    relationships:\n      tags: { destination: Tag, inverse: notes, optional: true\(toMany) }\n"
                + "  Tag:\n    attributes: { name: string }\n    relationships:\n      notes: { destination: Note, toMany: true, inverse: tags, optional: true }\n"
        }
        try folder.write(pair("v1", ", toMany: true"), to: "pairs/v1.yaml")
        try folder.write(pair("v2", ""), to: "pairs/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "pairs/versions.yaml")
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes: { text: $source.text }
            relationships: { tags: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TagToTag", $source.tags)[FIRST]' }
          - name: TagToTag
            source: Tag
            destination: Tag
            attributes: { name: $source.name }
            relationships: { notes: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source.notes)' }

        """, to: "pairs/mappings/m.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "text": "a", "tags": ["t1", "t2"]}], "Tag": [{"id": "t1", "name": "x"}, {"id": "t2", "name": "y"}]}}"#, to: "p.json")
        for layout in ["core-data", "mapc"] {
            #expect(try CLI.run(["load", "--schemas", "pairs", "--layout", layout, "p.json", "\(layout).db"], in: folder).status == 0)
            let both = try CLI.run(["run", "--quiet", "--schemas", "pairs", "--mappings", "pairs/mappings", "\(layout).db"], in: folder)
            #expect(both.status == 0, "\(layout): \(both.stderr)")
        }
    }

    /// An empty file is named as such, not as a SQLite database without mapc's tables.
    @Test func anEmptyFileIsSaidToBeEmpty() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("", to: "empty.db")
        for command in [["status", "empty.db"], ["run", "empty.db"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 2 && result.stderr.contains("empty.db is empty (0 bytes): not a store"), "\(command): \(result.stderr)")
        }
    }

    /// A dry run of several stores migrates none: its JSON counts them as `wouldMigrate`.
    @Test func aDryRunOfSeveralStoresCountsWhatWouldMigrate() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeV2Store(folder, count: 2, name: "a.db")
        try makeV2Store(folder, count: 2, name: "b.db")
        let run = try CLI.run(["run", "--dry-run", "--format", "json", "--to", "v3", "a.db", "b.db"], in: folder)
        let report = try JSONValue.parse(Data(run.stdout.utf8), path: "stdout")
        #expect(run.status == 0 && report["migrated"] == .integer(0) && report["wouldMigrate"] == .integer(2), "\(run.stdout)")
    }

    /// The table of a run over many stores shows version names whole, however long (it cut them
    /// at 20 characters: "Journal 2 -> Journal" read as a step back to the first version).
    @Test func theTableOfManyStoresShowsLongVersionNamesWhole() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: J\nversion: Journal 2\nentities:\n  Note:\n    attributes:\n      title: string\n", to: "schemas/j2.yaml")
        try folder.write("model: J\nversion: Journal 4\nentities:\n  Note:\n    attributes:\n      title: string\n      body: string?\n", to: "schemas/j4.yaml")
        try folder.write("versions: [Journal 2, Journal 4]\n", to: "schemas/versions.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        for name in ["a", "b"] {
            let made = try CLI.run(["init", "--schema", "Journal 2", "stores/\(name).db"], in: folder)
            try #require(made.status == 0, "\(made.stderr)")
        }
        let run = try CLI.run(["run", "--quiet", "stores"], in: folder)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let rows = run.stdout.split(separator: "\n").filter { $0.hasPrefix("stores/") }
        #expect(rows.count == 2 && rows.allSatisfy { $0.contains("migrated") && $0.contains("Journal 2 -> Journal 4") }, "\(run.stdout)")
        let header = try #require(run.stdout.split(separator: "\n").first)
        // A store's name outside the Basic Multilingual Plane is not cut either.
        try FileManager.default.copyItem(at: folder.appendingPathComponent("stores/a.db"), to: folder.appendingPathComponent("stores/📷📷📷📷📷📷.db"))
        let emoji = try CLI.run(["run", "--quiet", "--dry-run", "stores/📷📷📷📷📷📷.db", "stores/b.db"], in: folder)
        #expect(emoji.stdout.contains("stores/📷📷📷📷📷📷.db  "), "\(emoji.stdout)")
        #expect(rows.allSatisfy { $0.range(of: "Journal 2")?.lowerBound.utf16Offset(in: $0) == header.range(of: "versions")?.lowerBound.utf16Offset(in: header) }, "columns line up: \(run.stdout)")
    }

    /// A store reached by several names (a link in the folder, the same path twice) is migrated
    /// once (a hard link is refused: FleetProbeDefectTests), not reported as failed by its second name; a file that is not SQLite is named, not
    /// silently left out.
    @Test func aStoreNamedTwiceIsMigratedOnceAndSkippedFilesAreNamed() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        try makeV2Store(folder, count: 4, name: "stores/a.db")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("stores/b.db").path, withDestinationPath: "a.db")
        try folder.write("not a store", to: "stores/c.txt")
        #expect(mkfifo(folder.appendingPathComponent("stores/pipe").path, 0o644) == 0)
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "stores", "stores/a.db", "./stores/a.db"], in: folder)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("1 store: 1 migrated, 0 current, 0 failed"), "\(run.stdout)")
        #expect(run.stderr.contains("note: stores/b.db is the same store as stores/a.db; it is worked on once"), "\(run.stderr)")
        #expect(run.stderr.contains("note: stores/a.db is named more than once") && !run.stderr.contains("a.db is the same store as stores/a.db"), "\(run.stderr)")
        #expect(run.stderr.contains("note: passed over stores/c.txt: it does not start with SQLite's header"), "\(run.stderr)")
        #expect(run.stderr.contains("note: passed over stores/pipe: it is a pipe (FIFO)"), "not opened, which would wait forever: \(run.stderr)")
    }

    /// A file that looks like a store (by its name, or SQLite's header) and cannot be read is a
    /// failure, not a file passed over; every file passed over is listed, JSON included.
    @Test func aDamagedStoreInAFolderFailsAndEveryFilePassedOverIsListed() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        try makeV2Store(folder, count: 4, name: "stores/a.db")
        try makeV2Store(folder, count: 4, name: "stores/b.db")
        let handle = try FileHandle(forWritingTo: folder.appendingPathComponent("stores/b.db"))
        try handle.write(contentsOf: Data(repeating: 0x58, count: 16))
        try handle.close()
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("stores/gone.sqlite").path, withDestinationPath: "nowhere.sqlite")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("stores/gone.link").path, withDestinationPath: "nowhere")
        try folder.write("notes", to: "stores/readme.txt")
        for name in ["a", "b"] { try? FileManager.default.removeItem(at: folder.appendingPathComponent("stores/\(name).db.json")) }
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "--accept-data-loss", "stores"], in: folder)
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("3 stores: 1 migrated, 0 current, 2 failed") && run.stdout.contains("2 files passed over"), "\(run.stdout)")
        #expect(run.stdout.contains("stores/b.db         failed") && run.stdout.contains("stores/gone.sqlite  failed"), "\(run.stdout)")
        // The locks the run left beside its stores are not counted with them the next time.
        let again = try CLI.run(["run", "--to", "v3", "--accept-data-loss", "stores"], in: folder)
        #expect(again.stdout.contains("2 files passed over") && (again.stderr.contains("that belongs to a store") || again.stderr.contains("that belong to stores")), "\(again.stdout)\(again.stderr)")
        #expect(run.stderr.contains("note: passed over stores/gone.link: a link to a file that does not exist"), "\(run.stderr)")
        #expect(run.stderr.contains("note: passed over stores/readme.txt: it does not start with SQLite's header"), "\(run.stderr)")
        let json = try CLI.run(["run", "--format", "json", "--to", "v3", "stores"], in: folder)
        #expect(json.status == 2)
        for listed in ["\"store\": \"stores/b.db\"", "\"store\": \"stores/gone.sqlite\"", "\"store\": \"stores/gone.link\"", "\"store\": \"stores/readme.txt\"", "\"reason\": \"a lock mapc keeps beside a store\""] {
            #expect(json.stdout.contains(listed), "\(listed): \(json.stdout)")
        }
        let status = try CLI.run(["status", "--format", "json", "stores"], in: folder)
        #expect(status.stdout.contains("\"result\": \"passed over\""), "\(status.stdout)")
    }

    @Test func aFolderOfStoresMigratesInParallelAndAFailureStopsOnlyItsStore() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        for name in ["a", "b", "c", "d"] { try makeV2Store(folder, count: 4, name: "stores/\(name).db") }
        // One already current, one that will fail (a required title missing), one file that is not a store.
        #expect(try CLI.run(["run", "--quiet", "stores/d.db"], in: folder).status == 0)
        let broken = try CLI.run(["eval", "--store", "stores/b.db", "--entity", "Note", "title"], in: folder)
        #expect(broken.status == 0)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["sqlite3", folder.appendingPathComponent("stores/b.db").path, "UPDATE Note SET title = NULL WHERE _id = 'n1'"]
        try sqlite.run()
        sqlite.waitUntilExit()
        try folder.write("not a store", to: "stores/readme.txt")
        for name in ["a", "b", "c", "d"] { try FileManager.default.removeItem(at: folder.appendingPathComponent("stores/\(name).db.json")) }
        let before = try bytes(folder, "stores/b.db")

        let run = try CLI.run(["run", "--jobs", "3", "stores"], in: folder)
        #expect(run.status == 3, "a failed store makes the run fail: \(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("stores/a.db  migrated       v2 -> v4"), "\(run.stdout)")
        #expect(run.stdout.contains("stores/d.db  current        v4"))
        #expect(run.stdout.contains("stores/b.db  failed         v2 -> v4") && run.stdout.contains("required value missing"))
        #expect(run.stdout.contains("4 stores: 2 migrated, 1 current, 1 failed (left untouched)"), "\(run.stdout)")
        #expect(try bytes(folder, "stores/b.db") == before, "the failed store is untouched")
        let status = try CLI.run(["status", "--format", "json", "stores/a.db", "stores/c.db"], in: folder)
        #expect(status.status == 0 && status.stdout.hasPrefix("[") && status.stdout.components(separatedBy: "\"identifiedVersion\": \"v4\"").count == 3, "\(status.stdout)")

        // Again: the migrated ones are current now; JSON reports per store.
        let again = try CLI.run(["run", "--format", "json", "stores/a.db", "stores/c.db", "stores/d.db"], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("\"current\": 3"), "\(again.stdout)")
        #expect(again.stdout.components(separatedBy: "\"exitCode\": 0").count == 4, "each store's exit status: \(again.stdout)")
        // --output names one file: refused with several stores.
        let output = try CLI.run(["run", "--output", "x.db", "stores/a.db", "stores/c.db"], in: folder)
        #expect(output.status == 64 && output.stderr.contains("--output names one new file"), "\(output.stderr)")
    }
}

/// Tables in a store file that no version of the model has: Core Data's persistent history is left
/// out and said so; an app's own table with rows is never dropped silently.
@Suite("Tables the model does not have")
struct ForeignTablesTests {
    private func store(in folder: URL) throws -> Data {
        try folder.write(#"{"version":"v2","objects":{"Note":[{"id":"n1","title":"a","body":"b","dateCreated":"2024-01-01T00:00:00Z"}]}}"#, to: "n.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "n.json", "s.sqlite"], in: folder).status == 0)
        try sqlite(folder, "s.sqlite", """
            CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR );
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER );
            INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 1), (16002, 'TRANSACTION', 0, 1);
            INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 700000000.0, 'app');
            INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 2, 1, 1);
            """)
        return try Data(contentsOf: folder.appendingPathComponent("s.sqlite"))
    }

    @Test func persistentHistoryIsLeftOutAndSaidSo() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        _ = try store(in: folder)
        // The iCloud ubiquitous stores' state (iOS 5 to 9) is Core Data's too: said, not refused.
        try sqlite(folder, "s.sqlite", "CREATE TABLE Y_UBMETA (Z_PK INTEGER PRIMARY KEY, YPEERID VARCHAR); INSERT INTO Y_UBMETA VALUES (1, 'peer');")
        // A table named as Core Data names its own (an earlier version's entity) is noted too.
        try sqlite(folder, "s.sqlite", "CREATE TABLE ZOLDNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZTITLE VARCHAR); INSERT INTO ZOLDNOTE VALUES (1, 9, 'x');")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.sqlite"), to: folder.appendingPathComponent("t.sqlite"))
        let status = try CLI.run(["status", "s.sqlite"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("other tables ACHANGE (1 row), ATRANSACTION (1 row), Y_UBMETA (1 row), ZOLDNOTE (1 row)"), "\(status.stdout)")
        let plan = try CLI.run(["plan", "--to", "v3", "s.sqlite"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("persistent history") && plan.stdout.contains("ATRANSACTION (1 row)"), "\(plan.stdout)\(plan.stderr)")
        let run = try CLI.run(["run", "--to", "v3", "s.sqlite"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("note: ") && run.stderr.contains("persistent history") && run.stderr.contains("ACHANGE (1 row)"), "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("iCloud ubiquitous stores, Y_UBMETA (1 row)"), "\(run.stderr)")
        #expect(run.stderr.contains("ZOLDNOTE (1 row) (left by an earlier version?)"), "\(run.stderr)")
        #expect(try sqliteOutput(folder, "s.sqlite", "SELECT count(*) FROM sqlite_master WHERE name IN ('ATRANSACTION', 'ACHANGE')") == "0")
        // A fleet's line for the store carries the notes too.
        let fleet = try CLI.run(["run", "--to", "v3", "--format", "jsonl", "t.sqlite", "s.sqlite"], in: folder)
        #expect(fleet.status == 0 && fleet.stdout.contains("\"notes\"") && fleet.stdout.contains("persistent history"), "\(fleet.stdout)\(fleet.stderr)")
    }

    /// NSPersistentCloudKitContainer's mirroring state was left out with a note: without it the
    /// app takes every object for new and syncs it again (duplicates on every device). A run now
    /// refuses it, as an app's own table, unless the loss is accepted; empty, it is only noted.
    @Test func cloudKitMirroringStateIsNotLeftOutUnasked() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        _ = try store(in: folder)
        try sqlite(folder, "s.sqlite", """
            CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER, ZCKRECORDNAME VARCHAR);
            INSERT INTO ANSCKRECORDMETADATA VALUES (1, 16004, 1, 2, 1, 'rec-1');
            CREATE TABLE ANSCKRECORDZONE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCKRECORDZONENAME VARCHAR);
            """)
        let before = try Data(contentsOf: folder.appendingPathComponent("s.sqlite"))
        let plan = try CLI.run(["plan", "--to", "v3", "s.sqlite"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("a run refuses to leave out ANSCKRECORDMETADATA (1 row), NSPersistentCloudKitContainer's mirroring state"), "\(plan.stdout)\(plan.stderr)")
        let refused = try CLI.run(["run", "--to", "v3", "s.sqlite"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("ANSCKRECORDMETADATA (1 row), NSPersistentCloudKitContainer's mirroring state (without it the app syncs every object again, as new)")
                && !refused.stderr.contains("ANSCKRECORDZONE (0 rows), NSPersistent") && refused.stderr.contains("--accept-data-loss"), "\(refused.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.sqlite")) == before)
        let accepted = try CLI.run(["run", "--to", "v3", "--accept-data-loss", "s.sqlite"], in: folder)
        #expect(accepted.status == 0 && accepted.stderr.contains("duplicates on every device"), "\(accepted.stderr)")
    }

    @Test func anAppsOwnTableWithRowsIsNeverDroppedSilently() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        _ = try store(in: folder)
        try sqlite(folder, "s.sqlite", "CREATE TABLE search_index (note INTEGER, words TEXT); INSERT INTO search_index VALUES (1, 'a b');")
        let before = try Data(contentsOf: folder.appendingPathComponent("s.sqlite"))
        let refused = try CLI.run(["run", "--to", "v3", "s.sqlite"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("search_index (1 row)") && refused.stderr.contains("--accept-data-loss"), "\(refused.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.sqlite")) == before)
        let accepted = try CLI.run(["run", "--to", "v3", "--accept-data-loss", "s.sqlite"], in: folder)
        #expect(accepted.status == 0 && accepted.stderr.contains("search_index (1 row)"), "\(accepted.stderr)")
    }
}
