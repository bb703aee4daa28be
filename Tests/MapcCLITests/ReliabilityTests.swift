import Foundation
import GRDB
import MapcKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A project with the shipped schemas and mappings and a v2 store of `count` notes, every third with an image.
private func v2Project(count: Int = 9) throws -> URL {
    let folder = try CLI.project()
    try CLI.addMappingsAndPolicies(to: folder)
    var notes: [String] = []
    for index in 0..<count {
        let image = index % 3 == 0 ? "\"iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA=\"" : "null"
        notes.append(#"{"id": "n\#(index)", "title": "Note \#(index)", "body": "Body \#(index)", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": \#(index), "image": \#(image)}"#)
    }
    try folder.write(#"{"version": "v2", "objects": {"Note": [\#(notes.joined(separator: ",\n"))]}}"#, to: "notes.json")
    let loaded = try CLI.run(["load", "notes.json", "notes.db"], in: folder)
    #expect(loaded.status == 0, "\(loaded.stderr)")
    return folder
}

private func data(_ folder: URL, _ name: String) throws -> Data { try Data(contentsOf: folder.appendingPathComponent(name)) }

/// Runs a shell command line in a folder (for redirections a test needs).
private func shell(_ command: String, in folder: URL) throws -> CLIResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.currentDirectoryURL = folder
    process.environment = ProcessInfo.processInfo.environment.merging(["MAPC": CLI.executable.path]) { _, new in new }
    let err = Pipe()
    process.standardError = err
    try process.run()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CLIResult(status: process.terminationStatus, stdout: "", stderr: String(decoding: stderr, as: UTF8.self))
}

@Suite("Hostile input, faults and concurrency", .serialized)
struct ReliabilityTests {
    // MARK: Data loss

    @Test func writersAreKeptOutWhileAStoreIsMigrated() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        // mapc's own lock: a load while a run (here, the test) holds it is refused.
        let descriptor = open(StoreLock.path(for: folder.appendingPathComponent("notes.db").path), O_RDWR | O_CREAT, 0o644)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        try folder.write(#"{"version": "v2", "objects": {"Note": [{"id": "late", "title": "t", "body": "b", "dateCreated": "2024-01-01", "displayIndex": 1}]}}"#, to: "late.json")
        let load = try CLI.run(["load", "late.json", "notes.db"], in: folder)
        #expect(load.status == 2 && load.stderr.contains("another mapc command is writing notes.db"), "\(load.stderr)")
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    @Test func aMissingMappingsFolderOrALossyInferredStepIsNeverRunSilently() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = try data(folder, "notes.db")
        let typo = try CLI.run(["run", "--to", "v3", "--mappings", "mapings", "notes.db"], in: folder)
        #expect(typo.status == 2 && typo.stderr.contains("mappings folder 'mapings' does not exist; did you mean ./mappings?"), "\(typo.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings"))
        let lossy = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(lossy.status == 2, "\(lossy.stderr)")
        #expect(lossy.stderr.contains("the inferred step v2 -> v3 would drop the values of Note.image") && lossy.stderr.contains("`--accept-data-loss` on `mapc run` or `mapc test`"), "\(lossy.stderr)")
        #expect(try data(folder, "notes.db") == original)
        #expect(try CLI.run(["plan", "--to", "v3", "notes.db"], in: folder).stdout.contains("v2 -> v3 (inferred, drops Note.image)"))
        let accepted = try CLI.run(["run", "--to", "v3", "--accept-data-loss", "--quiet", "notes.db"], in: folder)
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }

    @Test func aMappingInFlowStyleIsReadLikeAnyOther() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"))
        try folder.write(#"""
        { "source": "v2", "destination": "v3", "entityMappings": [
            { "name": "NoteToNote", "source": "Note", "destination": "Note",
              "attributes": { "title": "FUNCTION($source.title, 'uppercaseString')", "body": "$source.body", "dateCreated": "$source.dateCreated", "displayIndex": "$source.displayIndex" } },
            { "name": "NoteToAttachment", "source": "Note", "destination": "Attachment", "filter": "image != nil",
              "attributes": { "image": "$source.image", "dateCreated": "$source.dateCreated" },
              "relationships": { "note": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'NoteToNote', $source)" } } ] }
        """#, to: "mappings/flow.yaml")
        let check = try CLI.run(["check", "mappings/flow.yaml"], in: folder)
        #expect(check.status == 0 && check.stdout.contains("mapping v2 -> v3, 2 entity mappings"), "\(check.stdout)\(check.stderr)")
        #expect(try CLI.run(["plan", "--to", "v3", "notes.db"], in: folder).stdout.contains("v2 -> v3 (mapping flow.yaml, filters NoteToAttachment to Note where image != nil)"))
        let run = try CLI.run(["run", "--to", "v3", "--quiet", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(try CLI.run(["dump", "notes.db"], in: folder).stdout.contains("\"title\": \"NOTE 1\""))
    }

    @Test func valuesAStoreCannotHoldAreRefusedNamingTheObject() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: V\nversion: x1\nentities:\n  Item:\n    attributes:\n      name: string?\n      ratio: float?\n      amount: decimal?\n      when: date?\n", to: "schemas/x1.yaml")
        try folder.write("versions: [v1, v2, v3, v4, x1]\n", to: "schemas/versions.yaml")
        let cases: [(String, String)] = [
            (#"{"id": "i\u0000x", "name": "a"}"#, "an id cannot contain the NUL character"),
            (#"{"id": "i1", "ratio": 3.5e38}"#, "out of range for a float"),
            (#"{"id": "i1", "ratio": 1e999}"#, "is not a finite number"),
            (#"{"id": "i1", "amount": "12345678901234567890123456789012345678901234567891"}"#, "50 significant digits; decimals keep at most 38"),
            (#"{"id": "i1", "when": "10000-01-01T00:00:00Z"}"#, "outside the years 0001 to 9999"),
        ]
        for (object, message) in cases {
            try folder.write(#"{"version": "x1", "objects": {"Item": [\#(object)]}}"#, to: "item.json")
            let load = try CLI.run(["load", "item.json", "items.db"], in: folder)
            #expect(load.status == 1 && load.stderr.contains(message), "\(object): \(load.stderr)")
            #expect(!folder.exists("items.db"))
        }
        // Every digit of a 38-digit decimal survives the round trip.
        try folder.write(#"{"version": "x1", "objects": {"Item": [{"id": "i1", "amount": "1234567890123456789012345678.9012345678"}]}}"#, to: "item.json")
        #expect(try CLI.run(["load", "item.json", "items.db"], in: folder).status == 0)
        #expect(try CLI.run(["dump", "items.db"], in: folder).stdout.contains("\"amount\": \"1234567890123456789012345678.9012345678\""))
        // Dates and decimals computed by expressions stay in range too.
        for (expression, message) in [("now() + 1e308 + 1e308", "outside the years 0001 to 9999"), ("CAST(1e300, \"NSDecimalNumber\")", "out of the range decimals hold"),
                                      ("CAST(1e300, \"NSDate\")", "outside the years 0001 to 9999")] {
            let eval = try CLI.run(["eval", expression], in: folder)
            #expect(eval.status == 1 && eval.stderr.contains(message), "\(expression): \(eval.stderr)")
        }
        // A stored date no store should hold is an error naming the object, not a trap.
        try sqlite(folder, "items.db", "UPDATE Item SET \"when\" = 9e999")
        let dump = try CLI.run(["dump", "items.db"], in: folder)
        #expect(dump.status == 2 && dump.stderr.contains("Item 'i1', attribute 'when'"), "\(dump.stderr)")
    }

    @Test func rowsOfUnknownEntitiesStopARunInsteadOfVanishing() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "notes.db", "UPDATE Note SET _entity = 'Bogus' WHERE _id = 'n4'")
        let original = try data(folder, "notes.db")
        let run = try CLI.run(["run", "--quiet", "notes.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("table Note has 1 row of entity Bogus, which version v2 does not have"), "\(run.stderr)")
        #expect(try data(folder, "notes.db") == original)
        #expect(try CLI.run(["dump", "notes.db"], in: folder).status == 2)
    }

    /// The store's `quick_check` runs beside the first step (on the other core); a store whose
    /// damage the migration itself never reads (a page no table or index uses) must still be
    /// refused, unchanged, by every form of `run`.
    @Test func damageTheMigrationDoesNotReadStillStopsTheRun() throws {
        let folder = try v2Project(count: 50)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A v3 copy, for a first step with a custom policy (v3 -> v4).
        try FileManager.default.copyItem(at: folder.appendingPathComponent("notes.db"), to: folder.appendingPathComponent("v3.db"))
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "v3.db"], in: folder).status == 0)
        for store in ["notes.db", "v3.db"] {
            // One page more than any b-tree uses: SQLite reads every row as before, `quick_check` says "never used".
            let url = folder.appendingPathComponent(store)
            var bytes = try Data(contentsOf: url)
            let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
            let pages = bytes[28..<32].reduce(0) { $0 << 8 | Int($1) }
            bytes.replaceSubrange(28..<32, with: withUnsafeBytes(of: UInt32(pages + 1).bigEndian) { Data($0) })
            bytes.append(Data(count: pageSize))
            try bytes.write(to: url)
            #expect(try CLI.run(["dump", store], in: folder).status == 0, "the rows read as before")
        }
        let runs = [["run", "notes.db"], ["run", "--quiet", "--interpret", "notes.db"], ["run", "--quiet", "--to", "v3", "notes.db"],
                    ["run", "--quiet", "--dry-run", "notes.db"], ["run", "--quiet", "--output", "out.db", "notes.db"], ["run", "--quiet", "--keep-backup", "notes.db"],
                    ["run", "--quiet", "v3.db"], ["run", "--quiet", "--interpret", "v3.db"]]
        for arguments in runs {
            let store = arguments.last ?? ""
            let original = try data(folder, store)
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 2 && run.stderr.contains("is damaged (SQLite's integrity check: ") && run.stderr.contains("is never used"), "\(arguments): \(run.stderr)")
            // The progress display (the first run shows it) never calls the step's store valid.
            #expect(!run.stderr.contains("is valid"), "\(arguments): \(run.stderr)")
            #expect(try data(folder, store) == original, "\(arguments)")
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".\(store).mapc-") || $0.contains(".backup-") || $0 == "out.db" }
            #expect(left.isEmpty, "\(arguments): files left: \(left)")
        }
    }

    @Test func aNewStoreRefusesCompanionsLeftByAnother() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("old log".utf8).write(to: folder.appendingPathComponent("new.db-wal"))
        let load = try CLI.run(["load", "notes.json", "new.db"], in: folder)
        #expect(load.status == 2 && load.stderr.contains("new.db-wal beside new.db belong to another store"), "\(load.stderr)")
        #expect(!folder.exists("new.db"))
        let output = try CLI.run(["run", "--output", "new.db", "notes.db"], in: folder)
        #expect(output.status == 2 && output.stderr.contains("belong to another store"), "\(output.stderr)")
    }

    @Test func compiledAndInterpretedFiltersAgreeAboveTwoToThe53() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        for version in ["b1", "b2"] {
            try folder.write("model: B\nversion: \(version)\nentities:\n  Big:\n    versionHashModifier: \(version)\n    attributes:\n      n: int64\n", to: "schemas/\(version).yaml")
        }
        try folder.write(#"{"version": "b1", "objects": {"Big": [{"id": "x", "n": 9007199254740993}, {"id": "y", "n": 9007199254740992}]}}"#, to: "big.json")
        for (filter, expected) in [("n == 9007199254740992.0", ["y"]), ("n > 9007199254740992.0", ["x"])] {
            try folder.write("source: b1\ndestination: b2\nentityMappings:\n  - name: BigToBig\n    source: Big\n    destination: Big\n    filter: \(filter)\n    attributes: { n: $source.n }\n",
                             to: "mappings/m.yaml")
            var dumps: [String] = []
            for interpret in [false, true] {
                AtomicFile.removeStoreFiles(folder.appendingPathComponent("big.db").path)
                #expect(try CLI.run(["load", "big.json", "big.db"], in: folder).status == 0)
                let run = try CLI.run(["run", "--quiet"] + (interpret ? ["--interpret"] : []) + ["big.db"], in: folder)
                #expect(run.status == 0, "\(run.stderr)")
                dumps.append(try CLI.run(["dump", "big.db"], in: folder).stdout)
            }
            #expect(dumps[0] == dumps[1], "\(filter): compiled and interpreted differ")
            for id in ["x", "y"] { #expect(dumps[0].contains("\"id\": \"\(id)\"") == expected.contains(id), "\(filter): \(dumps[0])") }
        }
    }

    @Test func aStoreReachedThroughALinkIsMigratedInPlaceKeepingLinkModeAndOwner() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let real = folder.appendingPathComponent("notes.db").path
        chmod(real, 0o600)
        let isRoot = getuid() == 0
        if isRoot { chown(real, 65534, 65534) }
        #expect(symlink(real, folder.appendingPathComponent("link.db").path) == 0)
        // One lock for both names: a run through the link is kept out while the real name is locked.
        let descriptor = open(StoreLock.path(for: real), O_RDWR | O_CREAT, 0o644)
        #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        #expect(try CLI.run(["run", "--quiet", "link.db"], in: folder).status == 2)
        flock(descriptor, LOCK_UN)
        close(descriptor)
        let run = try CLI.run(["run", "--quiet", "link.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Files.kind(of: folder.appendingPathComponent("link.db").path) == .symbolicLink, "the link is kept")
        #expect(try CLI.run(["status", "notes.db"], in: folder).stdout.contains("version     v4"), "the real store was migrated")
        var info = stat()
        #expect(stat(real, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600, "the mode is kept")
        if isRoot { #expect(info.st_uid == 65534 && info.st_gid == 65534, "the owner is kept") }
    }

    @Test func outputsAreWrittenOnlyToRegularFiles() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(mkfifo(folder.appendingPathComponent("pipe").path, 0o644) == 0)
        let dump = try CLI.run(["dump", "--output", "pipe", "notes.db"], in: folder)
        #expect(dump.status == 2 && dump.stderr.contains("pipe is a pipe (FIFO)"), "\(dump.stderr)")
        #expect(Files.kind(of: folder.appendingPathComponent("pipe").path) == .other("a pipe (FIFO)"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("dir"), withIntermediateDirectories: true)
        #expect(try CLI.run(["dump", "--output", "dir", "notes.db"], in: folder).stderr.contains("dir is a directory"))
        // A FIFO given as a store is refused at once instead of blocking.
        let status = try CLI.run(["status", "pipe"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("pipe is a pipe (FIFO), not a store file"), "\(status.stderr)")
        // A dump over an existing file keeps its mode.
        try folder.write("{\"version\": \"v1\", \"objects\": {}}\n", to: "out.json")
        chmod(folder.appendingPathComponent("out.json").path, 0o640)
        #expect(try CLI.run(["dump", "--output", "out.json", "notes.db"], in: folder).status == 0)
        var info = stat()
        #expect(stat(folder.appendingPathComponent("out.json").path, &info) == 0 && info.st_mode & 0o777 == 0o640)
    }

    @Test func failedWritesToStandardOutputExitWithStatus2() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let closed = try shell("\"$MAPC\" status notes.db >&-", in: folder)
        #expect(closed.status == 2 && closed.stderr.contains("cannot write to standard output"), "\(closed.stderr)")
        let full = try shell("\"$MAPC\" dump notes.db > /dev/full", in: folder)
        #expect(full.status == 2 && full.stderr.contains("cannot write to standard output"), "\(full.stderr)")
    }

    // MARK: Hangs and memory

    @Test func hostileFilesAndExpressionsAreBoundedInTime() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        var lines = ["a0: &a0 [x, x, x, x, x, x, x, x]"]
        for level in 1...9 { lines.append("a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 8).joined(separator: ", ") + "]") }
        lines.append("? *a9\n: v")
        try folder.write(lines.joined(separator: "\n") + "\n", to: "bomb.yaml")
        let started = Date()
        let bomb = try CLI.run(["check", "bomb.yaml"], in: folder)
        #expect(bomb.status == 1 && bomb.stderr.contains("expands to more than"), "\(bomb.stderr)")
        var deep = "model: M\nversion: d1\nentities:\n  E0:\n    attributes:\n      a: string\n"
        for level in 1...150 { deep += "  E\(level):\n    parent: E\(level - 1)\n" }
        try folder.write(deep, to: "deep.yaml")
        let inheritance = try CLI.run(["check", "deep.yaml"], in: folder)
        #expect(inheritance.status == 1 && inheritance.stderr.contains("inheritance is more than 100 levels deep"), "\(inheritance.stderr)")
        let bigJoin = try CLI.run(["eval", "FUNCTION(FUNCTION(FUNCTION('" + String(repeating: "ab,", count: 2000) + "', 'componentsSeparatedByString:', ','), 'componentsJoinedByString:', '" + String(repeating: "s", count: 10_000) + "'), 'length')"], in: folder)
        #expect(bigJoin.status == 1 && bigJoin.stderr.contains("grew past"), "\(bigJoin.stderr)")
        let longLike = try CLI.run(["eval", "--object", "{\"t\": \"" + String(repeating: "a", count: 60_000) + "\"}", "--predicate", "t LIKE '*" + String(repeating: "a", count: 2_000) + "b'"], in: folder)
        #expect(longLike.status == 1 && longLike.stderr.contains("LIKE took more than"), "\(longLike.stderr)")
        #expect(Date().timeIntervalSince(started) < 60, "every hostile input is refused promptly")
    }

    /// A sample of the crash-testing harness (`Benchmarks/fault-injection.py` walks every point):
    /// killed or failed at every seventh file operation, a two-step run leaves the store old or new.
    @Test func aSampleOfFaultPointsLeavesTheStoreOldOrNew() throws {
        let folder = try v2Project(count: 30)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pristine = try data(folder, "notes.db")
        let before = try CLI.run(["dump", "notes.db"], in: folder).stdout
        func faulted(_ setting: String?) throws -> Int32 {
            let process = Process()
            process.executableURL = CLI.executable
            process.arguments = ["run", "--quiet", "notes.db"]
            process.currentDirectoryURL = folder
            var environment = ProcessInfo.processInfo.environment
            environment["MAPC_FAULT"] = setting ?? "count"
            environment["MAPC_FAULT_LOG"] = folder.appendingPathComponent("count.log").path
            process.environment = environment
            process.standardOutput = Pipe()
            process.standardError = Pipe()
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(try faulted(nil) == 0)
        let after = try CLI.run(["dump", "notes.db"], in: folder).stdout
        let points = Int(try folder.read("count.log").split(separator: "\n").last ?? "") ?? 0
        #expect(points > 20, "the run performs \(points) counted operations")
        var tried = 0
        for point in stride(from: 1, through: points, by: 7) {
            for mode in ["crash", "fail"] {
                try pristine.write(to: folder.appendingPathComponent("notes.db"))
                _ = try faulted("\(mode)@\(point)")
                let state = try CLI.run(["dump", "notes.db"], in: folder).stdout
                #expect(state == before || state == after, "\(mode)@\(point) left the store neither old nor new")
                tried += 1
            }
        }
        #expect(tried >= 6)
    }

    // MARK: Poor errors

    @Test func anInterruptedLoadLeavesAStoreTheNextCommandCanRead() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v2", "objects": {"Note": [{"id": "m1", "title": "t", "body": "b", "dateCreated": "2024-01-01", "displayIndex": 1}]}}"#, to: "more.json")
        let before = try CLI.run(["dump", "notes.db"], in: folder).stdout
        // Killed at its third file operation, after the journal was written: a hot journal stays behind.
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["load", "more.json", "notes.db"]
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPC_FAULT": "crash@3"]) { _, new in new }
        process.standardError = Pipe()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the harness killed it")
        #expect(folder.exists("notes.db-journal"), "a hot journal is left, as after kill -9")
        let status = try CLI.run(["status", "notes.db"], in: folder)
        #expect(status.status == 0, "a read-only command rolls the journal back: \(status.stderr)")
        #expect(try CLI.run(["dump", "notes.db"], in: folder).stdout == before, "the store is as before the load")
    }

    @Test func schemasThatCannotBeStoredFailCheckNotInit() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let attributes = { (prefix: String) in (0..<1_001).map { "      \(prefix)\($0): string?" }.joined(separator: "\n") }
        try folder.write("model: W\nversion: w1\nentities:\n  Wide:\n    attributes:\n\(attributes("a"))\n  Wider:\n    parent: Wide\n    attributes:\n\(attributes("b"))\n", to: "wide.yaml")
        let check = try CLI.run(["check", "wide.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("table Wide needs 2005 columns"), "\(check.stderr)")
        try folder.write("""
        model: C
        version: c1
        entities:
          Note:
            indexes: [folder]
            attributes: { title: string }
            relationships: { folder: { destination: Folder, optional: true, inverse: notes } }
          Note_folder:
            attributes: { x: string }
          Folder:
            relationships: { notes: { destination: Note, toMany: true, optional: true, inverse: folder } }
        """, to: "clash.yaml")
        #expect(try CLI.run(["check", "clash.yaml"], in: folder).status == 0)
        let created = try CLI.run(["init", "--schema", "clash.yaml", "clash.db"], in: folder)
        #expect(created.status == 0, "an index and a table named alike no longer clash: \(created.stderr)")
    }

    @Test func aDamagedStoreIsNotWrittenInto() throws {
        let folder = try v2Project(count: 400)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Damage the header of a page in the middle of the file.
        let handle = try FileHandle(forUpdating: folder.appendingPathComponent("notes.db"))
        try handle.seek(toOffset: 3 * 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 600))
        try handle.close()
        try folder.write(#"{"version": "v2", "objects": {"Note": [{"id": "m1", "title": "t", "body": "b", "dateCreated": "2024-01-01", "displayIndex": 1}]}}"#, to: "more.json")
        let load = try CLI.run(["load", "more.json", "notes.db"], in: folder)
        #expect(load.status == 2 && load.stderr.contains("is damaged"), "\(load.stderr)")
    }

    @Test func dataFileErrorsHaveLineAndColumnAndDuplicateKeysAreErrors() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("{\"version\": \"v1\",\n \"objects\": {\"Note\": [\n  {\"id\": \"n1\", \"title\": \"t\" \"body\": \"b\"}]}}", to: "bad.json")
        let syntax = try CLI.run(["load", "bad.json", "x.db"], in: folder)
        #expect(syntax.status == 1 && syntax.stderr.contains("bad.json:3:29: not valid JSON: expected ',' or '}' in an object"), "\(syntax.stderr)")
        try folder.write("{\"version\": \"v1\", \"objects\": {\"Note\": [{\"id\": \"n1\", \"title\": \"a\",\n \"title\": \"b\"}]}}", to: "dup.json")
        let duplicate = try CLI.run(["load", "dup.json", "x.db"], in: folder)
        #expect(duplicate.status == 1 && duplicate.stderr.contains("dup.json:2:2: not valid JSON: the member \"title\" appears twice"), "\(duplicate.stderr)")
    }

    @Test func misleadingStoreMessagesSayWhatIsWrong() throws {
        let folder = try v2Project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("dir.db"), withIntermediateDirectories: true)
        #expect(try CLI.run(["status", "dir.db"], in: folder).stderr.contains("dir.db is a directory, not a store file"))
        #expect(try CLI.run(["status", "/dev/null"], in: folder).stderr.contains("/dev/null is a character device, not a store file"))
        try FileManager.default.copyItem(at: folder.appendingPathComponent("notes.db"), to: folder.appendingPathComponent("copy.db"))
        try sqlite(folder, "copy.db", "DROP TABLE _mapc_entities")
        #expect(try CLI.run(["status", "copy.db"], in: folder).stderr.contains("has _mapc_metadata but no _mapc_entities table"))
        try sqlite(folder, "notes.db", "UPDATE _mapc_metadata SET value = 'two' WHERE key = 'formatVersion'")
        #expect(try CLI.run(["status", "notes.db"], in: folder).stderr.contains("metadata format 'two' is not a version number"))
        try folder.write("model: M\nversion: v1\nentities: {}\n? [a, b]\n: 1\n? [a, b]\n: 2\n", to: "complex.yaml")
        let complex = try CLI.run(["check", "complex.yaml"], in: folder)
        #expect(complex.stderr.contains("a list or mapping is used twice as a key") && !complex.stderr.contains("uncovertable"), "\(complex.stderr)")
    }
}

/// Stores a user cannot write: in a read-only folder (as stores copied off a device or out of a
/// backup often are), or read-only themselves. mapc runs as `nobody` here, since permissions mean
/// nothing to root; the messages say what is read-only and what to do, and nothing is changed.
@Suite("Read-only stores", .enabled(if: CLI.canRunUnprivileged))
struct ReadOnlyStoreTests {
    private func project(wal: Bool) throws -> (folder: URL, store: URL) {
        let folder = try v2Project()
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("notes.db"), to: data.appendingPathComponent("notes.db"))
        if wal {
            let queue = try DatabaseQueue(path: data.appendingPathComponent("notes.db").path)
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
            try queue.close()
        }
        for path in [folder.path, folder.appendingPathComponent("schemas").path, folder.appendingPathComponent("mappings").path] { chmod(path, 0o755) }
        return (folder, data)
    }

    @Test func aWALStoreInAReadOnlyFolderIsExplained() throws {
        let (folder, data) = try project(wal: true)
        defer { chmod(data.path, 0o755); try? FileManager.default.removeItem(at: folder) }
        chmod(data.path, 0o555)
        let before = try Data(contentsOf: data.appendingPathComponent("notes.db"))
        for arguments in [["status", "data/notes.db"], ["run", "--quiet", "--to", "v3", "data/notes.db"]] {
            let run = try CLI.runUnprivileged(arguments, in: folder)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("data/notes.db is in a folder this user cannot write to (data)") && run.stderr.contains("copy the store"), "\(arguments): \(run.stderr)")
            // What stops both is reading: `status` was told mapc writes its lock file there.
            #expect(run.stderr.contains("SQLite makes a WAL store's -shm file beside it even to read it"), "\(run.stderr)")
        }
        #expect(try Data(contentsOf: data.appendingPathComponent("notes.db")) == before)
    }

    @Test func aStoreInAReadOnlyFolderCanBeReadButNotMigrated() throws {
        let (folder, data) = try project(wal: false)
        defer { chmod(data.path, 0o755); try? FileManager.default.removeItem(at: folder) }
        chmod(data.path, 0o555)
        #expect(try CLI.runUnprivileged(["status", "data/notes.db"], in: folder).status == 0)
        let run = try CLI.runUnprivileged(["run", "--quiet", "--to", "v3", "data/notes.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("data/notes.db is in a folder this user cannot write to (data)"), "\(run.stderr)")
        // Not a WAL store: nothing said of a -shm file. With --output the lock is still beside it.
        #expect(!run.stderr.contains("-shm") && run.stderr.contains("mapc writes its lock file and the migrated store there"), "\(run.stderr)")
        let output = try CLI.runUnprivileged(["run", "--quiet", "--to", "v3", "data/notes.db", "--output", "/tmp/mapc-unused-\(UUID().uuidString).db"], in: folder)
        #expect(output.status == 2 && output.stderr.contains("mapc takes its lock in a file beside the store (a run with --output too)") && !output.stderr.contains("-shm"), "\(output.stderr)")
    }

    @Test func aReadOnlyStoreIsNotReplaced() throws {
        let (folder, data) = try project(wal: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        chown(data.path, 65534, 65534)
        chmod(data.appendingPathComponent("notes.db").path, 0o444)
        let before = try Data(contentsOf: data.appendingPathComponent("notes.db"))
        let run = try CLI.runUnprivileged(["run", "--quiet", "--to", "v3", "data/notes.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("data/notes.db is read-only") && run.stderr.contains("--output"), "\(run.stderr)")
        #expect(try Data(contentsOf: data.appendingPathComponent("notes.db")) == before)
        // Written elsewhere, the read-only store migrates and stays as it was.
        let output = try CLI.runUnprivileged(["run", "--quiet", "--to", "v3", "--output", "data/new.db", "data/notes.db"], in: folder)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try Data(contentsOf: data.appendingPathComponent("notes.db")) == before)
    }

    /// A read-only WAL store migrated to an output: the output is in WAL mode, as its source (the
    /// run cannot lock the source to ask, and reads the mode from its header).
    @Test func anOutputKeepsTheJournalModeOfAStoreThisUserCannotWrite() throws {
        let (folder, data) = try project(wal: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        chown(data.path, 65534, 65534)
        chmod(data.appendingPathComponent("notes.db").path, 0o444)
        let output = try CLI.runUnprivileged(["run", "--quiet", "--to", "v3", "--output", "data/new.db", "data/notes.db"], in: folder)
        #expect(output.status == 0, "\(output.stderr)")
        let mode = try shell("sqlite3 data/new.db 'PRAGMA journal_mode' 1>&2", in: folder)
        #expect(mode.stderr == "wal\n", "\(mode.stderr)")
    }

    /// A store this user may not read (another user's private store) is said to be one, with its
    /// owner and mode, where SQLite's "unable to open database file" said nothing of why.
    @Test func aStoreThisUserCannotReadIsSaidToBeOne() throws {
        let (folder, data) = try project(wal: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        chown(data.path, 65534, 65534)
        chmod(data.appendingPathComponent("notes.db").path, 0o600)
        for arguments in [["status", "data/notes.db"], ["dump", "data/notes.db"], ["run", "--quiet", "--to", "v3", "data/notes.db"],
                          ["run", "--quiet", "--to", "v3", "--output", "data/new.db", "data/notes.db"]] {
            let run = try CLI.runUnprivileged(arguments, in: folder)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains("data/notes.db cannot be read by this user (mode 0600, owned by root)") && run.stderr.contains("chmod")
                    && !run.stderr.contains("unable to open"), "\(arguments): \(run.stderr)")
        }
    }

    /// A new file in a folder this user cannot write (an `--output`, `init`, `load`) is said to be
    /// one by the name given, not with the WAL advice for a store being read, nor by a temporary
    /// file's name.
    @Test func aNewStoreInAFolderThisUserCannotWriteIsSaidToBeOne() throws {
        let (folder, data) = try project(wal: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        chown(data.path, 65534, 65534)
        let closed = folder.appendingPathComponent("closed")
        try FileManager.default.createDirectory(at: closed, withIntermediateDirectories: true)
        chmod(closed.path, 0o755)
        try folder.write(#"{"version": "v2", "objects": {"Note": []}}"#, to: "empty.json")
        chmod(folder.appendingPathComponent("empty.json").path, 0o644)
        for (arguments, named) in [(["run", "--quiet", "--to", "v3", "--output", "closed/new.db", "data/notes.db"], "closed/new.db"),
                                   (["init", "--schema", "v2", "closed/new.db"], "closed/new.db"),
                                   (["load", "empty.json", "closed/new.db"], "closed/new.db")] {
            let run = try CLI.runUnprivileged(arguments, in: folder)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            // An output is named by its full path (as every message of a run names it).
            #expect(run.stderr.contains("cannot create ") && run.stderr.contains("\(named): this user cannot write to its folder (") && run.stderr.contains("closed)") && !run.stderr.contains("WAL")
                    && !run.stderr.contains(".tmp"), "\(arguments): \(run.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: closed.path).isEmpty)
    }

    /// Root may write any file, but a store whose mode lets no one write it (`chmod 444`, as a
    /// container or a job often runs as root) is read-only all the same: never replaced.
    @Test func aStoreNoOneMayWriteIsNotReplacedEvenByRoot() throws {
        let (folder, data) = try project(wal: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = data.appendingPathComponent("notes.db").path
        chmod(store, 0o444)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let run = try CLI.run(["run", "--quiet", "--to", "v3", "data/notes.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("data/notes.db is read-only") && run.stderr.contains("chmod u+w"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        // Nor does load add objects to it.
        let load = try CLI.run(["load", CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/v2.json").path, "data/notes.db"], in: folder)
        #expect(load.status == 2 && load.stderr.contains("data/notes.db is read-only: loading adds objects"), "\(load.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        // Made writable for its owner, it migrates.
        chmod(store, 0o644)
        #expect(try CLI.run(["run", "--quiet", "--to", "v3", "data/notes.db"], in: folder).status == 0)
    }
}

/// Ctrl-C during a run: the run stops at its next batch, removes its temporary files and leaves
/// the store as it was, with exit status 130. The signal is sent once the run reports progress,
/// so it always lands while objects are being created (a 60,000-note store through the interpreter).
@Suite("Interrupting a run")
struct InterruptionTests {
    @Test(arguments: [false, true]) func ctrlCStopsTheRunAndLeavesTheStoreAsItWas(json: Bool) throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        #expect(try CLI.run(["init", "--schema", "v2", "notes.db"], in: folder).status == 0)
        let fill = try shell(#"sqlite3 notes.db "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < 59999) INSERT INTO Note (_entity, _id, title, body, dateCreated, displayIndex) SELECT 'Note', 'n' || i, 'Note ' || i, 'Body ' || i, 1714557600 + i, i FROM seq""#, in: folder)
        #expect(fill.status == 0, "\(fill.stderr)")
        let before = try data(folder, "notes.db")
        // The project's policies compiled beforehand (the signal is for the migration).
        #expect(try CLI.run(["check"], in: folder).status == 0)
        // With --format json there is no progress display to wait for: the process sends itself
        // the signal at a known operation, halfway through the run's (`MAPC_FAULT=int@N`), not after a timer.
        try FileManager.default.copyItem(at: folder.appendingPathComponent("notes.db"), to: folder.appendingPathComponent("counted.db"))
        let log = folder.appendingPathComponent("operations.log")
        let counted = try CLI.run(["run", "--interpret", "--quiet", "--to", "v3", "counted.db"], in: folder, environment: ["MAPC_FAULT": "count", "MAPC_FAULT_LOG": log.path])
        #expect(counted.status == 0, "\(counted.stderr)")
        let operations = try #require(Int(try String(contentsOf: log, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        try FileManager.default.removeItem(at: log)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("counted.db"))
        let fault = json ? ["MAPC_FAULT": "int@\(operations / 2)"] : [:]
        let process = Process()
        process.executableURL = CLI.executable
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPC_CACHE": CLI.policyCache.path].merging(fault) { _, new in new }) { _, new in new }
        process.arguments = ["run", "--interpret", "--to", "v3"] + (json ? ["--format", "json"] : []) + ["notes.db"]
        process.currentDirectoryURL = folder
        let err = Pipe(), out = Pipe()
        process.standardError = err
        process.standardOutput = out
        try process.run()
        var stderr = Data()
        // The first progress line of the creation phase, then the signal.
        while !json && !String(decoding: stderr, as: UTF8.self).contains("[create]") {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            stderr += chunk
        }
        if !json { kill(process.processIdentifier, SIGINT) }
        stderr += err.fileHandleForReading.readDataToEndOfFile()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if json {
            let parsed = try JSONValue.parse(stdout, path: "stdout")
            #expect(parsed["exitCode"] == .integer(130), "the JSON says what the process exits with: \(String(decoding: stdout, as: UTF8.self))")
        }
        let text = String(decoding: stderr, as: UTF8.self)
        #expect(process.terminationStatus == 130, "\(text)")
        #expect(text.contains("stopped; notes.db was not changed"), "\(text)")
        #expect(try data(folder, "notes.db") == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("notes.db") && $0 != "notes.db" && $0 != "notes.db.mapc-lock" }
        #expect(leftovers.isEmpty, "\(leftovers)")
        // Started with SIGINT ignored (a shell's background job), the run keeps ignoring it.
        if !json {
            // The signal sent at a known operation, halfway through the run's.
            let ignoring = try shell(#"trap '' INT; MAPC_FAULT=int@\#(operations / 2) exec "$MAPC" run --quiet --interpret --to v3 notes.db"#, in: folder)
            #expect(ignoring.status == 0, "the ignored signal did not stop it: \(ignoring.stderr)")
        }
    }

    /// A batch stopped by SIGTERM once its first store is done: the stores it did not finish are
    /// `stopped` (left as they were), not `failed`, in the report and in its counts. The signal
    /// comes at a known operation (`MAPC_FAULT=term@N`, N just past one store's migration, counted
    /// first), not after a timer.
    @Test func aStoppedBatchReportsTheStoresItDidNotFinishAsStopped() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let names = ["a.db", "b.db", "c.db", "d.db"]
        for name in names + ["counted.db"] {
            #expect(try CLI.run(["init", "--schema", "v2", name], in: folder).status == 0)
            let fill = try shell("sqlite3 \(name) \"WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < 19) INSERT INTO Note (_entity, _id, title, body, dateCreated, displayIndex) SELECT 'Note', 'n' || i, 'Note ' || i, 'Body ' || i, 1714557600 + i, i FROM seq\"", in: folder)
            #expect(fill.status == 0, "\(fill.stderr)")
        }
        #expect(try CLI.run(["check"], in: folder).status == 0)
        let log = folder.appendingPathComponent("operations.log")
        let counted = try CLI.run(["run", "--interpret", "--quiet", "--to", "v3", "counted.db"], in: folder, environment: ["MAPC_FAULT": "count", "MAPC_FAULT_LOG": log.path])
        #expect(counted.status == 0, "\(counted.stderr)")
        let perStore = try #require(Int(try String(contentsOf: log, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let process = Process()
        process.executableURL = CLI.executable
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPC_CACHE": CLI.policyCache.path, "MAPC_FAULT": "term@\(perStore + 3)"]) { _, new in new }
        process.arguments = ["run", "--interpret", "--jobs", "1", "--format", "json", "--to", "v3"] + names
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        _ = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 143)
        let report = try JSONValue.parse(stdout, path: "stdout")
        guard case .array(let stores)? = report["stores"] else {
            Issue.record("no stores in \(String(decoding: stdout, as: UTF8.self))")
            return
        }
        let results = stores.compactMap { store -> String? in if case .string(let result)? = store["result"] { return result }; return nil }
        #expect(results == ["migrated", "stopped", "stopped", "stopped"], "\(results)")
        #expect(report["failed"] == .integer(0) && report["stopped"] == .integer(Int64(results.filter { $0 == "stopped" }.count)), "\(String(decoding: stdout, as: UTF8.self))")
        for (name, result) in zip(names, results) where result == "stopped" {
            #expect(try CLI.run(["status", name], in: folder).stdout.contains("version     v2"), "\(name) was left as it was")
        }
    }
}
