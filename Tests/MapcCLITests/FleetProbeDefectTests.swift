import Foundation
import GRDB
@testable import MapcFoundation
import Testing

/// Defects a probe of fleets of stores found (batches, hard links, lists made by globs,
/// reports), run through the CLI as an operator does.
@Suite("Defects found by a probe of fleets", .serialized)
struct FleetProbeDefectTests {
    /// A project with stores at v2.
    private func project(_ stores: [String] = ["s.db"]) throws -> URL {
        let folder = try CLI.project()
        try CLI.addMappingsAndPolicies(to: folder)
        for store in stores { #expect(try CLI.run(["init", "--schema", "v2", store], in: folder).status == 0) }
        return folder
    }

    /// A store with a second name (a hard link) was migrated under one name only: the replacement
    /// gave that name a new file, the other kept the old version, and the run said it migrated
    /// "the store". Refused now, by a dry run too, both names as they were.
    @Test func aStoreWithAnotherHardLinkIsRefused() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(link(folder.appendingPathComponent("s.db").path, folder.appendingPathComponent("other.db").path) == 0)
        for arguments in [["run", "--dry-run", "s.db"], ["run", "s.db"], ["run", "s.db", "other.db"]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 2 && (run.stderr + run.stdout).contains("has another name (a hard link;"), "\(arguments): \(run.stdout)\(run.stderr)")
        }
        var first = stat(), second = stat()
        #expect(stat(folder.appendingPathComponent("s.db").path, &first) == 0 && stat(folder.appendingPathComponent("other.db").path, &second) == 0)
        #expect(first.st_ino == second.st_ino, "one file still")
        #expect(try CLI.run(["status", "other.db"], in: folder).stdout.contains("version     v2"))
        // Written to another file, it is migrated: nothing is replaced.
        #expect(try CLI.run(["run", "--quiet", "s.db", "--output", "new.db"], in: folder).status == 0)
    }

    /// A dry run said "would migrate" for a read-only store the run then refused.
    @Test func aDryRunRefusesWhatTheRunRefuses() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.appendingPathComponent("s.db").path, 0o444)
        let dry = try CLI.run(["run", "--dry-run", "s.db"], in: folder)
        #expect(dry.status == 2 && dry.stderr.contains("is read-only"), "\(dry.stdout)\(dry.stderr)")
        // `plan` said "would migrate" (text and JSON lines): a plan that prints is one `run` will start.
        for format in ["text", "jsonl"] {
            let plan = try CLI.run(["plan", "--format", format, "s.db"], in: folder)
            #expect(plan.status == 2 && (plan.stdout + plan.stderr).contains("is read-only") && !plan.stdout.contains("would migrate"), "\(plan.stdout)\(plan.stderr)")
        }
    }

    /// A project policy that traps on one store's objects ended the whole batch (exit 132) at
    /// that store, on every run, so the stores after it were never migrated. A batch that runs
    /// the project's policies migrates in workers now: that store fails, named with the crash
    /// and left as it was; the others are migrated; a second run migrates none of them again.
    @Test func aPolicyThatTrapsOnOneStoreFailsThatStoreAlone() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let policy = try CLI.replaceV3toV4PolicyWithOneThatTraps(in: folder)
        let note = #"{"id": "n1", "title": "t", "body": "b", "dateCreated": "2020-01-01T00:00:00Z", "displayIndex": 0}"#
        // One store whose attachment the policy meets (and traps on), and stores without one.
        try folder.write(#"{"version": "v3", "objects": {"Note": [\#(note)], "Attachment": [{"id": "a1", "image": "iVBORw==", "dateCreated": "2020-01-01T00:00:00Z", "note": "n1"}]}}"#, to: "trap.json")
        try folder.write(#"{"version": "v3", "objects": {"Note": [\#(note)]}}"#, to: "plain.json")
        #expect(try CLI.run(["load", "trap.json", "b.db"], in: folder).status == 0)
        for name in ["a.db", "c.db", "d.db"] { #expect(try CLI.run(["load", "plain.json", name], in: folder).status == 0) }
        let before = try Data(contentsOf: folder.appendingPathComponent("b.db"))
        let run = try CLI.run(["run", "--jobs", "1", "--format", "json", "a.db", "b.db", "c.db", "d.db"], in: folder)
        #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let stores = report?["stores"] as? [[String: Any]] ?? []
        #expect(stores.map { $0["result"] as? String } == ["migrated", "failed", "migrated", "migrated"], "\(run.stdout)")
        let error = stores.dropFirst().first?["error"] as? String ?? ""
        #expect(error.contains("the migration crashed (signal 4, SIGILL)") && error.contains(policy), "\(error)")
        // Its line says which migration failed, as every other line does (it said null, null, 0).
        let crashed = stores.dropFirst().first ?? [:]
        #expect(crashed["from"] as? String == "v3" && crashed["to"] as? String == "v4" && crashed["steps"] as? Int == 1, "\(crashed)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("b.db")) == before, "the store that failed is as it was")
        let again = try CLI.run(["run", "--quiet", "a.db", "b.db", "c.db", "d.db"], in: folder)
        #expect(again.status == 3 && again.stdout.contains("4 stores: 0 migrated, 3 current, 1 failed"), "\(again.stdout)\(again.stderr)")
    }

    /// Stores named like a store's files (`gina-shm`, `alice.backup-v1.db`) were passed over as
    /// such, exit 0, with no store of theirs there; and a list made by a glob (`ls dir/*`) had a
    /// store's backup migrated in place (the rollback copy lost) and its -wal reported failed.
    /// A file is one of a store's own only when that store is beside it, in a folder and a list alike.
    @Test func aStoresOwnFilesArePassedOverOnlyBesideTheirStore() throws {
        let folder = try project([])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        for name in ["s.db", "gina-shm", "alice.backup-v1.db", "s.db.backup-v2-20260101T000000Z"] {
            #expect(try CLI.run(["init", "--schema", "v2", "stores/\(name)"], in: folder).status == 0)
        }
        try folder.write("", to: "stores/s.db-journal")
        let backup = try Data(contentsOf: folder.appendingPathComponent("stores/s.db.backup-v2-20260101T000000Z"))
        let run = try CLI.run(["run", "--format", "json", "stores"], in: folder)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let migrated = (report?["stores"] as? [[String: Any]] ?? []).filter { $0["result"] as? String == "migrated" }.compactMap { $0["store"] as? String }
        #expect(Set(migrated) == ["stores/s.db", "stores/gina-shm", "stores/alice.backup-v1.db"], "\(run.stdout)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("stores/s.db.backup-v2-20260101T000000Z")) == backup)
        // The same files listed one by one, as a glob lists them.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("stores").path).sorted()
        try folder.write(names.map { "stores/\($0)\n" }.joined(), to: "list")
        let listed = try CLI.run(["run", "--format", "json", "--stores-from", "list"], in: folder)
        #expect(listed.status == 0, "\(listed.stdout)\(listed.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("stores/s.db.backup-v2-20260101T000000Z")) == backup, "the backup is not migrated")
        #expect(listed.stdout.contains("a backup of a store") && listed.stdout.contains("a store's journal file") && listed.stdout.contains("a lock mapc keeps"), "\(listed.stdout)")
    }

    /// A backup named on its own was migrated in place by `run` (text or JSON), losing the way
    /// back, while `run --format jsonl`, `plan` and `status` passed it over with exit 0. Every
    /// path refuses it now, saying why and what to do; `status` and `dump` read it; `--output`
    /// migrates it into a new file.
    @Test func aBackupNamedAloneIsNeverMigratedInPlace() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["run", "--quiet", "--keep-backup", "--to", "v3", "s.db"], in: folder).status == 0)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("s.db.backup-v2") })
        let backup = try Data(contentsOf: folder.appendingPathComponent(name))
        for arguments in [["run", name], ["run", "--format", "json", name], ["run", "--format", "jsonl", name], ["run", "--dry-run", name], ["plan", name]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 2 && (run.stderr + run.stdout).contains("is a backup of") && (run.stderr + run.stdout).contains("does not migrate a backup in place"),
                    "\(arguments): \(run.stdout)\(run.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == backup)
        let status = try CLI.run(["status", name], in: folder)
        #expect(status.status == 0 && status.stdout.contains("v2"), "\(status.stdout)\(status.stderr)")
        #expect(try CLI.run(["run", "--quiet", name, "--output", "restored.db"], in: folder).status == 0)
        #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == backup)
        // In a folder, or among other stores, it is passed over as before.
        let batch = try CLI.run(["run", "--format", "jsonl", "s.db", name], in: folder)
        #expect(batch.status == 0 && batch.stdout.contains("passed over"), "\(batch.stdout)\(batch.stderr)")
    }

    /// A folder holding a store whose name is not UTF-8 (Latin-1 `latin\u{E9}.db`) beside one
    /// named with the replacement character: the first was decoded into the second's name, so
    /// only the second was migrated and the batch said "migrated", exit 0. The folder is refused
    /// before anything is read, naming the file and how to rename it.
    @Test func aFolderHoldingANameThatIsNotUTF8IsRefused() throws {
        let folder = try project(["a.db", "b.db"])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        let latin1: [CChar] = Array((folder.path + "/stores/lat").utf8CString.dropLast()) + [CChar(bitPattern: 0xE9)] + Array(".db".utf8CString)
        #expect(rename(folder.appendingPathComponent("a.db").path, latin1) == 0)
        #expect(rename(folder.appendingPathComponent("b.db").path, folder.appendingPathComponent("stores/lat\u{FFFD}.db").path) == 0)
        for format in ["text", "jsonl"] {
            let run = try CLI.run(["run", "--format", format, "stores"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("holds a store whose name is not UTF-8 text") && run.stderr.contains("convmv"), "\(run.stdout)\(run.stderr)")
        }
        let status = try CLI.run(["status", "--format", "jsonl", "stores"], in: folder)
        #expect(status.status == 2, "\(status.stdout)\(status.stderr)")
        #expect(try CLI.run(["status", "stores/lat\u{FFFD}.db"], in: folder).stdout.contains("v2"), "neither store was migrated")
        // A store so named without a store's extension is found by its header; a file so named
        // that is no store (a photo, a log) does not stop the folder (the review's case).
        let renamed: [CChar] = Array((folder.path + "/stores/plain").utf8CString.dropLast()) + [CChar(bitPattern: 0xE9)] + [0]
        #expect(rename(latin1, renamed) == 0)
        #expect(try CLI.run(["run", "--format", "jsonl", "stores"], in: folder).status == 2)
        #expect(unlink(renamed) == 0)
        let photo: [CChar] = Array((folder.path + "/stores/caf").utf8CString.dropLast()) + [CChar(bitPattern: 0xE9)] + Array(".jpg".utf8CString)
        let descriptor = open(photo, O_WRONLY | O_CREAT, 0o644)
        #expect(descriptor >= 0 && write(descriptor, "JFIF", 4) == 4)
        close(descriptor)
        let run = try CLI.run(["run", "--format", "jsonl", "--to", "v3", "stores"], in: folder)
        #expect(run.status == 0 && run.stdout.contains("\"result\":\"migrated\""), "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("its name is not UTF-8 text") && !run.stdout.contains("a link to a file that does not exist"), "\(run.stdout)")
    }

    /// A store whose index page was damaged passed `status` (exit 0; the integrity check ran
    /// only when no version matched), where `run` refused it: an operator sorting stores by
    /// `status` would have cleared it. `status` checks the file now.
    @Test func statusFindsADamagedIndex() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.db").path
        let queue = try DatabaseQueue(path: path)
        let (root, pageSize) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND rootpage > 1 ORDER BY rootpage LIMIT 1") ?? 0,
             try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
        }
        try queue.close()
        #expect(root > 1)
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        try file.seek(toOffset: UInt64((root - 1) * pageSize))
        file.write(Data(repeating: 0xFF, count: 600))
        try file.close()
        for format in ["text", "json", "jsonl"] {
            let status = try CLI.run(["status", "--format", format, "s.db"], in: folder)
            #expect(status.status == 2 && (status.stderr + status.stdout).contains("is damaged (SQLite's integrity check"), "\(format): \(status.stdout)\(status.stderr)")
        }
    }

    /// A single store's `--format json` report put the migrated file's path under `result`,
    /// where a failure, a current store and every batch line say `migrated`, `failed` or
    /// `current` there: a script checking `.result == "migrated"` never matched.
    @Test func aSingleStoresJSONReportIsKeyedAsEveryOther() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (arguments, result) in [(["--dry-run"], "would migrate"), ([], "migrated")] {
            let run = try CLI.run(["run", "--quiet", "--format", "json", "--to", "v3"] + arguments + ["s.db"], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            let report = try JSONValue.parse(Data(run.stdout.utf8), path: "stdout")
            #expect(report["store"] == .string("s.db") && report["result"] == .string(result) && report["from"] == .string("v2") && report["to"] == .string("v3"), "\(run.stdout)")
            #expect(report["output"] == (arguments.isEmpty ? .string(folder.appendingPathComponent("s.db").path) : .null), "\(run.stdout)")
        }
    }

    /// An empty `--stores-from` list (a glob or a query that matched nothing) ran "0 stores" with
    /// exit 0, where an empty folder is exit 2: a CI job whose list came out empty passed. A
    /// killed run's temporary file was passed over as "a hidden file", not as what it is.
    @Test func anEmptyListFailsAndAKilledRunsLeftoverIsNamed() throws {
        let folder = try project([])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("# nothing matched\n\n", to: "list")
        for command in ["run", "plan", "status"] {
            let run = try CLI.run([command, "--stores-from", "list"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("list names no stores"), "\(command): \(run.stdout)\(run.stderr)")
        }
        // A shard that gets none of a list's stores is no failure: the other shards have them.
        #expect(try CLI.run(["init", "--schema", "v2", "s.db"], in: folder).status == 0)
        try folder.write("s.db\n", to: "list")
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "--stores-from", "list", "--shard", "2/2"], in: folder).status == 0)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("stores/s.db"))
        try folder.write("partial", to: "stores/.s.db.mapc-123-456.tmp")
        let run = try CLI.run(["run", "--format", "jsonl", "--to", "v4", "stores"], in: folder)
        #expect(run.stdout.contains("a temporary file a run of s.db left when it was killed (the next run of that store removes it)"), "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("stores/.s.db.mapc-123-456.tmp").path), "the run removed it")
    }

    /// A batch with `--keep-backup` said nowhere where each backup was (text, JSON or JSON lines).
    @Test func aBatchSaysWhereEachBackupIs() throws {
        let folder = try project(["a.db", "b.db"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "--keep-backup", "--format", "jsonl", "--to", "v3", "a.db", "b.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let backups = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".backup-v2-") }.sorted()
        #expect(backups.count == 2 && backups.allSatisfy { run.stdout.contains("/\($0)\"") }, "\(backups) \(run.stdout)")
        let text = try CLI.run(["run", "--keep-backup", "--to", "v4", "a.db", "b.db"], in: folder)
        #expect(text.stdout.components(separatedBy: "backup: ").count == 3, "\(text.stdout)")
    }

    /// A store already at the version asked for, with a table dropped, was reported `current`
    /// (exit 0), where `status` and `dump` refuse it; `--output` copied a damaged one "unchanged".
    @Test func aDamagedStoreAtItsVersionIsNotCurrent() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["run", "--quiet", "s.db"], in: folder).status == 0)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        #expect(try CLI.run(["run", "s.db", "t.db"], in: folder).stdout.contains("2 current"))
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("t.db").path)
        try queue.write { try $0.execute(sql: "DROP TABLE Attachment") }
        try queue.close()
        let batch = try CLI.run(["run", "s.db", "t.db"], in: folder)
        #expect(batch.status == 2 && batch.stdout.contains("1 current, 1 failed"), "\(batch.stdout)\(batch.stderr)")
        let single = try CLI.run(["run", "t.db"], in: folder)
        #expect(single.status == 2, "\(single.stdout)\(single.stderr)")
    }

    /// A refused downgrade reported `"from": null, "to": null` though both versions were known.
    @Test func aRefusedStepReportsItsVersions() throws {
        let folder = try project(["a.db", "b.db"])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["run", "--quiet", "a.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--format", "jsonl", "--to", "v2", "a.db", "b.db"], in: folder)
        let line = run.stdout.split(separator: "\n").first { $0.contains("\"a.db\"") }.map(String.init) ?? ""
        #expect(line.contains(#""result":"failed""#) && line.contains(#""from":"v4""#) && line.contains(#""to":"v2""#), "\(run.stdout)")
    }

    /// A Core Data store written by a newer version than the project's newest was said to need
    /// "an older model version": with stores ahead of the project during a staged rollout, the
    /// likely cause is the newer one, which is said.
    @Test func aStoreAheadOfTheProjectIsSaidToBeNewer() throws {
        let folder = try project([])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v4", "--layout", "core-data", "s.sqlite"], in: folder).status == 0)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("schemas/v4.yaml"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings/mapping_v3_to_v4.yaml"))
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        let run = try CLI.run(["run", "s.sqlite"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("a version newer than v3, the newest here"), "\(run.stderr)")
    }

    /// A worker killed after it replaced its store (the last file operation of its run: the
    /// folder's sync after the rename) was reported `failed`, from v4 to v4, for a store that is
    /// migrated and validated. It is reported migrated, from the versions the worker said it
    /// started with, the worker's end said in a note.
    @Test func aWorkerKilledAfterItReplacedItsStoreReportsItMigrated() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let note = #"{"id": "n1", "title": "t", "body": "b", "dateCreated": "2020-01-01T00:00:00Z", "displayIndex": 0}"#
        try folder.write(#"{"version": "v3", "objects": {"Note": [\#(note)]}}"#, to: "plain.json")
        func stores() throws {
            for name in ["a.db", "b.db"] {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
                #expect(try CLI.run(["load", "plain.json", name], in: folder).status == 0)
            }
        }
        try stores()
        let log = folder.appendingPathComponent("count.log")
        let counted = try CLI.run(["run", "--jobs", "1", "--quiet", "a.db", "b.db"], in: folder, environment: ["MAPC_FAULT": "count", "MAPC_FAULT_LOG": log.path])
        #expect(counted.status == 0, "\(counted.stdout)\(counted.stderr)")
        // The worker's count is the largest (the batch itself writes nothing).
        let last = try folder.read("count.log").split(separator: "\n").compactMap { Int($0) }.max() ?? 0
        try stores()
        let run = try CLI.run(["run", "--jobs", "1", "--format", "json", "a.db", "b.db"], in: folder, environment: ["MAPC_FAULT": "crash@\(last)"])
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let lines = report?["stores"] as? [[String: Any]] ?? []
        #expect(lines.map { $0["result"] as? String } == ["migrated", "migrated"], "\(run.stdout)\(run.stderr)")
        let killed = lines.last ?? [:]
        #expect(killed["from"] as? String == "v3" && killed["to"] as? String == "v4" && killed["steps"] as? Int == 1, "\(killed)")
        let notes = (killed["notes"] as? [String] ?? []).joined(separator: "\n")
        #expect(notes.contains("the worker migrating it was ended by signal 9, SIGKILL after it replaced the store, which is migrated to v4"), "\(notes)")
        #expect(run.status == 0, "\(run.stderr)")
        let status = try CLI.run(["status", "b.db"], in: folder)
        #expect(status.stdout.contains("v4"), "\(status.stdout)")
    }

    /// `status DIR` passed over a killed run's temporary files, naming them, but `status STORE`
    /// said nothing of the megabytes beside the store. It names them (text and JSON), and after
    /// the next run, which removes them, says nothing.
    @Test func statusNamesTheTemporaryFilesAKilledRunLeft() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        let killed = try CLI.run(["run", "--quiet", "s.db"], in: folder, environment: ["MAPC_FAULT": "crash@3"])
        #expect(killed.status == 137 || killed.status == 9 || killed.status > 128, "\(killed.status)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".s.db.mapc-") }
        #expect(!left.isEmpty, "the kill left its temporary file")
        let text = try CLI.run(["status", "s.db"], in: folder)
        #expect(text.status == 0 && text.stdout.contains("temporary   \(left.count == 1 ? "1 file" : "\(left.count) files") of a run (\(left.sorted()[0])") && text.stdout.contains("the next run removes them"), "\(text.stdout)")
        let json = try CLI.run(["status", "--format", "json", "s.db"], in: folder)
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((report?["temporaryFiles"] as? [String])?.count == left.count, "\(json.stdout)")
        #expect(try CLI.run(["run", "--quiet", "s.db"], in: folder).status == 0)
        #expect(try !CLI.run(["status", "s.db"], in: folder).stdout.contains("temporary"))
    }

    /// `run --format jsonl stores | head -1` ended with exit 2 and "cannot write to standard
    /// output (Broken pipe)", where the exit-code table says 141, by SIGPIPE, as Unix tools end
    /// (a batch ignores SIGPIPE for its workers' pipes). It ends by the signal now.
    @Test func aBatchWhoseReaderCloseEndsBySIGPIPE() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        // With the project's policies, the batch migrates in workers (and ignores SIGPIPE for them).
        try CLI.addMappingsAndPolicies(to: folder)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        for index in 1...6 { #expect(try CLI.run(["init", "--schema", "v4", "stores/s\(index).db"], in: folder).status == 0) }
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["run", "--format", "jsonl", "--jobs", "1", "stores"]
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read the first line, then close the reader, as `head -1` does.
        var first = Data()
        while !first.contains(0x0A), let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty { first += byte }
        try output.fileHandleForReading.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE, "\(process.terminationReason.rawValue) \(process.terminationStatus)")
    }

    /// A batch's worker is told to stop through its standard input, which it reads from the start
    /// (a signal passed on could come before it listened, and was lost: a worker migrated on after
    /// the batch said it stopped), and stops when that input ends (the batch killed: workers
    /// migrated on, orphaned).
    @Test func aWorkerStopsWhenItsBatchSaysSoOrIsGone() throws {
        let folder = try project(["a.db"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: folder.appendingPathComponent("a.db"))
        for (name, input) in [("gone", "\"a.db\"\n\n"), ("stop", "\"a.db\"\n\nstop\n")] {
            try folder.write(input, to: "input-\(name)")
            let worker = try CLI.run(["run", "--format", "jsonl", "a.db"], in: folder, environment: ["MAPC_BATCH_WORKER": "1"], input: folder.appendingPathComponent("input-\(name)"))
            #expect(worker.status == 143 && worker.stdout.contains(#""result":"stopped""#), "\(name): \(worker.stdout)\(worker.stderr)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("a.db")) == before, "\(name)")
        }
    }

    /// A store list is given to workers as it was selected: a name starting with `#` or ending
    /// with a space was read by the list's rules (a comment, trimmed), and every store reported
    /// failed with exit 0 while they were migrated.
    @Test func storesWithOddNamesAreReportedAsMigrated() throws {
        let folder = try project(["#1.db", "2 .db", "3.db"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "--format", "json", "--jobs", "2", "#1.db", "2 .db", "3.db"], in: folder)
        #expect(run.status == 0 && run.stdout.contains(#""migrated": 3"#), "\(run.stdout)\(run.stderr)")
    }

    /// `--keep-backup` on a store whose name leaves no room for the backup's failed only once every
    /// step was done; and `plan` called a store with a table dropped current, where `run` refuses it.
    @Test func aBackupNameTooLongAndAMissingTableAreSaidBeforehand() throws {
        let folder = try project([])
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = String(repeating: "n", count: 220) + ".db"
        #expect(try CLI.run(["init", "--schema", "v2", name], in: folder).status == 0)
        let run = try CLI.run(["run", "--keep-backup", name], in: folder)
        #expect(run.status == 2 && run.stderr.contains("more than the 255 a file name may have") && !run.stderr.contains("[create]"), "\(run.stderr)")
        #expect(try CLI.run(["init", "--schema", "v4", "s.db"], in: folder).status == 0)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("s.db").path)
        try queue.write { try $0.execute(sql: "DROP TABLE Attachment") }
        try queue.close()
        #expect(try CLI.run(["plan", "s.db"], in: folder).status == 2)
    }

    /// A `--stores-from` list that is a folder or is missing exited 1 (invalid input), where
    /// standard input that cannot be read exits 2, as a file problem does.
    @Test func aListThatCannotBeReadIsAFileProblem() throws {
        let folder = try project([])
        defer { try? FileManager.default.removeItem(at: folder) }
        for list in ["stores-folder", "missing.txt"] {
            if list == "stores-folder" { try FileManager.default.createDirectory(at: folder.appendingPathComponent(list), withIntermediateDirectories: true) }
            let status = try CLI.run(["status", "--stores-from", list], in: folder)
            #expect(status.status == 2, "\(list): \(status.stderr)")
        }
    }

    /// An empty path (an unset shell variable) was taken for the working folder ("." is a
    /// directory); a one-store list with `--output` was told it had "several stores".
    @Test func anEmptyPathAndAListWithOutputAreSaidForWhatTheyAre() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for arguments in [["status", ""], ["run", ""], ["dump", ""], ["plan", ""]] {
            let result = try CLI.run(arguments, in: folder)
            #expect(result.status == 2 && result.stderr.contains("an empty path ('') names no store") && !result.stderr.contains(". is a directory"), "\(arguments): \(result.stderr)")
        }
        try folder.write("s.db\n", to: "list.txt")
        let listed = try CLI.run(["run", "--stores-from", "list.txt", "--output", "new.db"], in: folder)
        #expect(listed.status == 64 && listed.stderr.contains("--stores-from or --shard drop it"), "\(listed.stderr)")
    }
}
