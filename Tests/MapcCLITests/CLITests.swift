import Foundation
import Testing

private let v3Data = """
{
  "version": "v3",
  "objects": {
    "Note": [
      {
        "id": "n1",
        "title": "Groceries",
        "body": "Milk",
        "dateCreated": "2024-05-01T10:00:00Z",
        "displayIndex": 0,
        "attachments": ["a1"]
      },
      {
        "id": "n2",
        "title": "Ideas ✨",
        "body": "Lots",
        "dateCreated": "2024-05-02T08:30:00.250Z",
        "displayIndex": 1,
        "attachments": []
      }
    ],
    "Attachment": [
      {
        "id": "a1",
        "image": "iVBORw0KGgo=",
        "dateCreated": "2024-05-01T10:00:00Z",
        "note": "n1"
      }
    ]
  }
}

"""

@Suite("mapc command line", .serialized)
struct CLITests {
    @Test func loadThenDumpIsTheIdentity() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write(v3Data, to: "data.json")
        let load = try CLI.run(["load", "data.json", "notes.db"], in: project)
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stdout.contains("created notes.db (v3) with 3 objects"))
        let dump = try CLI.run(["dump", "notes.db"], in: project)
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdout == v3Data)
        let toFile = try CLI.run(["dump", "notes.db", "--output", "out.json"], in: project)
        #expect(toFile.status == 0)
        #expect(try project.read("out.json") == v3Data)
    }

    @Test func initThenLoadFillsTheEmptyStore() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write(v3Data, to: "data.json")
        let created = try CLI.run(["init", "--schema", "v3", "notes.db"], in: project)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("created notes.db: UnCloudNotes v3"))
        let again = try CLI.run(["init", "--schema", "v3", "notes.db"], in: project)
        #expect(again.status == 2)
        #expect(again.stderr.contains("notes.db already exists"))
        let load = try CLI.run(["load", "--schema", "v3", "data.json", "notes.db"], in: project)
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stdout.contains("added 3 objects to notes.db"))
        #expect(try CLI.run(["dump", "notes.db"], in: project).stdout == v3Data)
        let twice = try CLI.run(["load", "data.json", "notes.db"], in: project)
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("Note 'n1', key 'id': the store already has a Note object with id 'n1'"))
    }

    @Test func badDataIsRefusedAndNothingIsCreated() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write(v3Data.replacingOccurrences(of: "\"note\": \"n1\"", with: "\"note\": \"n9\""), to: "bad.json")
        let result = try CLI.run(["load", "bad.json", "notes.db"], in: project)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Attachment 'a1', key 'note': no object has id 'n9' (dangling reference)"))
        #expect(result.stderr.contains("nothing was written"))
        #expect(!project.exists("notes.db"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: project.path).filter { $0.contains("notes.db") }
        #expect(leftovers.isEmpty, "temporary files are cleaned up: \(leftovers)")
    }

    @Test func versionMismatchBetweenDataAndSchemaIsRefused() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write(v3Data, to: "data.json")
        let result = try CLI.run(["load", "--schema", "v2", "data.json", "notes.db"], in: project)
        #expect(result.status == 1)
        #expect(result.stderr.contains("declares version v3, but --schema is v2"))
        let invalidJSON = try CLI.run(["load", "--schema", "v3", "missing.json", "notes.db"], in: project)
        #expect(invalidJSON.status == 1)
        #expect(invalidJSON.stderr.contains("missing.json: no such file; check the path"))
    }

    @Test func statusShowsVersionCountsAndCompatibleVersions() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write(v3Data, to: "data.json")
        _ = try CLI.run(["load", "data.json", "notes.db"], in: project)
        let status = try CLI.run(["status", "notes.db"], in: project)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("version     v3"))
        #expect(status.stdout.contains("  Note        2"))
        #expect(status.stdout.contains("  Attachment  1"))
        #expect(status.stdout.contains("compatible  v3"))
        let json = try CLI.run(["status", "notes.db", "--format", "json"], in: project)
        #expect(json.stdout.contains("\"compatibleVersions\": [\"v3\"]"))
        // With the schema edited, the store no longer matches any version in the folder.
        let edited = try project.read("schemas/v3.yaml").replacingOccurrences(of: "image:        { type: binary }", with: "image:        { type: binary, optional: true }")
        try project.write(edited, to: "schemas/v3.yaml")
        let stale = try CLI.run(["status", "notes.db"], in: project)
        #expect(stale.status == 0)
        #expect(stale.stdout.contains("compatible  none of the versions in ./schemas"))
        // Objects not counted (no version to read them by) are null in JSON, not an empty count.
        let staleJSON = try CLI.run(["status", "notes.db", "--format", "json"], in: project)
        #expect(staleJSON.stdout.contains("\"objects\": null"), "\(staleJSON.stdout)")
        let dump = try CLI.run(["dump", "notes.db"], in: project)
        #expect(dump.status == 2)
        // The same diagnosis as run's: the closest version and what differs from it.
        #expect(dump.stderr.contains("matches no version of the schemas; closest is v3: entity 'Attachment' differs"), "\(dump.stderr)")
    }

    @Test func hashPrintsModelAndEntityHashes() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        let byVersion = try CLI.run(["hash", "v3"], in: project)
        let byFile = try CLI.run(["hash", "schemas/v3.yaml"], in: project)
        #expect(byVersion.status == 0)
        #expect(byVersion.stdout == byFile.stdout)
        let lines = byVersion.stdout.split(separator: "\n")
        #expect(lines.first == "UnCloudNotes v3")
        #expect(lines.count == 4)
        #expect(lines[1].hasPrefix("model  ") && lines[2].hasPrefix("entity Attachment  ") && lines[3].hasPrefix("entity Note        "))
        let unknown = try CLI.run(["hash", "v33"], in: project)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown version 'v33'"))
        let json = try CLI.run(["hash", "v1", "--format", "json"], in: project)
        #expect(json.stdout.contains("\"modelHash\": \""))
    }

    @Test func checkReportsEveryProblemWithPositionAndCaret() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: { type: strng }\n    relationships:\n      tags: { destination: Tagg }\n", to: "bad.yaml")
        let result = try CLI.run(["check", "bad.yaml", "schemas/v4.yaml"], in: project)
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad.yaml:6:22: error: unknown type 'strng'; did you mean 'string'?\n      title: { type: strng }\n                     ^~~~~\n"))
        #expect(result.stderr.contains("bad.yaml:8:28: error: unknown destination entity 'Tagg' of 'Note.tags'"))
        #expect(result.stdout.contains("schemas/v4.yaml: UnCloudNotes v4, 3 entities"))
        #expect(result.stdout.contains("2 files checked: 2 errors, 0 warnings"))
        let clean = try CLI.run(["check", "schemas/v1.yaml", "schemas/v2.yaml", "schemas/v3.yaml", "schemas/v4.yaml"], in: project)
        #expect(clean.status == 0)
        let json = try CLI.run(["check", "bad.yaml", "--format", "json"], in: project)
        #expect(json.status == 1)
        #expect(json.stdout.contains("\"line\": 6"))
        #expect(json.stdout.contains("\"fix\": \"did you mean 'string'?\""))
    }

    @Test func checkWithNoFilesChecksTheWholeProject() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try CLI.addMappingsAndPolicies(to: project)
        let all = try CLI.run(["check"], in: project)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.contains("7 files checked: 0 errors, 0 warnings"), "\(all.stdout)")
        #expect(all.stdout.contains("versions: v1 → v2 → v3 → v4 (declared in ./schemas/versions.yaml)"))
        let empty = try CLI.run(["check", "--schemas", "nowhere", "--mappings", "nowhere"], in: project)
        #expect(empty.status == 2)
    }

    @Test func strictTurnsWarningsIntoErrors() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try project.write("model: M\nversion: v1\nentities:\n  Note:\n    relationships:\n      tags: { destination: Note, toMany: true, optional: true }\n", to: "warn.yaml")
        let lenient = try CLI.run(["check", "warn.yaml"], in: project)
        #expect(lenient.status == 0)
        #expect(lenient.stderr.contains("warning: 'Note.tags' has no inverse"))
        let strict = try CLI.run(["check", "--strict", "warn.yaml"], in: project)
        #expect(strict.status == 1)
    }

    @Test func badCommandLinesExitWithUsage() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        #expect(try CLI.run(["frobnicate"], in: project).status == 64)
        #expect(try CLI.run(["init", "notes.db"], in: project).status == 64)
        let missingStore = try CLI.run(["status", "nowhere.db"], in: project)
        #expect(missingStore.status == 2)
        #expect(missingStore.stderr.contains("nowhere.db: no such store"))
        #expect(!project.exists("nowhere.db"))
    }

    @Test func theSchemasFolderCanBeNamed() throws {
        let project = try CLI.project()
        defer { try? FileManager.default.removeItem(at: project) }
        try FileManager.default.moveItem(at: project.appendingPathComponent("schemas"), to: project.appendingPathComponent("models"))
        #expect(try CLI.run(["init", "--schema", "v2", "a.db"], in: project).status == 2)
        let named = try CLI.run(["init", "--schemas", "models", "--schema", "v2", "a.db"], in: project)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try CLI.run(["status", "--schemas", "models", "a.db"], in: project).stdout.contains("compatible  v2"))
    }
}
