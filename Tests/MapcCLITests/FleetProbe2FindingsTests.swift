import Foundation
import Testing

/// What the second fleet probe found: reports a script reads, on the fault paths too.
@Suite("Defects found by the second fleet probe")
struct FleetProbe2FindingsTests {
    /// A writer stopped in the middle of a transaction on a store of two notes: a hot journal beside it.
    private func leaveAnUnfinishedWrite(in store: String, _ folder: URL) throws {
        try python("""
            import sqlite3, os
            c = sqlite3.connect('\(store)', isolation_level=None); c.execute('PRAGMA cache_size=1')
            c.execute('BEGIN IMMEDIATE'); c.execute("UPDATE Note SET title = title || 'x'"); c.execute("DELETE FROM Note WHERE _id = 'n2'")
            os._exit(0)
            """, in: folder)
        #expect(folder.exists("\(store)-journal"))
    }

    /// The example project with a note's data at v1 (`v1.json`) and an empty fleet folder `f`.
    private func fleetProject() throws -> URL {
        let folder = try CLI.project()
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2024-05-01T10:00:00Z"}]}}"#, to: "v1.json")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("f"), withIntermediateDirectories: true)
        return folder
    }

    /// The folder's flush after the rename failing (`fail@N` at the run's last operation) was
    /// reported "s.db was not changed", result "failed", while the store was the migrated one:
    /// a script would retry or restore a store that had moved on. A folder's flush that fails
    /// is passed over as fsync's own failure is (the rename has happened), and the run says so.
    @Test func aFailedFlushAfterTheRenameIsNoUnchangedStore() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2024-05-01T10:00:00Z"}]}}"#, to: "v1.json")
        #expect(try CLI.run(["load", "v1.json", "counted.db"], in: folder).status == 0)
        #expect(try CLI.run(["load", "v1.json", "s.db"], in: folder).status == 0)
        let log = folder.appendingPathComponent("operations.log")
        #expect(try CLI.run(["run", "--to", "v2", "--quiet", "counted.db"], in: folder, environment: ["MAPC_FAULT": "count", "MAPC_FAULT_LOG": log.path]).status == 0)
        let operations = try #require(Int(try String(contentsOf: log, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let run = try CLI.run(["run", "--to", "v2", "--format", "json", "s.db"], in: folder, environment: ["MAPC_FAULT": "fail@\(operations)"])
        #expect(run.status == 0 && run.stdout.contains(#""result": "migrated""#) && !run.stderr.contains("was not changed"), "\(run.stdout)\(run.stderr)")
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v2"))
    }

    /// A line break in a store's name split its row of the batch table in two, the second half
    /// reading as a store of its own (`line.db  migrated`): the name is shown on one line.
    @Test func aLineBreakInAStoresNameKeepsItsRowOneLine() throws {
        let folder = try fleetProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["load", "v1.json", "f/new\nline.db"], in: folder).status == 0)
        #expect(try CLI.run(["load", "v1.json", "f/plain.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v2", "--jobs", "1", "f"], in: folder)
        let rows = run.stdout.split(separator: "\n").filter { $0.contains("migrated") && $0.contains("v1 -> v2") }
        #expect(run.status == 0 && rows.count == 2 && rows.contains { $0.hasPrefix("f/new<U+000A>line.db  ") }, "\(run.stdout)")
    }

    /// A store whose unfinished write SQLite rolled back as a batch opened it was said nowhere
    /// (`"notes": null`, nothing on standard error with workers); one store's run said it. Said
    /// with the store's outcome now.
    @Test func aRolledBackWriteIsSaidInABatchsReport() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2024-05-01T10:00:00Z"}, "#
                         + #"{"id": "n2", "title": "c", "body": "d", "dateCreated": "2024-05-01T10:00:00Z"}]}}"#, to: "v1.json")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("f"), withIntermediateDirectories: true)
        for name in ["a", "b"] { #expect(try CLI.run(["load", "v1.json", "f/\(name).db"], in: folder).status == 0) }
        try leaveAnUnfinishedWrite(in: "f/a.db", folder)
        let run = try CLI.run(["run", "--to", "v2", "--format", "jsonl", "--jobs", "1", "f"], in: folder)
        let line = run.stdout.split(separator: "\n").first { $0.contains(#""store":"f/a.db""#) } ?? ""
        #expect(run.status == 0 && line.contains("f/a.db had an unfinished write (f/a.db-journal"), "\(run.stdout)")
        #expect(!(run.stdout.split(separator: "\n").first { $0.contains(#""store":"f/b.db""#) } ?? "").contains("unfinished write"))
    }

    /// A failed store among many was found only by reading every row of the table (sorted by
    /// name; the summary gives a count): the failed ones are named again at its end.
    @Test func failedStoresAreNamedAfterAManyRowTable() throws {
        let folder = try fleetProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["load", "v1.json", "f/s00.db"], in: folder).status == 0)
        for index in 1...11 { try FileManager.default.copyItem(at: folder.appendingPathComponent("f/s00.db"), to: folder.appendingPathComponent("f/s\(String(format: "%02d", index)).db")) }
        try Data("SQLite format 3\u{0}".utf8 + Data(count: 100)).write(to: folder.appendingPathComponent("f/s07.db"))
        let run = try CLI.run(["run", "--to", "v2", "--jobs", "1", "f"], in: folder)
        #expect(run.status == 2 && run.stdout.contains("\nfailed: f/s07.db (each with its error in its row above)"), "\(run.stdout)")
    }

    /// One store's `run --format json` said a rolled-back write on standard error only, not in
    /// its report's `notes` (the closing note's list).
    @Test func aRolledBackWriteIsInOneStoresJSONReport() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2024-05-01T10:00:00Z"}, "#
                         + #"{"id": "n2", "title": "c", "body": "d", "dateCreated": "2024-05-01T10:00:00Z"}]}}"#, to: "v1.json")
        for name in ["a", "b"] { #expect(try CLI.run(["load", "v1.json", "\(name).db"], in: folder).status == 0) }
        try leaveAnUnfinishedWrite(in: "a.db", folder)
        let json = try CLI.run(["run", "--to", "v2", "--format", "json", "a.db"], in: folder)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(json.status == 0 && ((parsed?["notes"] as? [String])?.first?.contains("a.db had an unfinished write (a.db-journal") == true), "\(json.stdout)")
        // Text says it at once, on standard error, as before.
        try leaveAnUnfinishedWrite(in: "b.db", folder)
        let text = try CLI.run(["run", "--to", "v2", "b.db"], in: folder)
        #expect(text.status == 0 && text.stderr.contains("note: b.db had an unfinished write"), "\(text.stderr)")
    }
}
