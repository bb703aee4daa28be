import Foundation
import Testing

/// What the second fleet probe found: reports a script reads, on the fault paths too.
@Suite("Defects found by the second fleet probe")
struct FleetProbe2FindingsTests {
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
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a", "body": "b", "dateCreated": "2024-05-01T10:00:00Z"}]}}"#, to: "v1.json")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("f"), withIntermediateDirectories: true)
        #expect(try CLI.run(["load", "v1.json", "f/new\nline.db"], in: folder).status == 0)
        #expect(try CLI.run(["load", "v1.json", "f/plain.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--to", "v2", "--jobs", "1", "f"], in: folder)
        let rows = run.stdout.split(separator: "\n").filter { $0.contains("migrated") && $0.contains("v1 -> v2") }
        #expect(run.status == 0 && rows.count == 2 && rows.contains { $0.hasPrefix("f/new<U+000A>line.db  ") }, "\(run.stdout)")
    }
}
